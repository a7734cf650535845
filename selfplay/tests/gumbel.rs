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

/// `gumbel_target_priors = "net"`: the target is softmax(log own prior + σ) instead of
/// softmax(log searched prior + σ), with the same σ. Over a uniform evaluator whose priors the
/// search mixes with the tactical ones, the two targets of a move differ by the mixed prior:
/// target_net ∝ target_search / mixed. The games are the same (the move played does not depend
/// on the target), so the check runs position by position.
#[test]
fn net_target_priors_take_the_tactical_mix_out_of_the_target() {
    use varzero_search::{Batch, Evaluation, TacticalBlend, TargetPriors, UniformEvaluator};
    let v = Variant::builtin("makruk").unwrap();
    let search = |t| SearchConfig {
        playouts: 16,
        root: RootSearch::Gumbel,
        gumbel_considered: 4,
        tactics_priors: 0.5,
        gumbel_target_priors: t,
        ..SearchConfig::default()
    };
    let run = SelfplayConfig {
        threads: 1,
        games_per_worker: 1,
        ..SelfplayConfig::default()
    };
    let game = |t| {
        let g = Generator::new(
            v.clone(),
            Arc::new(UniformEvaluator),
            search(t),
            run.clone(),
        );
        play_game(&g, 5)
    };
    let (a, b) = (game(TargetPriors::Search), game(TargetPriors::Net));
    assert_eq!(a.game.moves, b.game.moves);
    let blend = TacticalBlend::wrap(Arc::new(UniformEvaluator), &v, 0.0, 0.5);
    let mut checked = 0;
    let mut differ = 0;
    for (ra, rb) in a.positions.iter().zip(&b.positions).take(40) {
        let mut pos = Position::from_fen(&v, &ra.fen).unwrap();
        let moves = pos.legal_moves();
        let mut batch = Batch::default();
        batch.push_leaf(&*blend, &mut pos, moves.as_slice());
        let mut out = Evaluation::default();
        blend.evaluate(&batch, &mut out);
        let mixed = |uci: &str| {
            let i = moves.iter().position(|&m| pos.uci(m) == uci).unwrap();
            out.priors[i]
        };
        // target_net × mixed / target_search is the same for every move both targets keep.
        let ratios: Vec<f32> = rb
            .policy_moves
            .iter()
            .zip(&rb.policy_probs)
            .filter_map(|(m, &pn)| {
                let i = ra.policy_moves.iter().position(|x| x == m)?;
                (ra.policy_probs[i] > 1e-3 && pn > 1e-3).then(|| pn * mixed(m) / ra.policy_probs[i])
            })
            .collect();
        if ratios.len() >= 2 {
            let mean = ratios.iter().sum::<f32>() / ratios.len() as f32;
            for r in &ratios {
                assert!((r / mean - 1.0).abs() < 1e-2, "ply {}: {ratios:?}", ra.ply);
            }
            checked += 1;
        }
        if ra.policy_probs != rb.policy_probs {
            differ += 1;
        }
    }
    assert!(checked >= 10, "only {checked} positions checked");
    assert!(
        differ >= 10,
        "the targets differ at only {differ} positions"
    );
}
