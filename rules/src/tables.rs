//! Precomputed attack tables of a variant for one bitboard word. Movement atoms become, per
//! piece, colour and square: leap target sets, lame-leap entries (block mask + targets), and the
//! ray directions of sliders and hoppers. Reverse tables answer "who attacks this square".

#![allow(clippy::needless_range_loop)] // table construction walks squares and directions by index

use crate::betza::Atom;
use crate::bitboard::Bitboard;
use crate::geometry::{BoardSize, Color, Square};
use crate::variant::{SquareSet, Variant};
use crate::variant_file::FaceOff;

/// A lame leap: every square of `block` must be empty for the targets to be reached.
#[derive(Clone, Copy, Debug)]
pub struct LameEntry<B> {
    pub block: B,
    pub quiet: B,
    pub capture: B,
}

/// Movement of one piece kind for one colour.
#[derive(Clone, Debug)]
pub struct PieceTables<B> {
    pub leap_quiet: Vec<B>,
    pub leap_capture: Vec<B>,
    /// First-move (`i`) leaps.
    pub init_quiet: Vec<B>,
    pub init_capture: Vec<B>,
    /// Per square: range into `lame`.
    pub lame_range: Vec<(u32, u32)>,
    pub lame: Vec<LameEntry<B>>,
    pub slide_quiet: u16,
    pub slide_capture: u16,
    pub hop_quiet: u16,
    pub hop_capture: u16,
    pub stand: B,
    pub promo_zone: B,
    /// Reverse tables: squares from which this piece captures the square by a leap.
    pub rev_leap_capture: Vec<B>,
    pub rev_lame_range: Vec<(u32, u32)>,
    /// (block, froms): a piece on one of `froms` captures the square when `block` is empty.
    pub rev_lame: Vec<(B, B)>,
    /// Squares attacked on an empty board (for the "right lost to" rule).
    pub empty_attacks: Vec<B>,
    pub has_lame: bool,
    /// First-move leaps onto an own pawn that steps forward (Makruk sutras).
    pub push_pawn: Vec<B>,
    pub has_push: bool,
}

#[derive(Clone, Debug)]
pub struct Tables<B> {
    pub size: BoardSize,
    pub all: B,
    /// Ray directions (file, rank deltas) and, per direction and square, the ray.
    pub dirs: Vec<(i8, i8)>,
    pub rays: Vec<Vec<B>>,
    /// Whether the ray runs towards higher square indices (first blocker = lowest bit).
    pub dir_up: Vec<bool>,
    pub opposite: Vec<usize>,
    /// Indexed `kind * 2 + colour`.
    pub pieces: Vec<PieceTables<B>>,
    /// Directions along which kings must not face each other.
    pub face_off_dirs: u16,
    /// Per colour: the union of slide-capture directions, hop-capture directions of all kinds.
    pub any_slide_capture: [u16; 2],
    pub any_hop_capture: [u16; 2],
    pub zobrist_piece: Vec<[u64; 2 * crate::variant::MAX_KINDS + 2]>,
    pub zobrist_side: u64,
    pub zobrist_checks: [[u64; 10]; 2],
}

fn to_b<B: Bitboard>(set: SquareSet, n: usize) -> B {
    let mut b = B::ZERO;
    for s in 0..n {
        if set >> s & 1 == 1 {
            b |= B::bit(s);
        }
    }
    b
}

struct SplitMix(u64);
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
}

