//! What a player without a net knows: material resolved tactically. Raw material on an unquiet
//! position misleads a search (a piece that is about to be taken still counts), so the leaf
//! value is a quiescence search over captures and promotions (every evasion when in check),
//! with losing captures pruned by static exchange. A mop-up term drives a lone king to the edge
//! and the winning king towards it, so won endgames are converted; a running count (Makruk,
//! Ouk Chatrang) pulls the value towards a draw as it nears its limit. Move hints for the
//! priors come from the same exchange arithmetic: what a move wins on its square, less what the
//! opponent then wins there.
//!
//! Everything is done by making moves on the position, with the rules core's legal move
//! generator, so pins, screens (the cannon's), kings that may not capture into check and every
//! variant's pieces are right without a separate attack model. Values are in pawns, from the
//! side to move's view.

use std::sync::Arc;
use varzero_rules::{Color, GameResult, Move, MoveList, Position, Square, Variant};

/// The score of a won game in pawns (larger than any material balance).
pub const MATE: f32 = 200.0;

/// Settings of the tactical evaluation.
#[derive(Clone, Debug)]
pub struct Tactics {
    /// Piece values in pawns by kind (royal pieces 0).
    values: Vec<f32>,
    /// Value used to order a royal attacker: it captures last.
    royal_order: f32,
    pub royal_kind: usize,
    /// Plies of captures the quiescence search looks ahead.
    pub max_depth: u32,
    /// Nodes one quiescence search may visit.
    pub max_nodes: u32,
    /// Plies, from the quiescence search's root, in which quiet moves that give check are
    /// searched besides captures (`search.tactics_checks`). A capture-only search cannot see
    /// a mate by a quiet check, which is how a game against Fairy-Stockfish is usually lost;
    /// each such ply costs a make and unmake of every quiet move.
    pub checks: u32,
    /// Per kind: the bit mask of the (non-royal) kinds worth less.
    cheaper: Vec<u32>,
    /// The bit mask of every kind.
    all_kinds: u32,
    /// Non-royal kinds, cheapest first.
    by_value: Vec<usize>,
    /// Charge the side to move for a second piece en prise (a fork), which it cannot save by
    /// one move; standing pat assumes it can.
    pub threats: bool,
    /// Pawns per square of mobility difference (see `Position::mobility`).
    pub mobility: f32,
    /// Pawns of mop-up bonus at most (edge and king distance together). It is large on
    /// purpose: a won position's value is near 1 after the logistic squash, and the search
    /// only sees progress towards mate when the progress moves the value visibly.
    pub mop_up: f32,
}

impl Tactics {
    pub fn new(v: &Arc<Variant>) -> Tactics {
        let values: Vec<f32> = v
            .pieces
            .iter()
            .map(|p| if p.royal { 0.0 } else { p.value })
            .collect();
        let max = values.iter().cloned().fold(1.0f32, f32::max);
        let royal = v.royal_kind();
        let cheaper = values
            .iter()
            .map(|&x| {
                (0..values.len())
                    .filter(|&k| k != royal && values[k] < x)
                    .fold(0u32, |m, k| m | 1 << k)
            })
            .collect();
        let mut by_value: Vec<usize> = (0..values.len()).filter(|&k| k != royal).collect();
        by_value.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        Tactics {
            by_value,
            cheaper,
            all_kinds: (1u32 << values.len()) - 1,
            threats: true,
            mobility: 0.04,
            values,
            royal_order: max * 100.0,
            royal_kind: v.royal_kind(),
            max_depth: 8,
            max_nodes: 400,
            checks: 0,
            mop_up: 3.0,
        }
    }

    pub fn value(&self, kind: usize) -> f32 {
        self.values[kind]
    }

    /// Material of `c` in pawns.
    pub fn material_of(&self, pos: &Position, c: Color) -> f32 {
        self.values
            .iter()
            .enumerate()
            .map(|(k, &v)| v * pos.count(k, c) as f32)
            .sum()
    }

    /// Material balance for the side to move.
    pub fn material(&self, pos: &Position) -> f32 {
        let stm = pos.side_to_move();
        self.material_of(pos, stm) - self.material_of(pos, !stm)
    }

