//! The self-play generator: worker threads each advance many games at once, gathering the
//! leaves of all of them into one batch per evaluator call; a writer turns finished games into
//! shards. Game `i` of a run is seeded from the run seed and `i`, so its moves do not depend on
//! threads or batching, and a resumed run plays exactly the games that are missing.

use crate::config::SelfplayConfig;
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use varzero_datasets::{Committed, DirLock, GameRecord, LockMode, PositionRecord};
use varzero_rules::{GameResult, Move, Outcome, Position, Variant};
use varzero_search::{
    Evaluator, GumbelScratch, Leaf, NodeState, Rng, Round, SearchConfig, TargetPriors, Tree,
};

/// Counters shared with whoever shows progress.
#[derive(Debug, Default)]
pub struct Stats {
    pub games: AtomicU64,
    pub positions: AtomicU64,
    pub playouts: AtomicU64,
    pub plies: AtomicU64,
    pub white_wins: AtomicU64,
    pub draws: AtomicU64,
    pub black_wins: AtomicU64,
    /// Nanoseconds inside evaluator calls, and in the workers' loops in all.
    pub eval_nanos: AtomicU64,
    pub worker_nanos: AtomicU64,
    /// Leaves evaluated, and the evaluator calls they went in (their ratio is the mean batch).
    pub evals: AtomicU64,
    pub eval_batches: AtomicU64,
    pub shards: AtomicU64,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub games_played: u64,
    pub games_already_done: u64,
    pub positions: u64,
    pub shards_written: u64,
    pub skipped_shards: Vec<String>,
}

/// The game ids still to play: a range walked lazily (a run of 10^12 games holds no list of
/// them), skipping those the directory holds (at the start, or committed since by another
/// writer).
struct Queue {
    next: u64,
    end: u64,
    skip: HashSet<u64>,
}

impl Queue {
    fn pop(&mut self) -> Option<u64> {
        while self.next < self.end {
            let id = self.next;
            self.next += 1;
            if !self.skip.remove(&id) {
                return Some(id);
            }
        }
        None
    }

    /// Ids of the range not handed out yet that another writer has committed.
    fn skip(&mut self, ids: impl IntoIterator<Item = u64>) {
        let (next, end) = (self.next, self.end);
        self.skip
            .extend(ids.into_iter().filter(|id| (next..end).contains(id)));
    }
}

/// A finished game, ready for the writer.
pub struct FinishedGame {
    pub positions: Vec<PositionRecord>,
    pub game: GameRecord,
    pub outcome: Outcome,
}

struct Game {
    id: u64,
    seed: u64,
    rng: Rng,
    pos: Position,
    tree: Tree,
    start_fen: String,
    moves: Vec<String>,
    records: Vec<PositionRecord>,
    target: u32,
    full: bool,
    noised: bool,
    /// The Gumbel root's noise, one per root move (zeros without noise).
    gumbel: Vec<f32>,
    scratch: GumbelScratch,
    /// Reanalyse: the index of the position searched again (one search, no move played).
    reanalyse: Option<usize>,
}

/// What a worker hands on: a finished game, or a position searched again.
enum Done {
    Game(FinishedGame),
    Position(usize, PositionRecord),
}

pub struct Generator {
    pub variant: Arc<Variant>,
    pub evaluator: Arc<dyn Evaluator>,
    pub search: SearchConfig,
    pub run: SelfplayConfig,
    pub stats: Arc<Stats>,
    /// Set to stop early (games in progress are dropped, finished ones written).
    pub stop: Arc<AtomicBool>,
}

impl Generator {
    pub fn new(
        variant: Arc<Variant>,
        evaluator: Arc<dyn Evaluator>,
        search: SearchConfig,
        run: SelfplayConfig,
    ) -> Generator {
        Generator {
            evaluator: varzero_search::TacticalBlend::for_search(evaluator, &variant, &search),
            variant,
            search,
            run,
            stats: Arc::default(),
            stop: Arc::default(),
        }
    }

    fn new_game(&self, id: u64) -> Game {
        let seed = Rng::derive(self.run.seed, id);
        let pos = Position::start(&self.variant);
        let mut g = Game {
            id,
            seed,
            rng: Rng::new(seed),
            start_fen: pos.fen(),
            pos,
            tree: Tree::new(),
            moves: Vec::new(),
            records: Vec::new(),
            target: 0,
            full: true,
            noised: false,
            gumbel: Vec::new(),
            scratch: GumbelScratch::default(),
            reanalyse: None,
        };
        self.plan_move(&mut g);
        g
    }

