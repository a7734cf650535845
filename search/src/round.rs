//! One batched playout round, the only place gather, evaluate and scatter are written: descents
//! in one or many trees gather their leaves (virtual loss keeps a tree's descents apart), one
//! evaluator call scores them all, and each result completes its leaf in its tree. The
//! self-play generator runs a round over all its games, the searcher over its one tree.

use crate::config::SearchConfig;
use crate::evaluator::{Batch, Evaluation, Evaluator};
use crate::tree::{Leaf, Tree};
use varzero_rules::{Move, Position};

/// The buffers of a round, reused from round to round (nothing is allocated once they grew).
#[derive(Default)]
pub struct Round {
    batch: Batch,
    eval: Evaluation,
    /// Per queued leaf: the index of its tree, and its path's span in `paths`.
    pending: Vec<(u32, u32, u32)>,
    paths: Vec<u32>,
    path: Vec<u32>,
    moves: Vec<Move>,
    /// Leaves are queued unencoded, with the moves from the root to them, and encoded by
    /// [`Round::encode_deferred`] (a search on several threads does it without the tree).
    pub defer: bool,
    /// The moves from the root to each deferred leaf, and each leaf's span of them.
    lines: Vec<Move>,
    line_spans: Vec<(u32, u32)>,
}

impl Round {
    /// Starts a new round.
    pub fn clear(&mut self) {
        self.batch.clear();
        self.pending.clear();
        self.paths.clear();
        self.lines.clear();
        self.line_spans.clear();
    }

    /// Leaves waiting for the evaluator.
    pub fn len(&self) -> usize {
        self.batch.n
    }

    pub fn is_empty(&self) -> bool {
        self.batch.n == 0
    }

    /// One descent from the root of `tree` (the caller's tree number `tree_id`) on `pos`: a
    /// leaf that needs the evaluator is queued with its moves. `pos` is back at the root on
    /// return. Returns the leaf and the playout's depth in plies.
    pub fn descend(
        &mut self,
        tree_id: u32,
        tree: &mut Tree,
        pos: &mut Position,
        cfg: &SearchConfig,
        ev: &dyn Evaluator,
    ) -> (Leaf, u32) {
        self.descend_via(tree_id, tree, pos, cfg, ev, None)
    }

    /// [`Round::descend`] through the root edge `root_edge` (the Gumbel root's choice).
    pub fn descend_via(
        &mut self,
        tree_id: u32,
        tree: &mut Tree,
        pos: &mut Position,
        cfg: &SearchConfig,
        ev: &dyn Evaluator,
        root_edge: Option<usize>,
    ) -> (Leaf, u32) {
        self.path.clear();
        let x = ev.exploration();
        let scaled;
        let cfg = if x == 1.0 {
            cfg
        } else {
            scaled = SearchConfig {
                c_puct: cfg.c_puct * x,
                ..cfg.clone()
            };
            &scaled
        };
        let leaf = tree.descend_via(pos, cfg, &mut self.path, root_edge);
        let depth = self.path.len() as u32 - 1;
        if let Leaf::NeedsEval(node) = leaf {
            self.moves.clear();
            self.moves.extend(tree.edges_of(node).iter().map(|e| e.mv));
            if self.defer {
                // The line from the root: each node of the path reached through its parent's edge.
                let from = self.lines.len() as u32;
                for w in self.path.windows(2) {
                    let e = tree.edges_of(w[0]).iter().find(|e| e.child == w[1]);
                    self.lines.push(e.expect("a path follows edges").mv);
                }
                self.line_spans.push((from, self.lines.len() as u32));
                self.batch.push_unencoded(ev, pos, &self.moves);
                let s = self.paths.len() as u32;
                self.paths.extend_from_slice(&self.path);
                self.pending.push((tree_id, s, self.paths.len() as u32));
            } else {
                self.queue(tree_id, pos, ev);
            }
        }
        for _ in 0..depth {
            pos.unmake();
        }
        (leaf, depth)
    }

    /// Encodes the leaves queued with [`Round::defer`], each by playing its line on `root` (the
    /// position at the tree's root, given back as it was).
    pub fn encode_deferred(&mut self, ev: &dyn Evaluator, root: &mut Position) {
        for (i, &(a, b)) in self.line_spans.iter().enumerate() {
            for &m in &self.lines[a as usize..b as usize] {
                root.make(m);
            }
            self.batch.encode_leaf_at(i, ev, root);
            for _ in a..b {
                root.unmake();
            }
        }
    }

    /// Queues `tree`'s root as a leaf with `moves` as its edges, whatever the rules say of the
    /// position (a root the caller searches on past an end of our rules).
    pub fn open_root(
        &mut self,
        tree_id: u32,
        tree: &mut Tree,
        pos: &mut Position,
        moves: &[Move],
        ev: &dyn Evaluator,
    ) {
        tree.open(tree.root, moves);
        self.path.clear();
        self.path.push(tree.root);
        self.moves.clear();
        self.moves.extend_from_slice(moves);
        self.queue(tree_id, pos, ev);
    }

