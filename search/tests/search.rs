//! The search finds short mates with the uniform evaluator, scores terminal positions by the
//! rules, and puts Dirichlet noise at the root only.

use std::sync::Arc;
use varzero_rules::{Color, GameResult, Position, Termination, Variant};
use varzero_search::tree::{terminal_value, Leaf, NodeState, Tree};
use varzero_search::{
    best_move, Batch, Evaluation, Evaluator, Rng, SearchConfig, UniformEvaluator,
};

fn cfg() -> SearchConfig {
    SearchConfig::default()
}

/// Plays the search's move for the attacker and the search's reply for the defender, and
/// checks that the attacker has mated within `moves` of its moves.
fn mates_within(variant: &str, fen: &str, moves: usize, playouts: u32) {
    let v = Variant::builtin(variant).unwrap();
    let mut pos = Position::from_fen(&v, fen).unwrap();
    let attacker = pos.side_to_move();
    for ply in 0..(2 * moves - 1) {
        let m = best_move(&pos, &UniformEvaluator, &cfg(), playouts)
            .unwrap_or_else(|| panic!("{variant}: no move at ply {ply}"));
        pos.make(m);
        if let Some(o) = pos.outcome() {
            // A win by the rules: checkmate, or stalemate where the stalemated side loses.
            assert_eq!(
                o.result,
                GameResult::Win(attacker),
                "{variant} {fen}: {o} after {:?}",
                pos.history()
            );
            assert!(
                matches!(
                    o.termination,
                    Termination::Checkmate | Termination::Stalemate
                ),
                "{o}"
            );
            return;
        }
    }
    panic!(
        "{variant} {fen}: no mate within {moves} moves: {}",
        pos.fen()
    );
}

#[test]
fn makruk_mate_in_one() {
    // Rh8 is the only mate: the white king on b6 takes a7 and b7.
    mates_within("makruk", "k7/8/1K6/8/8/8/8/7R w - - 0 1", 1, 200);
}

#[test]
fn makruk_mate_in_two() {
    // 1. Re7 (or Rh7) Kb8 2. Rh8# (Re8#): two rooks against a bare king in the corner.
    mates_within("makruk", "k7/8/8/8/8/8/8/4R1KR w - - 0 1", 2, 3000);
}

#[test]
fn xiangqi_mate_in_one() {
    // The chariot on a9 holds rank 9; Ri10 mates along rank 10.
    mates_within("xiangqi", "4k4/R8/9/9/9/9/9/9/9/3K4R w - - 0 1", 1, 200);
}

#[test]
fn xiangqi_mate_in_two() {
    // 1. Ra9 (the king cannot go to d10: flying general) Kf10 2. Ri10#.
    mates_within("xiangqi", "4k4/9/R8/9/9/9/9/9/9/3K4R w - - 0 1", 2, 3000);
}

#[test]
fn oxeli_mate_in_one() {
    // Ih8 mates: the O on b6 takes a7 and b7 (b8 would face it on the b-file anyway).
    mates_within("oxeli", "o7/8/1O6/8/8/8/8/7I w - - 0 1", 1, 200);
}

#[test]
fn oxeli_mate_in_two() {
    mates_within("oxeli", "o7/8/8/8/8/8/8/4I1OI w - - 0 1", 2, 3000);
}

#[test]
fn terminal_values_follow_the_rules() {
    assert_eq!(
        terminal_value(GameResult::Win(Color::White), Color::White),
        [1.0, 0.0, 0.0]
    );
    assert_eq!(
        terminal_value(GameResult::Win(Color::White), Color::Black),
        [0.0, 0.0, 1.0]
    );
    assert_eq!(
        terminal_value(GameResult::Draw, Color::Black),
        [0.0, 1.0, 0.0]
    );
    // Xiangqi stalemate is a loss for the stalemated side: the root (Black to move, no legal
    // move, not in check) is terminal and its value for Black is a loss.
    let v = Variant::builtin("xiangqi").unwrap();
    // (d10 would face the red general, f10 is on the chariot's file, rank 9 is held.)
    let mut pos = Position::from_fen(&v, "4k4/R8/9/9/9/9/9/9/9/3K1R3 b - - 0 1").unwrap();
    let mut tree = Tree::new();
    let mut path = Vec::new();
    assert_eq!(tree.descend(&mut pos, &cfg(), &mut path), Leaf::Terminal);
    assert_eq!(tree.root().state, NodeState::Terminal);
    assert_eq!(tree.root_value(), [0.0, 0.0, 1.0]);
    // Makruk stalemate is a draw (the met on b6 takes a7, the king b7 and b8).
    let v = Variant::builtin("makruk").unwrap();
    let mut pos = Position::from_fen(&v, "k7/2K5/1M6/8/8/8/8/8 b - - 0 1").unwrap();
    let mut tree = Tree::new();
    path.clear();
    assert_eq!(tree.descend(&mut pos, &cfg(), &mut path), Leaf::Terminal);
    assert_eq!(tree.root_value(), [0.0, 1.0, 0.0]);
}