    /// A one-search job for position `i` of `records` (MuZero's Reanalyse): always a full
    /// search, without forced playouts (they are for noised self-play roots).
    fn new_position(&self, i: usize, records: &[PositionRecord]) -> Game {
        let mut g = self.new_game(i as u64);
        let r = &records[i];
        match Position::from_fen(&self.variant, &r.fen) {
            Ok(pos) => {
                g.start_fen = r.fen.clone();
                g.pos = pos;
            }
            // Checked by the caller; a position that does not parse keeps the start position
            // and is dropped when it comes back.
            Err(_) => g.start_fen.clear(),
        }
        g.full = true;
        g.target = self.search.playouts.max(1);
        g.tree.forced_k = 0.0;
        g.reanalyse = Some(i);
        g
    }

    /// Full or cheap search for the next move (playout-cap randomisation).
    fn plan_move(&self, g: &mut Game) {
        let cheap =
            self.search.cheap_fraction > 0.0 && g.rng.uniform() < self.search.cheap_fraction as f64;
        g.full = !cheap;
        g.tree.forced_k = if g.full && self.search.gumbel().is_none() {
            self.search.forced_playouts
        } else {
            0.0
        };
        g.target = if cheap {
            self.search.cheap_playouts.max(1)
        } else {
            self.search.playouts.max(1)
        };
        g.noised = false;
    }

    fn wants_noise(&self, g: &Game) -> bool {
        self.run.noise && g.full && self.search.dirichlet_epsilon > 0.0
    }

    /// Chooses and plays the move at a finished search, recording the position.
    fn play_move(&self, g: &mut Game) {
        let visits: Vec<(Move, u32)> = g.tree.root_visits().collect();
        let total: u32 = visits.iter().map(|v| v.1).sum();
        let ply = g.moves.len() as u32;
        // The net's own priors under the target (`gumbel_target_priors = "net"`): one
        // allocation a move, not a node.
        let own = (self.search.gumbel_target_priors == TargetPriors::Net
            && self.search.gumbel().is_some())
        .then(|| {
            let (moves, mut p): (Vec<Move>, Vec<f32>) = g.tree.root_priors().unzip();
            self.evaluator.own_priors(&mut g.pos, &moves, &mut p);
            p
        });
        let gumbel = self.search.gumbel().and_then(|p| {
            g.tree
                .gumbel_result(&g.gumbel, &p, &mut g.scratch, own.as_deref())
        });
        let mv = if let Some((mv, _)) = &gumbel {
            // The Gumbel noise is the exploration: no temperature.
            *mv
        } else if let Some(win) = g.tree.winning_root_move() {
            win
        } else if g.full && ply < self.search.temperature_plies && self.search.temperature > 0.0 {
            let t = 1.0 / self.search.temperature as f64;
            let w: Vec<f64> = visits.iter().map(|v| (v.1 as f64).powf(t)).collect();
            let sum: f64 = w.iter().sum();
            let mut r = g.rng.uniform() * sum;
            let mut pick = visits[0].0;
            for (i, x) in w.iter().enumerate() {
                if r < *x {
                    pick = visits[i].0;
                    break;
                }
                r -= x;
            }
            pick
        } else {
            g.tree.best_root_move().expect("a searched root has moves")
        };
        let uci = g.pos.uci(mv);
        let (policy_moves, policy_probs) = match &gumbel {
            // The completed-Q policy over every move (the tiniest weights dropped).
            Some((_, policy)) => visits
                .iter()
                .zip(policy)
                .filter(|(_, &p)| p >= 1e-5)
                .map(|(v, &p)| (g.pos.uci(v.0), p))
                .unzip(),
            None => {
                // Forced playouts' extra visits are taken back from the target (a no-op
                // without them).
                let c_puct = self.search.c_puct * self.evaluator.exploration();
                let target = g.tree.pruned_root_visits(c_puct);
                let sum: u32 = target.iter().map(|v| v.1).sum();
                target
                    .iter()
                    .filter(|v| v.1 > 0)
                    .map(|v| (g.pos.uci(v.0), v.1 as f32 / sum.max(1) as f32))
                    .unzip()
            }
        };
        g.records.push(PositionRecord {
            game_id: g.id,
            ply,
            variant: self.variant.name.clone(),
            rules_hash: format!("{:016x}", self.variant.rules_hash),
            fen: g.pos.fen(),
            policy_moves,
            policy_probs,
            result_wdl: [0.0; 3],
            root_wdl: g.tree.root_value(),
            visits: total,
            full_search: g.full,
            evaluator: self.evaluator.id(),
        });
        g.pos.make(mv);
        g.moves.push(uci);
        g.tree
            .advance(mv, self.search.tree_reuse && self.search.gumbel().is_none());
        self.plan_move(g);
    }

