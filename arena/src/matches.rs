//! Matches between two players: each opening is played twice with the colours swapped (a game
//! pair), several games at once on worker threads, with the score, the Elo difference and the
//! SPRT updated as games finish; a decided SPRT stops the match. A player that fails (crash,
//! timeout, illegal move) loses that game, which is reported, and the match goes on.
//!
//! Game `i` belongs to pair `i / 2` and uses opening `pair mod openings`; in even games player
//! A has White, in odd games Black. Each player's randomness is seeded by the game (its opening,
//! index and colour), not by the worker that plays it, so a resumed match, or one with other
//! concurrency, plays the same games. Games are written, as they finish, to the games table of
//! the datasets crate (with an empty positions table) and to a text file, by one writer per
//! directory (a [`DirLock`]); a finished match's one-game shards are merged into few.

use crate::error::{Error, Result};
use crate::players::{GameView, Player, PlayerError, PlayerFactory};
use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use varzero_datasets::{Compaction, DirLock, GameRecord, LockMode};
use varzero_rules::{Color, GameResult, Position, Variant};
use varzero_stats::{GameScore, Pentanomial, Rng, Sprt, SprtDecision, Wdl};

#[derive(Clone)]
pub struct MatchConfig {
    pub variant: Arc<Variant>,
    pub games: u64,
    /// Start positions (FENs); pair `k` uses `openings[k % len]` (game `k` when not `paired`).
    pub openings: Vec<String>,
    /// Each opening is played twice with the colours swapped (a match). A rule study of one
    /// deterministic engine against itself sets it false: the pair's second game would repeat
    /// the first, so every game gets its own opening.
    pub paired: bool,
    /// Where a game ends without legal moves, asks each engine how it scores the final
    /// position and records where that differs from our rules' result
    /// ([`MatchGame::disagreements`]).
    pub verify_endings: bool,
    /// Games played at once.
    pub concurrency: usize,
    pub sprt: Option<Sprt>,
    /// Games already played (a resumed match): their indices and A's scores. They count in
    /// the totals and are not played again.
    pub done: Vec<(u64, GameScore)>,
    /// The clock of every game (None: players move by their own budgets). A player whose move
    /// comes after its time ran out loses the game (`time-forfeit`).
    pub time_control: Option<crate::clock::TimeControl>,
}

/// Which player failed, and how.
#[derive(Clone, Debug)]
pub struct Failure {
    /// "A" or "B".
    pub player: &'static str,
    pub name: String,
    pub error: PlayerError,
}

/// One finished game.
#[derive(Clone, Debug)]
pub struct MatchGame {
    pub index: u64,
    pub pair: u64,
    pub opening: usize,
    /// Player A had White.
    pub a_white: bool,
    pub white: String,
    pub black: String,
    pub start_fen: String,
    pub moves: Vec<String>,
    pub final_fen: String,
    pub result: GameResult,
    pub termination: String,
    pub failure: Option<Failure>,
    /// A's result.
    pub score_a: GameScore,
    /// Per move: the mover's own value of the position before it (w - l for the side to
    /// move), where the player gave one (an engine's score).
    pub values: Vec<Option<f32>>,
    /// Engines that score the final position otherwise than our rules (with
    /// [`MatchConfig::verify_endings`]): "NAME: draw, our rules: loss for the side to move".
    pub disagreements: Vec<String>,
    /// Under a clock: each move's time and the mover's clock after it (the last entry of a
    /// game lost on time is the move that came too late).
    pub clock: Vec<crate::clock::MoveTime>,
    /// The time control (`tc=10+0.1`), if the match had one.
    pub time_control: Option<String>,
}

/// The running totals (from A's view).
#[derive(Clone, Debug, Default)]
pub struct MatchState {
    pub wdl: Wdl,
    pub penta: Pentanomial,
    pub games_done: u64,
    pub games_total: u64,
    pub llr: Option<f64>,
    pub decision: Option<SprtDecision>,
    pub failures_a: u64,
    pub failures_b: u64,
}

