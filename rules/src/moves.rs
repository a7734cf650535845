//! Moves and fixed-capacity move lists (no allocation per node).

use crate::geometry::{BoardSize, Square};

/// A move: from, to, and an optional promotion kind, packed in 32 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Move(pub u32);

impl Move {
    pub const NONE: Move = Move(0);

    #[inline(always)]
    pub fn new(from: usize, to: usize) -> Move {
        Move(from as u32 | (to as u32) << 7)
    }
    #[inline(always)]
    pub fn with_promotion(from: usize, to: usize, kind: usize) -> Move {
        Move(from as u32 | (to as u32) << 7 | (kind as u32 + 1) << 14)
    }
    /// A first move that also pushes the own pawn on `to` one square forward.
    #[inline(always)]
    pub fn with_pawn_push(from: usize, to: usize) -> Move {
        Move(from as u32 | (to as u32) << 7 | 1 << 18)
    }
    #[inline(always)]
    pub fn pushes_pawn(self) -> bool {
        self.0 >> 18 & 1 == 1
    }
    #[inline(always)]
    pub fn from(self) -> usize {
        (self.0 & 0x7f) as usize
    }
    #[inline(always)]
    pub fn to(self) -> usize {
        (self.0 >> 7 & 0x7f) as usize
    }
    /// The kind the moving piece becomes, if it promotes.
    #[inline(always)]
    pub fn promotion(self) -> Option<usize> {
        let p = self.0 >> 14 & 0xf;
        (p != 0).then(|| p as usize - 1)
    }
    pub fn from_sq(self) -> Square {
        Square(self.from() as u8)
    }
    pub fn to_sq(self) -> Square {
        Square(self.to() as u8)
    }
    /// UCI notation; `letters[kind]` gives the promotion suffix.
    pub fn uci(self, size: BoardSize, letters: &[char]) -> String {
        let mut s = size.name(self.from_sq());
        s.push_str(&size.name(self.to_sq()));
        if let Some(k) = self.promotion() {
            s.push(letters[k].to_ascii_lowercase());
        }
        s
    }
}

pub const MAX_MOVES: usize = 512;

/// A list of moves on the stack.
#[derive(Clone)]
pub struct MoveList {
    moves: [Move; MAX_MOVES],
    len: usize,
}

impl Default for MoveList {
    fn default() -> Self {
        Self::new()
    }
}

impl MoveList {
    #[inline(always)]
    pub fn new() -> MoveList {
        MoveList {
            moves: [Move::NONE; MAX_MOVES],
            len: 0,
        }
    }
    #[inline(always)]
    pub fn push(&mut self, m: Move) {
        debug_assert!(self.len < MAX_MOVES);
        if self.len < MAX_MOVES {
            self.moves[self.len] = m;
            self.len += 1;
        }
    }
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline(always)]
    pub fn clear(&mut self) {
        self.len = 0;
    }
    #[inline(always)]
    pub fn as_slice(&self) -> &[Move] {
        &self.moves[..self.len]
    }
    #[inline(always)]
    pub fn retain(&mut self, mut f: impl FnMut(Move) -> bool) {
        let mut j = 0;
        for i in 0..self.len {
            let m = self.moves[i];
            if f(m) {
                self.moves[j] = m;
                j += 1;
            }
        }
        self.len = j;
    }
    pub fn iter(&self) -> std::slice::Iter<'_, Move> {
        self.as_slice().iter()
    }
    pub fn contains(&self, m: Move) -> bool {
        self.as_slice().contains(&m)
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}
