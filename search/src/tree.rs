//! The search tree: PUCT selection with virtual loss, win/draw/loss values, terminal scoring by
//! the rules, root noise, and tree reuse. Nodes and edges live in two arenas that are reused
//! between searches, so a playout allocates nothing once the arenas have grown.

use crate::config::SearchConfig;
use varzero_rules::{Color, GameResult, Move, Position};
use varzero_stats::Rng;

pub const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeState {
    Unexpanded,
    /// Waiting for the evaluator.
    Pending,
    Expanded,
    /// The game is over here; `Node::terminal` holds the value.
    Terminal,
}

/// What the search has proved about a node, from the view of the side that moved into it, with
/// the plies from the node to the end of the game (an MCTS solver: a node is won when one reply
/// loses for the opponent, lost when every reply wins for them, drawn when every reply is
/// proved and the best of them draws).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proof {
    Unknown,
    Win(u16),
    Draw,
    Loss(u16),
}

#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub visits: u32,
    pub vloss: u32,
    /// Sums of (win, draw, loss) from the view of the side that made the move into this node.
    pub wdl: [f32; 3],
    pub first_edge: u32,
    pub n_edges: u32,
    pub state: NodeState,
    pub terminal: [f32; 3],
    pub proof: Proof,
}

impl Node {
    fn new() -> Node {
        Node {
            visits: 0,
            vloss: 0,
            wdl: [0.0; 3],
            first_edge: 0,
            n_edges: 0,
            state: NodeState::Unexpanded,
            terminal: [0.0; 3],
            proof: Proof::Unknown,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Edge {
    pub mv: Move,
    pub prior: f32,
    pub child: u32,
}

/// What one descent reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf {
    /// A terminal node; its value has been backed up.
    Terminal,
    /// A new node whose moves are its edges; it needs an evaluation (virtual loss applied).
    NeedsEval(u32),
    /// A node already waiting for the evaluator: nothing to do this round.
    Collision,
}

#[inline]
fn flip(v: [f32; 3]) -> [f32; 3] {
    [v[2], v[1], v[0]]
}

/// The value of a finished game for the side that made the last move.
pub fn terminal_value(result: GameResult, mover: Color) -> [f32; 3] {
    match result {
        GameResult::Draw => [0.0, 1.0, 0.0],
        GameResult::Win(c) if c == mover => [1.0, 0.0, 0.0],
        GameResult::Win(_) => [0.0, 0.0, 1.0],
    }
}

/// Buffers the Gumbel root reuses from simulation to simulation.
#[derive(Clone, Debug, Default)]
pub struct GumbelScratch {
    priors: Vec<f32>,
    visits: Vec<u32>,
    q: Vec<f32>,
    sigma: Vec<f32>,
}

#[derive(Clone, Debug, Default)]
pub struct Tree {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    pub root: u32,
    /// The evaluator's value of the root when it was expanded in this tree (its side to move's
    /// view); the Gumbel root's v_mix needs it.
    pub root_raw: Option<[f32; 3]>,
    /// The root moves the search may choose (UCI's `go searchmoves`); empty, or none of them a
    /// root move: all. It holds for the root alone, so `reset` and `advance` clear it.
    pub root_filter: Vec<Move>,
    /// KataGo's forced playouts at the root: each root move with prior P gets at least
    /// sqrt(k * P * root visits) visits before PUCT chooses freely (0: off). Self-play's full
    /// searches set it, so noise-boosted moves are really looked at; their extra visits are
    /// pruned from the policy target again ([`Tree::pruned_root_visits`]).
    pub forced_k: f32,
    spare_nodes: Vec<Node>,
    spare_edges: Vec<Edge>,
    stack: Vec<(u32, u32)>,
}

impl Tree {
    pub fn new() -> Tree {
        let mut t = Tree::default();
        t.reset();
        t
    }

    /// A tree with a single unexpanded root.
    pub fn reset(&mut self) {
        self.nodes.clear();
        self.edges.clear();
        self.nodes.push(Node::new());
        self.root = 0;
        self.root_raw = None;
        self.root_filter.clear();
    }

    /// Whether the root's moves are restricted: some of them are in `root_filter`.
    pub fn root_filtered(&self) -> bool {
        !self.root_filter.is_empty()
            && self
                .edges_of(self.root)
                .iter()
                .any(|e| self.root_filter.contains(&e.mv))
    }

    /// Whether `edge` of `node` may be chosen (`filtered`: [`Tree::root_filtered`]).
    #[inline]
    fn allowed(&self, node: u32, filtered: bool, edge: &Edge) -> bool {
        !filtered || node != self.root || self.root_filter.contains(&edge.mv)
    }

    pub fn root(&self) -> &Node {
        &self.nodes[self.root as usize]
    }

    pub fn edges_of(&self, node: u32) -> &[Edge] {
        let n = &self.nodes[node as usize];
        &self.edges[n.first_edge as usize..(n.first_edge + n.n_edges) as usize]
    }

    /// Descends from the root by PUCT, making the moves on `pos` (the caller takes them back:
    /// `path.len() - 1` moves). `path` receives the nodes from the root to the leaf.
    pub fn descend(&mut self, pos: &mut Position, cfg: &SearchConfig, path: &mut Vec<u32>) -> Leaf {
        self.descend_via(pos, cfg, path, None)
    }

    /// [`Tree::descend`], the root's move given (`root_edge`, an index into its edges) when the
    /// root is expanded: the Gumbel root chooses it.
    pub fn descend_via(
        &mut self,
        pos: &mut Position,
        cfg: &SearchConfig,
        path: &mut Vec<u32>,
        root_edge: Option<usize>,
    ) -> Leaf {
        let mut node = self.root;
        path.push(node);
        loop {
            match self.nodes[node as usize].state {
                NodeState::Terminal => {
                    let v = self.nodes[node as usize].terminal;
                    self.backup(path, v, false);
                    return Leaf::Terminal;
                }
                NodeState::Pending => return Leaf::Collision,
                // Below the root, a proved node needs no more search: its proof is its value.
                NodeState::Expanded
                    if node != self.root && self.nodes[node as usize].proof != Proof::Unknown =>
                {
                    let v = match self.nodes[node as usize].proof {
                        Proof::Win(_) => [1.0, 0.0, 0.0],
                        Proof::Loss(_) => [0.0, 0.0, 1.0],
                        _ => [0.0, 1.0, 0.0],
                    };
                    self.backup(path, v, false);
                    return Leaf::Terminal;
                }
                NodeState::Unexpanded => {
                    let (outcome, moves) = pos.outcome_and_moves();
                    let n = &mut self.nodes[node as usize];
                    if let Some(o) = outcome {
                        n.state = NodeState::Terminal;
                        n.terminal = terminal_value(o.result, !pos.side_to_move());
                        n.proof = match o.result {
                            GameResult::Draw => Proof::Draw,
                            GameResult::Win(c) if c == pos.side_to_move() => Proof::Loss(0),
                            GameResult::Win(_) => Proof::Win(0),
                        };
                        let v = n.terminal;
                        self.backup(path, v, false);
                        self.prove(path);
                        return Leaf::Terminal;
                    }
                    n.state = NodeState::Pending;
                    n.first_edge = self.edges.len() as u32;
                    n.n_edges = moves.len() as u32;
                    self.edges.extend(moves.iter().map(|&mv| Edge {
                        mv,
                        prior: 0.0,
                        child: NONE,
                    }));
                    for &p in path.iter() {
                        self.nodes[p as usize].vloss += 1;
                    }
                    return Leaf::NeedsEval(node);
                }
                NodeState::Expanded => {
                    let first = self.nodes[node as usize].first_edge as usize;
                    let e = match root_edge {
                        Some(i) if node == self.root && i < self.edges_of(node).len() => first + i,
                        _ => self.select_edge(node, cfg),
                    };
                    let mut child = self.edges[e].child;
                    if child == NONE {
                        child = self.nodes.len() as u32;
                        self.nodes.push(Node::new());
                        self.edges[e].child = child;
                    }
                    pos.make(self.edges[e].mv);
                    node = child;
                    path.push(node);
                }
            }
        }
    }

    /// Takes back what an aborted search left pending (virtual losses, leaves waiting for an
    /// evaluation that will not come), so a reused tree starts clean.
    pub fn clear_pending(&mut self) {
        for n in &mut self.nodes {
            n.vloss = 0;
            if n.state == NodeState::Pending {
                n.state = NodeState::Unexpanded;
            }
        }
    }

    /// Makes an unexpanded `node` pending with `moves` as its edges (virtual loss on it alone),
    /// for a root expanded by hand; `apply_evaluation(&[node], ..)` completes it.
    pub fn open(&mut self, node: u32, moves: &[Move]) {
        let first = self.edges.len() as u32;
        self.edges.extend(moves.iter().map(|&mv| Edge {
            mv,
            prior: 0.0,
            child: NONE,
        }));
        let n = &mut self.nodes[node as usize];
        n.state = NodeState::Pending;
        n.first_edge = first;
        n.n_edges = moves.len() as u32;
        n.vloss += 1;
    }

    fn select_edge(&self, node: u32, cfg: &SearchConfig) -> usize {
        let n = &self.nodes[node as usize];
        let parent_n = (n.visits + n.vloss) as f32;
        // The parent's value from its side to move's view (stored from the other side's).
        let parent_q = if n.visits > 0 {
            (n.wdl[2] - n.wdl[0]) / n.visits as f32
        } else {
            0.0
        };
        let fpu = parent_q - cfg.fpu_reduction;
        let sqrt_n = parent_n.max(1.0).sqrt();
        let mut best = n.first_edge as usize;
        let mut best_score = f32::NEG_INFINITY;
        let filtered = node == self.root && self.root_filtered();
        if node == self.root && self.forced_k > 0.0 {
            if let Some(i) = self.forced_edge(node, filtered) {
                return i;
            }
        }
        for i in n.first_edge as usize..(n.first_edge + n.n_edges) as usize {
            let e = &self.edges[i];
            if !self.allowed(node, filtered, e) {
                continue;
            }
            let (q, visits) = if e.child == NONE {
                (fpu, 0.0)
            } else {
                let c = &self.nodes[e.child as usize];
                let nv = c.visits as f32 + c.vloss as f32;
                // A proved child is worth its proof, not its average: a proved loss is never
                // explored again while anything else is left, a proved win always is.
                if let Some(q) = match c.proof {
                    Proof::Unknown => None,
                    Proof::Win(_) => Some(1.0),
                    Proof::Draw => Some(0.0),
                    Proof::Loss(_) => Some(-2.0),
                } {
                    (q, nv)
                } else if nv == 0.0 {
                    (fpu, 0.0)
                } else {
                    (
                        (c.wdl[0] - c.wdl[2] - cfg.virtual_loss * c.vloss as f32) / nv,
                        nv,
                    )
                }
            };
            let score = q + cfg.c_puct * e.prior * sqrt_n / (1.0 + visits);
            if score > best_score {
                best_score = score;
                best = i;
            }
        }
        best
    }

    /// The first visited root edge still short of its forced playouts, if any. As in KataGo,
    /// only a move already visited is forced (an unvisited one waits for PUCT), and the total
    /// is the children's visits (the root's own evaluation aside).
    fn forced_edge(&self, node: u32, filtered: bool) -> Option<usize> {
        let n = &self.nodes[node as usize];
        let total = n.visits.saturating_sub(1) as f32;
        (n.first_edge as usize..(n.first_edge + n.n_edges) as usize).find(|&i| {
            let e = &self.edges[i];
            if e.child == NONE || !self.allowed(node, filtered, e) {
                return false;
            }
            let c = &self.nodes[e.child as usize];
            // A proved loss is never forced again.
            c.visits > 0
                && !matches!(c.proof, Proof::Loss(_))
                && ((c.visits + c.vloss) as f32) < (self.forced_k * e.prior * total).sqrt()
        })
    }

    /// The root's visits as a policy target after KataGo's policy-target pruning: each move but
    /// the most visited one loses up to its forced playouts (sqrt(k * P * N), `k` =
    /// `forced_k`, N the children's visits), as many as it can while its PUCT score (with
    /// `c_puct`) stays below the most visited move's; a move left with one visit or none is
    /// dropped. Without
    /// forced playouts it is [`Tree::root_visits`].
    pub fn pruned_root_visits(&self, c_puct: f32) -> Vec<(Move, u32)> {
        let mut v: Vec<(Move, u32)> = self.root_visits().collect();
        if self.forced_k <= 0.0 {
            return v;
        }
        let total = v.iter().map(|x| x.1).sum::<u32>() as f32;
        let sqrt_n = total.max(1.0).sqrt();
        let edges = self.edges_of(self.root);
        let q = |e: &Edge| {
            let c = &self.nodes[e.child as usize];
            (c.wdl[0] - c.wdl[2]) / c.visits.max(1) as f32
        };
        let Some(best) = (0..v.len()).max_by_key(|&i| v[i].1) else {
            return v;
        };
        if v[best].1 == 0 {
            return v;
        }
        let eb = &edges[best];
        let best_score = q(eb) + c_puct * eb.prior * sqrt_n / (1.0 + v[best].1 as f32);
        for (i, e) in edges.iter().enumerate() {
            let n = v[i].1;
            if i == best || n == 0 {
                continue;
            }
            let forced = (self.forced_k * e.prior * total).sqrt();
            let gap = best_score - q(e);
            // The fewest visits at which this move's PUCT score stays below the best's:
            // c_puct * P * sqrt(N) / (1 + n') <= gap.
            let least = if gap > 0.0 {
                (c_puct * e.prior * sqrt_n / gap - 1.0).ceil().max(0.0)
            } else {
                n as f32
            };
            // Never more than the forced playouts are taken back.
            let kept = (n as f32 - forced).ceil().max(least).min(n as f32);
            v[i].1 = if kept <= 1.0 { 0 } else { kept as u32 };
        }
        v
    }

    /// After the last node of `path` was proved: the proofs of the nodes above it, as far as
    /// they change.
    fn prove(&mut self, path: &[u32]) {
        for &node in path.iter().rev().skip(1) {
            let p = self.proof_from_children(node);
            if p == self.nodes[node as usize].proof {
                break;
            }
            self.nodes[node as usize].proof = p;
        }
    }

    /// The proof of an expanded node from its children's (which are from the other side's view).
    fn proof_from_children(&self, node: u32) -> Proof {
        let (mut all_proved, mut draw, mut longest_loss) = (true, false, 0u16);
        let mut shortest_win = u16::MAX;
        for e in self.edges_of(node) {
            let p = if e.child == NONE {
                Proof::Unknown
            } else {
                self.nodes[e.child as usize].proof
            };
            match p {
                // A reply that wins for the side to move here: this node is lost for its mover.
                Proof::Win(d) => shortest_win = shortest_win.min(d),
                Proof::Draw => draw = true,
                Proof::Loss(d) => longest_loss = longest_loss.max(d),
                Proof::Unknown => all_proved = false,
            }
        }
        if shortest_win != u16::MAX {
            Proof::Loss(shortest_win.saturating_add(1))
        } else if !all_proved || self.nodes[node as usize].n_edges == 0 {
            Proof::Unknown
        } else if draw {
            Proof::Draw
        } else {
            Proof::Win(longest_loss.saturating_add(1))
        }
    }

    /// The root's proof from its side to move's view: `Win(d)` wins in `d` plies.
    pub fn root_proof(&self) -> Proof {
        match self.root().proof {
            Proof::Win(d) => Proof::Loss(d),
            Proof::Loss(d) => Proof::Win(d),
            p => p,
        }
    }

    /// Bytes the tree's nodes and edges take (as stored, not counting spare capacity).
    pub fn bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<Node>()
            + self.edges.len() * std::mem::size_of::<Edge>()
    }

    /// Adds `v` (from the view of the side that moved into the leaf) along the path, flipping
    /// at each level; `remove_vloss` takes back the virtual loss of a pending path.
    pub fn backup(&mut self, path: &[u32], mut v: [f32; 3], remove_vloss: bool) {
        for &p in path.iter().rev() {
            let n = &mut self.nodes[p as usize];
            n.visits += 1;
            for (s, x) in n.wdl.iter_mut().zip(v) {
                *s += x;
            }
            if remove_vloss {
                n.vloss -= 1;
            }
            v = flip(v);
        }
    }

    /// Completes a pending leaf with the evaluator's priors (one per edge, in order) and its
    /// value from the leaf's side to move's view.
    pub fn apply_evaluation(&mut self, path: &[u32], priors: &[f32], wdl_stm: [f32; 3]) {
        let leaf = *path.last().expect("non-empty path");
        let n = self.nodes[leaf as usize];
        debug_assert_eq!(n.state, NodeState::Pending);
        let sum: f32 = priors.iter().sum();
        for (i, e) in self.edges[n.first_edge as usize..(n.first_edge + n.n_edges) as usize]
            .iter_mut()
            .enumerate()
        {
            e.prior = if sum > 0.0 {
                priors[i] / sum
            } else {
                1.0 / n.n_edges as f32
            };
        }
        self.nodes[leaf as usize].state = NodeState::Expanded;
        if leaf == self.root {
            self.root_raw = Some(wdl_stm);
        }
        self.backup(path, flip(wdl_stm), true);
    }

    /// Mixes Dirichlet noise into the root priors.
    pub fn add_root_noise(
        &mut self,
        rng: &mut Rng,
        alpha: f32,
        epsilon: f32,
        scratch: &mut Vec<f32>,
    ) {
        let r = self.nodes[self.root as usize];
        if r.state != NodeState::Expanded || r.n_edges == 0 {
            return;
        }
        scratch.clear();
        scratch.resize(r.n_edges as usize, 0.0);
        rng.dirichlet(alpha as f64, scratch);
        for (e, &x) in self.edges[r.first_edge as usize..(r.first_edge + r.n_edges) as usize]
            .iter_mut()
            .zip(scratch.iter())
        {
            e.prior = (1.0 - epsilon) * e.prior + epsilon * x;
        }
    }

    /// A root move that ends the game at once with a win for the side to move (a proven win
    /// needs no more visits to be chosen).
    pub fn winning_root_move(&self) -> Option<Move> {
        let filtered = self.root_filtered();
        self.edges_of(self.root).iter().find_map(|e| {
            if !self.allowed(self.root, filtered, e) {
                return None;
            }
            let c = (e.child != NONE).then(|| &self.nodes[e.child as usize])?;
            (c.state == NodeState::Terminal && c.terminal == [1.0, 0.0, 0.0]).then_some(e.mv)
        })
    }

    /// The most visited root move (ties: the higher prior), with what the solver proved
    /// first: the shortest proved win; never a proved loss while another move is not one, and
    /// the longest loss when every move loses.
    pub fn best_root_move(&self) -> Option<Move> {
        if let Some(m) = self.winning_root_move() {
            return Some(m);
        }
        self.best_edge(self.root).map(|e| e.mv)
    }

    /// The root's moves that may be played, best first by [`Tree::best_edge`]'s rule (a proved
    /// win, the shortest first; then visits, then priors; proved losses last, the longest
    /// first), each with its value and line; `k` of them.
    pub fn root_lines(&self, k: usize) -> Vec<crate::searcher::RootLine> {
        let filtered = self.root_filtered();
        let mut lines: Vec<(u8, i64, f32, crate::searcher::RootLine, u32)> = self
            .edges_of(self.root)
            .iter()
            .filter(|e| self.allowed(self.root, filtered, e))
            .map(|e| {
                let (visits, wdl, proof) = if e.child == NONE {
                    (0, [f32::NAN; 3], Proof::Unknown)
                } else {
                    let n = &self.nodes[e.child as usize];
                    let v = n.visits.max(1) as f32;
                    (
                        n.visits,
                        [n.wdl[0] / v, n.wdl[1] / v, n.wdl[2] / v],
                        n.proof,
                    )
                };
                // A node's proof is from the view of the side that moved into it: the root's
                // side to move. Its depth counts the plies below the child.
                let (class, key, wdl, mate) = match proof {
                    Proof::Win(d) => (0, d as i64, [1.0, 0.0, 0.0], Some((d as i32 + 2) / 2)),
                    Proof::Loss(d) => (
                        2,
                        -(d as i64),
                        [0.0, 0.0, 1.0],
                        Some(-((d as i32 + 1) / 2).max(1)),
                    ),
                    Proof::Draw => (1, -(visits as i64), [0.0, 1.0, 0.0], None),
                    Proof::Unknown => (1, -(visits as i64), wdl, None),
                };
                (
                    class,
                    key,
                    e.prior,
                    crate::searcher::RootLine {
                        mv: e.mv,
                        visits: visits as u64,
                        prior: e.prior,
                        wdl,
                        mate,
                        pv: Vec::new(),
                    },
                    e.child,
                )
            })
            .collect();
        lines.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(b.2.total_cmp(&a.2)));
        // Lines are walked for the moves kept only.
        lines
            .into_iter()
            .take(k)
            .map(|(_, _, _, mut l, child)| {
                l.pv.push(l.mv);
                let mut node = child;
                while node != NONE && l.pv.len() < 64 {
                    match self.best_edge(node) {
                        Some(b) if b.child != NONE && self.nodes[b.child as usize].visits > 0 => {
                            l.pv.push(b.mv);
                            node = b.child;
                        }
                        _ => break,
                    }
                }
                l
            })
            .collect()
    }

