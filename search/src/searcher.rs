//! One search at a time for a player (a match, the UCI engine): PUCT over the rules core with
//! an evaluator, stopped by playouts, time, a stop flag or a proven win, without root noise, the
//! most visited move chosen. The tree is kept between calls and reused when the new position
//! follows the last searched one by moves in the tree (the opponent's reply included).

use crate::config::SearchConfig;
use crate::evaluator::Evaluator;
use crate::round::Round;
use crate::tree::{GumbelScratch, Leaf, NodeState, Proof, Tree, NONE};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use varzero_rules::{Move, Position};

/// When a search stops (the first limit reached). With none it runs until `stop` is set.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// Root visits to reach (reused visits count).
    pub playouts: Option<u64>,
    pub time: Option<Duration>,
    /// Mean playout depth to reach.
    pub depth: Option<u32>,
    /// Keep searching (or waiting) until stopped, even past the limits (`go infinite`).
    pub infinite: bool,
    /// The root moves to choose from (`go searchmoves`); empty, or none of them legal: all.
    pub searchmoves: Vec<Move>,
    /// Under a time limit, stop as soon as the best move cannot be overtaken in the time left
    /// at the speed so far (lc0's smart pruning), and at once with a single move to choose.
    /// Never with `infinite`; off by default, so that a search's playouts are its limit's.
    pub smart_pruning: bool,
    /// Under a clock: at `time`, a search whose best move is unclear (its visits within a fifth
    /// of the second's, [`crate::time::unclear`]) goes on until it is clear or this much time
    /// has passed.
    pub time_cap: Option<Duration>,
}

/// Progress of a search, for `info` lines and the caller.
#[derive(Clone, Debug, Default)]
pub struct SearchInfo {
    /// Root visits (including reused ones).
    pub visits: u64,
    /// Playouts done by this call.
    pub playouts: u64,
    /// Mean and largest depth of this call's playouts.
    pub depth: u32,
    pub seldepth: u32,
    pub elapsed: Duration,
    /// Root value from the side to move's view (win, draw, loss).
    pub wdl: [f32; 3],
    pub best: Option<Move>,
    /// Most-visited line from the root.
    pub pv: Vec<Move>,
    /// A move that wins at once was found.
    pub proven_win: bool,
    /// A proved mate (or any proved win) in this many moves of the side to move; negative: the
    /// side to move is lost in that many (UCI's `score mate N`).
    pub mate: Option<i32>,
    /// The best root moves, best first, [`Searcher::multipv`] of them (fewer when the root has
    /// fewer moves): what `MultiPV` and `varzero analyse` show.
    pub lines: Vec<RootLine>,
    /// Why the search stopped early under a time limit (smart pruning), if it did.
    pub pruned: bool,
}

/// One root move of a search: its visits, its value and its line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RootLine {
    pub mv: Move,
    pub visits: u64,
    /// The net's (or evaluator's) prior of the move.
    pub prior: f32,
    /// Mean value after the move, from the view of the side to move at the root (win, draw,
    /// loss); a proved move is worth its proof.
    pub wdl: [f32; 3],
    /// Proved: mate in this many moves for the side to move (negative: mated).
    pub mate: Option<i32>,
    /// The move, then the most visited line below it.
    pub pv: Vec<Move>,
}

impl RootLine {
    /// The line's score as [`SearchInfo::centipawns`] has it.
    pub fn centipawns(&self) -> i32 {
        centipawns(self.wdl)
    }
}

impl SearchInfo {
    /// Centipawn-like score of the expected outcome `q = w - l` (lc0's conversion).
    pub fn centipawns(&self) -> i32 {
        centipawns(self.wdl)
    }
}

fn centipawns(wdl: [f32; 3]) -> i32 {
    let q = (wdl[0] - wdl[2]).clamp(-0.9999, 0.9999) as f64;
    (111.714_640_912 * (1.562_068_842_1 * q).tan()).round() as i32
}

/// Upper bound on the tree of one search (an infinite search waits once it is reached).
pub const MAX_TREE_NODES: usize = 20_000_000;

pub struct Searcher {
    pub evaluator: Arc<dyn Evaluator>,
    pub cfg: SearchConfig,
    /// Search a root that our rules call over (repetition, counting) when it has legal moves:
    /// a GUI that adjudicates otherwise still gets a move (the UCI engine).
    pub play_on: bool,
    /// The tree stops growing at half this many bytes (its arenas may double once more); a
    /// search that reaches it stops, or waits for `stop` when infinite.
    pub max_bytes: usize,
    /// Root lines in each [`SearchInfo`] (`MultiPV`; at least 1).
    pub multipv: usize,
    tree: Tree,
    /// The position at the tree's root: its FEN before any move, and the moves from there.
    root_start: String,
    root_moves: Vec<Move>,
    round: Round,
    gumbel_scratch: GumbelScratch,
}