impl<B: Bitboard> Tables<B> {
    pub fn new(v: &Variant) -> Tables<B> {
        let size = v.size;
        let n = size.squares();
        assert!(n <= B::CAPACITY, "board does not fit the bitboard word");
        let all = (0..n).fold(B::ZERO, |b, s| b | B::bit(s));

        // Ray directions: every rider vector of every piece (both colours), plus face-off lines.
        let mut dirs: Vec<(i8, i8)> = Vec::new();
        let add_dir = |d: (i8, i8), dirs: &mut Vec<(i8, i8)>| {
            for d in [d, (-d.0, -d.1)] {
                if !dirs.contains(&d) {
                    dirs.push(d);
                }
            }
        };
        for p in &v.pieces {
            for a in p.atoms.iter().filter(|a| a.rider) {
                add_dir((a.dx, a.dy), &mut dirs);
            }
        }
        let face: Vec<(i8, i8)> = match v.rules.face_off {
            FaceOff::None => vec![],
            FaceOff::File => vec![(0, 1), (0, -1)],
            FaceOff::All => vec![
                (0, 1),
                (0, -1),
                (1, 0),
                (-1, 0),
                (1, 1),
                (-1, -1),
                (1, -1),
                (-1, 1),
            ],
        };
        for &d in &face {
            add_dir(d, &mut dirs);
        }
        assert!(dirs.len() <= 16, "at most 16 ray directions");
        let face_off_dirs = face.iter().fold(0u16, |m, d| {
            m | 1 << dirs.iter().position(|x| x == d).unwrap()
        });
        let rays: Vec<Vec<B>> = dirs
            .iter()
            .map(|&(dx, dy)| {
                (0..n)
                    .map(|s| {
                        let mut b = B::ZERO;
                        let mut cur = Square(s as u8);
                        while let Some(t) = size.offset(cur, dx as i32, dy as i32) {
                            b |= B::bit(t.index());
                            cur = t;
                        }
                        b
                    })
                    .collect()
            })
            .collect();
        let dir_up: Vec<bool> = dirs
            .iter()
            .map(|&(dx, dy)| dy as i32 * size.files as i32 + dx as i32 > 0)
            .collect();
        let opposite: Vec<usize> = dirs
            .iter()
            .map(|&(dx, dy)| dirs.iter().position(|&d| d == (-dx, -dy)).unwrap())
            .collect();
        let dir_index = |dx: i8, dy: i8| dirs.iter().position(|&d| d == (dx, dy)).unwrap();

        let mut pieces = Vec::new();
        for p in &v.pieces {
            for c in Color::BOTH {
                let flip: i8 = if c == Color::White { 1 } else { -1 };
                let mut t = PieceTables {
                    leap_quiet: vec![B::ZERO; n],
                    leap_capture: vec![B::ZERO; n],
                    init_quiet: vec![B::ZERO; n],
                    init_capture: vec![B::ZERO; n],
                    lame_range: vec![(0, 0); n],
                    lame: Vec::new(),
                    slide_quiet: 0,
                    slide_capture: 0,
                    hop_quiet: 0,
                    hop_capture: 0,
                    stand: to_b(p.stand[c], n),
                    promo_zone: p
                        .promotion
                        .as_ref()
                        .map_or(B::ZERO, |pr| to_b(pr.zone[c], n)),
                    rev_leap_capture: vec![B::ZERO; n],
                    rev_lame_range: vec![(0, 0); n],
                    rev_lame: Vec::new(),
                    empty_attacks: vec![B::ZERO; n],
                    has_lame: false,
                    push_pawn: vec![B::ZERO; n],
                    has_push: !p.push_pawn.is_empty(),
                };
                for s in 0..n {
                    for a in &p.push_pawn {
                        if let Some(to) =
                            size.offset(Square(s as u8), a.dx as i32, (a.dy * flip) as i32)
                        {
                            t.push_pawn[s] |= B::bit(to.index());
                        }
                    }
                }
                for a in p.atoms.iter().filter(|a| a.rider) {
                    let d = 1u16 << dir_index(a.dx, a.dy * flip);
                    match (a.hopper, a.can_move, a.can_capture) {
                        (false, m, cap) => {
                            if m {
                                t.slide_quiet |= d;
                            }
                            if cap {
                                t.slide_capture |= d;
                            }
                        }
                        (true, m, cap) => {
                            if m {
                                t.hop_quiet |= d;
                            }
                            if cap {
                                t.hop_capture |= d;
                            }
                        }
                    }
                }
                // (from, block, target, quiet, capture, initial)
                let mut rev_lame_raw: Vec<Vec<(B, usize)>> = vec![Vec::new(); n];
                for s in 0..n {
                    let sq = Square(s as u8);
                    let mut atoms: Vec<&Atom> = p.atoms.iter().filter(|a| !a.rider).collect();
                    for (region, extra, _) in &p.moves_in {
                        if region[c] >> s & 1 == 1 {
                            atoms.extend(extra.iter());
                        }
                    }
                    let mut lame_here: Vec<LameEntry<B>> = Vec::new();
                    for a in atoms {
                        let (dx, dy) = (a.dx as i32, (a.dy * flip) as i32);
                        let Some(to) = size.offset(sq, dx, dy) else {
                            continue;
                        };
                        let tb = B::bit(to.index());
                        if a.lame {
                            let mut block = B::ZERO;
                            let mut ok = true;
                            for (bx, by) in lame_path(dx, dy) {
                                match size.offset(sq, bx, by) {
                                    Some(b) => block |= B::bit(b.index()),
                                    None => ok = false,
                                }
                            }
                            if !ok {
                                continue;
                            }
                            if a.initial {
                                // First-move lame leaps are not needed by any variant.
                                continue;
                            }
                            let e = match lame_here.iter_mut().find(|e| e.block == block) {
                                Some(e) => e,
                                None => {
                                    lame_here.push(LameEntry {
                                        block,
                                        quiet: B::ZERO,
                                        capture: B::ZERO,
                                    });
                                    lame_here.last_mut().unwrap()
                                }
                            };
                            if a.can_move {
                                e.quiet |= tb;
                            }
                            if a.can_capture {
                                e.capture |= tb;
                                rev_lame_raw[to.index()].push((block, s));
                                t.empty_attacks[s] |= tb;
                            }
                        } else if a.initial {
                            if a.can_move {
                                t.init_quiet[s] |= tb;
                            }
                            if a.can_capture {
                                t.init_capture[s] |= tb;
                            }
                        } else {
                            if a.can_move {
                                t.leap_quiet[s] |= tb;
                            }
                            if a.can_capture {
                                t.leap_capture[s] |= tb;
                                t.rev_leap_capture[to.index()] |= B::bit(s);
                                t.empty_attacks[s] |= tb;
                            }
                        }
                    }
                    let start = t.lame.len() as u32;
                    t.has_lame |= !lame_here.is_empty();
                    t.lame.extend(lame_here);
                    t.lame_range[s] = (start, t.lame.len() as u32);
                    for d in 0..dirs.len() {
                        if (t.slide_capture | t.hop_capture) >> d & 1 == 1 {
                            t.empty_attacks[s] |= rays[d][s];
                        }
                    }
                }
                for s in 0..n {
                    let mut grouped: Vec<(B, B)> = Vec::new();
                    for &(block, from) in &rev_lame_raw[s] {
                        match grouped.iter_mut().find(|g| g.0 == block) {
                            Some(g) => g.1 |= B::bit(from),
                            None => grouped.push((block, B::bit(from))),
                        }
                    }
                    let start = t.rev_lame.len() as u32;
                    t.rev_lame.extend(grouped);
                    t.rev_lame_range[s] = (start, t.rev_lame.len() as u32);
                }
                pieces.push(t);
            }
        }
        let mut any_slide_capture = [0u16; 2];
        let mut any_hop_capture = [0u16; 2];
        for (i, t) in pieces.iter().enumerate() {
            any_slide_capture[i & 1] |= t.slide_capture;
            any_hop_capture[i & 1] |= t.hop_capture;
        }

        // Deterministic keys, seeded by the board so that tables are reproducible everywhere.
        let mut rng = SplitMix(0x5eed_0f7a_12e0 ^ (n as u64));
        let zobrist_piece = (0..n)
            .map(|_| {
                let mut a = [0u64; 2 * crate::variant::MAX_KINDS + 2];
                for x in a.iter_mut().skip(1) {
                    *x = rng.next();
                }
                a
            })
            .collect();
        let zobrist_side = rng.next();
        let mut zobrist_checks = [[0u64; 10]; 2];
        for c in &mut zobrist_checks {
            for x in c.iter_mut() {
                *x = rng.next();
            }
        }
        Tables {
            size,
            all,
            dirs,
            rays,
            dir_up,
            opposite,
            pieces,
            face_off_dirs,
            any_slide_capture,
            any_hop_capture,
            zobrist_piece,
            zobrist_side,
            zobrist_checks,
        }
    }

