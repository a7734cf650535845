//! The MCTS solver: proofs of wins, losses and draws propagate up the tree, the shortest win is
//! chosen, a proved loss is avoided where a draw is proved, and a counting draw is a proof.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use varzero_rules::{Position, Variant};
use varzero_search::{
    Evaluator, Limits, MaterialEvaluator, Proof, Round, SearchConfig, Searcher, Tree,
    UniformEvaluator,
};

fn pos(variant: &str, fen: &str) -> Position {
    Position::from_fen(&Variant::builtin(variant).unwrap(), fen).unwrap()
}

/// Runs `playouts` playouts (one leaf per round) on a fresh tree.
fn grow(pos: &Position, ev: &dyn Evaluator, playouts: u32) -> Tree {
    let mut pos = pos.clone();
    let mut tree = Tree::new();
    let mut round = Round::default();
    let cfg = SearchConfig::default();
    for _ in 0..playouts {
        if tree.root_proof() != Proof::Unknown {
            break;
        }
        round.clear();
        round.descend(0, &mut tree, &mut pos, &cfg, ev);
        round.evaluate(ev, std::slice::from_mut(&mut tree), |t| t);
    }
    tree
}

fn search(pos: &Position, ev: Arc<dyn Evaluator>, playouts: u64) -> varzero_search::SearchInfo {
    let mut s = Searcher::new(ev, SearchConfig::default());
    let limits = Limits {
        playouts: Some(playouts),
        ..Limits::default()
    };
    s.search(pos, &limits, &AtomicBool::new(false), &mut |_| {})
}

#[test]
fn a_mate_in_one_is_proved_and_preferred_to_longer_wins() {
    // Makruk: Rh8 mates at once; other rook moves mate a move later.
    let p = pos("makruk", "k7/8/1K6/8/8/8/8/7R w - - 0 1");
    for ev in [
        Arc::new(UniformEvaluator) as Arc<dyn Evaluator>,
        Arc::new(MaterialEvaluator::new(p.variant())),
    ] {
        let info = search(&p, ev, 5000);
        assert_eq!(info.mate, Some(1));
        assert_eq!(p.uci(info.best.unwrap()), "h1h8");
    }
}

#[test]
fn a_mate_in_two_is_proved_with_its_distance() {
    // Makruk: Rh7 (or Re7) first, then mate on the back rank; no mate in one exists.
    let p = pos("makruk", "k7/8/8/8/8/8/8/4R1KR w - - 0 1");
    let info = search(&p, Arc::new(MaterialEvaluator::new(p.variant())), 100_000);
    assert_eq!(info.mate, Some(2), "{info:?}");
    // The line is a mate: play it out against the defender's every reply.
    let tree = grow(&p, &MaterialEvaluator::new(p.variant()), 100_000);
    assert_eq!(tree.root_proof(), Proof::Win(3));
}

#[test]
fn a_proved_loss_is_avoided_where_a_counting_draw_is_proved() {
    // Makruk pieces' honour, K+R vs K: the count stands at 31 of 32 plies. Black to move:
    // Ka8 allows Rh8 mate on the last counted ply; Kc8 escapes to d7, and the count draws
    // after any White move but a mate.
    let p = pos("makruk", "1k6/8/1K6/8/8/8/8/7R b - 32 31 40");
    assert_eq!(p.counting(), (31, 32));
    let tree = grow(&p, &UniformEvaluator, 20_000);
    let child = |u: &str| {
        let e = tree
            .edges_of(tree.root)
            .iter()
            .find(|e| p.uci(e.mv) == u)
            .unwrap();
        tree.nodes[e.child as usize].proof
    };
    // Proofs are from the view of the side that moved into the node (Black here).
    assert_eq!(child("b8a8"), Proof::Loss(1));
    assert_eq!(child("b8c8"), Proof::Draw);
    assert_eq!(tree.root_proof(), Proof::Draw);
    assert_eq!(p.uci(tree.best_root_move().unwrap()), "b8c8");
}

/// `searchmoves`: the root chooses among the listed moves only, even when another move mates
/// at once and the tree reused from an unrestricted search has proved it; a list with no root
/// move restricts nothing.
#[test]
fn searchmoves_restrict_the_root_even_in_a_reused_tree() {
    let p = pos("makruk", "k7/8/1K6/8/8/8/8/7R w - - 0 1");
    let mv = |s: &str| p.parse_uci(s).unwrap();
    let mut s = Searcher::new(
        Arc::new(MaterialEvaluator::new(p.variant())),
        SearchConfig::default(),
    );
    let stop = AtomicBool::new(false);
    let limits = |moves: Vec<varzero_rules::Move>| Limits {
        playouts: Some(2000),
        searchmoves: moves,
        ..Limits::default()
    };
    let info = s.search(&p, &limits(vec![]), &stop, &mut |_| {});
    assert_eq!(p.uci(info.best.unwrap()), "h1h8");
    // The same searcher and position: the proved mate is in its tree.
    let info = s.search(
        &p,
        &limits(vec![mv("h1h2"), mv("b6c6")]),
        &stop,
        &mut |_| {},
    );
    let best = p.uci(info.best.unwrap());
    assert!(best == "h1h2" || best == "b6c6", "{best}");
    // Both mate a move later (Kb8, then the rook on the back rank).
    assert_eq!(info.mate, Some(2), "no mate in one among the listed moves");
    assert!(
        info.pv.first().is_none_or(|m| p.uci(*m) == best),
        "{info:?}"
    );
    // One listed move: it is the answer.
    let info = s.search(&p, &limits(vec![mv("b6c7")]), &stop, &mut |_| {});
    assert_eq!(p.uci(info.best.unwrap()), "b6c7");
    // Unrestricted again on the restricted tree: the mate, not the most visited listed move.
    let info = s.search(&p, &limits(vec![]), &stop, &mut |_| {});
    assert_eq!(p.uci(info.best.unwrap()), "h1h8");
    // No root move listed: the search is unrestricted.
    let info = s.search(
        &p,
        &limits(vec![varzero_rules::Move(u32::MAX)]),
        &stop,
        &mut |_| {},
    );
    assert_eq!(p.uci(info.best.unwrap()), "h1h8");
}
