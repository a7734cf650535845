//! Input planes and policy indices, generic over the variant file (docs/encoding.md). The board
//! is always seen from the side to move: for Black the ranks are mirrored, so one net plays both
//! sides, and "own" pieces are always the side to move's.

use std::sync::Arc;
use varzero_rules::{Color, Move, Position, Square, Variant};

/// Bump when the planes or the policy layout change: nets record it and refuse to load across.
pub const ENCODING_VERSION: u32 = 1;

/// Planes the attack inputs add (`Encoding::with_attacks`).
pub const ATTACK_PLANES: usize = 4;

/// The encoding of one variant.
#[derive(Clone, Debug)]
pub struct Encoding {
    pub variant: Arc<Variant>,
    pub files: usize,
    pub ranks: usize,
    pub planes: usize,
    /// Promotion choices the policy distinguishes (1 when every promotion is forced).
    pub promo_choices: usize,
    /// Whether the attack planes follow the base planes (`with_attacks`).
    pub attacks: bool,
    /// Per kind, the bit mask of the kinds of lower value (the attack planes' "hangs" test),
    /// made once here rather than per encoded position.
    lower_kinds: Vec<u32>,
    region_names: Vec<String>,
}

impl Encoding {
    pub fn new(variant: &Arc<Variant>) -> Encoding {
        let k = variant.pieces.len();
        let region_names: Vec<String> = variant.regions.keys().cloned().collect();
        // A forced promotion to a single piece needs no choice (that move cannot also be made
        // without promoting); otherwise choice 0 is "no promotion" and 1.. the targets.
        let promo_choices = 1 + variant
            .pieces
            .iter()
            .filter_map(|p| p.promotion.as_ref())
            .filter(|pr| pr.to.len() > 1 || pr.optional)
            .map(|pr| pr.to.len())
            .max()
            .unwrap_or(0);
        // 2 per kind (own, theirs), colour, rights (own, theirs), count ply and limit,
        // repetitions, checks remaining (own, theirs), regions (own view), ones.
        let planes = 2 * k + 1 + 2 + 2 + 1 + 2 + region_names.len() + 1;
        let lower_kinds = variant
            .pieces
            .iter()
            .map(|p| {
                variant
                    .pieces
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| d.value < p.value)
                    .fold(0u32, |m, (k, _)| m | 1 << k)
            })
            .collect();
        Encoding {
            variant: variant.clone(),
            files: variant.size.files as usize,
            ranks: variant.size.ranks as usize,
            planes,
            promo_choices,
            attacks: false,
            lower_kinds,
            region_names,
        }
    }

    /// Adds (or leaves out) the attack planes, after the base planes: the squares each side
    /// attacks, and the pieces of each side that hang (attacked and not defended, or attacked
    /// by a piece of lower value; royal pieces left out). A small net learns from few games
    /// what the board shows at a glance only slowly: the exchange priors of the search, which
    /// are worth some 450 Elo to every Makruk net at 400 playouts (docs/runs.md, stop 46),
    /// are built from these same facts.
    pub fn with_attacks(mut self, on: bool) -> Encoding {
        if on != self.attacks {
            self.planes = if on {
                self.planes + ATTACK_PLANES
            } else {
                self.planes - ATTACK_PLANES
            };
            self.attacks = on;
        }
        self
    }

    pub fn squares(&self) -> usize {
        self.files * self.ranks
    }

    pub fn input_len(&self) -> usize {
        self.planes * self.squares()
    }

    pub fn policy_len(&self) -> usize {
        self.squares() * self.squares() * self.promo_choices
    }

    /// The square as seen by `stm` (ranks mirrored for Black).
    #[inline]
    pub fn view(&self, sq: usize, stm: Color) -> usize {
        match stm {
            Color::White => sq,
            Color::Black => {
                let (f, r) = (sq % self.files, sq / self.files);
                (self.ranks - 1 - r) * self.files + f
            }
        }
    }

    /// The square with the files reversed (a left-right mirror; the rank is kept).
    #[inline]
    pub fn mirror_square(&self, sq: usize) -> usize {
        let f = sq % self.files;
        sq - f + (self.files - 1 - f)
    }

    /// The policy index of the mirrored move (`from` and `to` mirrored, the same promotion
    /// choice): mirroring commutes with the side-to-move view, which reverses ranks only.
    pub fn mirror_policy(&self, k: usize) -> usize {
        let s = self.squares();
        let (block, from, to) = (k / (s * s), k / s % s, k % s);
        block * s * s + self.mirror_square(from) * s + self.mirror_square(to)
    }

    /// Mirrors encoded planes in place: every row of every plane reversed. For a variant that is
    /// its own mirror this is the encoding of the mirrored position.
    pub fn mirror_planes(&self, x: &mut [f32]) {
        for row in x.chunks_exact_mut(self.files) {
            row.reverse();
        }
    }

    /// Policy index of a move for the side to move `stm`.
    pub fn policy_index(&self, m: Move, stm: Color) -> usize {
        let s = self.squares();
        let (from, to) = (self.view(m.from(), stm), self.view(m.to(), stm));
        let choice = match m.promotion() {
            None => 0,
            Some(k) => self
                .variant
                .pieces
                .iter()
                .filter_map(|p| p.promotion.as_ref())
                .find(|pr| pr.to.contains(&k) && (pr.to.len() > 1 || pr.optional))
                .and_then(|pr| pr.to.iter().position(|&x| x == k))
                .map_or(0, |i| i + 1),
        };
        choice.min(self.promo_choices - 1) * s * s + from * s + to
    }

    /// Writes the planes of `pos` into `out` (`input_len` floats, zeroed by the caller).
    pub fn encode(&self, pos: &Position, out: &mut [f32]) {
        let s = self.squares();
        let stm = pos.side_to_move();
        let k = self.variant.pieces.len();
        let mut set = |plane: usize, sq: usize, x: f32| out[plane * s + self.view(sq, stm)] = x;
        for sq in 0..s {
            if let Some((kind, c)) = pos.piece_at(Square(sq as u8)) {
                set(if c == stm { kind } else { k + kind }, sq, 1.0);
            }
        }
        let mut p = 2 * k;
        if stm == Color::Black {
            out[p * s..(p + 1) * s].fill(1.0);
        }
        p += 1;
        for sq in pos.first_move_rights() {
            let own = pos.piece_at(sq).is_some_and(|(_, c)| c == stm);
            out[(p + (!own) as usize) * s + self.view(sq.index(), stm)] = 1.0;
        }
        p += 2;
        let (ply, limit) = pos.counting();
        if limit > 0 {
            out[p * s..(p + 1) * s].fill(ply as f32 / limit as f32);
            out[(p + 1) * s..(p + 2) * s].fill(limit as f32 / 256.0);
        }
        p += 2;
        out[p * s..(p + 1) * s].fill(pos.repetitions().min(3) as f32 / 3.0);
        p += 1;
        let checks = pos.checks_remaining();
        let ctw = self.variant.rules.checks_to_win.max(1) as f32;
        out[p * s..(p + 1) * s].fill(checks[stm as usize] as f32 / ctw);
        out[(p + 1) * s..(p + 2) * s].fill(checks[!stm as usize] as f32 / ctw);
        p += 2;
        for name in &self.region_names {
            let mask = self.variant.regions[name][stm];
            for sq in 0..s {
                if mask >> sq & 1 == 1 {
                    out[p * s + self.view(sq, stm)] = 1.0;
                }
            }
            p += 1;
        }
        out[p * s..(p + 1) * s].fill(1.0);
        if self.attacks {
            self.encode_attacks(pos, p + 1, out);
        }
    }

    /// The attack planes from plane `p` on: own attacks, theirs, own pieces that hang, theirs.
    fn encode_attacks(&self, pos: &Position, p: usize, out: &mut [f32]) {
        let s = self.squares();
        let stm = pos.side_to_move();
        let pieces = &self.variant.pieces;
        let all = if pieces.len() >= 32 {
            u32::MAX
        } else {
            (1u32 << pieces.len()) - 1
        };
        for sq in 0..s {
            let q = Square(sq as u8);
            let at = self.view(sq, stm);
            let by = [
                pos.attacked_by_kinds(q, stm, all),
                pos.attacked_by_kinds(q, !stm, all),
            ];
            for (i, &a) in by.iter().enumerate() {
                if a {
                    out[(p + i) * s + at] = 1.0;
                }
            }
            let Some((kind, c)) = pos.piece_at(q) else {
                continue;
            };
            let own = c == stm;
            let (attacked, defended) = if own { (by[1], by[0]) } else { (by[0], by[1]) };
            if !attacked || pieces[kind].royal {
                continue;
            }
            let lower = self.lower_kinds[kind];
            if !defended || (lower != 0 && pos.attacked_by_kinds(q, !c, lower)) {
                out[(p + 2 + !own as usize) * s + at] = 1.0;
            }
        }
    }
}
