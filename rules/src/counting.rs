//! The counting rules (Makruk and Cambodian counting, docs/rules.md#counting) as the engine
//! applies them: the limit a side may count to, and how `make` starts or replaces a count after
//! each move. The count itself (`count_ply`, `count_limit`) is part of `StateData` in
//! `engine.rs`; when a count that ran out draws is decided in `outcome.rs`.

use crate::bitboard::Bitboard;
use crate::config::CountingMode;
use crate::engine::{bits16, Piece, Pos};
use crate::geometry::Color;

impl<B: Bitboard> Pos<B> {
    fn material(&self, c: Color) -> u32 {
        self.by_color[c as usize].popcount()
    }

    fn pawns_on_board(&self) -> bool {
        bits16(self.pawn_kinds).any(|k| self.by_kind[k].any())
    }

    /// The counting limit in moves for `side` counting (0: no count for that side). Mirrors
    /// Fairy-Stockfish's `count_limit` so FENs can be exchanged with it.
    pub(crate) fn count_limit(&self, side: Color) -> u16 {
        let c = &self.v.rules.counting;
        let mine = self.material(side);
        let theirs = self.material(!side);
        let pieces_limit = |offset: u16| -> u16 {
            for &(k, n, limit) in &c.piece_limits {
                if self.pieces_of(k, !side).popcount() >= n as u32 {
                    return limit.saturating_sub(offset);
                }
            }
            c.default_limit.saturating_sub(offset)
        };
        match c.mode {
            CountingMode::None => 0,
            CountingMode::Makruk => {
                if self.pawns_on_board() || theirs == 1 {
                    0
                } else if mine > 1 {
                    c.board_limit
                } else {
                    pieces_limit(0)
                }
            }
            CountingMode::Cambodian => {
                if mine > 3 || theirs == 1 {
                    0
                } else if mine > 1 {
                    c.board_limit.saturating_sub(1)
                } else if self.pawns_on_board() {
                    0
                } else {
                    pieces_limit(1)
                }
            }
        }
    }

    pub(crate) fn update_counting(&mut self, captured: Piece, promotion: bool) {
        let stm = self.stm;
        let mover = !stm;
        let total = self.occupied().popcount() as u16;
        let captured_pawn = captured.is_some() && self.pawn_kinds >> captured.kind() & 1 == 1;
        if captured_pawn && self.material(mover) == 1 && !self.pawns_on_board() {
            let l = self.count_limit(mover);
            if l != 0 {
                self.st.count_limit = 2 * l;
                self.st.count_ply = 2 * total - 1;
            }
        }
        if self.st.count_limit == 0
            || ((captured.is_some() || promotion) && self.material(stm) == 1)
        {
            let l = self.count_limit(stm);
            if l != 0 {
                self.st.count_limit = 2 * l;
                self.st.count_ply = if self.material(stm) > 1 { 0 } else { 2 * total };
            }
        }
    }
}
