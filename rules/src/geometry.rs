//! Small vocabulary types: colours, squares, board sizes.

use std::fmt;
use std::ops::{Index, IndexMut, Not};

/// The side: White moves first (Red in the xiangqi family).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    White = 0,
    Black = 1,
}

impl Color {
    pub const BOTH: [Color; 2] = [Color::White, Color::Black];
    #[inline(always)]
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn fen_char(self) -> char {
        match self {
            Color::White => 'w',
            Color::Black => 'b',
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Color::White => "white",
            Color::Black => "black",
        }
    }
}

impl Not for Color {
    type Output = Color;
    #[inline(always)]
    fn not(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Per-side data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ByColor<T>(pub [T; 2]);

impl<T> ByColor<T> {
    pub fn new(white: T, black: T) -> Self {
        ByColor([white, black])
    }
}

impl<T> Index<Color> for ByColor<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, c: Color) -> &T {
        &self.0[c as usize]
    }
}

impl<T> IndexMut<Color> for ByColor<T> {
    #[inline(always)]
    fn index_mut(&mut self, c: Color) -> &mut T {
        &mut self.0[c as usize]
    }
}

/// The largest board: 12 files by 10 ranks (120 squares fit a `u128`).
pub const MAX_FILES: u8 = 12;
pub const MAX_RANKS: u8 = 10;
pub const MAX_SQUARES: usize = MAX_FILES as usize * MAX_RANKS as usize;

/// Board dimensions; squares are indexed `rank * files + file`, a1 = 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BoardSize {
    pub files: u8,
    pub ranks: u8,
}

impl BoardSize {
    #[inline(always)]
    pub fn squares(self) -> usize {
        self.files as usize * self.ranks as usize
    }
    #[inline(always)]
    pub fn square(self, file: u8, rank: u8) -> Square {
        Square(rank * self.files + file)
    }
    #[inline(always)]
    pub fn file_of(self, sq: Square) -> u8 {
        sq.0 % self.files
    }
    #[inline(always)]
    pub fn rank_of(self, sq: Square) -> u8 {
        sq.0 / self.files
    }
    /// The square `(df, dr)` away, if it is on the board.
    pub fn offset(self, sq: Square, df: i32, dr: i32) -> Option<Square> {
        let f = self.file_of(sq) as i32 + df;
        let r = self.rank_of(sq) as i32 + dr;
        (0..self.files as i32)
            .contains(&f)
            .then_some(())
            .filter(|_| (0..self.ranks as i32).contains(&r))
            .map(|_| self.square(f as u8, r as u8))
    }
    /// The same square seen from the other side (ranks mirrored).
    pub fn mirror(self, sq: Square) -> Square {
        self.square(self.file_of(sq), self.ranks - 1 - self.rank_of(sq))
    }
    /// `a1`-style name; ranks run 1..=10.
    pub fn name(self, sq: Square) -> String {
        format!(
            "{}{}",
            (b'a' + self.file_of(sq)) as char,
            self.rank_of(sq) + 1
        )
    }
    /// Parses `e4`, `a10`; `None` if malformed or off the board.
    pub fn parse_square(self, s: &str) -> Option<Square> {
        let (sq, rest) = self.parse_square_prefix(s)?;
        rest.is_empty().then_some(sq)
    }
    /// Parses a square at the start of `s`, returning it and the rest. Greedy on the rank digits
    /// but only as far as the board has ranks (so `a1` in `a1a10` is not read as `a11`).
    pub fn parse_square_prefix(self, s: &str) -> Option<(Square, &str)> {
        let b = s.as_bytes();
        let file = *b.first()?;
        if !file.is_ascii_lowercase() || file - b'a' >= self.files {
            return None;
        }
        let mut end = 1;
        while end < b.len() && b[end].is_ascii_digit() && end < 3 {
            end += 1;
        }
        // Try the longest rank first, then shorter, so `a10` and `a1` both work.
        for e in (2..=end).rev() {
            if let Ok(r) = s[1..e].parse::<u8>() {
                if s.as_bytes()[1] != b'0' && r >= 1 && r <= self.ranks {
                    return Some((self.square(file - b'a', r - 1), &s[e..]));
                }
            }
        }
        None
    }
}

/// A square index on the board (`rank * files + file`), named as in FENs and moves: files
/// from `a`, ranks from 1 (a rank above 9 has two digits on a 10-rank board).
///
/// ```
/// use varzero_rules::{BoardSize, Square};
/// let xiangqi = BoardSize { files: 9, ranks: 10 };
/// let sq = xiangqi.square(4, 9); // the e-file, the top rank
/// assert_eq!(sq, Square(85));
/// assert_eq!(xiangqi.name(sq), "e10");
/// assert_eq!(xiangqi.parse_square("e10"), Some(sq));
/// assert_eq!(xiangqi.mirror(sq), xiangqi.square(4, 0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(pub u8);

impl Square {
    #[inline(always)]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squares_round_trip() {
        let b = BoardSize {
            files: 9,
            ranks: 10,
        };
        for i in 0..90u8 {
            let s = Square(i);
            assert_eq!(b.parse_square(&b.name(s)), Some(s));
        }
        assert_eq!(b.parse_square("a0"), None);
        assert_eq!(b.parse_square("j1"), None);
        assert_eq!(b.parse_square("a11"), None);
        let (s, rest) = b.parse_square_prefix("a1a10").unwrap();
        assert_eq!((s, rest), (Square(0), "a10"));
        let (s, rest) = b.parse_square_prefix("a10a9").unwrap();
        assert_eq!((b.name(s).as_str(), rest), ("a10", "a9"));
        assert_eq!(
            b.mirror(b.parse_square("d1").unwrap()),
            b.parse_square("d10").unwrap()
        );
    }
}
