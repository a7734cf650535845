//! How a game ends (docs/rules.md#game-end): the result and the termination reason, from the
//! position and its history.

use crate::geometry::Color;
use crate::moves::{Move, MoveList};
use crate::position::Position;
use crate::variant::MaterialDrawRule;
use crate::variant_file::{RepetitionRule, StalemateResult};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    Win(Color),
    Draw,
}

impl GameResult {
    /// `1-0`, `0-1`, `1/2-1/2`.
    pub fn pgn(self) -> &'static str {
        match self {
            GameResult::Win(Color::White) => "1-0",
            GameResult::Win(Color::Black) => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }
    /// Score for `c`: 1, 0.5 or 0.
    pub fn score_for(self, c: Color) -> f32 {
        match self {
            GameResult::Win(w) if w == c => 1.0,
            GameResult::Win(_) => 0.0,
            GameResult::Draw => 0.5,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Termination {
    Checkmate,
    Stalemate,
    /// A check won the game (Kar Ouk).
    CheckWins,
    /// Repetition drawn, or (Oxeli) a player left without moves by the repetition ban.
    Repetition,
    PerpetualCheck,
    Chase,
    Counting,
    InsufficientMaterial,
    MoveLimit,
}

impl Termination {
    pub fn name(self) -> &'static str {
        match self {
            Termination::Checkmate => "checkmate",
            Termination::Stalemate => "stalemate",
            Termination::CheckWins => "check-wins",
            Termination::Repetition => "repetition",
            Termination::PerpetualCheck => "perpetual-check",
            Termination::Chase => "chase",
            Termination::Counting => "counting",
            Termination::InsufficientMaterial => "insufficient-material",
            Termination::MoveLimit => "move-limit",
        }
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    pub result: GameResult,
    pub termination: Termination,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.result.pgn(), self.termination)
    }
}

impl Position {
    /// Legal moves in a game: `legal_moves` less those the repetition rule forbids (Oxeli: a
    /// move that would make the fourth occurrence of a position).
    pub fn game_moves(&mut self) -> MoveList {
        let mut moves = self.legal_moves();
        // A fourth occurrence needs at least twelve reversible plies (the same position recurs
        // after four at the earliest); before that no move can be forbidden.
        if self.variant().rules.repetition == RepetitionRule::ForbidFourth
            && !moves.is_empty()
            && self.reversible_plies() >= 11
        {
            let all = moves.clone();
            moves.clear();
            for &m in all.iter() {
                self.make(m);
                let forbidden = self.repetitions() >= 3;
                self.unmake();
                if !forbidden {
                    moves.push(m);
                }
            }
        }
        moves
    }

    /// The game's end, if it has ended, by the variant's rules (and its move limit).
    pub fn outcome(&mut self) -> Option<Outcome> {
        self.outcome_and_moves().0
    }

    /// The outcome together with the game moves (empty when the game has ended), so a search
    /// generates them once per node.
    pub fn outcome_and_moves(&mut self) -> (Option<Outcome>, MoveList) {
        let moves = self.game_moves_unless_decided();
        let o = self.outcome_given(&moves);
        if o.is_some() {
            (o, MoveList::new())
        } else {
            (None, moves)
        }
    }

    fn game_moves_unless_decided(&mut self) -> MoveList {
        if self.variant().rules.checks_to_win > 0 && self.checks_remaining().contains(&0) {
            return MoveList::new();
        }
        self.game_moves()
    }

    fn outcome_given(&mut self, moves: &MoveList) -> Option<Outcome> {
        let v = self.variant().clone();
        let rules = &v.rules;
        let stm = self.side_to_move();
        let end = |result, termination| {
            Some(Outcome {
                result,
                termination,
            })
        };
        if rules.checks_to_win > 0 {
            let c = self.checks_remaining();
            for side in Color::BOTH {
                if c[side as usize] == 0 {
                    return end(GameResult::Win(side), Termination::CheckWins);
                }
            }
        }
        let (ply, limit) = self.counting();
        let count_over = limit != 0 && ply > limit;
        if moves.is_empty() {
            if rules.repetition == RepetitionRule::ForbidFourth && !self.legal_moves().is_empty() {
                // Every move is forbidden by the repetition ban (Oxeli): the player loses, by
                // repetition even when in check (an evasion exists; only the ban removes it).
                return end(GameResult::Win(!stm), Termination::Repetition);
            }
            if self.in_check() {
                return end(GameResult::Win(!stm), Termination::Checkmate);
            }
            // docs/rules.md#counting-draw: the count draws unless the position is checkmate, so
            // a stalemate on the ply the count runs out is a counting draw (Fairy-Stockfish
            // agrees); it matters when stalemate is not a draw.
            if count_over {
                return end(GameResult::Draw, Termination::Counting);
            }
            let result = match rules.stalemate {
                StalemateResult::Loss => GameResult::Win(!stm),
                StalemateResult::Draw => GameResult::Draw,
                StalemateResult::Win => GameResult::Win(stm),
            };
            return end(result, Termination::Stalemate);
        }
        if self.insufficient_material() {
            return end(GameResult::Draw, Termination::InsufficientMaterial);
        }
        if count_over {
            return end(GameResult::Draw, Termination::Counting);
        }
        match rules.repetition {
            RepetitionRule::Draw if self.repetitions() >= 2 => {
                return end(GameResult::Draw, Termination::Repetition)
            }
            RepetitionRule::Xiangqi if self.repetitions() >= 3 => {
                return Some(self.adjudicate_repetition())
            }
            _ => {}
        }
        if self.game_ply() >= rules.move_limit {
            return end(GameResult::Draw, Termination::MoveLimit);
        }
        None
    }