    /// The visits of the two most visited root moves that may be played, and how many such
    /// moves there are (smart pruning's question).
    pub fn top_two_root_visits(&self) -> (u32, u32, usize) {
        let filtered = self.root_filtered();
        let (mut first, mut second, mut moves) = (0, 0, 0);
        for e in self.edges_of(self.root) {
            if !self.allowed(self.root, filtered, e) {
                continue;
            }
            moves += 1;
            let v = if e.child == NONE {
                0
            } else {
                self.nodes[e.child as usize].visits
            };
            if v > first {
                second = first;
                first = v;
            } else if v > second {
                second = v;
            }
        }
        (first, second, moves)
    }

    /// The edge of `node` to play by [`Tree::best_root_move`]'s rule (proofs, then visits).
    pub fn best_edge(&self, node: u32) -> Option<&Edge> {
        let proof = |e: &Edge| {
            if e.child == NONE {
                Proof::Unknown
            } else {
                self.nodes[e.child as usize].proof
            }
        };
        let filtered = node == self.root && self.root_filtered();
        let edges = || {
            self.edges_of(node)
                .iter()
                .filter(move |e| self.allowed(node, filtered, e))
        };
        if let Some(e) = edges()
            .filter_map(|e| match proof(e) {
                Proof::Win(d) => Some((d, e)),
                _ => None,
            })
            .min_by_key(|x| x.0)
        {
            return Some(e.1);
        }
        let all_lost =
            edges().next().is_some() && edges().all(|e| matches!(proof(e), Proof::Loss(_)));
        if all_lost {
            return edges().max_by_key(|e| match proof(e) {
                Proof::Loss(d) => d,
                _ => 0,
            });
        }
        edges()
            .filter(|e| !matches!(proof(e), Proof::Loss(_)))
            .map(|e| {
                (
                    e,
                    if e.child == NONE {
                        0
                    } else {
                        self.nodes[e.child as usize].visits
                    },
                )
            })
            .max_by(|a, b| (a.1, a.0.prior).partial_cmp(&(b.1, b.0.prior)).unwrap())
            .map(|(e, _)| e)
    }

