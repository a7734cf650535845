//! Helpers shared by the integration tests (each test file includes this module).
#![allow(dead_code)]

use std::sync::Arc;
use varzero_rules::{Color, GameResult, Outcome, Position, Termination, Variant};

pub fn variant(name: &str) -> Arc<Variant> {
    Variant::builtin(name).unwrap_or_else(|e| panic!("variant {name}: {e}"))
}

pub fn pos_in(v: &Arc<Variant>, fen: &str) -> Position {
    Position::from_fen(v, fen).unwrap_or_else(|e| panic!("{} FEN {fen}: {e}", v.name))
}

pub fn pos(name: &str, fen: &str) -> Position {
    pos_in(&variant(name), fen)
}

/// Plays UCI moves, panicking with the position if one is not legal.
pub fn play(p: &mut Position, moves: &[&str]) {
    for m in moves {
        if let Err(e) = p.play_uci(m) {
            panic!("move {m} in {}: {e}\n{}", p.fen(), p.diagram());
        }
    }
}

/// The legal moves (perft legality) in UCI, sorted.
pub fn legal(p: &Position) -> Vec<String> {
    let mut v: Vec<String> = p.legal_moves().iter().map(|&m| p.uci(m)).collect();
    v.sort();
    v
}

/// The moves allowed in a game (repetition ban applied), in UCI, sorted.
pub fn game(p: &mut Position) -> Vec<String> {
    let list = p.game_moves();
    let mut v: Vec<String> = list.iter().map(|&m| p.uci(m)).collect();
    v.sort();
    v
}

pub fn has(p: &Position, uci: &str) -> bool {
    legal(p).iter().any(|m| m == uci)
}

/// Legal moves of the piece on `sq` (UCI, sorted).
pub fn moves_from(p: &Position, sq: &str) -> Vec<String> {
    let size = p.variant().size;
    let from = size
        .parse_square(sq)
        .unwrap_or_else(|| panic!("bad square {sq}"));
    let mut v: Vec<String> = p
        .legal_moves()
        .iter()
        .filter(|m| m.from() == from.index())
        .map(|&m| p.uci(m))
        .collect();
    v.sort();
    v
}

pub fn sorted(list: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = list.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// Field `i` (0-based) of a FEN.
pub fn field(fen: &str, i: usize) -> String {
    fen.split_whitespace()
        .nth(i)
        .unwrap_or_else(|| panic!("FEN {fen} has no field {i}"))
        .to_string()
}

pub fn win(c: Color, t: Termination) -> Option<Outcome> {
    Some(Outcome {
        result: GameResult::Win(c),
        termination: t,
    })
}

pub fn draw(t: Termination) -> Option<Outcome> {
    Some(Outcome {
        result: GameResult::Draw,
        termination: t,
    })
}

/// A tiny deterministic generator (64-bit LCG, Knuth's MMIX constants).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Mirrors a FEN top to bottom with colours swapped (board, side to move; other fields kept).
pub fn mirror_fen(fen: &str) -> String {
    let mut fields: Vec<String> = fen.split_whitespace().map(String::from).collect();
    let ranks: Vec<String> = fields[0]
        .split('/')
        .rev()
        .map(|r| {
            r.chars()
                .map(|c| {
                    if c.is_ascii_uppercase() {
                        c.to_ascii_lowercase()
                    } else {
                        c.to_ascii_uppercase()
                    }
                })
                .collect()
        })
        .collect();
    fields[0] = ranks.join("/");
    fields[1] = if fields[1] == "w" {
        "b".into()
    } else {
        "w".into()
    };
    fields.join(" ")
}

/// Mirrors a UCI move top to bottom on a board with `ranks` ranks (`h1h10` -> `h10h1`).
pub fn mirror_uci(m: &str, ranks: u32) -> String {
    let mut out = String::new();
    let mut chars = m.chars().peekable();
    while let Some(f) = chars.next() {
        if !f.is_ascii_lowercase() {
            panic!("bad move {m}");
        }
        let mut digits = String::new();
        while let Some(d) = chars.peek().filter(|c| c.is_ascii_digit()) {
            digits.push(*d);
            chars.next();
        }
        if digits.is_empty() {
            out.push(f); // promotion suffix
            continue;
        }
        let r: u32 = digits.parse().unwrap();
        out.push(f);
        out.push_str(&(ranks + 1 - r).to_string());
    }
    out
}