#[derive(Clone, Debug)]
pub struct MatchSummary {
    pub state: MatchState,
    pub elapsed: Duration,
    /// Stopped early because the SPRT decided.
    pub sprt_stopped: bool,
}

/// `count` start positions, each reached by `plies` uniformly random game moves from the
/// variant's start (a line that ends the game is drawn again).
pub fn random_openings(
    v: &Arc<Variant>,
    count: usize,
    plies: u32,
    seed: u64,
) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let mut rng = Rng::new(Rng::derive(seed, i as u64));
        let mut found = None;
        'tries: for _ in 0..1000 {
            let mut pos = Position::start(v);
            for _ in 0..plies {
                let (o, moves) = pos.outcome_and_moves();
                if o.is_some() {
                    continue 'tries;
                }
                let m = moves.as_slice()[rng.below(moves.len())];
                pos.make(m);
            }
            if pos.outcome().is_none() {
                found = Some(pos.fen());
                break;
            }
        }
        out.push(found.ok_or_else(|| {
            Error::Openings(format!(
                "no random opening of {plies} plies that does not end the game"
            ))
        })?);
    }
    Ok(out)
}

/// Reads an openings file: one FEN per line; empty lines and lines starting with `#` are skipped.
pub fn read_openings(v: &Arc<Variant>, path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.display().to_string(),
        source: e,
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let mut pos = Position::from_fen(v, l)
            .map_err(|e| Error::Openings(format!("{}:{}: {e}", path.display(), i + 1)))?;
        if let Some(o) = pos.outcome() {
            return Err(Error::Openings(format!(
                "{}:{}: the game is already over ({o})",
                path.display(),
                i + 1
            )));
        }
        out.push(pos.fen());
    }
    if out.is_empty() {
        return Err(Error::Openings(format!("{}: no openings", path.display())));
    }
    Ok(out)
}

/// The seed of the player with White (`white`) or Black in game `index` from `start_fen`: the
/// same game gets the same seed whichever worker plays it, whenever.
pub fn game_seed(start_fen: &str, index: u64, white: bool) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in start_fen.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    Rng::derive(h, index * 2 + u64::from(!white))
}

/// A player slot of a worker: made on first use and again after a failure.
struct Slot {
    factory: Arc<dyn PlayerFactory>,
    player: Option<Box<dyn Player>>,
    seed: u64,
}

impl Slot {
    fn get(&mut self) -> Result<&mut Box<dyn Player>, PlayerError> {
        if self.player.as_ref().is_some_and(|p| !p.healthy()) {
            self.player = None;
        }
        if self.player.is_none() {
            self.player = Some(self.factory.create(self.seed)?);
        }
        Ok(self.player.as_mut().unwrap())
    }
}

pub struct Arena {
    pub cfg: MatchConfig,
    pub a: Arc<dyn PlayerFactory>,
    pub b: Arc<dyn PlayerFactory>,
    /// Set to stop (games in progress are dropped).
    pub stop: Arc<AtomicBool>,
}

impl Arena {
    pub fn new(cfg: MatchConfig, a: Arc<dyn PlayerFactory>, b: Arc<dyn PlayerFactory>) -> Arena {
        Arena {
            cfg,
            a,
            b,
            stop: Arc::default(),
        }
    }

