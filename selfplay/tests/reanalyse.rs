//! MuZero's Reanalyse: a position searched again gets the policy target a search of it gives
//! (here, the visit distribution of the same search run by the engine's searcher on the same
//! tree), with its game, ply and result kept.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use varzero_datasets::PositionRecord;
use varzero_rules::{Position, Variant};
use varzero_search::{Limits, MaterialEvaluator, SearchConfig, Searcher};
use varzero_selfplay::{Generator, SelfplayConfig};

fn record(v: &Variant, fen: &str, game_id: u64, ply: u32) -> PositionRecord {
    PositionRecord {
        game_id,
        ply,
        variant: v.name.clone(),
        rules_hash: format!("{:016x}", v.rules_hash),
        fen: fen.into(),
        // A stale target: all on one move.
        policy_moves: vec!["a3a4".into()],
        policy_probs: vec![1.0],
        result_wdl: [0.0, 0.0, 1.0],
        root_wdl: [1.0, 0.0, 0.0],
        visits: 4,
        full_search: false,
        evaluator: "old".into(),
    }
}

#[test]
fn a_refreshed_target_is_the_search_s_visit_distribution() {
    let v = Variant::builtin("makruk").unwrap();
    // The start position and a position after two moves.
    let start = Position::start(&v);
    let mut later = start.clone();
    later.play_uci("a3a4").unwrap();
    later.play_uci("h6h5").unwrap();
    let search = SearchConfig {
        playouts: 48,
        leaves_per_game: 1,
        ..SearchConfig::default()
    };
    let run = SelfplayConfig {
        threads: 1,
        noise: false,
        ..SelfplayConfig::default()
    };
    let ev = Arc::new(MaterialEvaluator::new(&v));
    let g = Generator::new(v.clone(), ev.clone(), search.clone(), run);
    let old = vec![
        record(&v, &start.fen(), 7, 0),
        record(&v, &later.fen(), 9, 2),
        record(&v, "not a fen", 9, 3),
    ];
    let fresh = g.reanalyse(&old);
    // The FEN that does not parse is left out; the others keep their order.
    assert_eq!(fresh.len(), 2);
    for (r, (pos, id, ply)) in fresh.iter().zip([(&start, 7, 0), (&later, 9, 2)]) {
        assert_eq!(
            (r.game_id, r.ply, r.fen.as_str()),
            (id, ply, pos.fen().as_str())
        );
        assert_eq!(r.result_wdl, [0.0, 0.0, 1.0], "the game's result is kept");
        assert!(r.full_search && r.evaluator.starts_with("reanalyse:"));
        // 48 root visits: the root's own evaluation and 47 through its moves.
        assert_eq!(r.visits, 47);
        // The same search by the searcher: one leaf at a time, no noise, 48 root visits.
        let mut s = Searcher::new(ev.clone(), search.clone());
        s.play_on = true;
        s.multipv = 500;
        let info = s.search(
            pos,
            &Limits {
                playouts: Some(48),
                ..Limits::default()
            },
            &AtomicBool::new(false),
            &mut |_| {},
        );
        let total: u64 = info.lines.iter().map(|l| l.visits).sum();
        let want: HashMap<String, f32> = info
            .lines
            .iter()
            .filter(|l| l.visits > 0)
            .map(|l| (pos.uci(l.pv[0]), l.visits as f32 / total as f32))
            .collect();
        let got: HashMap<String, f32> = r
            .policy_moves
            .iter()
            .cloned()
            .zip(r.policy_probs.iter().copied())
            .collect();
        assert_eq!(got.len(), want.len(), "{got:?} != {want:?}");
        for (m, p) in &want {
            assert!((got[m] - p).abs() < 1e-6, "{m}: {} != {p}", got[m]);
        }
        assert!(want.len() > 1, "the search spread its visits");
    }
}