    fn finish(&self, mut g: Game) -> FinishedGame {
        let outcome = g.pos.outcome().expect("finished game has an outcome");
        let first = Position::start(&self.variant).side_to_move();
        for r in &mut g.records {
            let stm = if r.ply % 2 == 0 { first } else { !first };
            r.result_wdl = match outcome.result {
                GameResult::Draw => [0.0, 1.0, 0.0],
                GameResult::Win(c) if c == stm => [1.0, 0.0, 0.0],
                GameResult::Win(_) => [0.0, 0.0, 1.0],
            };
        }
        let game = GameRecord {
            game_id: g.id,
            variant: self.variant.name.clone(),
            rules_hash: format!("{:016x}", self.variant.rules_hash),
            result: outcome.result.pgn().into(),
            termination: outcome.termination.name().into(),
            plies: g.moves.len() as u32,
            seed: g.seed,
            evaluator: self.evaluator.id(),
            search: serde_json::to_string(&self.search).unwrap_or_default(),
            start_fen: g.start_fen.clone(),
            moves: g.moves.join(" "),
        };
        FinishedGame {
            positions: g.records,
            game,
            outcome,
        }
    }

    /// One worker: advances up to `games_per_worker` games at once until the queue is empty.
    /// With `records`, the queue's ids are positions of it to search once each (Reanalyse).
    fn worker(
        &self,
        queue: &Mutex<Queue>,
        records: Option<&[PositionRecord]>,
        out: &mpsc::Sender<Done>,
    ) {
        let start = Instant::now();
        let mut games: Vec<Game> = Vec::new();
        let mut round = Round::default();
        let mut noise_scratch: Vec<f32> = Vec::new();
        let ev = &*self.evaluator;
        let gumbel = self.search.gumbel();
        loop {
            while games.len() < self.run.games_per_worker.max(1)
                && !self.stop.load(Ordering::Relaxed)
            {
                let Some(id) = queue.lock().unwrap().pop() else {
                    break;
                };
                games.push(match records {
                    Some(r) => self.new_position(id as usize, r),
                    None => self.new_game(id),
                });
            }
            if games.is_empty() || self.stop.load(Ordering::Relaxed) {
                break;
            }
            round.clear();
            let mut playouts = 0u64;
            for (gi, g) in games.iter_mut().enumerate() {
                for _ in 0..self.search.leaves_per_game.max(1) {
                    let root = g.tree.root();
                    if root.state == NodeState::Terminal
                        || (root.state == NodeState::Expanded && root.visits >= g.target)
                    {
                        break;
                    }
                    let edge = match (&gumbel, root.state) {
                        (Some(p), NodeState::Expanded) => Some(g.tree.gumbel_next_edge(
                            &g.gumbel,
                            p,
                            g.target.saturating_sub(1).max(1),
                            &mut g.scratch,
                        )),
                        _ => None,
                    };
                    let (leaf, _) = round.descend_via(
                        gi as u32,
                        &mut g.tree,
                        &mut g.pos,
                        &self.search,
                        ev,
                        edge,
                    );
                    if leaf == Leaf::Collision {
                        break;
                    }
                    playouts += 1;
                }
            }
            if !round.is_empty() {
                let n = round.len() as u64;
                let spent = round.evaluate(ev, &mut games, |g| &mut g.tree);
                self.stats
                    .eval_nanos
                    .fetch_add(spent.as_nanos() as u64, Ordering::Relaxed);
                self.stats.evals.fetch_add(n, Ordering::Relaxed);
                self.stats.eval_batches.fetch_add(1, Ordering::Relaxed);
            }
            self.stats.playouts.fetch_add(playouts, Ordering::Relaxed);
            let mut i = 0;
            while i < games.len() {
                let g = &mut games[i];
                if !g.noised && g.tree.root().state == NodeState::Expanded {
                    if gumbel.is_some() {
                        // Gumbel(0, 1) per root move: -ln(-ln U).
                        let n = g.tree.root().n_edges as usize;
                        let noise = self.run.noise;
                        let rng = &mut g.rng;
                        g.gumbel.clear();
                        g.gumbel.extend((0..n).map(|_| {
                            if noise {
                                -(-(rng.uniform().max(1e-12)).ln()).ln() as f32
                            } else {
                                0.0
                            }
                        }));
                    } else if self.wants_noise(g) {
                        g.tree.add_root_noise(
                            &mut g.rng,
                            self.search.dirichlet_alpha,
                            self.search.dirichlet_epsilon,
                            &mut noise_scratch,
                        );
                    }
                    g.noised = true;
                }
                let root = *g.tree.root();
                if root.state == NodeState::Terminal {
                    let g = games.swap_remove(i);
                    // A finished position has nothing to search again: it is dropped.
                    if g.reanalyse.is_none() && out.send(Done::Game(self.finish(g))).is_err() {
                        return;
                    }
                    continue;
                }
                if root.state == NodeState::Expanded && root.visits >= g.target {
                    self.play_move(g);
                    self.stats.positions.fetch_add(1, Ordering::Relaxed);
                    if let Some(k) = g.reanalyse {
                        let mut g = games.swap_remove(i);
                        let r = g.records.pop().expect("play_move records the position");
                        if out.send(Done::Position(k, r)).is_err() {
                            return;
                        }
                        continue;
                    }
                }
                i += 1;
            }
        }
        self.stats
            .worker_nanos
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// Plays games until `dir` holds `games` games (resuming what is there), writing shards.
    pub fn run(&self, dir: &Path, games: u64) -> varzero_datasets::Result<Summary> {
        self.run_range(dir, 0..games, false)
    }

    /// Plays the games of `range` that `dir` does not hold yet. Game `i` is the same game
    /// whoever plays it (its seed is the run's seed + i), so ranges can be played by separate
    /// processes, on separate machines, into one directory shared by all (`shared`: the
    /// directory's lock is held shared, so other range writers may be at work there and their
    /// temporary shards are left alone; otherwise it is held exclusively, and what a killed
    /// writer left is removed). Each shard is checked against the directory as it is renamed
    /// in ([`varzero_datasets::commit_shard`]), so games that another writer committed in the
    /// meantime are dropped, never written twice. A directory that already holds a game twice
    /// is refused, naming the repair command.
    pub fn run_range(
        &self,
        dir: &Path,
        range: std::ops::Range<u64>,
        shared: bool,
    ) -> varzero_datasets::Result<Summary> {
        let mode = if shared {
            LockMode::Shared
        } else {
            LockMode::Exclusive
        };
        let _lock = DirLock::acquire(dir, mode)?;
        // A directory of other rules is refused before any game: its games would count as done.
        let rules =
            varzero_datasets::DatasetRules::new(&self.variant.name, self.variant.rules_hash);
        if shared {
            varzero_datasets::claim_shared(dir, &rules)?;
        } else {
            varzero_datasets::claim(dir, &rules)?;
        }
        let (_, skipped) = varzero_datasets::list_shards(dir)?;
        let mut committed = Committed::default();
        committed.refresh(dir)?;
        committed.check_unique(dir)?;
        let mut queue = Queue {
            next: range.start,
            end: range.end,
            skip: HashSet::new(),
        };
        // Only the ids the directory holds are kept, never the range itself.
        queue.skip(committed.ids_in(&range));
        let mut summary = Summary {
            games_already_done: queue.skip.len() as u64,
            skipped_shards: skipped.iter().map(|s| s.to_string()).collect(),
            ..Summary::default()
        };
        let tag = writer_tag(self.run.seed);
        let queue = Mutex::new(queue);
        let (tx, rx) = mpsc::channel::<Done>();
        let result: varzero_datasets::Result<()> = std::thread::scope(|s| {
            for _ in 0..self.run.threads.max(1) {
                let tx = tx.clone();
                let queue = &queue;
                s.spawn(move || self.worker(queue, None, &tx));
            }
            drop(tx);
            let mut buf_pos: Vec<PositionRecord> = Vec::new();
            let mut buf_games: Vec<GameRecord> = Vec::new();
            let mut flush = |pos: &mut Vec<PositionRecord>,
                             gs: &mut Vec<GameRecord>,
                             summary: &mut Summary|
             -> varzero_datasets::Result<()> {
                if gs.is_empty() {
                    return Ok(());
                }
                // Games in id order within a shard, so a run is the same whatever the threads.
                gs.sort_by_key(|g| g.game_id);
                pos.sort_by_key(|p| (p.game_id, p.ply));
                let c = varzero_datasets::commit_shard(dir, &tag, pos, gs, &mut committed)?;
                if c.path.is_some() {
                    summary.shards_written += 1;
                    self.stats.shards.fetch_add(1, Ordering::Relaxed);
                }
                summary.games_played += c.games as u64;
                summary.positions += c.positions as u64;
                summary.games_already_done += c.dropped.len() as u64;
                // What another writer has done since need not be played here.
                queue.lock().unwrap().skip(c.others);
                pos.clear();
                gs.clear();
                Ok(())
            };
            for fin in rx {
                let Done::Game(fin) = fin else {
                    continue;
                };
                self.stats.games.fetch_add(1, Ordering::Relaxed);
                self.stats
                    .plies
                    .fetch_add(fin.game.plies as u64, Ordering::Relaxed);
                match fin.outcome.result {
                    GameResult::Win(varzero_rules::Color::White) => &self.stats.white_wins,
                    GameResult::Win(varzero_rules::Color::Black) => &self.stats.black_wins,
                    GameResult::Draw => &self.stats.draws,
                }
                .fetch_add(1, Ordering::Relaxed);
                buf_pos.extend(fin.positions);
                buf_games.push(fin.game);
                if buf_pos.len() >= self.run.shard_positions {
                    flush(&mut buf_pos, &mut buf_games, &mut summary)?;
                }
            }
            flush(&mut buf_pos, &mut buf_games, &mut summary)
        });
        result?;
        Ok(summary)
    }
}

/// A writer's shard tag, different for every process on every host (two range writers on two
/// machines may have the same pid and seed).
fn writer_tag(seed: u64) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let h = host.trim().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    format!(
        "{:x}",
        Rng::derive(Rng::derive(std::process::id() as u64 ^ h, nanos), seed) & 0xffff_ffff_ffff
    )
}