    fn play(&self, index: u64, a: &mut Slot, b: &mut Slot) -> Option<MatchGame> {
        let pair = index / 2;
        let a_white = index.is_multiple_of(2);
        let slot_of_opening = if self.cfg.paired { pair } else { index };
        let opening = (slot_of_opening % self.cfg.openings.len() as u64) as usize;
        let start_fen = self.cfg.openings[opening].clone();
        let v = &self.cfg.variant;
        let mut pos = Position::from_fen(v, &start_fen).expect("openings are checked");
        let (an, bn) = (self.a.name(), self.b.name());
        let (white, black) = if a_white {
            (an.clone(), bn.clone())
        } else {
            (bn.clone(), an.clone())
        };
        let mut moves: Vec<String> = Vec::new();
        let side_of = |is_a: bool| {
            if is_a == a_white {
                Color::White
            } else {
                Color::Black
            }
        };
        let fail = |is_a: bool, error: PlayerError| Failure {
            player: if is_a { "A" } else { "B" },
            name: if is_a { an.clone() } else { bn.clone() },
            error,
        };
        let mut failure: Option<(bool, Failure)> = None;
        for (is_a, slot) in [(true, &mut *a), (false, &mut *b)] {
            let seed = game_seed(&start_fen, index, is_a == a_white);
            if let Err(e) = slot.get().and_then(|p| {
                p.reseed(seed);
                p.new_game()
            }) {
                slot.player = None;
                failure = Some((is_a, fail(is_a, e)));
                break;
            }
        }
        let mut ended_without_moves = false;
        let mut values = Vec::new();
        let mut clock = self.cfg.time_control.map(crate::clock::GameClock::new);
        let mut times = Vec::new();
        let (result, termination) = loop {
            if let Some((is_a, f)) = failure.take() {
                let term = f.error.termination().to_string();
                failure = Some((is_a, f));
                break (GameResult::Win(!side_of(is_a)), term);
            }
            if self.stop.load(Ordering::Relaxed) {
                return None;
            }
            let (outcome, legal) = pos.outcome_and_moves();
            if let Some(o) = outcome {
                // (`legal` is empty once the game is decided: ask the rules core.)
                ended_without_moves = pos.legal_moves().is_empty();
                break (o.result, o.termination.name().to_string());
            }
            let mover = pos.side_to_move();
            let is_a = (mover == Color::White) == a_white;
            let slot = if is_a { &mut *a } else { &mut *b };
            let white = mover == Color::White;
            let view = GameView {
                variant: v,
                start_fen: &start_fen,
                moves: &moves,
                pos: &pos,
                stop: &self.stop,
                clock: clock.as_ref().map(|c| c.view(white)),
            };
            // The clock runs from the question to the answer (both players were made and told
            // of the game before its first move, so an engine's start is not charged).
            let asked = Instant::now();
            let mut answer = slot.get().and_then(|p| p.choose(&view));
            if let Some(c) = clock.as_mut() {
                let used = asked.elapsed();
                match c.charge(white, used) {
                    Ok(t) => times.push(t),
                    Err(t) => {
                        times.push(t);
                        // Late, whatever it answered (a timeout under a clock is this too).
                        if answer.is_ok() || matches!(answer, Err(PlayerError::Timeout(_))) {
                            answer = Err(PlayerError::TimeForfeit(format!(
                                "{} ms used, {} ms over",
                                t.used_ms, -t.left_ms
                            )));
                        }
                    }
                }
            }
            match answer {
                Ok(s) => match pos.parse_uci(&s) {
                    Ok(m) if legal.contains(m) => {
                        moves.push(pos.uci(m));
                        values.push(slot.player.as_ref().and_then(|p| p.last_value()));
                        pos.make(m);
                    }
                    Ok(_) => {
                        failure = Some((
                            is_a,
                            fail(
                                is_a,
                                PlayerError::IllegalMove(format!(
                                    "'{s}' is forbidden by the repetition rule"
                                )),
                            ),
                        ))
                    }
                    Err(e) => {
                        failure = Some((
                            is_a,
                            fail(is_a, PlayerError::IllegalMove(format!("'{s}': {e}"))),
                        ))
                    }
                },
                Err(e) => {
                    if self.stop.load(Ordering::Relaxed) {
                        return None;
                    }
                    failure = Some((is_a, fail(is_a, e)));
                }
            }
        };
        let mut disagreements = Vec::new();
        if self.cfg.verify_endings && ended_without_moves && failure.is_none() {
            let ours: i8 = match result {
                GameResult::Draw => 0,
                GameResult::Win(c) if c == pos.side_to_move() => 1,
                GameResult::Win(_) => -1,
            };
            let word = |x: i8| match x {
                1 => "a win",
                0 => "a draw",
                _ => "a loss",
            };
            let view = GameView {
                variant: v,
                start_fen: &start_fen,
                moves: &moves,
                pos: &pos,
                stop: &self.stop,
                clock: None,
            };
            for (name, slot) in [(&an, &mut *a), (&bn, &mut *b)] {
                if let Some(theirs) = slot.player.as_mut().and_then(|p| p.judge_end(&view)) {
                    if theirs != ours {
                        disagreements.push(format!(
                            "{name} scores the final position ({termination}) as {} for the \
                             side to move, our rules as {}",
                            word(theirs),
                            word(ours)
                        ));
                    }
                }
                if an == bn {
                    break;
                }
            }
        }
        if a.player.as_ref().is_some_and(|p| !p.healthy()) {
            a.player = None;
        }
        if b.player.as_ref().is_some_and(|p| !p.healthy()) {
            b.player = None;
        }
        let score_white = match result {
            GameResult::Win(Color::White) => GameScore::Win,
            GameResult::Win(Color::Black) => GameScore::Loss,
            GameResult::Draw => GameScore::Draw,
        };
        Some(MatchGame {
            index,
            pair,
            opening,
            a_white,
            white,
            black,
            final_fen: pos.fen(),
            start_fen,
            moves,
            result,
            termination,
            failure: failure.map(|f| f.1),
            disagreements,
            values,
            clock: times,
            time_control: self.cfg.time_control.map(|t| t.to_string()),
            score_a: if a_white {
                score_white
            } else {
                score_white.flip()
            },
        })
    }