    /// The first occupied square along direction `d` from `s`, if any.
    #[inline(always)]
    pub fn first_blocker(&self, d: usize, s: usize, occ: B) -> Option<usize> {
        let b = self.rays[d][s] & occ;
        if b.is_empty() {
            None
        } else if self.dir_up[d] {
            Some(b.lsb())
        } else {
            Some(b.msb())
        }
    }

    /// Squares a slider reaches along `d` from `s`, up to and including the first blocker.
    #[inline(always)]
    pub fn ray_attacks(&self, d: usize, s: usize, occ: B) -> B {
        let ray = self.rays[d][s];
        let b = ray & occ;
        if b.is_empty() {
            ray
        } else {
            let f = if self.dir_up[d] { b.lsb() } else { b.msb() };
            ray ^ self.rays[d][f]
        }
    }
}

/// The squares a lame leap must pass: along straight lines every point between; an oblique
/// leap steps orthogonally first along its longer component (the xiangqi horse).
fn lame_path(dx: i32, dy: i32) -> Vec<(i32, i32)> {
    let (ax, ay) = (dx.abs(), dy.abs());
    if dx == 0 || dy == 0 || ax == ay {
        let steps = ax.max(ay);
        (1..steps)
            .map(|k| (dx.signum() * k, dy.signum() * k))
            .collect()
    } else if ax > ay {
        (1..ax).map(|k| (dx.signum() * k, 0)).collect()
    } else {
        (1..ay).map(|k| (0, dy.signum() * k)).collect()
    }
}