/// The FEN a position was set up from, and the moves made since.
fn game_of(pos: &Position) -> (String, Vec<Move>) {
    let mut p = pos.clone();
    let moves = p.history();
    for _ in 0..moves.len() {
        p.unmake();
    }
    (p.fen(), moves)
}

impl Searcher {
    pub fn new(evaluator: Arc<dyn Evaluator>, cfg: SearchConfig) -> Searcher {
        Searcher {
            evaluator,
            cfg,
            play_on: false,
            max_bytes: usize::MAX,
            multipv: 1,
            tree: Tree::new(),
            root_start: String::new(),
            root_moves: Vec::new(),
            round: Round::default(),
            gumbel_scratch: GumbelScratch::default(),
        }
    }

    /// Forgets the tree (a new game).
    pub fn clear(&mut self) {
        self.tree.reset();
        self.root_start.clear();
        self.root_moves.clear();
    }

    /// Moves the root to `pos` if it follows the current root by moves of the tree, restricted
    /// to `searchmoves` (empty: all).
    fn sync_root(&mut self, pos: &Position, searchmoves: &[Move]) {
        let (start, moves) = game_of(pos);
        let follows = self.cfg.tree_reuse
            && self.cfg.gumbel().is_none()
            && start == self.root_start
            && moves.len() >= self.root_moves.len()
            && moves[..self.root_moves.len()] == self.root_moves[..];
        if follows {
            for &m in &moves[self.root_moves.len()..] {
                self.tree.advance(m, true);
            }
        } else {
            self.tree.reset();
        }
        // A reused root may still hold pending virtual losses of an aborted search.
        self.tree.clear_pending();
        let root = self.tree.root as usize;
        if self.play_on && self.tree.nodes[root].state == NodeState::Terminal {
            self.tree.reset();
        }
        // The root's value and proof sum over its searched children: a reused subtree under
        // an excluded move would make them (and a proof's early stop) another search's.
        // The same holds the other way: a root searched under another filter lacks moves.
        let excluded = |e: &crate::tree::Edge| e.child != NONE && !searchmoves.contains(&e.mv);
        if (!searchmoves.is_empty() && self.tree.edges_of(self.tree.root).iter().any(excluded))
            || (!self.tree.root_filter.is_empty() && self.tree.root_filter != searchmoves)
        {
            self.tree.reset();
        }
        self.tree.root_filter = searchmoves.to_vec();
        if self.max_bytes != usize::MAX {
            self.tree.trim(self.max_bytes);
        }
        self.root_start = start;
        self.root_moves = moves;
    }

    fn info(&self, start: Instant, playouts: u64, depth_sum: u64, seldepth: u32) -> SearchInfo {
        let root = self.tree.root();
        let mut pv = Vec::new();
        let mut node = self.tree.root;
        while pv.len() < 64 {
            match self.tree.best_edge(node) {
                Some(e) if e.child != NONE && self.tree.nodes[e.child as usize].visits > 0 => {
                    pv.push(e.mv);
                    node = e.child;
                }
                _ => break,
            }
        }
        let best = match self.gumbel() {
            Some(p) => self
                .tree
                .gumbel_result(&[], &p, &mut GumbelScratch::default(), None)
                .map(|r| r.0),
            None => self.tree.best_root_move(),
        };
        if let (Some(b), Some(first)) = (best, pv.first()) {
            if b != *first {
                pv = vec![b];
            }
        }
        let mut lines = self.tree.root_lines(self.multipv.max(1));
        // The first line is the move the search plays.
        if let Some(b) = best {
            if let Some(i) = lines.iter().position(|l| l.mv == b) {
                let l = lines.remove(i);
                lines.insert(0, l);
            }
        }
        SearchInfo {
            lines,
            pruned: false,
            visits: root.visits as u64,
            playouts,
            depth: depth_sum.checked_div(playouts).unwrap_or(0) as u32,
            seldepth,
            elapsed: start.elapsed(),
            wdl: self.tree.root_value(),
            best,
            pv,
            proven_win: self.tree.winning_root_move().is_some(),
            mate: match self.tree.root_proof() {
                Proof::Win(d) => Some((d as i32 + 1) / 2),
                Proof::Loss(d) => Some(-(d as i32 / 2).max(1)),
                _ => None,
            },
        }
    }