    fn worker(&self, id: usize, queue: &Mutex<VecDeque<u64>>, out: &mpsc::Sender<MatchGame>) {
        let mut a = Slot {
            factory: self.a.clone(),
            player: None,
            seed: 2 * id as u64,
        };
        let mut b = Slot {
            factory: self.b.clone(),
            player: None,
            seed: 2 * id as u64 + 1,
        };
        loop {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            let Some(index) = queue.lock().unwrap().pop_front() else {
                break;
            };
            match self.play(index, &mut a, &mut b) {
                Some(g) => {
                    if out.send(g).is_err() {
                        break;
                    }
                }
                None => break,
            }
        }
    }

    /// Plays the match; `on_game` sees each finished game with the totals after it.
    pub fn run(&self, on_game: &mut dyn FnMut(&MatchGame, &MatchState)) -> MatchSummary {
        let start = Instant::now();
        let done: HashMap<u64, GameScore> = self.cfg.done.iter().copied().collect();
        let queue = Mutex::new(
            (0..self.cfg.games)
                .filter(|i| !done.contains_key(i))
                .collect::<VecDeque<u64>>(),
        );
        let mut state = MatchState {
            games_total: self.cfg.games,
            ..MatchState::default()
        };
        let mut half_pairs: HashMap<u64, GameScore> = HashMap::new();
        let mut sprt_stopped = false;
        let mut finished = |pair: u64, score: GameScore, state: &mut MatchState| -> bool {
            state.wdl.add(score);
            state.games_done += 1;
            if let Some(other) = half_pairs.remove(&pair) {
                state.penta.add(other, score);
                if let Some(sprt) = &self.cfg.sprt {
                    let (llr, d) = sprt.verdict(&state.penta);
                    state.llr = Some(llr);
                    state.decision = Some(d);
                    return d != SprtDecision::Continue;
                }
            } else {
                half_pairs.insert(pair, score);
            }
            false
        };
        let mut indices: Vec<u64> = done
            .keys()
            .copied()
            .filter(|&i| i < self.cfg.games)
            .collect();
        indices.sort_unstable();
        for i in indices {
            sprt_stopped |= finished(i / 2, done[&i], &mut state);
        }
        if sprt_stopped {
            self.stop.store(true, Ordering::Relaxed);
        }
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|s| {
            for id in 0..self.cfg.concurrency.max(1) {
                let tx = tx.clone();
                let queue = &queue;
                s.spawn(move || self.worker(id, queue, &tx));
            }
            drop(tx);
            for g in rx {
                if sprt_stopped {
                    // Finished after the decision: not counted.
                    continue;
                }
                let decided = finished(g.pair, g.score_a, &mut state);
                if let Some(f) = &g.failure {
                    if f.player == "A" {
                        state.failures_a += 1;
                    } else {
                        state.failures_b += 1;
                    }
                }
                if decided {
                    sprt_stopped = true;
                    self.stop.store(true, Ordering::Relaxed);
                }
                on_game(&g, &state);
            }
        });
        MatchSummary {
            state,
            elapsed: start.elapsed(),
            sprt_stopped,
        }
    }
}