    /// What `m` gains at once: the piece it takes and the value its promotion adds.
    pub fn gain(&self, pos: &Position, m: Move) -> f32 {
        let stm = pos.side_to_move();
        let mut g = match pos.piece_at(m.to_sq()) {
            Some((k, c)) if c != stm => self.values[k],
            _ => 0.0,
        };
        if let (Some(to), Some((k, _))) = (m.promotion(), pos.piece_at(m.from_sq())) {
            g += self.values[to] - self.values[k];
        }
        g
    }

    fn is_capture(pos: &Position, m: Move) -> bool {
        matches!(pos.piece_at(m.to_sq()), Some((_, c)) if c != pos.side_to_move())
    }

    /// The order in which attackers capture: cheapest first, a royal piece last.
    fn attacker_order(&self, pos: &Position, m: Move) -> f32 {
        match pos.piece_at(m.from_sq()) {
            Some((k, _)) if k == self.royal_kind => self.royal_order,
            Some((k, _)) => self.values[k],
            None => 0.0,
        }
    }

    /// The best the side to move wins by capturing on `sq` (0 when it should not): it takes
    /// with its cheapest legal attacker, and the opponent may answer on the same square.
    pub fn exchange_on(&self, pos: &mut Position, sq: Square, depth: u32) -> f32 {
        if depth == 0 {
            return 0.0;
        }
        let moves = pos.legal_moves();
        self.exchange_with(pos, moves.as_slice(), sq, depth)
    }

    /// [`Tactics::exchange_on`] with the side to move's legal moves already generated.
    fn exchange_with(&self, pos: &mut Position, moves: &[Move], sq: Square, depth: u32) -> f32 {
        let mut best: Option<(f32, Move)> = None;
        for &m in moves {
            if m.to_sq() == sq && Self::is_capture(pos, m) {
                let o = self.attacker_order(pos, m);
                if best.is_none_or(|(b, _)| o < b) {
                    best = Some((o, m));
                }
            }
        }
        let Some((_, m)) = best else { return 0.0 };
        let g = self.gain(pos, m);
        pos.make(m);
        let reply = self.exchange_on(pos, sq, depth - 1);
        pos.unmake();
        (g - reply).max(0.0)
    }

    /// Static exchange of a move: what it gains, less what the opponent then wins by taking on
    /// its square (negative: the move loses material there).
    pub fn see(&self, pos: &mut Position, m: Move) -> f32 {
        let g = self.gain(pos, m);
        pos.make(m);
        let reply = self.exchange_on(pos, m.to_sq(), 16);
        pos.unmake();
        g - reply
    }

    /// Pawns of mop-up for the side to move: when one side is well ahead and the other has
    /// little left, the stronger side wants the weaker king near the edge and its own king
    /// close to it (a lone king is mated only there).
    pub fn mop_up(&self, pos: &Position, balance: f32) -> f32 {
        if self.mop_up == 0.0 || balance.abs() < 2.0 {
            return 0.0;
        }
        let stm = pos.side_to_move();
        let strong = if balance > 0.0 { stm } else { !stm };
        let weak = !strong;
        if self.material_of(pos, weak) > 3.0 {
            return 0.0;
        }
        let (Some(wk), Some(sk)) = (pos.king_square(weak), pos.king_square(strong)) else {
            return 0.0;
        };
        let size = pos.variant().size;
        let (f, r) = (size.file_of(wk) as f32, size.rank_of(wk) as f32);
        let (cf, cr) = (
            (size.files as f32 - 1.0) / 2.0,
            (size.ranks as f32 - 1.0) / 2.0,
        );
        // 0 at the centre, 1 in a corner.
        let edge = ((f - cf).abs() / cf.max(1.0) + (r - cr).abs() / cr.max(1.0)) / 2.0;
        let kd = (size.file_of(wk) as i32 - size.file_of(sk) as i32)
            .abs()
            .max((size.rank_of(wk) as i32 - size.rank_of(sk) as i32).abs()) as f32;
        let span = (size.files.max(size.ranks) - 1) as f32;
        let near = 1.0 - (kd - 1.0).max(0.0) / span;
        let bonus = self.mop_up * (0.5 * edge + 0.5 * near);
        if strong == stm {
            bonus
        } else {
            -bonus
        }
    }