/// Plays one game in memory (no files): for tests and tools.
pub fn play_game(gen: &Generator, id: u64) -> FinishedGame {
    let queue = Mutex::new(Queue {
        next: id,
        end: id.saturating_add(1),
        skip: HashSet::new(),
    });
    let (tx, rx) = mpsc::channel();
    gen.worker(&queue, None, &tx);
    drop(tx);
    match rx.recv().expect("one finished game") {
        Done::Game(g) => g,
        Done::Position(..) => unreachable!("no positions were given"),
    }
}

impl Generator {
    /// MuZero's Reanalyse: each position of `records` searched again with this generator's
    /// evaluator and search (always a full search; noise as `run.noise` says), returned in the
    /// same order with fresh targets: the policy target that self-play would record there
    /// (visits, pruned, or Gumbel's completed-Q policy), the root value and the visits. The
    /// game, ply and result of each record are kept; its evaluator reads `reanalyse:ID`. A
    /// position that does not parse, or that is over, is left out.
    pub fn reanalyse(&self, records: &[PositionRecord]) -> Vec<PositionRecord> {
        let queue = Mutex::new(Queue {
            next: 0,
            end: records.len() as u64,
            skip: HashSet::new(),
        });
        let (tx, rx) = mpsc::channel::<Done>();
        let mut out: Vec<Option<PositionRecord>> = vec![None; records.len()];
        std::thread::scope(|s| {
            for _ in 0..self.run.threads.max(1) {
                let tx = tx.clone();
                let queue = &queue;
                s.spawn(move || self.worker(queue, Some(records), &tx));
            }
            drop(tx);
            for d in rx {
                if let Done::Position(k, fresh) = d {
                    let old = &records[k];
                    if old.fen != fresh.fen {
                        continue;
                    }
                    out[k] = Some(PositionRecord {
                        game_id: old.game_id,
                        ply: old.ply,
                        result_wdl: old.result_wdl,
                        evaluator: format!("reanalyse:{}", fresh.evaluator),
                        ..fresh
                    });
                }
            }
        });
        out.into_iter().flatten().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_walks_its_range_lazily_skipping_what_is_done() {
        // A range of 10^12 ids costs nothing up front: only skipped ids are held.
        let mut q = Queue {
            next: 0,
            end: 1_000_000_000_000,
            skip: HashSet::new(),
        };
        q.skip([1, 3, 2_000_000_000_000]);
        assert_eq!(q.skip.len(), 2, "ids outside the range are not kept");
        assert_eq!((q.pop(), q.pop()), (Some(0), Some(2)));
        // Another writer committed 4 and 5 meanwhile (and 0, handed out already).
        q.skip([0, 4, 5]);
        assert_eq!(q.skip.len(), 3, "3, 4 and 5");
        assert_eq!(q.pop(), Some(6));
        assert!(q.skip.is_empty(), "passed ids are forgotten");
        let mut q = Queue {
            next: 7,
            end: 9,
            skip: HashSet::from([8]),
        };
        assert_eq!((q.pop(), q.pop()), (Some(7), None));
    }
}
