//! The counting rules (Makruk and Cambodian counting, docs/rules.md#counting) as the engine
//! applies them: the limit a side may count to, and how `make` starts or replaces a count after
//! each move. The count itself (`count_ply`, `count_limit`) is part of `StateData` in
//! `engine.rs`; when a count that ran out draws is decided in `outcome.rs`.

use crate::bitboard::Bitboard;
use crate::engine::{bits16, Piece, Pos};
use crate::geometry::Color;
use crate::variant_file::CountingMode;

impl<B: Bitboard> Pos<B> {
    /// Pieces of `c` on the board, king included (1: a bare king).
    fn material(&self, c: Color) -> u32 {
        self.by_color[c as usize].popcount()
    }

    /// Whether an unpromoted pawn (a piece that promotes) of either side is left.
    fn pawns_on_board(&self) -> bool {
        bits16(self.pawn_kinds).any(|k| self.by_kind[k].any())
    }

    /// The counting limit in moves for `side` counting (0: no count for that side). Mirrors
    /// Fairy-Stockfish's `count_limit` so FENs can be exchanged with it
    /// (docs/rules.md#counting-fsf, step 1).
    pub(crate) fn count_limit(&self, side: Color) -> u16 {
        let c = &self.v.rules.counting;
        let mine = self.material(side);
        let theirs = self.material(!side);
        // The pieces' honour limit by the opponent's (the strong side's) material, the first
        // line of the table that matches (docs/rules.md#counting-makruk); Cambodian counting
        // passes `offset` 1 for its limits one move lower (docs/rules.md#counting-cambodian).
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
            // docs/rules.md#counting-makruk.
            CountingMode::Makruk => {
                if self.pawns_on_board() || theirs == 1 {
                    // No count while an unpromoted pawn is left, nor for a side whose opponent
                    // is bare (it is the strong side: the bare king counts, if anyone).
                    0
                } else if mine > 1 {
                    // Board's honour: `side` has more than its king (64 moves).
                    c.board_limit
                } else {
                    // Pieces' honour: `side` is bare.
                    pieces_limit(0)
                }
            }
            // docs/rules.md#counting-cambodian.
            CountingMode::Cambodian => {
                if mine > 3 || theirs == 1 {
                    // No count for a side with more than three pieces (king included), nor
                    // for one whose opponent is bare.
                    0
                } else if mine > 1 {
                    // Board's honour with two or three pieces, pawns on the board or not, one
                    // move lower than Makruk's (63).
                    c.board_limit.saturating_sub(1)
                } else if self.pawns_on_board() {
                    // A bare king counts only the pieces' honour, which needs a board without
                    // pawns.
                    0
                } else {
                    // Pieces' honour: `side` is bare and no pawn is left; limits one lower.
                    pieces_limit(1)
                }
            }
        }
    }

    /// Starts or replaces a count after a move, as Fairy-Stockfish does at the end of its
    /// `do_move` (docs/rules.md#counting-fsf, step 3); called by `make` in counting variants,
    /// after the side to move has changed and after a running count has gone up by the move's
    /// ply (step 2). Counts are kept in plies: a limit of L moves is 2 x L plies, and the game is
    /// drawn once the count passes it (docs/rules.md#counting-draw, decided in `outcome.rs`).
    /// Nothing else starts, restarts or stops a count (step 4).
    pub(crate) fn update_counting(&mut self, captured: Piece, promotion: bool) {
        let stm = self.stm;
        let mover = !stm;
        let total = self.occupied().popcount() as u16;
        let captured_pawn = captured.is_some() && self.pawn_kinds >> captured.kind() & 1 == 1;
        // Step 3a: a bare king that took the last pawn starts its own pieces' honour count
        // (docs/rules.md#counting-makruk; its Cambodian limit docs/rules.md#counting-cambodian):
        // from twice the pieces on the board, less one because the other side is now to move.
        if captured_pawn && self.material(mover) == 1 && !self.pawns_on_board() {
            let l = self.count_limit(mover);
            // Only when the mover has a limit (none against a bare king).
            if l != 0 {
                self.st.count_limit = 2 * l;
                self.st.count_ply = 2 * total - 1;
            }
        }
        // Step 3b: while no count runs, the side now to move starts one if it has a limit;
        // after a capture or promotion that leaves it bare, its pieces' honour (if it has a
        // limit) replaces a running count. Any other running count goes on.
        if self.st.count_limit == 0
            || ((captured.is_some() || promotion) && self.material(stm) == 1)
        {
            let l = self.count_limit(stm);
            if l != 0 {
                self.st.count_limit = 2 * l;
                // Board's honour from 0 while it has more than its king; the bare king's
                // pieces' honour from twice the pieces on the board, both kings included
                // (docs/rules.md#counting-makruk, docs/rules.md#counting-cambodian).
                self.st.count_ply = if self.material(stm) > 1 { 0 } else { 2 * total };
            }
        }
    }
}
