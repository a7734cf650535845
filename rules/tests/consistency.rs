//! Self-consistency over random games in every shipped variant (fixed-seed LCG): the FEN
//! written at each ply reads back to the same position (same FEN, key and moves); no legal
//! move leaves the mover in check or facing the other king (the FEN parser refuses such a
//! position with the side not to move in check); make/unmake restores the position.

mod common;
use common::*;
use varzero_rules::{Position, Variant};

#[test]
fn random_games_stay_consistent() {
    let mut rng = Lcg(0xC0FFEE);
    let mut failures = Vec::new();
    for name in Variant::builtin_names() {
        let v = variant(name);
        let games = 4;
        for g in 0..games {
            let mut p = Position::start(&v);
            for ply in 0..160 {
                let fen = p.fen();
                let ctx = format!("{name} game {g} ply {ply} {fen}");
                let q = match Position::from_fen(&v, &fen) {
                    Ok(q) => q,
                    Err(e) => {
                        failures.push(format!("{ctx}: own FEN rejected: {e}"));
                        break;
                    }
                };
                if q.fen() != fen {
                    failures.push(format!("{ctx}: reads back as {}", q.fen()));
                }
                if q.key() != p.key() {
                    failures.push(format!("{ctx}: incremental key differs from a fresh one"));
                }
                let moves = legal(&p);
                if legal(&q) != moves {
                    failures.push(format!("{ctx}: moves differ after reading the FEN back"));
                }
                for m in &moves {
                    let mv = p.parse_uci(m).unwrap();
                    p.make(mv);
                    let after = p.fen();
                    // Kar Ouk: a check ends the game; the checked side is then "in check"
                    // with the count spent, which the parser allows.
                    if let Err(e) = Position::from_fen(&v, &after) {
                        failures.push(format!("{ctx}: {m} gives an illegal position {after}: {e}"));
                    }
                    p.unmake();
                    if p.fen() != fen {
                        failures.push(format!("{ctx}: {m} then unmake gives {}", p.fen()));
                    }
                }
                if p.outcome().is_some() || moves.is_empty() {
                    break;
                }
                let m = &moves[rng.below(moves.len())];
                play(&mut p, &[m]);
                if failures.len() > 20 {
                    break;
                }
            }
        }
    }
    failures.truncate(20);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
