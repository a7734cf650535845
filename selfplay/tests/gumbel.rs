//! Self-play with the Gumbel root: every full search leaves a completed-Q policy target (a
//! distribution over legal moves, not visit fractions), and the game is played to its end.

use std::sync::Arc;
use varzero_rules::{Position, Variant};
use varzero_search::{MaterialEvaluator, RootSearch, SearchConfig};
use varzero_selfplay::{play_game, Generator, SelfplayConfig};

#[test]
fn gumbel_self_play_writes_completed_q_targets() {
    let v = Variant::builtin("xiangqi").unwrap();
    let search = SearchConfig {
        playouts: 16,
        root: RootSearch::Gumbel,
        gumbel_considered: 4,
        cheap_fraction: 0.0,
        ..SearchConfig::default()
    };
    let run = SelfplayConfig {
        threads: 1,
        games_per_worker: 1,
        ..SelfplayConfig::default()
    };
    let g = Generator::new(v.clone(), Arc::new(MaterialEvaluator::new(&v)), search, run);
    let fin = play_game(&g, 3);
    assert!(!fin.positions.is_empty());
    let moves: Vec<&str> = fin.game.moves.split(' ').collect();
    assert_eq!(moves.len(), fin.positions.len());
    let mut spread = 0;
    for (r, played) in fin.positions.iter().zip(&moves) {
        assert!(r.full_search);
        let sum: f32 = r.policy_probs.iter().sum();
        assert!(
            (sum - 1.0).abs() < 1e-3,
            "ply {}: the target sums to {sum}",
            r.ply
        );
        let mut pos = Position::from_fen(&v, &r.fen).unwrap();
        for m in &r.policy_moves {
            assert!(pos.parse_uci(m).is_ok(), "ply {}: {m} is not legal", r.ply);
        }
        // 16 playouts visit at most 15 moves; the completed-Q target covers the others too.
        if r.policy_moves.len() > 15 {
            spread += 1;
        }
        pos.play_uci(played).unwrap();
    }
    assert!(spread > 0, "no target covers more moves than were visited");
}