    /// What the side to move stands to lose to threats it cannot all parry: each of its
    /// pieces attacked by a cheaper piece loses the difference (the whole value when it is
    /// not defended), one attacked and not defended loses its value; the side to move saves
    /// the most valuable and loses the second.
    pub fn threatened(&self, pos: &Position) -> f32 {
        let stm = pos.side_to_move();
        let (mut first, mut second) = (0.0f32, 0.0f32);
        pos.for_each_piece(stm, |sq, k| {
            let v = self.values[k];
            if k == self.royal_kind || v <= 0.0 {
                return;
            }
            let defended = || pos.attacked_by_kinds(sq, stm, self.all_kinds);
            let loss = if pos.attacked_by_kinds(sq, !stm, self.cheaper[k]) {
                if defended() {
                    // Taken by the cheapest attacker, which is recaptured.
                    let a = self
                        .by_value
                        .iter()
                        .find(|&&a| self.values[a] < v && pos.attacked_by_kinds(sq, !stm, 1 << a))
                        .map_or(0.0, |&a| self.values[a]);
                    v - a
                } else {
                    v
                }
            } else if pos.attacked_by_kinds(sq, !stm, self.all_kinds) && !defended() {
                v
            } else {
                0.0
            };
            if loss > first {
                second = first;
                first = loss;
            } else if loss > second {
                second = loss;
            }
        });
        second
    }

    /// The static value: material and mop-up, pulled towards 0 as a running count nears its
    /// limit (a win the count will not allow is a draw).
    pub fn static_eval(&self, pos: &Position) -> f32 {
        let m = self.material(pos);
        let mut v = m + self.mop_up(pos, m);
        if self.threats {
            v -= self.threatened(pos);
        }
        if self.mobility != 0.0 {
            let stm = pos.side_to_move();
            v += self.mobility * (pos.mobility(stm) as f32 - pos.mobility(!stm) as f32);
        }
        let (ply, limit) = pos.counting();
        if limit > 0 {
            v * (1.0 - 0.75 * (ply as f32 / limit as f32).min(1.0))
        } else {
            v
        }
    }

    /// The quiescence value of `pos` for its side to move, in pawns.
    pub fn quiesce(&self, pos: &mut Position) -> f32 {
        let mut nodes = 0;
        self.qsearch(pos, -MATE - 1.0, MATE + 1.0, self.max_depth, &mut nodes)
    }

