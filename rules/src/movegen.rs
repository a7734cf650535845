//! Move generation and attack detection for the engine's `Pos<B>` (defined in `engine.rs`):
//! which squares a side attacks, check and the kings' face-off, pseudo-legal moves from the
//! precomputed tables, the legality filter (a full test only for moves that may expose the
//! king), and perft. Nothing here changes the position except perft, which makes and unmakes.
//! The public [`Position`] in `position.rs` calls these through its word dispatch
//! (`legal_moves`, `in_check`, `perft`); the chase rule in `outcome.rs` asks `defended` and
//! `piece_attacks`.
//!
//! [`Position`]: crate::Position

use crate::bitboard::Bitboard;
use crate::engine::{bits16, Pos};
use crate::geometry::Color;
use crate::moves::{Move, MoveList};
use crate::variant_file::FaceOff;

impl<B: Bitboard> Pos<B> {
    /// Whether a piece of colour `c` among `pcs` attacks square `s` with occupancy `occ`.
    #[inline]
    pub(crate) fn attacked_with(&self, s: usize, c: Color, occ: B, pcs: B) -> bool {
        let t = &*self.t;
        let ci = c as usize;
        for kind in 0..self.nkinds {
            let p = self.by_kind[kind] & pcs;
            if p.is_empty() {
                continue;
            }
            let pt = &t.pieces[kind * 2 + ci];
            if (pt.rev_leap_capture[s] & p).any() {
                return true;
            }
            if pt.has_lame {
                let (a, b) = pt.rev_lame_range[s];
                for &(block, froms) in &pt.rev_lame[a as usize..b as usize] {
                    if (froms & p).any() && (block & occ).is_empty() {
                        return true;
                    }
                }
            }
        }
        for d in bits16(t.any_slide_capture[ci]) {
            if let Some(b) = t.first_blocker(t.opposite[d], s, occ) {
                if pcs.has(b) && t.pieces[self.board[b].table_index()].slide_capture >> d & 1 == 1 {
                    return true;
                }
            }
        }
        for d in bits16(t.any_hop_capture[ci]) {
            let e = t.opposite[d];
            if let Some(screen) = t.first_blocker(e, s, occ) {
                if let Some(b) = t.first_blocker(e, screen, occ) {
                    if pcs.has(b) && t.pieces[self.board[b].table_index()].hop_capture >> d & 1 == 1
                    {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// Whether a piece of `c` of one of the kinds in the bit mask `kinds` attacks `s` (pins
    /// and the legality of the capture are not considered).
    pub fn attacked_by_kinds(&self, s: usize, c: Color, kinds: u32) -> bool {
        let mut pcs = B::ZERO;
        for k in 0..self.nkinds {
            if kinds >> k & 1 == 1 {
                pcs |= self.by_kind[k];
            }
        }
        pcs &= self.by_color[c as usize];
        pcs.any() && self.attacked_with(s, c, self.occupied(), pcs)
    }

    /// Squares the non-royal pieces of `c` could move to or capture on, summed over pieces
    /// (pseudo-legal: pins, checks, first-move rights and promotion choices left out). A cheap
    /// mobility measure for evaluations.
    pub fn mobility(&self, c: Color) -> u32 {
        let t = &*self.t;
        let us = c as usize;
        let own = self.by_color[us];
        let their = self.by_color[us ^ 1];
        let occ = own | their;
        let free = (!occ & t.all) | their;
        let mut n = 0;
        for kind in 0..self.nkinds {
            if kind == self.royal {
                continue;
            }
            let mut pcs = self.by_kind[kind] & own;
            if pcs.is_empty() {
                continue;
            }
            let pt = &t.pieces[kind * 2 + us];
            let slides = pt.slide_quiet | pt.slide_capture;
            let hops = pt.hop_quiet | pt.hop_capture;
            while pcs.any() {
                let from = pcs.pop_lsb();
                let mut m = pt.leap_quiet[from] | pt.leap_capture[from];
                if pt.has_lame {
                    let (a, b) = pt.lame_range[from];
                    for e in &pt.lame[a as usize..b as usize] {
                        if (e.block & occ).is_empty() {
                            m |= e.quiet | e.capture;
                        }
                    }
                }
                for d in bits16(slides) {
                    m |= t.ray_attacks(d, from, occ);
                }
                for d in bits16(hops) {
                    if let Some(screen) = t.first_blocker(d, from, occ) {
                        m |= t.ray_attacks(d, screen, occ) & their;
                    }
                }
                n += (m & free & pt.stand).popcount();
            }
        }
        n
    }

    /// Kings see each other along a face-off line.
    #[inline(always)]
    pub(crate) fn kings_face(&self, k: usize, ek: usize, occ: B) -> bool {
        let t = &*self.t;
        for d in bits16(t.face_off_dirs) {
            if t.rays[d][k].has(ek) {
                return t.first_blocker(d, k, occ) == Some(ek);
            }
        }
        false
    }

    /// Whether side `c`'s royal piece is attacked (or facing the other king).
    pub fn in_check_color(&self, c: Color) -> bool {
        let Some(k) = self.king_square(c) else {
            return false;
        };
        let occ = self.occupied();
        if self.attacked_with(k, !c, occ, self.by_color[!c as usize]) {
            return true;
        }
        match self.king_square(!c) {
            Some(ek) if self.v.rules.face_off != FaceOff::None => self.kings_face(k, ek, occ),
            _ => false,
        }
    }

    #[inline(always)]
    pub fn in_check(&self) -> bool {
        self.in_check_color(self.stm)
    }

    /// Whether a piece of `c` could recapture on `sq` after the piece on `by` took there: the
    /// defenders are found with `by` gone from its square, so a defender behind the attacker on
    /// its line counts and a cannon screened only by the attacker does not (as Fairy-Stockfish
    /// decides a chase). Pins and the recapture's legality are not considered.
    pub(crate) fn defended(&self, sq: usize, c: Color, by: usize) -> bool {
        let pcs = self.by_color[c as usize] & !B::bit(sq);
        self.attacked_with(sq, c, self.occupied() & !B::bit(by), pcs)
    }

    /// The enemy-occupied squares the piece on `from` attacks (only enemies matter to the chase
    /// rule, and testing their few squares instead of the whole board is what keeps a
    /// repetition adjudication cheap).
    pub(crate) fn piece_attacks(&self, from: usize) -> Vec<usize> {
        let piece = self.board[from];
        if piece.is_none() {
            return Vec::new();
        }
        let c = piece.color();
        let occ = self.occupied();
        self.by_color[!c as usize]
            .squares()
            .filter(|&s| self.attacked_with(s, c, occ, B::bit(from)))
            .collect()
    }

    /// Legal moves (perft semantics: no repetition or counting effects; none once the game
    /// has been decided by check counting).
    pub fn generate_legal(&self, out: &mut MoveList) {
        out.clear();
        if self.checks_exhausted() {
            return;
        }
        let Some(k) = self.king_square(self.stm) else {
            self.generate_pseudo(out, false);
            return;
        };
        let in_check = self.in_check();
        self.generate_pseudo(out, in_check);
        if in_check {
            out.retain(|m| self.is_legal_full(m));
            return;
        }
        let (df, dt) = self.danger_masks(k);
        let df = df | B::bit(k);
        out.retain(|m| {
            !(df.has(m.from()) || dt.has(m.to()) || m.pushes_pawn()) || self.is_legal_full(m)
        });
    }

    /// Pseudo-legal moves of the side to move into `out` (appended).
    fn generate_pseudo(&self, out: &mut MoveList, in_check: bool) {
        let t = &*self.t;
        let us = self.stm as usize;
        let own = self.by_color[us];
        let their = self.by_color[us ^ 1];
        let occ = own | their;
        let empty = !occ & t.all;
        let royal_blocked = in_check && self.v.rules.first_move.royal_not_in_check;
        for kind in 0..self.nkinds {
            let mut pcs = self.by_kind[kind] & own;
            if pcs.is_empty() {
                continue;
            }
            let pt = &t.pieces[kind * 2 + us];
            let slides = pt.slide_quiet | pt.slide_capture;
            let hops = pt.hop_quiet | pt.hop_capture;
            while pcs.any() {
                let from = pcs.pop_lsb();
                let mut q = pt.leap_quiet[from];
                let mut c = pt.leap_capture[from];
                if self.st.gates.has(from) && !(royal_blocked && kind == self.royal) {
                    q |= pt.init_quiet[from];
                    c |= pt.init_capture[from];
                }
                if pt.has_lame {
                    let (a, b) = pt.lame_range[from];
                    for e in &pt.lame[a as usize..b as usize] {
                        if (e.block & occ).is_empty() {
                            q |= e.quiet;
                            c |= e.capture;
                        }
                    }
                }
                q &= empty;
                c &= their;
                for d in bits16(slides) {
                    let att = t.ray_attacks(d, from, occ);
                    if pt.slide_quiet >> d & 1 == 1 {
                        q |= att & empty;
                    }
                    if pt.slide_capture >> d & 1 == 1 {
                        c |= att & their;
                    }
                }
                for d in bits16(hops) {
                    if let Some(screen) = t.first_blocker(d, from, occ) {
                        let beyond = t.ray_attacks(d, screen, occ);
                        if pt.hop_quiet >> d & 1 == 1 {
                            q |= beyond & empty;
                        }
                        if pt.hop_capture >> d & 1 == 1 {
                            c |= beyond & their;
                        }
                    }
                }
                let mut targets = (q | c) & pt.stand;
                let promo = targets & pt.promo_zone;
                if promo.any() {
                    targets ^= promo;
                    let pr = self.v.pieces[kind]
                        .promotion
                        .as_ref()
                        .expect("zone implies promotion");
                    for to in promo.squares() {
                        for &k in &pr.to {
                            out.push(Move::with_promotion(from, to, k));
                        }
                        if pr.optional {
                            out.push(Move::new(from, to));
                        }
                    }
                }
                for to in targets.squares() {
                    out.push(Move::new(from, to));
                }
                if pt.has_push && self.st.gates.has(from) && !(royal_blocked && kind == self.royal)
                {
                    let mut pawns = B::ZERO;
                    for k in bits16(self.pawn_kinds) {
                        pawns |= self.by_kind[k];
                    }
                    for to in (pt.push_pawn[from] & pawns & own).squares() {
                        if let Some(step) = self.pawn_step(to) {
                            if empty.has(step) {
                                out.push(Move::with_pawn_push(from, to));
                            }
                        }
                    }
                }
            }
        }
    }

    /// Squares from which a move may expose our king, and to which a move may (by becoming a
    /// hopper's screen); moves touching neither need no full legality test.
    fn danger_masks(&self, k: usize) -> (B, B) {
        let t = &*self.t;
        let us = self.stm as usize;
        let them = us ^ 1;
        let own = self.by_color[us];
        let their = self.by_color[them];
        let occ = own | their;
        let mut from_mask = B::ZERO;
        let mut to_mask = B::ZERO;
        let ek = self.king_square(!self.stm);
        // Pins by sliders and by the enemy king along face-off lines.
        let slide = t.any_slide_capture[them];
        let mut scan = t.face_off_dirs;
        for d in bits16(slide) {
            scan |= 1 << t.opposite[d];
        }
        for e in bits16(scan) {
            if let Some(b1) = t.first_blocker(e, k, occ) {
                if own.has(b1) {
                    if let Some(b2) = t.first_blocker(e, b1, occ) {
                        if their.has(b2) {
                            let d = t.opposite[e];
                            let slider =
                                t.pieces[self.board[b2].table_index()].slide_capture >> d & 1 == 1;
                            let king = t.face_off_dirs >> e & 1 == 1 && Some(b2) == ek;
                            if slider || king {
                                from_mask |= B::bit(b1);
                            }
                        }
                    }
                }
            }
        }
        // Hoppers: any change of the pieces on a line between them and the king matters.
        if self.hopper_kinds != 0 {
            let mut hoppers = B::ZERO;
            for kind in bits16(self.hopper_kinds) {
                hoppers |= self.by_kind[kind];
            }
            hoppers &= their;
            if hoppers.any() {
                for d in bits16(t.any_hop_capture[them]) {
                    let ray = t.rays[t.opposite[d]][k];
                    if (ray & hoppers).any() {
                        from_mask |= ray;
                        to_mask |= ray;
                    }
                }
            }
        }
        // Lame leapers: vacating a leg square may open an attack.
        if self.lame_kinds != 0 {
            for kind in bits16(self.lame_kinds) {
                let p = self.by_kind[kind] & their;
                if p.is_empty() {
                    continue;
                }
                let pt = &t.pieces[kind * 2 + them];
                let (a, b) = pt.rev_lame_range[k];
                for &(block, froms) in &pt.rev_lame[a as usize..b as usize] {
                    if (froms & p).any() {
                        from_mask |= block;
                    }
                }
            }
        }
        (from_mask, to_mask)
    }

    /// Full legality test of a pseudo-legal move: our king is not attacked and does not face
    /// the enemy king afterwards.
    #[inline]
    pub(crate) fn is_legal_full(&self, m: Move) -> bool {
        let us = self.stm;
        let (from, to) = (m.from(), m.to());
        let mut occ = (self.occupied() ^ B::bit(from)) | B::bit(to);
        if m.pushes_pawn() {
            occ |= B::bit(self.pawn_step(to).expect("generated push has a step"));
        }
        let their = self.by_color[!us as usize] & !B::bit(to);
        let moving_royal = self.board[from].kind() == self.royal;
        let Some(k) = (if moving_royal {
            Some(to)
        } else {
            self.king_square(us)
        }) else {
            return true;
        };
        if self.attacked_with(k, !us, occ, their) {
            return false;
        }
        if self.v.rules.face_off != FaceOff::None {
            if let Some(ek) = self.king_square(!us) {
                if ek != to && self.kings_face(k, ek, occ) {
                    return false;
                }
            }
        }
        true
    }

    /// Perft: the number of legal move sequences of length `depth` (bulk-counted last ply).
    pub fn perft(&mut self, depth: u32) -> u64 {
        let mut list = MoveList::new();
        self.generate_legal(&mut list);
        if depth <= 1 {
            return if depth == 0 { 1 } else { list.len() as u64 };
        }
        let mut n = 0;
        for &m in list.iter() {
            self.make(m);
            n += self.perft(depth - 1);
            self.unmake();
        }
        n
    }
}