/// Writes finished games: a text file as they come, and the games table in shards.
pub struct GameWriter {
    dir: PathBuf,
    text: std::fs::File,
    buffer: Vec<GameRecord>,
    /// The games of the directory as this writer has seen them (for the commit check).
    committed: varzero_datasets::Committed,
    tag: String,
    variant: Arc<Variant>,
    /// Games per shard: 1, so that a killed match loses no finished game.
    pub shard_games: usize,
    /// Also write each game's positions as training targets (a teacher's games): the move
    /// played is the policy target (probability 1), the game's result the value target.
    /// Games a player lost by failure give no positions.
    pub positions: bool,
    positions_buffer: Vec<varzero_datasets::PositionRecord>,
    done: Vec<(u64, GameScore)>,
    /// The directory's writer lock, held while the writer lives.
    lock: DirLock,
    /// The only writer (else one of several of disjoint ranges: nobody compacts).
    exclusive: bool,
}

/// The games of `a` against `b` already in the dataset directory `dir`: index and A's score
/// (sorted, one per index). A game between other players is an error.
/// A game id twice (two writers of an older version at once, which played it differently) is
/// refused: which of the two counts is for `varzero repair` to settle, not for a resume.
pub fn match_scores(dir: &Path, a: &str, b: &str) -> Result<Vec<(u64, GameScore)>> {
    let (shards, _) = varzero_datasets::read_live_games(dir)?;
    let mut done = Vec::new();
    let mut seen: HashMap<u64, PathBuf> = HashMap::new();
    for (s, games) in shards {
        for g in games {
            if let Some(first) = seen.insert(g.game_id, s.path.clone()) {
                return Err(Error::Duplicates {
                    dir: dir.display().to_string(),
                    id: g.game_id,
                    first: first.display().to_string(),
                    again: s.path.display().to_string(),
                });
            }
            let meta: serde_json::Value = serde_json::from_str(&g.search).unwrap_or_default();
            let a_white = meta["a_white"].as_bool().unwrap_or(true);
            let (white, black) = (meta["white"].as_str(), meta["black"].as_str());
            let (ga, gb) = if a_white {
                (white, black)
            } else {
                (black, white)
            };
            if ga != Some(a) || gb != Some(b) {
                return Err(Error::OtherMatch {
                    dir: dir.display().to_string(),
                    a: ga.unwrap_or("?").to_string(),
                    b: gb.unwrap_or("?").to_string(),
                });
            }
            let a_color = if a_white { Color::White } else { Color::Black };
            let score = match g.result.as_str() {
                "1-0" if a_color == Color::White => GameScore::Win,
                "0-1" if a_color == Color::Black => GameScore::Win,
                "1/2-1/2" => GameScore::Draw,
                _ => GameScore::Loss,
            };
            done.push((g.game_id, score));
        }
    }
    done.sort_by_key(|d| d.0);
    Ok(done)
}

impl GameWriter {
    /// Opens `dir` (created) for a match of `a` against `b`, appending to `dir/games.txt`;
    /// shards continue the numbering of those already there, and the games already there
    /// ([`GameWriter::done`]) are the match's first games when it is resumed. A directory of
    /// another variant, rules or pair of players is refused, and so is one that another
    /// writer has (naming it). Writes `dir/variant.toml` (the effective variant) for analysis.
    pub fn create(dir: &Path, variant: &Arc<Variant>, a: &str, b: &str) -> Result<GameWriter> {
        Self::create_in(dir, variant, a, b, false)
    }