    /// The Gumbel root's view of its moves, into `s`'s buffers (edge order): priors, visits
    /// with pending ones, and mean values for the root's side to move (a proved move is worth
    /// its proof; NaN where a move has no value yet).
    pub fn root_stats<'a>(&self, s: &'a mut GumbelScratch) -> crate::gumbel::RootStats<'a> {
        s.priors.clear();
        s.visits.clear();
        s.q.clear();
        for e in self.edges_of(self.root) {
            s.priors.push(e.prior);
            if e.child == NONE {
                s.visits.push(0);
                s.q.push(f32::NAN);
                continue;
            }
            let c = &self.nodes[e.child as usize];
            s.visits.push(c.visits + c.vloss);
            s.q.push(match c.proof {
                Proof::Win(_) => 1.0,
                Proof::Loss(_) => -1.0,
                Proof::Draw => 0.0,
                Proof::Unknown if c.visits == 0 => f32::NAN,
                Proof::Unknown => (c.wdl[0] - c.wdl[2]) / c.visits as f32,
            });
        }
        let raw = self.root_raw.unwrap_or_else(|| self.root_value());
        crate::gumbel::RootStats {
            priors: &s.priors,
            visits: &s.visits,
            q: &s.q,
            raw_value: raw[0] - raw[2],
        }
    }

    /// The root edge of the next Gumbel simulation of a search of `budget` simulations.
    pub fn gumbel_next_edge(
        &self,
        gumbel: &[f32],
        p: &crate::gumbel::GumbelParams,
        budget: u32,
        s: &mut GumbelScratch,
    ) -> usize {
        let mut sigma = std::mem::take(&mut s.sigma);
        let stats = self.root_stats(s);
        let done = stats.visits.iter().map(|&n| n as usize).sum();
        let e =
            crate::gumbel::next_simulation(&stats, gumbel, p, budget as usize, done, &mut sigma);
        s.sigma = sigma;
        e
    }

    /// The move a Gumbel search plays (a move that wins at once first), and its policy target
    /// over the root's moves (edge order): softmax(log prior + σ(q̂)), from `target_priors`
    /// where given (edge order; [`crate::TargetPriors::Net`]), else from the root's own.
    pub fn gumbel_result(
        &self,
        gumbel: &[f32],
        p: &crate::gumbel::GumbelParams,
        s: &mut GumbelScratch,
        target_priors: Option<&[f32]>,
    ) -> Option<(Move, Vec<f32>)> {
        let r = self.root();
        if r.state != NodeState::Expanded || r.n_edges == 0 {
            return None;
        }
        let mut sigma = std::mem::take(&mut s.sigma);
        let stats = self.root_stats(s);
        let i = crate::gumbel::final_move(&stats, gumbel, p, &mut sigma);
        let priors = match target_priors {
            Some(t) if t.len() == stats.priors.len() => t,
            _ => stats.priors,
        };
        let policy = crate::gumbel::improved_policy(priors, &sigma);
        s.sigma = sigma;
        let mv = self
            .winning_root_move()
            .unwrap_or(self.edges_of(self.root)[i].mv);
        Some((mv, policy))
    }

    /// The root's moves and their priors (edge order).
    pub fn root_priors(&self) -> impl Iterator<Item = (Move, f32)> + '_ {
        self.edges_of(self.root).iter().map(|e| (e.mv, e.prior))
    }

    /// Root visits per move (the policy target before normalisation).
    pub fn root_visits(&self) -> impl Iterator<Item = (Move, u32)> + '_ {
        self.edges_of(self.root).iter().map(|e| {
            (
                e.mv,
                if e.child == NONE {
                    0
                } else {
                    self.nodes[e.child as usize].visits
                },
            )
        })
    }

    /// The root value from the root's side to move's view, normalised.
    pub fn root_value(&self) -> [f32; 3] {
        let r = self.root();
        let n = r.visits.max(1) as f32;
        let v = flip(r.wdl);
        [v[0] / n, v[1] / n, v[2] / n]
    }

    /// Makes the child reached by `mv` the new root, keeping its subtree (compacted into the
    /// spare arenas, which are then swapped in).
    pub fn advance(&mut self, mv: Move, reuse: bool) {
        let child = self
            .edges_of(self.root)
            .iter()
            .find(|e| e.mv == mv)
            .map_or(NONE, |e| e.child);
        if !reuse || child == NONE {
            self.reset();
            return;
        }
        let mut nodes = std::mem::take(&mut self.spare_nodes);
        let mut edges = std::mem::take(&mut self.spare_edges);
        nodes.clear();
        edges.clear();
        nodes.push(self.nodes[child as usize]);
        self.stack.clear();
        self.stack.push((child, 0));
        while let Some((old, new)) = self.stack.pop() {
            let n = self.nodes[old as usize];
            let first = edges.len() as u32;
            for i in n.first_edge..n.first_edge + n.n_edges {
                let mut e = self.edges[i as usize];
                if e.child != NONE {
                    let idx = nodes.len() as u32;
                    nodes.push(self.nodes[e.child as usize]);
                    self.stack.push((e.child, idx));
                    e.child = idx;
                }
                edges.push(e);
            }
            nodes[new as usize].first_edge = first;
        }
        self.spare_nodes = std::mem::replace(&mut self.nodes, nodes);
        self.spare_edges = std::mem::replace(&mut self.edges, edges);
        self.root = 0;
        self.root_filter.clear();
    }

    /// Frees what a tree bounded to `max_bytes` should not keep: the spare arenas (the last
    /// root's tree after `advance`, as large as the live one) and live arenas whose capacity
    /// went past the bound (a bound lowered between searches).
    pub fn trim(&mut self, max_bytes: usize) {
        self.spare_nodes = Vec::new();
        self.spare_edges = Vec::new();
        let cap = self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.edges.capacity() * std::mem::size_of::<Edge>();
        if cap > max_bytes {
            self.nodes.shrink_to_fit();
            self.edges.shrink_to_fit();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root with three visited moves, built by hand: priors 0.5, 0.3, 0.2; visits 20, 8, 2;
    /// values (win - loss per visit, the root mover's view) 0.4, 0.25, -1.
    fn hand_tree() -> (Tree, Vec<Move>) {
        let v = varzero_rules::Variant::builtin("makruk").unwrap();
        let pos = Position::start(&v);
        let moves: Vec<Move> = pos.legal_moves().as_slice()[..3].to_vec();
        let mut t = Tree::new();
        let children = [
            (0.5, 20, [12.0, 4.0, 4.0]),
            (0.3, 8, [4.0, 2.0, 2.0]),
            (0.2, 2, [0.0, 0.0, 2.0]),
        ];
        t.nodes[0].state = NodeState::Expanded;
        t.nodes[0].first_edge = 0;
        t.nodes[0].n_edges = 3;
        t.nodes[0].visits = 31;
        for (i, (prior, visits, wdl)) in children.into_iter().enumerate() {
            let mut n = Node::new();
            n.visits = visits;
            n.wdl = wdl;
            n.state = NodeState::Expanded;
            t.nodes.push(n);
            t.edges.push(Edge {
                mv: moves[i],
                prior,
                child: i as u32 + 1,
            });
        }
        (t, moves)
    }

    #[test]
    fn forced_playouts_by_hand() {
        let (mut t, _) = hand_tree();
        let cfg = SearchConfig {
            c_puct: 1.5,
            ..SearchConfig::default()
        };
        // PUCT alone, N = 31: 0.4 + 1.5 * 0.5 * sqrt(31) / 21 = 0.599 beats 0.25 + 0.278 and
        // -1 + 0.557: the first move.
        assert_eq!(t.select_edge(0, &cfg), 0);
        // k = 2 over the children's 30 visits: the third move's 2 visits are below
        // sqrt(2 * 0.2 * 30) = 3.46, so it is forced; the others (20 >= 5.48, 8 >= 4.24) are not.
        t.forced_k = 2.0;
        assert_eq!(t.select_edge(0, &cfg), 2);
        t.nodes[3].visits = 4;
        assert_eq!(t.select_edge(0, &cfg), 0);
    }

    #[test]
    fn policy_target_pruning_by_hand() {
        let (mut t, moves) = hand_tree();
        // Off: the visits as they are.
        let plain: Vec<u32> = t.pruned_root_visits(1.5).iter().map(|v| v.1).collect();
        assert_eq!(plain, [20, 8, 2]);
        t.forced_k = 2.0;
        // N = 30, sqrt(N) = 5.4772; the best (20 visits) scores 0.4 + 1.5 * 0.5 * 5.4772 / 21
        // = 0.5956.
        // Second move: forced sqrt(2 * 0.3 * 30) = 4.24, so 8 - 4.24 -> 4 left at most; but its
        // score 0.25 + 1.5 * 0.3 * 5.4772 / (1 + n') stays below 0.5956 only from
        // n' = ceil(2.4648 / 0.3456 - 1) = 7 (at 6 it would be 0.602): 7 kept.
        // Third move: forced 3.46 takes all of its 2; the bound is
        // ceil(1.6432 / 1.5956 - 1) = 1, and a move left with one visit is dropped: 0.
        let pruned = t.pruned_root_visits(1.5);
        assert_eq!(pruned, vec![(moves[0], 20), (moves[1], 7), (moves[2], 0)]);
    }
}
