//! The engine: `Pos<B>`, the generic position over one bitboard word (`u64` or `u128`), and
//! what changes it. This file holds the position's state (the board, the per-colour and
//! per-kind bitboards, the irreversible `StateData` and the undo stack) and make/unmake, with
//! incremental Zobrist keys, first-move rights, check counts and the half-move clock.
//! Move generation and attack detection over this state are in `movegen.rs`, the counting
//! rules' part of make in `counting.rs`, FEN reading and writing in `fen.rs`.
//!
//! It is named `engine` (not `board`) because it is more than the placement: it is the whole
//! generic engine state that `position.rs` wraps. `position.rs` holds the public [`Position`],
//! one type for every variant, which picks the word a board needs and dispatches to a `Pos<B>`;
//! code outside the crate uses `Position`, never `Pos<B>` directly.
//! No code here knows a variant by name: everything comes from the compiled tables.
//!
//! [`Position`]: crate::Position

use crate::bitboard::Bitboard;
use crate::geometry::{Color, MAX_SQUARES};
use crate::moves::Move;
use crate::tables::Tables;
use crate::variant::{Variant, MAX_KINDS};
use crate::variant_file::CountingMode;
use std::sync::Arc;

/// What a square holds, as the board stores it: 0 for an empty square, else
/// `kind * 2 + colour + 1`. The code minus one indexes the per-(kind, colour) tables
/// (`Tables::pieces`) and the code itself the Zobrist table, so decoding is a subtraction and a
/// shift, inlined everywhere.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct Piece(u8);

impl Piece {
    /// The empty square.
    pub const NONE: Piece = Piece(0);

    #[inline(always)]
    pub fn new(kind: usize, c: Color) -> Piece {
        Piece((kind * 2 + c as usize + 1) as u8)
    }

    #[inline(always)]
    pub fn is_none(self) -> bool {
        self.0 == 0
    }

    #[inline(always)]
    pub fn is_some(self) -> bool {
        self.0 != 0
    }

    /// The piece kind (an index into `Variant::pieces`); only for a piece, not `NONE`.
    #[inline(always)]
    pub fn kind(self) -> usize {
        (self.0 as usize - 1) >> 1
    }

    /// The colour as an index (0 White, 1 Black); only for a piece, not `NONE`.
    #[inline(always)]
    pub fn color_index(self) -> usize {
        (self.0 as usize - 1) & 1
    }

    #[inline(always)]
    pub fn color(self) -> Color {
        if self.color_index() == 0 {
            Color::White
        } else {
            Color::Black
        }
    }

    /// Index into the per-(kind, colour) tables: `kind * 2 + colour`.
    #[inline(always)]
    pub fn table_index(self) -> usize {
        self.0 as usize - 1
    }

    /// Index into the Zobrist piece table (0 is the empty square's, never used).
    #[inline(always)]
    pub fn zobrist_index(self) -> usize {
        self.0 as usize
    }
}

/// The state that a move changes irreversibly; saved on the undo stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateData<B> {
    /// Squares whose piece still holds its first-move right (Fairy-Stockfish's gates).
    pub gates: B,
    /// Counting: plies counted so far and the limit in plies (0: no count running).
    pub count_ply: u16,
    pub count_limit: u16,
    /// Plies since the last capture or pawn move.
    pub rule50: u16,
    /// Checks each side still has to give to win (check-counting variants).
    pub checks: [u8; 2],
    /// Plies since the game's start (from the FEN's full-move number).
    pub game_ply: u32,
    /// Repetition key: placement, side to move and check counts.
    pub key: u64,
}

#[derive(Clone, Copy, Debug)]
pub struct Undo<B> {
    pub mv: Move,
    pub moved: Piece,
    pub captured: Piece,
    pub prev: StateData<B>,
}

#[derive(Clone)]
pub struct Pos<B: Bitboard> {
    pub(crate) v: Arc<Variant>,
    pub(crate) t: Arc<Tables<B>>,
    pub(crate) board: [Piece; MAX_SQUARES],
    pub(crate) by_color: [B; 2],
    pub(crate) by_kind: [B; MAX_KINDS],
    pub(crate) stm: Color,
    pub(crate) st: StateData<B>,
    pub(crate) stack: Vec<Undo<B>>,
    pub(crate) royal: usize,
    pub(crate) nkinds: usize,
    /// Kinds that promote (pawns).
    pub(crate) pawn_kinds: u16,
    /// Kinds whose arrival can take away an enemy first-move right.
    pub(crate) right_takers: u16,
    /// Kinds that capture by hopping.
    pub(crate) hopper_kinds: u16,
    pub(crate) lame_kinds: u16,
}