    /// Neither side can mate under one of the variant's material rules.
    pub fn insufficient_material(&self) -> bool {
        let v = self.variant().clone();
        if v.rules.insufficient_material.is_empty() {
            return false;
        }
        let royal = v.royal_kind();
        // A fixed array: this runs at every node of a search, which must not allocate.
        let mut buf = [0u32; crate::variant::MAX_KINDS];
        let counts = &mut buf[..v.pieces.len()];
        for (k, c) in counts.iter_mut().enumerate() {
            if k != royal {
                *c = self.count(k, Color::White) + self.count(k, Color::Black);
            }
        }
        let total: u32 = counts.iter().sum();
        v.rules.insufficient_material.iter().any(|r| match r {
            MaterialDrawRule::Only(ks) => counts
                .iter()
                .enumerate()
                .all(|(k, &n)| n == 0 || ks.contains(&k)),
            MaterialDrawRule::AtMostOneOf(ks) => {
                total == 0 || (total == 1 && ks.iter().any(|&k| counts[k] == 1))
            }
        })
    }

    /// docs/rules.md#repetition-xiangqi: at the fourth occurrence, look at the moves since the
    /// first one.
    fn adjudicate_repetition(&mut self) -> Outcome {
        let key = self.key();
        let states = self.states();
        let n = states.len() - 1;
        // The first of the (at least four) occurrences within the reversible stretch.
        let back = (states[n].1 as usize).min(n);
        let first = (1..=back)
            .filter(|&i| i % 2 == 0 && states[n - i].0 == key)
            .max()
            .unwrap_or(0);
        let history = self.history();
        let cycle: Vec<Move> = history[history.len() - first..].to_vec();
        let mut replay = self.clone();
        for _ in 0..first {
            replay.unmake();
        }
        let mut all_check = [true, true];
        let mut chase: [Option<Vec<usize>>; 2] = [None, None];
        let mut moved = [false, false];
        for &m in &cycle {
            let mover = replay.side_to_move();
            let mi = mover as usize;
            // The chased pieces of the other side follow their moves.
            let other = 1 - mi;
            if let Some(set) = chase[other].as_mut() {
                for s in set.iter_mut() {
                    if *s == m.from() {
                        *s = m.to();
                    }
                }
            }
            let before = replay.attacked_enemies();
            replay.make(m);
            moved[mi] = true;
            let gave_check = replay.in_check();
            all_check[mi] &= gave_check;
            let now = replay.chased_by_last_move(m, &before);
            chase[mi] = Some(match chase[mi].take() {
                None => now,
                Some(prev) => prev.into_iter().filter(|s| now.contains(s)).collect(),
            });
        }
        let stm = self.side_to_move();
        let loser = |side: usize| Outcome {
            result: GameResult::Win(if side == 0 {
                Color::Black
            } else {
                Color::White
            }),
            termination: Termination::PerpetualCheck,
        };
        let checks = [all_check[0] && moved[0], all_check[1] && moved[1]];
        if checks[0] != checks[1] {
            return loser(if checks[0] { 0 } else { 1 });
        }
        let chases = [
            chase[0].as_ref().is_some_and(|s| !s.is_empty()),
            chase[1].as_ref().is_some_and(|s| !s.is_empty()),
        ];
        if chases[0] != chases[1] {
            let mut o = loser(if chases[0] { 0 } else { 1 });
            o.termination = Termination::Chase;
            return o;
        }
        let _ = stm;
        Outcome {
            result: GameResult::Draw,
            termination: Termination::Repetition,
        }
    }

    /// The enemy non-royal pieces that the side to move's chasing pieces attack now.
    fn attacked_enemies(&self) -> Vec<usize> {
        let v = self.variant().clone();
        let me = self.side_to_move();
        let royal = v.royal_kind();
        let mut out = Vec::new();
        for s in 0..v.size.squares() {
            match self.piece_at(crate::geometry::Square(s as u8)) {
                Some((k, c)) if c == me && v.pieces[k].chases => {
                    for t in self.piece_attacks(s) {
                        if matches!(self.piece_at(crate::geometry::Square(t as u8)), Some((tk, tc)) if tc != me && tk != royal)
                            && !out.contains(&t)
                        {
                            out.push(t);
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// After `m` (just made), the enemy pieces it chases: undefended non-royal pieces attacked
    /// by the moved piece, or newly attacked by another piece the move uncovered (`before`:
    /// the mover's attacks before the move). Royal pieces are not counted (that is check), nor
    /// attacks by royal pieces or pieces that may not chase; a standing attack is no chase.
    fn chased_by_last_move(&self, m: Move, before: &[usize]) -> Vec<usize> {
        let v = self.variant().clone();
        let victim = self.side_to_move();
        let chaser = !victim;
        let royal = v.royal_kind();
        let mut out = Vec::new();
        for s in 0..v.size.squares() {
            let Some((k, c)) = self.piece_at(crate::geometry::Square(s as u8)) else {
                continue;
            };
            if c != chaser || k == royal || !v.pieces[k].chases {
                continue;
            }
            for t in self.piece_attacks(s) {
                if s != m.to() && before.contains(&t) {
                    continue;
                }
                if let Some((tk, tc)) = self.piece_at(crate::geometry::Square(t as u8)) {
                    if tc == victim
                        && tk != royal
                        && !self.defended(t, victim, s)
                        && !out.contains(&t)
                    {
                        out.push(t);
                    }
                }
            }
        }
        out
    }
}
