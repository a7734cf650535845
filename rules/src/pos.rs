//! The generic position over one bitboard word: board, make/unmake, legal move generation,
//! attack detection, Zobrist keys, first-move rights, check counts and the counting state.
//! No code here knows a variant by name: everything comes from the compiled tables.

use crate::bitboard::Bitboard;
use crate::config::{CountingMode, FaceOff};
use crate::geometry::{Color, MAX_SQUARES};
use crate::moves::{Move, MoveList};
use crate::tables::Tables;
use crate::variant::{Variant, MAX_KINDS};
use std::sync::Arc;

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
    pub moved: u8,
    pub captured: u8,
    pub prev: StateData<B>,
}

#[derive(Clone)]
pub struct Pos<B: Bitboard> {
    pub(crate) v: Arc<Variant>,
    pub(crate) t: Arc<Tables<B>>,
    /// 0 = empty, else `kind * 2 + colour + 1`.
    pub(crate) board: [u8; MAX_SQUARES],
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
fn bits16(mut m: u16) -> impl Iterator<Item = usize> {
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
            board: [0; MAX_SQUARES],
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
        self.board[sq] = (kind * 2 + c as usize + 1) as u8;
        let b = B::bit(sq);
        self.by_color[c as usize] |= b;
        self.by_kind[kind] |= b;
        self.st.key ^= self.t.zobrist_piece[sq][kind * 2 + c as usize + 1];
    }

    #[inline(always)]
    pub(crate) fn remove(&mut self, sq: usize) {
        let code = self.board[sq] as usize;
        let (kind, c) = ((code - 1) >> 1, (code - 1) & 1);
        self.board[sq] = 0;
        let b = B::bit(sq);
        self.by_color[c] ^= b;
        self.by_kind[kind] ^= b;
        self.st.key ^= self.t.zobrist_piece[sq][code];
    }

    /// Moving without the key update (unmake restores the saved key).
    #[inline(always)]
    fn put_raw(&mut self, sq: usize, code: u8) {
        let (kind, c) = ((code as usize - 1) >> 1, (code as usize - 1) & 1);
        self.board[sq] = code;
        let b = B::bit(sq);
        self.by_color[c] |= b;
        self.by_kind[kind] |= b;
    }
    #[inline(always)]
    fn remove_raw(&mut self, sq: usize) {
        let code = self.board[sq] as usize;
        let (kind, c) = ((code - 1) >> 1, (code - 1) & 1);
        self.board[sq] = 0;
        let b = B::bit(sq);
        self.by_color[c] ^= b;
        self.by_kind[kind] ^= b;
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
                if pcs.has(b) && t.pieces[self.board[b] as usize - 1].slide_capture >> d & 1 == 1 {
                    return true;
                }
            }
        }
        for d in bits16(t.any_hop_capture[ci]) {
            let e = t.opposite[d];
            if let Some(screen) = t.first_blocker(e, s, occ) {
                if let Some(b) = t.first_blocker(e, screen, occ) {
                    if pcs.has(b) && t.pieces[self.board[b] as usize - 1].hop_capture >> d & 1 == 1
                    {
                        return true;
                    }
                }
            }
        }
        false
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

    /// The game has already been decided by check counting.
    #[inline(always)]
    pub fn checks_exhausted(&self) -> bool {
        self.v.rules.checks_to_win > 0 && (self.st.checks[0] == 0 || self.st.checks[1] == 0)
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

    fn pawn_step_raw(&self, sq: usize) -> usize {
        let dy = if self.stm == Color::White { 1 } else { -1 };
        self.v
            .size
            .offset(crate::geometry::Square(sq as u8), 0, dy)
            .expect("pushed pawn's square")
            .index()
    }

    /// The square one step forward of the own pawn on `sq`, outside its promotion zone.
    fn pawn_step(&self, sq: usize) -> Option<usize> {
        let code = self.board[sq] as usize;
        let (kind, c) = ((code - 1) >> 1, (code - 1) & 1);
        let dy = if c == 0 { 1 } else { -1 };
        let step = self
            .v
            .size
            .offset(crate::geometry::Square(sq as u8), 0, dy)?
            .index();
        (!self.t.pieces[kind * 2 + c].promo_zone.has(step)).then_some(step)
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
                                t.pieces[self.board[b2] as usize - 1].slide_capture >> d & 1 == 1;
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
        let moving_royal = (self.board[from] as usize - 1) >> 1 == self.royal;
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

    /// Makes a move (assumed legal).
    pub fn make(&mut self, m: Move) {
        let prev = self.st;
        let (from, to) = (m.from(), m.to());
        let us = self.stm;
        let them = !us;
        if m.pushes_pawn() {
            let step = self.pawn_step(to).expect("generated push has a step");
            let pawn = self.board[to] as usize - 1;
            self.remove(to);
            self.put(step, pawn >> 1, us);
            self.st.rule50 = 0;
        }
        let code = self.board[from];
        let kind = (code as usize - 1) >> 1;
        let captured = self.board[to];
        self.st.game_ply = self.st.game_ply.saturating_add(1);
        if !m.pushes_pawn() {
            self.st.rule50 = self.st.rule50.saturating_add(1);
        }
        if self.st.count_limit != 0 {
            self.st.count_ply = self.st.count_ply.saturating_add(1);
        }
        if captured != 0 {
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
            if captured != 0 && self.v.rules.first_move.end_on_capture {
                self.st.gates = B::ZERO;
            }
            if self.right_takers >> kind & 1 == 1 {
                let mut holders = self.st.gates & self.by_color[them as usize];
                let reach = self.t.pieces[kind * 2 + us as usize].empty_attacks[to];
                while holders.any() {
                    let h = holders.pop_lsb();
                    let hk = (self.board[h] as usize - 1) >> 1;
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
        if self.v.rules.counting.mode != CountingMode::None {
            self.update_counting(captured, m.promotion().is_some());
        }
        self.stack.push(Undo {
            mv: m,
            moved: code,
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
        if u.captured != 0 {
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

    fn update_counting(&mut self, captured: u8, promotion: bool) {
        let stm = self.stm;
        let mover = !stm;
        let total = self.occupied().popcount() as u16;
        let captured_pawn =
            captured != 0 && self.pawn_kinds >> ((captured as usize - 1) >> 1) & 1 == 1;
        if captured_pawn && self.material(mover) == 1 && !self.pawns_on_board() {
            let l = self.count_limit(mover);
            if l != 0 {
                self.st.count_limit = 2 * l;
                self.st.count_ply = 2 * total - 1;
            }
        }
        if self.st.count_limit == 0 || ((captured != 0 || promotion) && self.material(stm) == 1) {
            let l = self.count_limit(stm);
            if l != 0 {
                self.st.count_limit = 2 * l;
                self.st.count_ply = if self.material(stm) > 1 { 0 } else { 2 * total };
            }
        }
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
        let code = self.board[from];
        if code == 0 {
            return Vec::new();
        }
        let c = if (code - 1) & 1 == 0 {
            Color::White
        } else {
            Color::Black
        };
        let occ = self.occupied();
        self.by_color[!c as usize]
            .squares()
            .filter(|&s| self.attacked_with(s, c, occ, B::bit(from)))
            .collect()
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