#[inline(always)]
pub(crate) fn bits16(mut m: u16) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(i)
        }
    })
}

impl<B: Bitboard> Pos<B> {
    /// An empty board; `fen` fills it.
    pub(crate) fn empty(v: Arc<Variant>, t: Arc<Tables<B>>) -> Pos<B> {
        let nkinds = v.pieces.len();
        let mut pawn_kinds = 0;
        let mut right_takers = 0;
        let mut hopper_kinds = 0;
        let mut lame_kinds = 0;
        for (k, p) in v.pieces.iter().enumerate() {
            if p.is_pawn() {
                pawn_kinds |= 1 << k;
            }
            for &r in &p.right_lost_to {
                right_takers |= 1 << r;
            }
            for c in 0..2 {
                let pt = &t.pieces[k * 2 + c];
                if pt.hop_capture != 0 {
                    hopper_kinds |= 1 << k;
                }
                if pt.has_lame {
                    lame_kinds |= 1 << k;
                }
            }
        }
        Pos {
            royal: v.royal_kind(),
            v,
            t,
            board: [Piece::NONE; MAX_SQUARES],
            by_color: [B::ZERO; 2],
            by_kind: [B::ZERO; MAX_KINDS],
            stm: Color::White,
            st: StateData {
                gates: B::ZERO,
                count_ply: 0,
                count_limit: 0,
                rule50: 0,
                checks: [0; 2],
                game_ply: 0,
                key: 0,
            },
            stack: Vec::with_capacity(256),
            nkinds,
            pawn_kinds,
            right_takers,
            hopper_kinds,
            lame_kinds,
        }
    }

    #[inline(always)]
    pub(crate) fn put(&mut self, sq: usize, kind: usize, c: Color) {
        let piece = Piece::new(kind, c);
        self.board[sq] = piece;
        let b = B::bit(sq);
        self.by_color[c as usize] |= b;
        self.by_kind[kind] |= b;
        self.st.key ^= self.t.zobrist_piece[sq][piece.zobrist_index()];
    }

    #[inline(always)]
    pub(crate) fn remove(&mut self, sq: usize) {
        let piece = self.board[sq];
        self.board[sq] = Piece::NONE;
        let b = B::bit(sq);
        self.by_color[piece.color_index()] ^= b;
        self.by_kind[piece.kind()] ^= b;
        self.st.key ^= self.t.zobrist_piece[sq][piece.zobrist_index()];
    }

    /// Moving without the key update (unmake restores the saved key).
    #[inline(always)]
    fn put_raw(&mut self, sq: usize, piece: Piece) {
        self.board[sq] = piece;
        let b = B::bit(sq);
        self.by_color[piece.color_index()] |= b;
        self.by_kind[piece.kind()] |= b;
    }

    #[inline(always)]
    fn remove_raw(&mut self, sq: usize) {
        let piece = self.board[sq];
        self.board[sq] = Piece::NONE;
        let b = B::bit(sq);
        self.by_color[piece.color_index()] ^= b;
        self.by_kind[piece.kind()] ^= b;
    }

    #[inline(always)]
    pub fn occupied(&self) -> B {
        self.by_color[0] | self.by_color[1]
    }

    #[inline(always)]
    pub fn king_square(&self, c: Color) -> Option<usize> {
        let k = self.by_kind[self.royal] & self.by_color[c as usize];
        (!k.is_empty()).then(|| k.lsb())
    }

    #[inline(always)]
    pub fn pieces_of(&self, kind: usize, c: Color) -> B {
        self.by_kind[kind] & self.by_color[c as usize]
    }

    /// The game has already been decided by check counting.
    #[inline(always)]
    pub fn checks_exhausted(&self) -> bool {
        self.v.rules.checks_to_win > 0 && (self.st.checks[0] == 0 || self.st.checks[1] == 0)
    }

    fn pawn_step_raw(&self, sq: usize) -> usize {
        let dy = if self.stm == Color::White { 1 } else { -1 };
        self.v
            .size
            .offset(crate::geometry::Square(sq as u8), 0, dy)
            .expect("pushed pawn's square")
            .index()
    }

