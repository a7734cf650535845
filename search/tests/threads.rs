//! Several search threads on one tree: the search reaches its playout limit with every visit
//! counted once, finds what one thread finds, and a `stop` ends an infinite search.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use varzero_rules::{Position, Variant};
use varzero_search::{Limits, MaterialEvaluator, SearchConfig, Searcher};

fn searcher(threads: u32) -> (Searcher, Position) {
    let v = Variant::builtin("makruk").unwrap();
    // The rook takes the undefended queen (d1d5).
    let pos = Position::from_fen(&v, "4k3/8/8/3m4/8/8/8/3RK3 w - - 0 1").unwrap();
    let cfg = SearchConfig {
        threads,
        leaves_per_game: 4,
        ..SearchConfig::default()
    };
    let mut s = Searcher::new(Arc::new(MaterialEvaluator::new(&v)), cfg);
    s.multipv = 500;
    (s, pos)
}

#[test]
fn threads_share_one_tree_and_count_every_visit_once() {
    for threads in [1, 2, 3] {
        let (mut s, pos) = searcher(threads);
        let info = s.search(
            &pos,
            &Limits {
                playouts: Some(600),
                ..Limits::default()
            },
            &AtomicBool::new(false),
            &mut |_| {},
        );
        assert_eq!(info.best.map(|m| pos.uci(m)).as_deref(), Some("d1d5"));
        // Pending leaves of other threads count against the limit: at most one batch over.
        assert!(
            (600..=600 + 4 * threads as u64).contains(&info.visits),
            "{threads} threads: {} visits",
            info.visits
        );
        // The root's own evaluation and one visit per playout through its moves.
        let below: u64 = info.lines.iter().map(|l| l.visits).sum();
        assert_eq!(below + 1, info.visits, "{threads} threads");
        assert_eq!(info.playouts, info.visits, "{threads} threads");
    }
}

#[test]
fn stop_ends_an_infinite_search_on_threads() {
    let (mut s, pos) = searcher(2);
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let info = s.search(
        &pos,
        &Limits {
            infinite: true,
            ..Limits::default()
        },
        &stop,
        &mut |_| {},
    );
    t.join().unwrap();
    // It returned (an infinite search returns only on `stop`), with a move; no timed assertion.
    assert!(stop.load(std::sync::atomic::Ordering::Relaxed));
    assert!(info.best.is_some());
    assert!(info.visits > 1);
}