    fn queue(&mut self, tree_id: u32, pos: &mut Position, ev: &dyn Evaluator) {
        self.batch.push_leaf(ev, pos, &self.moves);
        let s = self.paths.len() as u32;
        self.paths.extend_from_slice(&self.path);
        self.pending.push((tree_id, s, self.paths.len() as u32));
    }

    /// Evaluates the queued leaves in one call and completes each in its tree: the tree of
    /// leaf `i` is `tree_of(&mut items[tree_id])`. Returns the time inside the evaluator (the
    /// generator reports the evaluator's share of self-play time).
    pub fn evaluate<T>(
        &mut self,
        ev: &dyn Evaluator,
        items: &mut [T],
        tree_of: impl Fn(&mut T) -> &mut Tree,
    ) -> std::time::Duration {
        let spent = self.evaluate_only(ev);
        self.scatter(items, tree_of);
        spent
    }

    /// The evaluator's half of [`Round::evaluate`]: it needs no tree, so a search on several
    /// threads runs it without holding the tree.
    pub fn evaluate_only(&mut self, ev: &dyn Evaluator) -> std::time::Duration {
        if self.batch.n == 0 {
            return std::time::Duration::ZERO;
        }
        let t = std::time::Instant::now();
        ev.evaluate(&self.batch, &mut self.eval);
        t.elapsed()
    }

    /// The trees' half of [`Round::evaluate`], after [`Round::evaluate_only`].
    pub fn scatter<T>(&mut self, items: &mut [T], tree_of: impl Fn(&mut T) -> &mut Tree) {
        if self.batch.n == 0 {
            return;
        }
        for (i, &(t, a, b)) in self.pending.iter().enumerate() {
            let (m0, m1) = self.batch.ranges[i];
            tree_of(&mut items[t as usize]).apply_evaluation(
                &self.paths[a as usize..b as usize],
                &self.eval.priors[m0 as usize..m1 as usize],
                self.eval.wdl[i],
            );
        }
    }
}

/// The best move found by a search of `playouts` from `pos` (no noise, one leaf per round),
/// for tests and tools.
pub fn best_move(
    pos: &Position,
    ev: &dyn Evaluator,
    cfg: &SearchConfig,
    playouts: u32,
) -> Option<Move> {
    use crate::tree::NodeState;
    let mut pos = pos.clone();
    let mut tree = Tree::new();
    let mut round = Round::default();
    let mut guard = 0;
    while tree.root().state != NodeState::Terminal
        && tree.root().visits < playouts
        && guard < playouts * 4 + 10
    {
        guard += 1;
        round.clear();
        round.descend(0, &mut tree, &mut pos, cfg, ev);
        round.evaluate(ev, std::slice::from_mut(&mut tree), |t| t);
    }
    tree.best_root_move()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluator::{MaterialEvaluator, TacticalBlend};
    use std::sync::Arc;

    /// A deferred round (encoded after the descents, from the root) queues exactly the batch
    /// an immediate one does: inputs, exchange hints, moves and sides.
    #[test]
    fn deferred_encoding_matches_encoding_at_the_leaf() {
        let v = varzero_rules::Variant::builtin("xiangqi").unwrap();
        let ev = TacticalBlend::wrap(Arc::new(MaterialEvaluator::new(&v)), &v, 0.5, 0.5);
        let cfg = SearchConfig::default();
        let mut pos = Position::start(&v);
        let mut tree = Tree::new();
        let mut r = Round::default();
        for _ in 0..6 {
            r.clear();
            r.descend(0, &mut tree, &mut pos, &cfg, &*ev);
            r.evaluate(&*ev, std::slice::from_mut(&mut tree), |t| t);
        }
        let (mut t1, mut t2) = (tree.clone(), tree);
        let (mut now, mut later) = (Round::default(), Round::default());
        later.defer = true;
        for _ in 0..4 {
            now.descend(0, &mut t1, &mut pos, &cfg, &*ev);
            later.descend(0, &mut t2, &mut pos, &cfg, &*ev);
        }
        later.encode_deferred(&*ev, &mut pos);
        assert_eq!(
            pos.fen(),
            Position::start(&v).fen(),
            "the root is given back"
        );
        assert_eq!(now.batch.n, 4);
        assert!(
            later.line_spans.iter().any(|&(a, b)| b - a >= 2),
            "deep leaves"
        );
        assert_eq!(now.batch.inputs, later.batch.inputs);
        assert_eq!(now.batch.hints, later.batch.hints);
        assert_eq!(now.batch.moves, later.batch.moves);
        assert_eq!(now.batch.side_to_move, later.batch.side_to_move);
    }
}