    /// The square one step forward of the own pawn on `sq`, outside its promotion zone.
    pub(crate) fn pawn_step(&self, sq: usize) -> Option<usize> {
        let piece = self.board[sq];
        let dy = if piece.color_index() == 0 { 1 } else { -1 };
        let step = self
            .v
            .size
            .offset(crate::geometry::Square(sq as u8), 0, dy)?
            .index();
        (!self.t.pieces[piece.table_index()].promo_zone.has(step)).then_some(step)
    }

    /// Makes a move (assumed legal).
    pub fn make(&mut self, m: Move) {
        let prev = self.st;
        let (from, to) = (m.from(), m.to());
        let us = self.stm;
        let them = !us;
        if m.pushes_pawn() {
            let step = self.pawn_step(to).expect("generated push has a step");
            let pawn = self.board[to].kind();
            self.remove(to);
            self.put(step, pawn, us);
            self.st.rule50 = 0;
        }
        let moved = self.board[from];
        let kind = moved.kind();
        let captured = self.board[to];
        self.st.game_ply = self.st.game_ply.saturating_add(1);
        if !m.pushes_pawn() {
            self.st.rule50 = self.st.rule50.saturating_add(1);
        }
        // A running count goes up by one every ply (docs/rules.md#counting-fsf, step 2).
        if self.st.count_limit != 0 {
            self.st.count_ply = self.st.count_ply.saturating_add(1);
        }
        if captured.is_some() {
            self.remove(to);
            self.st.rule50 = 0;
        }
        self.remove(from);
        let new_kind = m.promotion().unwrap_or(kind);
        self.put(to, new_kind, us);
        if self.pawn_kinds >> kind & 1 == 1 {
            self.st.rule50 = 0;
        }
        // First-move rights.
        if self.st.gates.any() {
            self.st.gates &= !(B::bit(from) | B::bit(to));
            if captured.is_some() && self.v.rules.first_move.end_on_capture {
                self.st.gates = B::ZERO;
            }
            if self.right_takers >> kind & 1 == 1 {
                let mut holders = self.st.gates & self.by_color[them as usize];
                let reach = self.t.pieces[kind * 2 + us as usize].empty_attacks[to];
                while holders.any() {
                    let h = holders.pop_lsb();
                    let hk = self.board[h].kind();
                    if reach.has(h) && self.v.pieces[hk].right_lost_to.contains(&kind) {
                        self.st.gates &= !B::bit(h);
                    }
                }
            }
        }
        self.stm = them;
        self.st.key ^= self.t.zobrist_side;
        if self.v.rules.checks_to_win > 0 {
            if let Some(ek) = self.king_square(them) {
                if self.attacked_with(ek, us, self.occupied(), self.by_color[us as usize]) {
                    let c = &mut self.st.checks[us as usize];
                    let before = *c;
                    *c = c.saturating_sub(1);
                    self.st.key ^= self.t.zobrist_checks[us as usize][before as usize]
                        ^ self.t.zobrist_checks[us as usize][*c as usize];
                }
            }
        }
        // Counting starts after the move (docs/rules.md#counting; `counting.rs`).
        if self.v.rules.counting.mode != CountingMode::None {
            self.update_counting(captured, m.promotion().is_some());
        }
        self.stack.push(Undo {
            mv: m,
            moved,
            captured,
            prev,
        });
    }

    /// Takes back the last move.
    pub fn unmake(&mut self) {
        let u = self.stack.pop().expect("unmake without a move");
        let (from, to) = (u.mv.from(), u.mv.to());
        self.stm = !self.stm;
        self.remove_raw(to);
        self.put_raw(from, u.moved);
        if u.captured.is_some() {
            self.put_raw(to, u.captured);
        }
        if u.mv.pushes_pawn() {
            let step = self.pawn_step_raw(to);
            let pawn = self.board[step];
            self.remove_raw(step);
            self.put_raw(to, pawn);
        }
        self.st = u.prev;
    }

    /// Earlier occurrences of the current position (same key, same side to move) since the
    /// last irreversible move.
    pub(crate) fn repetitions(&self) -> usize {
        let key = self.st.key;
        let n = self.stack.len();
        let back = (self.st.rule50 as usize).min(n);
        (2..=back)
            .step_by(2)
            .filter(|&i| self.stack[n - i].prev.key == key)
            .count()
    }
}