    /// [`GameWriter::create`] for a directory other writers of disjoint ranges may be using at
    /// once (`shared`: their temporary shards are left alone; an exclusive writer is refused).
    pub fn create_in(
        dir: &Path,
        variant: &Arc<Variant>,
        a: &str,
        b: &str,
        shared: bool,
    ) -> Result<GameWriter> {
        let mode = if shared {
            LockMode::Shared
        } else {
            LockMode::Exclusive
        };
        let lock = DirLock::acquire(dir, mode)?;
        Self::with_lock(lock, mode, dir, variant, a, b)
    }

    /// [`GameWriter::create`] with `dir`'s lock already taken (by [`DirLock::wait`]: a ladder
    /// pairing that another ladder may be playing).
    pub fn with_lock(
        lock: DirLock,
        mode: LockMode,
        dir: &Path,
        variant: &Arc<Variant>,
        a: &str,
        b: &str,
    ) -> Result<GameWriter> {
        let rules = varzero_datasets::DatasetRules::new(&variant.name, variant.rules_hash);
        let exclusive = mode == LockMode::Exclusive;
        if exclusive {
            varzero_datasets::claim(dir, &rules)?;
            // What a compaction cut short left: the merged shard stands for these already.
            varzero_datasets::remove_superseded(dir, &lock)?;
        } else {
            varzero_datasets::claim_shared(dir, &rules)?;
        }
        let done = match_scores(dir, a, b)?;
        varzero_datasets::write_variant_file(dir, variant)?;
        let text_path = dir.join("games.txt");
        let text = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&text_path)
            .map_err(|e| Error::Io {
                path: text_path.display().to_string(),
                source: e,
            })?;
        Ok(GameWriter {
            dir: dir.to_path_buf(),
            text,
            buffer: Vec::new(),
            committed: varzero_datasets::Committed::default(),
            tag: format!("match{:x}", std::process::id()),
            variant: variant.clone(),
            shard_games: 1,
            positions: false,
            positions_buffer: Vec::new(),
            done,
            lock,
            exclusive,
        })
    }

    /// Writes what is buffered, then merges the directory's shards into few (the match, the
    /// pairing or the teacher's games are complete). Only the directory's only writer
    /// compacts: None for one of several.
    pub fn compact(&mut self) -> Result<Option<Compaction>> {
        self.flush()?;
        if !self.exclusive {
            return Ok(None);
        }
        Ok(Some(varzero_datasets::compact(&self.dir, &self.lock)?))
    }

    /// The games already in the directory when it was opened: index and A's score.
    pub fn done(&self) -> &[(u64, GameScore)] {
        &self.done
    }

    pub fn push(&mut self, g: &MatchGame) -> Result<()> {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "[game {}] pair {} opening {}",
            g.index, g.pair, g.opening
        );
        let _ = writeln!(
            t,
            "white  {}{}",
            g.white,
            if g.a_white { " (A)" } else { " (B)" }
        );
        let _ = writeln!(
            t,
            "black  {}{}",
            g.black,
            if g.a_white { " (B)" } else { " (A)" }
        );
        let _ = writeln!(t, "start  {}", g.start_fen);
        let _ = writeln!(t, "moves  {}", g.moves.join(" "));
        let _ = writeln!(t, "end    {}", g.final_fen);
        let _ = writeln!(t, "result {} {}", g.result.pgn(), g.termination);
        if let Some(f) = &g.failure {
            let _ = writeln!(t, "failed {} ({}): {}", f.player, f.name, f.error);
        }
        if !g.clock.is_empty() {
            let cells: Vec<String> = g
                .clock
                .iter()
                .map(|c| format!("{}/{}", c.used_ms, c.left_ms))
                .collect();
            let _ = writeln!(t, "clock  {} (ms used / left, by move)", cells.join(" "));
        }
        for d in &g.disagreements {
            let _ = writeln!(t, "disagreement {d}");
        }
        t.push('\n');
        let search = serde_json::json!({
            "match": true,
            "white": g.white,
            "black": g.black,
            "a_white": g.a_white,
            "pair": g.pair,
            "opening": g.opening,
            "failure": g.failure.as_ref().map(|f| format!("{} ({}): {}", f.player, f.name, f.error)),
            "disagreements": g.disagreements,
            "time_control": g.time_control,
            "move_ms": g.clock.iter().map(|c| c.used_ms).collect::<Vec<_>>(),
            "clock_ms": g.clock.iter().map(|c| c.left_ms).collect::<Vec<_>>(),
        });
        if self.positions && g.failure.is_none() {
            self.positions_of(g);
        }
        self.buffer.push(GameRecord {
            game_id: g.index,
            variant: self.variant.name.clone(),
            rules_hash: format!("{:016x}", self.variant.rules_hash),
            result: g.result.pgn().into(),
            termination: g.termination.clone(),
            plies: g.moves.len() as u32,
            seed: g.opening as u64,
            evaluator: format!("{} vs {}", g.white, g.black),
            search: search.to_string(),
            start_fen: g.start_fen.clone(),
            moves: g.moves.join(" "),
        });
        // The shard first: a game is in games.txt only once it is in the games table.
        if self.buffer.len() >= self.shard_games {
            self.flush()?;
        }
        self.text.write_all(t.as_bytes()).map_err(|e| Error::Io {
            path: self.dir.join("games.txt").display().to_string(),
            source: e,
        })
    }

    fn positions_of(&mut self, g: &MatchGame) {
        let Ok(mut pos) = Position::from_fen(&self.variant, &g.start_fen) else {
            return;
        };
        let white_wdl = match g.result {
            GameResult::Win(Color::White) => [1.0, 0.0, 0.0],
            GameResult::Win(Color::Black) => [0.0, 0.0, 1.0],
            GameResult::Draw => [0.0, 1.0, 0.0],
        };
        let hash = format!("{:016x}", self.variant.rules_hash);
        for (ply, uci) in g.moves.iter().enumerate() {
            let Ok(m) = pos.parse_uci(uci) else {
                return;
            };
            let mover = pos.side_to_move();
            let wdl = if mover == Color::White {
                white_wdl
            } else {
                [white_wdl[2], white_wdl[1], white_wdl[0]]
            };
            // The engine's own score as the search value (a second value target, see
            // `train.value_target_mix`); the result where it gave none.
            let root = match g.values.get(ply).copied().flatten() {
                Some(q) => {
                    let q = q.clamp(-1.0, 1.0);
                    [q.max(0.0), 1.0 - q.abs(), (-q).max(0.0)]
                }
                None => wdl,
            };
            self.positions_buffer
                .push(varzero_datasets::PositionRecord {
                    game_id: g.index,
                    ply: ply as u32,
                    variant: self.variant.name.clone(),
                    rules_hash: hash.clone(),
                    fen: pos.fen(),
                    policy_moves: vec![uci.clone()],
                    policy_probs: vec![1.0],
                    result_wdl: wdl,
                    root_wdl: root,
                    visits: 1,
                    full_search: true,
                    evaluator: if mover == Color::White {
                        g.white.clone()
                    } else {
                        g.black.clone()
                    },
                });
            pos.make(m);
        }
    }

    /// Writes the buffered games (and their positions) as one shard.
    pub fn flush(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        self.buffer.sort_by_key(|g| g.game_id);
        self.positions_buffer.sort_by_key(|p| (p.game_id, p.ply));
        // Through the commit check: a writer of another range of the same games (a retried
        // task whose first attempt still runs) may have written some of them meanwhile.
        varzero_datasets::commit_shard(
            &self.dir,
            &self.tag,
            &self.positions_buffer,
            &self.buffer,
            &mut self.committed,
        )?;
        self.buffer.clear();
        self.positions_buffer.clear();
        Ok(())
    }
}

impl Drop for GameWriter {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}