    fn qsearch(
        &self,
        pos: &mut Position,
        mut alpha: f32,
        beta: f32,
        depth: u32,
        nodes: &mut u32,
    ) -> f32 {
        *nodes += 1;
        let (outcome, moves) = pos.outcome_and_moves();
        if let Some(o) = outcome {
            return match o.result {
                GameResult::Draw => 0.0,
                GameResult::Win(c) if c == pos.side_to_move() => MATE,
                GameResult::Win(_) => -MATE,
            };
        }
        let in_check = pos.in_check();
        let stand = self.static_eval(pos);
        if depth == 0 || *nodes >= self.max_nodes {
            return stand;
        }
        let mut best = f32::NEG_INFINITY;
        if !in_check {
            if stand >= beta {
                return stand;
            }
            alpha = alpha.max(stand);
            best = stand;
        }
        // Captures and promotions (every evasion in check), the most valuable victim first;
        // in the first `checks` plies quiet checks too, after every capture.
        let quiet_checks = !in_check && self.max_depth.saturating_sub(depth) < self.checks;
        let mut cand: [(f32, Move); 128] = [(0.0, Move::NONE); 128];
        let mut n = 0;
        for &m in moves.iter() {
            if n >= cand.len() {
                break;
            }
            let g = self.gain(pos, m);
            if in_check || g > 0.0 {
                cand[n] = (g * 64.0 - self.attacker_order(pos, m).min(63.0), m);
                n += 1;
            } else if quiet_checks {
                pos.make(m);
                let check = pos.in_check();
                pos.unmake();
                if check {
                    cand[n] = (-64.0 - self.attacker_order(pos, m).min(63.0), m);
                    n += 1;
                }
            }
        }
        let cand = &mut cand[..n];
        cand.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
        for &(_, m) in cand.iter() {
            // A capture that loses material cannot raise the value above standing pat.
            if !in_check
                && self.attacker_order(pos, m) > self.gain(pos, m)
                && self.see(pos, m) < 0.0
            {
                continue;
            }
            pos.make(m);
            let s = -self.qsearch(pos, -beta, -alpha, depth - 1, nodes);
            pos.unmake();
            if s > best {
                best = s;
                if s > alpha {
                    alpha = s;
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        if best == f32::NEG_INFINITY {
            stand
        } else {
            best
        }
    }

    /// A score per move for the priors, in pawns: what the move wins by exchange on its square
    /// (a quiet move to an attacked square loses the piece), a little for a check, the mop-up
    /// it gains, and the game's end where the move ends it (a mate first of all; a draw is
    /// worth what the mover gives up by it). In a won endgame the values of most moves are
    /// nearly equal after the squash, so the visits follow these priors towards the mate.
    pub fn move_hints(&self, pos: &mut Position, moves: &[Move], out: &mut [f32]) {
        let before = self.material(pos);
        let mop = self.mop_up(pos, before);
        for (o, &m) in out.iter_mut().zip(moves) {
            let g = self.gain(pos, m);
            pos.make(m);
            // The replies are generated only after a check (to see a mate) or when the piece
            // can be taken on its square; a stalemate by a quiet move is left to the tree.
            let check = pos.in_check();
            let attacked = pos.attacked_by_kinds(m.to_sq(), pos.side_to_move(), self.all_kinds);
            let replies = if check || attacked {
                pos.legal_moves()
            } else {
                MoveList::new()
            };
            let end = if check && replies.is_empty() {
                pos.outcome()
            } else {
                None
            };
            *o = match end.map(|e| e.result) {
                Some(GameResult::Win(c)) if c == pos.side_to_move() => -20.0,
                Some(GameResult::Win(_)) => 20.0,
                Some(GameResult::Draw) => (-before - g).clamp(-20.0, 20.0),
                None => {
                    let reply = if attacked {
                        self.exchange_with(pos, replies.as_slice(), m.to_sq(), 16)
                    } else {
                        0.0
                    };
                    let check = if check { 0.3 } else { 0.0 };
                    // The mop-up after the move, from the mover's view (the opponent moves).
                    let mop_after = -self.mop_up(pos, -(before + g));
                    g - reply + check + (mop_after - mop)
                }
            };
            pos.unmake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(variant: &str, fen: &str) -> Position {
        Position::from_fen(&Variant::builtin(variant).unwrap(), fen).unwrap()
    }

    /// Without mop-up, threats and mobility, so that values are plain material.
    fn tactics(p: &Position) -> Tactics {
        let mut t = Tactics::new(p.variant());
        t.mop_up = 0.0;
        t.threats = false;
        t.mobility = 0.0;
        t
    }

    #[test]
    fn a_fork_costs_the_side_to_move_its_second_piece() {
        // Makruk: the knight on d5 attacks both rooks, which defend each other: White saves
        // one, and the other is taken by the knight and recaptured (5 - 3).
        let p = pos("makruk", "7k/8/7p/3n4/8/P1R1R3/8/4K3 w - - 0 1");
        let t = Tactics::new(p.variant());
        assert_eq!(t.threatened(&p), 2.0);
        // Without the defence of each other (a pawn between them), each would be lost whole.
        let q = pos("makruk", "7k/8/7p/3n4/8/P1RPR3/8/4K3 w - - 0 1");
        assert_eq!(t.threatened(&q), 5.0);
        assert_eq!(t.threatened(&Position::start(p.variant())), 0.0);
    }

    #[test]
    fn a_hanging_piece_is_counted_as_lost_and_a_defended_one_is_not() {
        // Makruk, White to move: the black rook on d5 is en prise to the white rook on d1
        // (pawns on a3 and h6 keep any count from starting).
        let mut hanging = pos("makruk", "4k3/8/7p/3r4/8/P7/8/3RK3 w - - 0 1");
        let t = tactics(&hanging);
        assert_eq!(t.material(&hanging), 0.0);
        assert_eq!(t.quiesce(&mut hanging), 5.0);
        let m = hanging.parse_uci("d1d5").unwrap();
        assert_eq!(t.see(&mut hanging, m), 5.0);
        // The same rook defended by the pawn on e6: taking it costs the rook back, so the
        // exchange is even and standing pat is as good.
        let mut defended = pos("makruk", "4k3/8/4p2p/3r4/8/P7/8/3RK3 w - - 0 1");
        let m = defended.parse_uci("d1d5").unwrap();
        assert_eq!(t.see(&mut defended, m), 0.0);
        assert_eq!(t.quiesce(&mut defended), t.material(&defended));
        // A defended knight attacked by a rook: taking it loses 5 for 3.
        let mut knight = pos("makruk", "4k3/8/4p2p/3n4/8/P7/8/3RK3 w - - 0 1");
        let m = knight.parse_uci("d1d5").unwrap();
        assert_eq!(t.see(&mut knight, m), 3.0 - 5.0);
        assert_eq!(t.quiesce(&mut knight), t.material(&knight));
    }

    #[test]
    fn captures_follow_each_piece_s_rules() {
        // Xiangqi: the rook on e2 takes the undefended rook on e6.
        let mut p = pos("xiangqi", "3k5/9/9/9/4r4/9/9/9/4R4/5K3 w - - 0 1");
        let t = tactics(&p);
        assert_eq!(t.quiesce(&mut p), 9.0);
        // A cannon needs a screen to capture: with none, White can only stand pat.
        let mut c = pos("xiangqi", "3k5/9/9/9/4r4/9/9/9/4C4/5K3 w - - 0 1");
        assert_eq!(t.quiesce(&mut c), t.material(&c));
        // With the pawn on e4 as a screen, the cannon takes the rook.
        let mut s = pos("xiangqi", "3k5/9/9/9/4r4/9/4P4/9/4C4/5K3 w - - 0 1");
        assert_eq!(t.quiesce(&mut s), t.material(&s) + 9.0);
    }

    #[test]
    fn hints_favour_winning_captures_and_avoid_hanging_moves() {
        // Rooks on c1 and d1 against a knight on d5 defended by the pawn on e6.
        let mut p = pos("makruk", "4k3/8/4p2p/3n4/8/P7/8/2RRK3 w - - 0 1");
        let t = tactics(&p);
        let moves: Vec<Move> = p.legal_moves().iter().copied().collect();
        let mut h = vec![0.0; moves.len()];
        t.move_hints(&mut p, &moves, &mut h);
        let hint = |u: &str| h[moves.iter().position(|&m| p.uci(m) == u).unwrap()];
        assert_eq!(
            hint("d1d5"),
            3.0 - 5.0,
            "takes a defended knight with a rook"
        );
        assert_eq!(
            hint("c1c3"),
            -5.0,
            "c3 is attacked by the knight and not defended"
        );
        assert_eq!(hint("c1b1"), 0.0, "a safe quiet move");
    }

    #[test]
    fn mop_up_prefers_the_lone_king_in_the_corner() {
        let t = Tactics::new(&Variant::builtin("makruk").unwrap());
        let centre = pos("makruk", "8/8/8/3k4/8/8/8/4K2R w - - 0 1");
        let corner = pos("makruk", "k7/8/8/8/8/8/8/4K2R w - - 0 1");
        assert!(t.static_eval(&corner) > t.static_eval(&centre));
        assert!(t.static_eval(&centre) > t.material(&centre));
        // Black to move sees the same bonus against it.
        let black = pos("makruk", "k7/8/8/8/8/8/8/4K2R b - - 0 1");
        assert_eq!(t.static_eval(&black), -t.static_eval(&corner));
    }

    #[test]
    fn quiet_checks_let_the_quiescence_search_see_a_mate_in_one() {
        // Ra8 mates: the rook checks along the eighth rank and takes g8, the white king on g6
        // takes g7 and h7. No capture is on the board, so a capture-only search stands pat on
        // the material, a rook up (5 pawns in Makruk's file).
        let mut p = pos("makruk", "7k/8/6K1/8/8/8/8/R7 w - - 0 1");
        let mut t = tactics(&p);
        assert_eq!(t.quiesce(&mut p), 5.0);
        t.checks = 1;
        assert_eq!(t.quiesce(&mut p), MATE);
        // With the king on f6, h7 is free: Ra8+ Kh7 and the check wins nothing, so the value
        // stays the material's.
        let mut q = pos("makruk", "7k/8/5K2/8/8/8/8/R7 w - - 0 1");
        assert_eq!(t.quiesce(&mut q), 5.0);
        // From the defending side's view, one ply later, the mate is already on the board.
        p.play_uci("a1a8").unwrap();
        assert!(p.outcome().is_some());
        // The colours swapped: black's quiet check mates, from black's view.
        let mut b = pos("makruk", "7K/8/6k1/8/8/8/8/r7 b - - 0 1");
        assert_eq!(t.quiesce(&mut b), MATE);
        t.checks = 0;
        assert_eq!(t.quiesce(&mut b), 5.0);
    }
}