    /// The Gumbel root's parameters when it is used: not with a root restricted to some moves,
    /// which its sequential halving would not respect (PUCT chooses among them instead).
    fn gumbel(&self) -> Option<crate::gumbel::GumbelParams> {
        self.cfg.gumbel().filter(|_| !self.tree.root_filtered())
    }

    /// Expands an unexpanded root whose game our rules call over but which has legal moves, so
    /// that the search below it runs as usual.
    fn open_root(&mut self, pos: &mut Position) {
        if self.tree.root().state != NodeState::Unexpanded || pos.outcome().is_none() {
            return;
        }
        let mut moves = pos.game_moves();
        if moves.is_empty() {
            moves = pos.legal_moves();
        }
        if moves.is_empty() {
            return;
        }
        let ev = self.evaluator.clone();
        self.round.clear();
        self.round
            .open_root(0, &mut self.tree, pos, moves.as_slice(), &*ev);
        self.round
            .evaluate(&*ev, std::slice::from_mut(&mut self.tree), |t| t);
    }

    /// Whether the most visited root move stays the most visited whatever the search does in
    /// the time left before `time` at its speed so far; with one move to choose, always.
    fn cannot_be_overtaken(&self, start: Instant, time: Duration, playouts: u64) -> bool {
        let (first, second, moves) = self.tree.top_two_root_visits();
        if moves <= 1 {
            return true;
        }
        let elapsed = start.elapsed();
        // Too early to know the speed: the first batches run at any rate.
        if playouts < 64 || elapsed < Duration::from_millis(20) {
            return false;
        }
        let left = time.saturating_sub(elapsed).as_secs_f64();
        let speed = playouts as f64 / elapsed.as_secs_f64();
        (first - second) as f64 > speed * left
    }

    /// The limits (not `stop`, not smart pruning) say the search is over.
    fn limit_reached(
        &self,
        limits: &Limits,
        start: Instant,
        playouts: u64,
        depth_sum: u64,
    ) -> bool {
        let root = *self.tree.root();
        root.state == NodeState::Terminal
            || (root.state == NodeState::Expanded
                && (limits.playouts.is_some_and(|p| root.visits as u64 >= p)
                    || limits.time.is_some_and(|t| {
                        let e = start.elapsed();
                        e >= t
                            && (limits.time_cap.is_none_or(|c| e >= c) || {
                                let (first, second, _) = self.tree.top_two_root_visits();
                                !crate::time::unclear(first, second)
                            })
                    })
                    || limits
                        .depth
                        .is_some_and(|d| playouts > 0 && depth_sum / playouts >= d as u64)
                    || self.tree.winning_root_move().is_some()
                    || self.tree.root_proof() != Proof::Unknown
                    || self.tree.nodes.len() >= MAX_TREE_NODES
                    || self.tree.bytes() >= self.max_bytes / 2))
    }