#[test]
fn counting_draw_is_terminal_in_the_tree() {
    // Makruk pieces' honour: K+R vs K with the count past its limit is a draw by the rules.
    let v = Variant::builtin("makruk").unwrap();
    let mut pos = Position::from_fen(&v, "8/8/8/4k3/8/8/R7/4K3 b - 32 33 40").unwrap();
    let o = pos.outcome().unwrap();
    assert_eq!(o.termination, Termination::Counting);
    let mut tree = Tree::new();
    let mut path = Vec::new();
    assert_eq!(tree.descend(&mut pos, &cfg(), &mut path), Leaf::Terminal);
    assert_eq!(tree.root_value(), [0.0, 1.0, 0.0]);
}

/// Expands the root and its first child with uniform priors.
fn two_levels(v: &Arc<Variant>) -> (Tree, Position) {
    let mut pos = Position::start(v);
    let mut tree = Tree::new();
    let ev = UniformEvaluator;
    let (mut batch, mut out) = (Batch::default(), Evaluation::default());
    for _ in 0..2 {
        let mut path = Vec::new();
        if let Leaf::NeedsEval(node) = tree.descend(&mut pos, &cfg(), &mut path) {
            let moves: Vec<_> = tree.edges_of(node).iter().map(|e| e.mv).collect();
            batch.clear();
            batch.push(&ev, &pos, &moves);
            ev.evaluate(&batch, &mut out);
            tree.apply_evaluation(&path, &out.priors, out.wdl[0]);
        }
        for _ in 1..path.len() {
            pos.unmake();
        }
    }
    (tree, pos)
}

#[test]
fn dirichlet_noise_only_at_the_root() {
    let v = Variant::builtin("makruk").unwrap();
    let (mut tree, _) = two_levels(&v);
    let root_before: Vec<f32> = tree.edges_of(tree.root).iter().map(|e| e.prior).collect();
    let child = tree
        .edges_of(tree.root)
        .iter()
        .find(|e| e.child != u32::MAX)
        .unwrap()
        .child;
    let child_before: Vec<f32> = tree.edges_of(child).iter().map(|e| e.prior).collect();
    assert!(!child_before.is_empty());
    tree.add_root_noise(&mut Rng::new(5), 0.3, 0.25, &mut Vec::new());
    let root_after: Vec<f32> = tree.edges_of(tree.root).iter().map(|e| e.prior).collect();
    let child_after: Vec<f32> = tree.edges_of(child).iter().map(|e| e.prior).collect();
    assert_ne!(root_before, root_after, "root priors get noise");
    assert_eq!(child_before, child_after, "deeper priors do not");
    let s: f32 = root_after.iter().sum();
    assert!((s - 1.0).abs() < 1e-4);
}

#[test]
fn tree_reuse_keeps_the_subtree() {
    let v = Variant::builtin("makruk").unwrap();
    let (mut tree, _) = two_levels(&v);
    let e = *tree
        .edges_of(tree.root)
        .iter()
        .find(|e| e.child != u32::MAX)
        .unwrap();
    let visits = tree.nodes[e.child as usize].visits;
    let n_edges = tree.nodes[e.child as usize].n_edges;
    tree.advance(e.mv, true);
    assert_eq!(tree.root().visits, visits);
    assert_eq!(tree.root().n_edges, n_edges);
    assert_eq!(tree.root().state, NodeState::Expanded);
    tree.advance(e.mv, false);
    assert_eq!(tree.root().visits, 0);
}