    /// [`Searcher::search`] on `cfg.threads` threads sharing the tree: a thread holds the
    /// tree while it descends (and encodes its leaves), lets go of it while the evaluator
    /// scores them, and takes it again to back them up. Virtual loss keeps the threads' leaves
    /// apart; a thread whose descents all meet leaves pending elsewhere yields.
    fn search_threads(
        &mut self,
        pos: &Position,
        limits: &Limits,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&SearchInfo),
        start: Instant,
    ) -> SearchInfo {
        struct Shared {
            playouts: u64,
            depth_sum: u64,
            seldepth: u32,
            finished: bool,
            pruned: bool,
        }
        let ev = self.evaluator.clone();
        let cfg = self.cfg.clone();
        let gumbel = self.gumbel();
        let per_call = cfg.leaves_per_game.max(1) as u64;
        let budget = limits.playouts.unwrap_or(cfg.playouts as u64).max(2) as u32 - 1;
        let threads = self.cfg.threads;
        let state = Mutex::new((
            &mut *self,
            Shared {
                playouts: 0,
                depth_sum: 0,
                seldepth: 0,
                finished: false,
                pruned: false,
            },
        ));
        let work = |main: bool, report: &mut dyn FnMut(&SearchInfo)| {
            // Leaves are encoded (a quiescence search each, with tactics) after the tree is let
            // go of, on this thread's own copy of the root position.
            let mut round = Round::default();
            round.defer = true;
            let mut pos = pos.clone();
            let mut last_report = Instant::now();
            loop {
                {
                    let mut g = state.lock().unwrap_or_else(|e| e.into_inner());
                    let (me, sh) = &mut *g;
                    let me: &mut Searcher = me;
                    if sh.finished {
                        break;
                    }
                    let root = *me.tree.root();
                    if stop.load(Ordering::Relaxed) && root.state != NodeState::Unexpanded {
                        sh.finished = true;
                        break;
                    }
                    if me.limit_reached(limits, start, sh.playouts, sh.depth_sum) {
                        if limits.infinite && root.state != NodeState::Terminal && main {
                            drop(g);
                            std::thread::sleep(Duration::from_millis(2));
                            continue;
                        }
                        if !limits.infinite {
                            sh.finished = true;
                        }
                        break;
                    }
                    if limits.smart_pruning
                        && !limits.infinite
                        && root.state == NodeState::Expanded
                        && limits
                            .time
                            .is_some_and(|t| me.cannot_be_overtaken(start, t, sh.playouts))
                    {
                        sh.pruned = true;
                        sh.finished = true;
                        break;
                    }
                    // Pending leaves of other threads count against a playout limit.
                    let remaining = limits.playouts.map_or(per_call, |p| {
                        p.saturating_sub(root.visits as u64 + root.vloss as u64)
                    });
                    round.clear();
                    for _ in 0..per_call.min(remaining) {
                        let me = &mut *me;
                        let edge = match gumbel {
                            Some(p) if me.tree.root().state == NodeState::Expanded => Some(
                                me.tree
                                    .gumbel_next_edge(&[], &p, budget, &mut me.gumbel_scratch),
                            ),
                            _ => None,
                        };
                        let (leaf, d) =
                            round.descend_via(0, &mut me.tree, &mut pos, &cfg, &*ev, edge);
                        if leaf == Leaf::Collision {
                            break;
                        }
                        sh.playouts += 1;
                        sh.depth_sum += d as u64;
                        sh.seldepth = sh.seldepth.max(d);
                    }
                    if main && last_report.elapsed() >= Duration::from_secs(1) {
                        last_report = Instant::now();
                        report(&me.info(start, sh.playouts, sh.depth_sum, sh.seldepth));
                    }
                }
                if round.is_empty() {
                    std::thread::yield_now();
                    continue;
                }
                round.encode_deferred(&*ev, &mut pos);
                round.evaluate_only(&*ev);
                let mut g = state.lock().unwrap_or_else(|e| e.into_inner());
                round.scatter(std::slice::from_mut(&mut g.0.tree), |t| t);
            }
        };
        std::thread::scope(|s| {
            for _ in 1..threads {
                s.spawn(|| work(false, &mut |_| {}));
            }
            work(true, report);
        });
        let (_, sh) = state.into_inner().unwrap_or_else(|e| e.into_inner());
        let mut info = self.info(start, sh.playouts, sh.depth_sum, sh.seldepth);
        info.pruned = sh.pruned;
        report(&info);
        info
    }

    /// Searches `pos` until a limit is reached or `stop` is set; `report` is called about once
    /// a second and at the end. Returns the final info (`best` is None when the game is over).
    pub fn search(
        &mut self,
        pos: &Position,
        limits: &Limits,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&SearchInfo),
    ) -> SearchInfo {
        let start = Instant::now();
        self.sync_root(pos, &limits.searchmoves);
        let mut pos = pos.clone();
        let ev = self.evaluator.clone();
        let (mut playouts, mut depth_sum, mut seldepth) = (0u64, 0u64, 0u32);
        let mut last_report = Instant::now();
        let per_call = self.cfg.leaves_per_game.max(1) as u64;
        if self.play_on {
            self.open_root(&mut pos);
        }
        // `cfg.threads` search threads on the one tree (UCI's `Threads`); 1 keeps a search
        // repeatable.
        if self.cfg.threads > 1 {
            return self.search_threads(&pos, limits, stop, report, start);
        }
        loop {
            let root = *self.tree.root();
            // A stop before the root is expanded would leave no move to answer: one batch
            // (milliseconds) always runs first.
            if stop.load(Ordering::Relaxed) && root.state != NodeState::Unexpanded {
                break;
            }
            let done = self.limit_reached(limits, start, playouts, depth_sum);
            let pruned = !done
                && limits.smart_pruning
                && !limits.infinite
                && root.state == NodeState::Expanded
                && limits
                    .time
                    .is_some_and(|t| self.cannot_be_overtaken(start, t, playouts));
            if pruned {
                let mut info = self.info(start, playouts, depth_sum, seldepth);
                info.pruned = true;
                report(&info);
                return info;
            }
            if done {
                if limits.infinite && root.state != NodeState::Terminal {
                    // `go infinite`: the answer waits for `stop`.
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                }
                break;
            }
            // Gather a few leaves (virtual loss keeps them apart), evaluate them at once.
            let remaining = limits
                .playouts
                .map_or(per_call, |p| p.saturating_sub(root.visits as u64).max(1));
            self.round.clear();
            // A Gumbel root plans its halving over the playout limit (or the config's playouts
            // under a time limit; past it, the most visited moves are refined).
            let budget = limits.playouts.unwrap_or(self.cfg.playouts as u64).max(2) as u32 - 1;
            for _ in 0..per_call.min(remaining) {
                let edge = match self.gumbel() {
                    Some(p) if self.tree.root().state == NodeState::Expanded => Some(
                        self.tree
                            .gumbel_next_edge(&[], &p, budget, &mut self.gumbel_scratch),
                    ),
                    _ => None,
                };
                let (leaf, d) =
                    self.round
                        .descend_via(0, &mut self.tree, &mut pos, &self.cfg, &*ev, edge);
                if leaf == Leaf::Collision {
                    break;
                }
                playouts += 1;
                depth_sum += d as u64;
                seldepth = seldepth.max(d);
            }
            self.round
                .evaluate(&*ev, std::slice::from_mut(&mut self.tree), |t| t);
            if last_report.elapsed() >= Duration::from_secs(1) {
                last_report = Instant::now();
                report(&self.info(start, playouts, depth_sum, seldepth));
            }
        }
        let info = self.info(start, playouts, depth_sum, seldepth);
        report(&info);
        info
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MaterialEvaluator;
    use varzero_rules::Variant;

    fn searcher(v: &Arc<varzero_rules::Variant>) -> Searcher {
        Searcher::new(Arc::new(MaterialEvaluator::new(v)), SearchConfig::default())
    }

    #[test]
    fn root_lines_are_the_best_moves_best_first() {
        let v = Variant::builtin("makruk").unwrap();
        let pos = Position::start(&v);
        let mut s = searcher(&v);
        s.multipv = 4;
        let limits = Limits {
            playouts: Some(800),
            ..Limits::default()
        };
        let info = s.search(&pos, &limits, &AtomicBool::new(false), &mut |_| {});
        assert_eq!(info.lines.len(), 4);
        assert_eq!(Some(info.lines[0].mv), info.best);
        assert!(info.lines.windows(2).all(|w| w[0].visits >= w[1].visits));
        for l in &info.lines {
            assert_eq!(l.pv[0], l.mv);
            assert!((l.wdl.iter().sum::<f32>() - 1.0).abs() < 1e-3, "{l:?}");
        }
        // Never more lines than moves.
        s.multipv = 500;
        let info = s.search(&pos, &limits, &AtomicBool::new(false), &mut |_| {});
        assert_eq!(info.lines.len(), pos.legal_moves().len());
    }

    #[test]
    fn smart_pruning_answers_a_forced_move_at_once_and_only_under_a_clock() {
        let v = Variant::builtin("makruk").unwrap();
        // The king's one move out of check: Kb8.
        let pos = Position::from_fen(&v, "k7/7R/8/8/8/8/8/R3K3 b - - 0 1").unwrap();
        assert_eq!(pos.legal_moves().len(), 1);
        let timed = Limits {
            time: Some(Duration::from_secs(600)),
            smart_pruning: true,
            ..Limits::default()
        };
        let info = searcher(&v).search(&pos, &timed, &AtomicBool::new(false), &mut |_| {});
        assert!(info.pruned && info.playouts < 1000, "{info:?}");
        // Playouts are a limit of their own: no pruning, whatever the flag says.
        let start = Position::start(&v);
        let nodes = Limits {
            playouts: Some(700),
            smart_pruning: true,
            ..Limits::default()
        };
        let info = searcher(&v).search(&start, &nodes, &AtomicBool::new(false), &mut |_| {});
        assert!(!info.pruned && info.visits == 700, "{info:?}");
        // A short clock on the start position: the most visited move cannot be overtaken well
        // before the end, but the search still plays its most visited move.
        let short = Limits {
            time: Some(Duration::from_millis(300)),
            smart_pruning: true,
            ..Limits::default()
        };
        let info = searcher(&v).search(&start, &short, &AtomicBool::new(false), &mut |_| {});
        assert_eq!(info.best, Some(info.lines[0].mv));
    }
}
