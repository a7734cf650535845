//! The AlphaZero loop (`varzero pipeline`) as stages. Generation 0 plays
//! with the material evaluator; each generation trains a net on the window of the newest
//! positions, plays its self-play games with it, and plays a short match against the previous
//! generation (score with a 95% interval, recorded; optional gating). Everything lives in one
//! run directory, and every stage resumes from what is on disk, so rerunning the same command
//! continues an interrupted run. The stages are functions ([`selfplay_generation`],
//! [`train_generation`], [`rate_generation`], [`rate_last_against_gen0`]) that talk only
//! through the run directory: [`run`] calls them one by one, and workers on other machines can
//! call them for their part of a run.

use crate::nets::NetResolver;
use crate::write_atomic;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use varzero_arena::PlayerSpec;
use varzero_arena::{random_openings, Arena, MatchConfig};
use varzero_rules::Variant;
use varzero_search::{Evaluator, MaterialEvaluator, SearchConfig};
use varzero_selfplay::{Generator, SelfplayConfig};
use varzero_trainer::TrainConfig;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineConfig {
    pub name: String,
    pub variant: String,
    pub generations: u32,
    pub games_per_generation: u64,
    /// Match games against the previous generation (pairs of colours).
    #[serde(default = "default_match_games")]
    pub match_games: u64,
    #[serde(default = "default_match_playouts")]
    pub match_playouts: u32,
    /// Keep the previous net for self-play when the new one scores below `gate_score`.
    #[serde(default)]
    pub gating: bool,
    #[serde(default = "default_gate")]
    pub gate_score: f64,
    #[serde(default = "default_device")]
    pub device: String,
    /// Playouts of generation 0's material self-play (default: `search.playouts`): the
    /// material evaluator is cheap, and deeper searches give it decisive games to learn from.
    #[serde(default)]
    pub gen0_playouts: Option<u32>,
    /// A teacher for generation 0 (a player spec: `fsf@nodes=100`, `uci:ENGINE@nodes=N`,
    /// `net:FILE@400`): it plays generation 0's games against itself, each from its own opening
    /// 4 random plies from the start, and its moves are the policy targets and the results the
    /// value targets. Default: our self-play with the material player.
    #[serde(default)]
    pub gen0: Option<String>,
    /// Games of generation 0 (default `games_per_generation`): a teacher's games are cheap
    /// next to self-play with a net, and the first net learns more from more of them.
    #[serde(default)]
    pub gen0_games: Option<u64>,
    /// Optimizer steps of the first net (default `train.steps`): the first net learns from
    /// scratch on generation 0's games, where a teacher's thousands of games are more than one
    /// generation's steps see in one pass.
    #[serde(default)]
    pub gen1_steps: Option<u64>,
    /// Training window of the first net (default `train.window`): net 1 learns from all of a
    /// teacher's positions, while later nets train on a `train.window` small enough that the
    /// newest self-play games are most of it (docs/runs.md: measured, not in a shipped config).
    #[serde(default)]
    pub gen1_window: Option<usize>,
    /// Rate each new net (its match and its ladder climb) on a second thread while self-play
    /// and training make the next one: training runs on one core, and the rating fills the
    /// other. Needs `gating = false` (self-play would otherwise wait for the match's verdict).
    /// The CPU time of a stage then includes the rating's share (logs/stages.csv).
    #[serde(default)]
    pub overlap: bool,
    #[serde(default)]
    pub search: SearchConfig,
    #[serde(default)]
    pub selfplay: SelfplayConfig,
    #[serde(default)]
    pub train: TrainConfig,
    /// Every generation rated on the variant's ladder.
    #[serde(default)]
    pub ladder: LadderSettings,
}

/// The `[ladder]` table of a run config: rating every generation (generation 0, the material
/// player, included) on the variant's ladder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LadderSettings {
    pub enabled: bool,
    /// Games per pairing.
    pub games: u64,
    /// Playouts of the rated players (default: `match_playouts`).
    pub playouts: Option<u32>,
    /// Rungs, weakest first (default: the variant's ladder).
    pub rungs: Option<Vec<String>>,
    /// The rung cache (default: `$VARZERO_CACHE/ladder/...`, shared by every run).
    pub rung_dir: Option<PathBuf>,
    /// The player at 0 Elo (default: the first rung).
    pub anchor: Option<String>,
}

impl Default for LadderSettings {
    fn default() -> Self {
        LadderSettings {
            enabled: false,
            games: 20,
            playouts: None,
            rungs: None,
            rung_dir: None,
            anchor: None,
        }
    }
}

impl PipelineConfig {
    /// Self-play games of generation `gen`.
    pub fn games(&self, gen: u32) -> u64 {
        match (gen, self.gen0_games) {
            (0, Some(n)) => n,
            _ => self.games_per_generation,
        }
    }

    /// Every out-of-range setting, named: a config file and `--param` go through this before
    /// anything is written.
    pub fn check(&self) -> Result<()> {
        let mut p = varzero_search::Problems::default();
        p.check(
            self.generations >= 1,
            "generations",
            "at least 1",
            self.generations,
        );
        p.check(
            self.games_per_generation >= 1,
            "games_per_generation",
            "at least 1",
            self.games_per_generation,
        );
        p.check(
            self.match_games >= 1,
            "match_games",
            "at least 1",
            self.match_games,
        );
        p.check(
            self.match_playouts >= 1,
            "match_playouts",
            "at least 1",
            self.match_playouts,
        );
        p.check(
            (0.0..=1.0).contains(&self.gate_score),
            "gate_score",
            "between 0 and 1",
            self.gate_score,
        );
        if let Some(spec) = &self.gen0 {
            if let Err(e) = varzero_arena::PlayerSpec::parse(spec) {
                p.check(false, "gen0", "a player spec", e);
            }
        }
        if let Some(g) = self.gen0_playouts {
            p.check(g >= 1, "gen0_playouts", "at least 1", g);
        }
        p.check(
            !(self.overlap && self.gating),
            "overlap",
            "false when gating is on (self-play waits for the match)",
            self.overlap,
        );
        if let Some(g) = self.gen0_games {
            p.check(g >= 1, "gen0_games", "at least 1", g);
        }
        if let Some(n) = self.gen1_steps {
            p.check(n >= 1, "gen1_steps", "at least 1", n);
        }
        if let Some(w) = self.gen1_window {
            p.check(w >= 1, "gen1_window", "at least 1", w);
        }
        if let Err(e) = varzero_eval_net::parse_device(&self.device) {
            p.0.push(format!("device: {e}"));
        }
        self.search.check("search", &mut p);
        self.selfplay.check("selfplay", &mut p);
        self.train.check(&mut p);
        p.check(
            self.ladder.games >= 1,
            "ladder.games",
            "at least 1",
            self.ladder.games,
        );
        if let Some(n) = self.ladder.playouts {
            p.check(n >= 1, "ladder.playouts", "at least 1", n);
        }
        if let Some(r) = &self.ladder.rungs {
            p.check(!r.is_empty(), "ladder.rungs", "at least one rung", "[]");
            for spec in r {
                if let Err(e) = PlayerSpec::parse(spec) {
                    p.0.push(format!("ladder.rungs: {e}"));
                }
            }
            // Caught here, not after hours of self-play when the ladder first fits.
            if let Some(a) = &self.ladder.anchor {
                if !r.contains(a) && !a.starts_with("gen-") {
                    p.0.push(format!(
                        "ladder.anchor: '{a}' is neither a rung ({}) nor a generation (gen-NNN@P)",
                        r.join(", ")
                    ));
                }
            }
        }
        check_name(&self.name, &mut p);
        match Variant::builtin(&self.variant) {
            Ok(v) => self.check_sizes(&v, &mut p),
            Err(e) => p.0.push(format!("variant: {e}")),
        }
        if p.is_empty() {
            Ok(())
        } else {
            anyhow::bail!("{p}")
        }
    }

    /// Every stage's memory against the machine's (`crate::sizes`): self-play (the games in
    /// flight, their trees, the queue of a generation), training (batch, net, window) and the
    /// matches; with `overlap` a match runs beside self-play and training.
    fn check_sizes(&self, v: &Arc<Variant>, p: &mut varzero_search::Problems) {
        use crate::sizes;
        sizes::check_threads("selfplay.threads", self.selfplay.threads, p);
        let enc = varzero_eval_net::Encoding::new(v);
        let memory = sizes::physical_memory();
        let table = toml::Table::try_from(self).unwrap_or_default();
        let value_of = |k: &str| sizes::value_in(&table, k);
        let mut rate = sizes::Budget::default();
        let threads = self.selfplay.threads;
        sizes::matches(
            self.match_games,
            self.match_playouts,
            threads,
            "match_games",
            "match_playouts",
            &mut rate,
        );
        let ladder_playouts = self.ladder.playouts.unwrap_or(self.match_playouts);
        sizes::matches(
            self.ladder.games,
            ladder_playouts,
            threads,
            "ladder.games",
            if self.ladder.playouts.is_some() {
                "ladder.playouts"
            } else {
                "match_playouts"
            },
            &mut rate,
        );
        let mut play = sizes::Budget::default();
        let games = match self.gen0_games {
            Some(g) if g > self.games_per_generation => ("gen0_games", g),
            _ => ("games_per_generation", self.games_per_generation),
        };
        let playouts = match (sizes::playouts_of(&self.search), self.gen0_playouts) {
            ((_, n), Some(g)) if g > n => ("gen0_playouts", g),
            (p, _) => p,
        };
        sizes::selfplay(
            &enc,
            Some(self.train.arch),
            &self.search,
            &self.selfplay,
            playouts,
            games,
            "selfplay",
            &mut play,
        );
        let mut train = sizes::Budget::default();
        let window = match self.gen1_window {
            Some(w) if w > self.train.window => ("gen1_window", w),
            _ => ("train.window", self.train.window),
        };
        sizes::training(&enc, &self.train, window, &mut train);
        if self.overlap {
            for (k, b) in rate.parts() {
                play.add(k, *b);
                train.add(k, *b);
            }
        }
        play.check("self-play", memory, &value_of, p);
        train.check("training", memory, &value_of, p);
        rate.check("a match", memory, &value_of, p);
    }
}

/// A run's name is the directory under `runs/` it gets by default: one path component of
/// letters, digits, `.`, `_` and `-`, so that no name reaches outside `runs/`.
fn check_name(name: &str, p: &mut varzero_search::Problems) {
    let ok = !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    p.check(
        ok,
        "name",
        "one path component of letters, digits, '.', '_' and '-'",
        format!("'{name}'"),
    );
}

fn default_match_games() -> u64 {
    20
}
fn default_match_playouts() -> u32 {
    64
}
fn default_gate() -> f64 {
    0.55
}
fn default_device() -> String {
    "cpu".into()
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MatchRecord {
    pub generation: u32,
    pub opponent: String,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub score: f64,
    pub score_low: f64,
    pub score_high: f64,
    /// Infinite for a score of 0 or 1, written as the string "inf" or "-inf" (JSON has no
    /// infinity: a null would make the record unreadable and the match replayed on resume).
    #[serde(with = "elo_json")]
    pub elo: f64,
    pub accepted: bool,
}

mod elo_json {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        if x.is_finite() {
            s.serialize_f64(*x)
        } else if *x > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Elo {
            Number(f64),
            Text(String),
        }
        match Elo::deserialize(d)? {
            Elo::Number(x) => Ok(x),
            Elo::Text(t) => t.parse::<f64>().map_err(serde::de::Error::custom),
        }
    }
}

/// A run directory resumes only the run it holds: its config.toml must match `cfg` in everything
/// but `generations` (which may grow to extend a run).
fn check_same_run(path: &Path, cfg: &PipelineConfig) -> Result<()> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(());
    };
    // Through the config type, so a key added since (with its default) is not a difference.
    let old: PipelineConfig = crate::config::parse_toml(path, &text)?;
    let old = toml::Table::try_from(&old)?;
    let new = toml::Table::try_from(cfg)?;
    let mut differ: Vec<&str> = old
        .keys()
        .chain(new.keys())
        // How many generations and how they are rated may change when a run is resumed.
        .filter(|k| *k != "generations" && *k != "ladder" && old.get(*k) != new.get(*k))
        .map(|k| k.as_str())
        .collect();
    differ.sort_unstable();
    differ.dedup();
    if !differ.is_empty() {
        anyhow::bail!(
            "{} holds a run with another config ({} differ): resume it with that config, or choose another --dir",
            path.parent().unwrap_or(path).display(),
            differ.join(", ")
        );
    }
    Ok(())
}

pub fn model_path(dir: &Path, gen: u32) -> PathBuf {
    dir.join("models").join(format!("gen-{gen:03}.safetensors"))
}

pub fn match_path(dir: &Path, gen: u32) -> PathBuf {
    dir.join("logs").join(format!("match-gen-{gen:03}.json"))
}

pub fn final_match_path(dir: &Path) -> PathBuf {
    dir.join("logs").join("match-last-vs-gen-000.json")
}

pub fn read_record(path: &Path) -> Option<MatchRecord> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<MatchRecord>(&t).ok())
}

impl MatchRecord {
    pub fn line(&self) -> String {
        format!(
            "match vs {}: score {:.3} [{:.3}, {:.3}] (W {} D {} L {}) elo {:+.0}{}",
            self.opponent,
            self.score,
            self.score_low,
            self.score_high,
            self.wins,
            self.draws,
            self.losses,
            self.elo,
            if self.accepted {
                ""
            } else {
                " -- rejected by gating"
            }
        )
    }
}

/// Plays `me` against `opp` from random openings, each with both colours, and records the score
/// of `me` with a 95% interval (normal approximation over games).
#[allow(clippy::too_many_arguments)] // a private helper called twice; a struct would add nothing
fn play_match(
    v: &Arc<Variant>,
    resolver: &NetResolver,
    cfg: &PipelineConfig,
    generation: u32,
    me: &str,
    opp: &str,
    seed: u64,
    quiet: bool,
) -> Result<MatchRecord> {
    let factory = |spec: &str| -> Result<_> {
        PlayerSpec::parse(spec)
            .and_then(|p| p.factory(spec, v, resolver, &cfg.search))
            .map_err(anyhow::Error::msg)
    };
    let pairs = cfg.match_games.div_ceil(2);
    let openings = random_openings(v, pairs as usize, 4, seed).map_err(anyhow::Error::msg)?;
    let mc = MatchConfig {
        variant: v.clone(),
        games: pairs * 2,
        openings,
        concurrency: cfg.selfplay.threads.max(1),
        paired: true,
        verify_endings: false,
        sprt: None,
        done: Vec::new(),
    };
    varzero_eval_net::share_threads(mc.concurrency);
    let arena = Arena::new(mc, factory(me)?, factory(opp)?);
    let bar = crate::progress::progress_bar(quiet, pairs * 2, "games");
    let summary = arena.run(&mut |_, st| {
        bar.set_position(st.wdl.games());
        bar.set_message(format!(
            "{me} vs {opp}: W {} D {} L {}",
            st.wdl.wins, st.wdl.draws, st.wdl.losses
        ));
    });
    bar.finish_and_clear();
    let w = &summary.state.wdl;
    let score = varzero_stats::score_interval(w.wins, w.draws, w.losses);
    Ok(MatchRecord {
        generation,
        opponent: opp.to_string(),
        games: w.games(),
        wins: w.wins,
        draws: w.draws,
        losses: w.losses,
        score: score.value,
        score_low: score.lower,
        score_high: score.upper,
        elo: w.elo().elo,
        accepted: !cfg.gating || score.value >= cfg.gate_score,
    })
}

/// The net self-play uses in generation `gen`: the newest accepted one before it.
pub fn selfplay_net(dir: &Path, gen: u32) -> Option<PathBuf> {
    (1..=gen).rev().find_map(|g| {
        let m = model_path(dir, g);
        let accepted = read_record(&match_path(dir, g)).is_none_or(|r| r.accepted);
        (m.exists() && accepted).then_some(m)
    })
}

/// The run directory: `dir` made ready for `cfg` (refused when it holds another run's config;
/// the effective config written by rename).
pub fn open_run(dir: &Path, cfg: &PipelineConfig) -> Result<()> {
    cfg.check()?;
    for d in ["selfplay", "models", "logs", "training"] {
        std::fs::create_dir_all(dir.join(d))
            .with_context(|| format!("cannot create {}", dir.join(d).display()))?;
    }
    let path = dir.join("config.toml");
    if let Err(e) = check_same_run(&path, cfg) {
        // A run that has made nothing yet (say, its config was refused by a later check, or
        // the first try ran out of memory) is not a run to protect: the new config replaces it.
        if made_anything(dir) {
            return Err(e);
        }
        eprintln!(
            "note: {} held another config, but no game or net was finished under it: replaced",
            path.display()
        );
    }
    write_atomic(&path, &toml::to_string(cfg)?)
}

/// Whether `dir` holds a finished game (a complete shard in `selfplay/gen-*`) or a net.
fn made_anything(dir: &Path) -> bool {
    let any_in = |sub: &str, f: &dyn Fn(&Path) -> bool| {
        std::fs::read_dir(dir.join(sub))
            .map(|rd| rd.flatten().any(|e| f(&e.path())))
            .unwrap_or(false)
    };
    any_in("selfplay", &|g| {
        g.is_dir() && varzero_datasets::list_shards(g).is_ok_and(|(s, _)| !s.is_empty())
    }) || any_in("models", &|m| {
        m.extension().is_some_and(|e| e == "safetensors")
    })
}

/// A run directory opened by another process (a cluster's driver): refused when it holds
/// another run's config or none; nothing written.
pub fn check_run(dir: &Path, cfg: &PipelineConfig) -> Result<()> {
    cfg.check()?;
    let path = dir.join("config.toml");
    if !path.exists() {
        anyhow::bail!(
            "{}: no run here (open it first: varzero pipeline --stage open)",
            dir.display()
        );
    }
    check_same_run(&path, cfg)
}

/// Stage 1 of generation `gen`: its self-play games (resuming what is there), with the newest
/// accepted net, or the material evaluator in generation 0.
pub fn selfplay_generation(
    dir: &Path,
    cfg: &PipelineConfig,
    v: &Arc<Variant>,
    gen: u32,
    quiet: bool,
) -> Result<()> {
    selfplay_games(dir, cfg, v, gen, None, quiet)
}

/// Self-play of generation `gen`: the games of `range` only (`None`: all of them; a range is
/// played beside other writers of the same directory, see [`Generator::run_range`]).
pub fn selfplay_games(
    dir: &Path,
    cfg: &PipelineConfig,
    v: &Arc<Variant>,
    gen: u32,
    range: Option<std::ops::Range<u64>>,
    quiet: bool,
) -> Result<()> {
    let sp = dir.join("selfplay").join(format!("gen-{gen:03}"));
    // Ranges share the generation's directory; the whole pass holds it alone (it removes what
    // killed range writers left), so it waits for range writers still at work there (a task
    // retried while its first attempt still runs), saying for whom.
    let _lock = match &range {
        Some(_) => varzero_datasets::DirLock::acquire(&sp, varzero_datasets::LockMode::Shared)?,
        None => varzero_datasets::DirLock::wait(
            &sp,
            varzero_datasets::LockMode::Exclusive,
            &mut |holder| {
                eprintln!(
                    "note: {} is in use by {holder}: waiting for it",
                    sp.display()
                )
            },
        )?,
    };
    let usage = Usage::start();
    if let (0, Some(spec)) = (gen, &cfg.gen0) {
        let t = Instant::now();
        let g = crate::engine_games::EngineGames {
            players: [spec.clone(), spec.clone()],
            games: cfg.games(0),
            random_plies: 4,
            seed: cfg.selfplay.seed,
            concurrency: cfg.selfplay.threads,
            device: cfg.device.clone(),
            positions: true,
            range: range.clone(),
        };
        // The teacher's engines are child processes: their CPU time is the stage's.
        let cpu = cpu_with_children();
        let s = crate::engine_games::play(v, &g, &cfg.search, &sp, &mut |_, _| {})?;
        let key = match &range {
            None => format!("selfplay-gen-{gen:03}"),
            Some(r) => format!("selfplay-gen-{gen:03}@{}-{}", r.start, r.end),
        };
        if range.is_some() {
            add_cpu_file(dir, &key, cpu_with_children() - cpu)?;
        } else {
            add_cpu(dir, &key, cpu_with_children() - cpu)?;
        }
        let busy = if range.is_none() {
            usage.record(dir, "selfplay", gen)?
        } else {
            usage.cores()
        };
        println!(
            "gen 0: the teacher {spec}: {} games ({} already there), {} failures, {:.0} s, {busy:.2} cores busy",
            s.played,
            s.already,
            s.failures.len(),
            t.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    let net = selfplay_net(dir, gen);
    let ev: Arc<dyn Evaluator> = match &net {
        Some(p) => crate::nets::net_evaluator(p, v, &cfg.device)?,
        None => Arc::new(MaterialEvaluator::new(v)),
    };
    let mut run = cfg.selfplay.clone();
    run.seed = cfg.selfplay.seed.wrapping_add(gen as u64 * 1_000_003);
    let t = Instant::now();
    varzero_eval_net::share_threads(cfg.selfplay.threads);
    let mut search = cfg.search.clone();
    if let (None, Some(p)) = (&net, cfg.gen0_playouts) {
        search.playouts = p;
    }
    let g = Arc::new(Generator::new(v.clone(), ev.clone(), search, run));
    let ev_id = g.evaluator.id();
    let cpu = cpu_seconds();
    let (s, key) = match &range {
        None => (
            crate::progress::run_with_progress(g, &sp, cfg.games(gen), quiet)?,
            format!("selfplay-gen-{gen:03}"),
        ),
        Some(r) => (
            g.run_range(&sp, r.clone(), true)?,
            format!("selfplay-gen-{gen:03}@{}-{}", r.start, r.end),
        ),
    };
    if range.is_some() {
        // Ranges run at once in other processes: each records its CPU time in its own file.
        add_cpu_file(dir, &key, cpu_seconds() - cpu)?;
    } else {
        add_cpu(dir, &key, cpu_seconds() - cpu)?;
    }
    let busy = if range.is_none() {
        usage.record(dir, "selfplay", gen)?
    } else {
        usage.cores()
    };
    println!(
        "gen {gen}{}: self-play with {}: {} games ({} already there), {} positions, {:.0} s, {busy:.2} cores busy",
        range
            .as_ref()
            .map(|r| format!(" games {}..{}", r.start, r.end))
            .unwrap_or_default(),
        ev_id,
        s.games_played,
        s.games_already_done,
        s.positions,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Stage 2: the net of generation `next`, trained on the window of generations `0..next`
/// (resuming from its checkpoint; nothing to do when its model is there).
pub fn train_generation(
    dir: &Path,
    cfg: &PipelineConfig,
    v: &Arc<Variant>,
    next: u32,
    quiet: bool,
) -> Result<()> {
    let model = model_path(dir, next);
    if model.exists() {
        return Ok(());
    }
    let net = selfplay_net(dir, next - 1);
    let data: Vec<PathBuf> = (0..next)
        .map(|g| dir.join("selfplay").join(format!("gen-{g:03}")))
        .collect();
    let out = dir.join("training").join(format!("gen-{next:03}"));
    let usage = Usage::start();
    varzero_eval_net::share_threads(1);
    let mut train = cfg.train.clone();
    if let (1, Some(n)) = (next, cfg.gen1_steps) {
        train.steps = n;
    }
    if let (1, Some(w)) = (next, cfg.gen1_window) {
        train.window = w;
    }
    let bar = crate::progress::progress_bar(quiet, train.steps, "steps");
    let t = Instant::now();
    let cpu = cpu_seconds();
    let summary = varzero_trainer::train(
        v,
        &data,
        &out,
        net.as_deref(),
        &train,
        varzero_eval_net::parse_device(&cfg.device).map_err(anyhow::Error::msg)?,
        &mut |l| {
            bar.set_position(l.step);
            bar.set_message(format!(
                "loss {:.3}  acc {:.2}/{:.2}  {:.0} samples/s",
                l.loss, l.policy_acc, l.value_acc, l.samples_per_s
            ));
        },
    )?;
    bar.finish_and_clear();
    add_cpu(dir, &format!("train-gen-{next:03}"), cpu_seconds() - cpu)?;
    for ext in ["json", "safetensors"] {
        let from = summary.model.with_extension(ext);
        let to = model.with_extension(ext);
        let tmp = to.with_extension(format!("{ext}.tmp"));
        let copied = std::fs::copy(&from, &tmp)
            .with_context(|| format!("cannot copy {}", from.display()))
            .and_then(|_| {
                std::fs::rename(&tmp, &to).with_context(|| format!("cannot write {}", to.display()))
            });
        if copied.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        copied?;
    }
    let (f, l) = (
        summary.first.unwrap_or_default(),
        summary.last.unwrap_or_default(),
    );
    let _ = std::fs::copy(
        out.join("train_log.csv"),
        dir.join("logs").join(format!("train-gen-{next:03}.csv")),
    );
    let _ = std::fs::copy(
        out.join("train_curves.png"),
        dir.join("logs").join(format!("train-gen-{next:03}.png")),
    );
    let busy = usage.record(dir, "train", next)?;
    println!(
        "gen {next}: trained {} steps on {} positions{} in {:.0} s ({busy:.2} cores busy): loss {:.3} -> {:.3}, policy acc {:.2} -> {:.2}",
        summary.steps_done,
        summary.samples,
        if summary.mirrored { ", mirrored" } else { "" },
        t.elapsed().as_secs_f64(),
        f.loss,
        l.loss,
        f.policy_acc,
        l.policy_acc
    );
    Ok(())
}

/// Stage 3: generation `next`'s net against the net self-play used before it (or the material
/// evaluator), recorded in `logs/match-gen-NNN.json` (nothing to do when it is there).
pub fn rate_generation(
    dir: &Path,
    cfg: &PipelineConfig,
    v: &Arc<Variant>,
    next: u32,
    quiet: bool,
) -> Result<()> {
    let mp = match_path(dir, next);
    if mp.exists() {
        return Ok(());
    }
    let usage = Usage::start();
    let resolver = NetResolver::new(&cfg.device);
    let me = format!(
        "net:{}@{}",
        model_path(dir, next).display(),
        cfg.match_playouts
    );
    let opp = match (selfplay_net(dir, next - 1), &cfg.gen0) {
        (Some(p), _) => format!("net:{}@{}", p.display(), cfg.match_playouts),
        // The first net against the teacher it learnt from.
        (None, Some(teacher)) => teacher.clone(),
        (None, None) => format!("material@{}", cfg.match_playouts),
    };
    let mut rec = play_match(
        v,
        &resolver,
        cfg,
        next,
        &me,
        &opp,
        cfg.selfplay.seed ^ next as u64,
        quiet,
    )?;
    if next == 1 && cfg.gen0.is_some() {
        // A teacher cannot play our self-play (it gives no search targets), so there is no
        // earlier net to keep: the first net is always self-play's.
        rec.accepted = true;
    }
    write_atomic(&mp, &serde_json::to_string_pretty(&rec)?)?;
    let busy = usage.record(dir, "match", next)?;
    println!("gen {next}: {} ({busy:.2} cores busy)", rec.line());
    Ok(())
}

/// The last generation against generation 0 (the material evaluator): what the loop gained.
/// A record of an earlier last generation (the run was extended since) is played again.
pub fn rate_last_against_gen0(
    dir: &Path,
    cfg: &PipelineConfig,
    v: &Arc<Variant>,
    quiet: bool,
) -> Result<Option<MatchRecord>> {
    let last = cfg.generations;
    let fp = final_match_path(dir);
    let current = read_record(&fp).is_some_and(|r| r.generation == last);
    if last >= 2 && model_path(dir, last).exists() && !current {
        let resolver = NetResolver::new(&cfg.device);
        let me = format!(
            "net:{}@{}",
            model_path(dir, last).display(),
            cfg.match_playouts
        );
        let opp = format!("material@{}", cfg.match_playouts);
        let mut rec = play_match(
            v,
            &resolver,
            cfg,
            last,
            &me,
            &opp,
            cfg.selfplay.seed ^ 0xf1a1,
            quiet,
        )?;
        rec.accepted = true; // gating is about the previous generation, not this one
        write_atomic(&fp, &serde_json::to_string_pretty(&rec)?)?;
    }
    Ok(read_record(&fp).filter(|r| r.generation == last))
}

/// `logs/matches.csv`, rebuilt from the per-generation records and `last`.
pub fn write_matches_csv(
    dir: &Path,
    cfg: &PipelineConfig,
    last: Option<MatchRecord>,
) -> Result<()> {
    let mut csv = String::from(
        "generation,opponent,games,wins,draws,losses,score,score_low,score_high,elo,accepted\n",
    );
    let records = (1..=cfg.generations)
        .filter_map(|g| read_record(&match_path(dir, g)))
        .chain(last);
    for r in records {
        csv.push_str(&format!(
            "{},{},{},{},{},{},{:.4},{:.4},{:.4},{:.1},{}\n",
            r.generation,
            r.opponent,
            r.games,
            r.wins,
            r.draws,
            r.losses,
            r.score,
            r.score_low,
            r.score_high,
            r.elo,
            r.accepted
        ));
    }
    write_atomic(&dir.join("logs").join("matches.csv"), &csv)
}

/// Process CPU time (user + system, all threads) in seconds.
pub fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the struct we pass and reads nothing else.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// CPU seconds of this process and of its child processes that have ended (the engines a
/// teacher or a ladder rung runs, reaped when they quit).
fn cpu_with_children() -> f64 {
    // SAFETY: as in `cpu_seconds`.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) } != 0 {
        return cpu_seconds();
    }
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    cpu_seconds() + t(u.ru_utime) + t(u.ru_stime)
}

/// A stage's core utilisation: CPU time (this process and its engines) over wall time.
/// Recorded per stage and generation in `logs/stages.csv`, so a run shows where a core idles.
pub struct Usage {
    wall: Instant,
    cpu: f64,
}

impl Usage {
    pub fn start() -> Usage {
        Usage {
            wall: Instant::now(),
            cpu: cpu_with_children(),
        }
    }

    /// Cores busy on average since the start.
    pub fn cores(&self) -> f64 {
        (cpu_with_children() - self.cpu) / self.wall.elapsed().as_secs_f64().max(1e-9)
    }

    /// Appends `stage,generation,wall_s,cpu_s,cores_busy` to `logs/stages.csv`; returns the
    /// cores busy.
    pub fn record(&self, dir: &Path, stage: &str, gen: u32) -> Result<f64> {
        let wall = self.wall.elapsed().as_secs_f64();
        let cpu = cpu_with_children() - self.cpu;
        let busy = cpu / wall.max(1e-9);
        let p = dir.join("logs").join("stages.csv");
        let mut text = std::fs::read_to_string(&p)
            .unwrap_or_else(|_| "stage,generation,wall_s,cpu_s,cores_busy\n".into());
        text.push_str(&format!("{stage},{gen},{wall:.1},{cpu:.1},{busy:.3}\n"));
        write_atomic(&p, &text)?;
        Ok(busy)
    }
}

/// The CPU seconds each finished stage took (`logs/cpu.json`, by rename): self-play of a
/// generation and training of a net. A stage resumed after a kill counts only its last part.
pub fn read_cpu(dir: &Path) -> std::collections::BTreeMap<String, f64> {
    let mut m: std::collections::BTreeMap<String, f64> =
        std::fs::read_to_string(dir.join("logs").join("cpu.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
    // Self-play ranges played by a cluster's tasks: `logs/cpu.d/KEY.json`, one file each.
    for e in std::fs::read_dir(dir.join("logs").join("cpu.d"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let p = e.path();
        let (Some(stem), Some(secs)) = (
            p.file_stem().map(|s| s.to_string_lossy().to_string()),
            std::fs::read_to_string(&p)
                .ok()
                .and_then(|t| t.trim().parse::<f64>().ok()),
        ) else {
            continue;
        };
        if p.extension().is_some_and(|x| x == "json") {
            *m.entry(stem).or_insert(0.0) += secs;
        }
    }
    m
}

fn add_cpu_file(dir: &Path, key: &str, secs: f64) -> Result<()> {
    let d = dir.join("logs").join("cpu.d");
    std::fs::create_dir_all(&d)?;
    let p = d.join(format!("{key}.json"));
    let old = std::fs::read_to_string(&p)
        .ok()
        .and_then(|t| t.trim().parse::<f64>().ok())
        .unwrap_or(0.0);
    write_atomic(&p, format!("{}", old + secs.max(0.0)))
}

fn add_cpu(dir: &Path, key: &str, secs: f64) -> Result<()> {
    let mut m = read_cpu(dir);
    *m.entry(key.to_string()).or_insert(0.0) += secs.max(0.0);
    write_atomic(
        &dir.join("logs").join("cpu.json"),
        &serde_json::to_string_pretty(&m)?,
    )
}

/// CPU-hours spent to make generation `gen`: self-play of generations before it and training
/// of nets up to it.
pub fn cpu_hours_to(dir: &Path, gen: u32) -> f64 {
    let m = read_cpu(dir);
    let sum: f64 = (0..gen)
        .map(|g| {
            let key = format!("selfplay-gen-{g:03}");
            m.iter()
                .filter(|(k, _)| **k == key || k.starts_with(&format!("{key}@")))
                .map(|(_, s)| s)
                .sum::<f64>()
        })
        .chain((1..=gen).map(|g| m.get(&format!("train-gen-{g:03}")).copied().unwrap_or(0.0)))
        .fold(0.0, |a, b| a + b);
    sum / 3600.0
}

/// What the ladder stage recorded of a generation (`logs/ladder-gen-NNN.json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LadderRecord {
    pub generation: u32,
    pub player: String,
    /// The highest rung it scored at least half against.
    pub top_rung: Option<usize>,
}

fn ladder_record_path(dir: &Path, gen: u32) -> PathBuf {
    dir.join("logs").join(format!("ladder-gen-{gen:03}.json"))
}

/// Stage 4 (with `[ladder] enabled`): generation `gen` climbs the ladder from where the one
/// before it stopped, and the ratings of every generation are refitted: `ladder/ratings.csv`,
/// `logs/ladder.csv` (generation, Elo, interval, CPU-hours) and `logs/ladder.png`.
pub fn ladder_generation(
    dir: &Path,
    cfg: &PipelineConfig,
    v: &Arc<Variant>,
    gen: u32,
    quiet: bool,
) -> Result<()> {
    let s = &cfg.ladder;
    if !s.enabled {
        return Ok(());
    }
    let playouts = s.playouts.unwrap_or(cfg.match_playouts);
    let mut o = crate::ladder::LadderOptions::new(&dir.join("ladder"));
    o.rungs = s.rungs.clone();
    o.rung_dir = s.rung_dir.clone();
    o.anchor = s.anchor.clone();
    o.games = s.games;
    o.concurrency = cfg.selfplay.threads.max(1);
    o.seed = cfg.selfplay.seed ^ 0x1add;
    let l = crate::ladder::open(v, &o)?;
    let name = format!("gen-{gen:03}@{playouts}");
    let rec_path = ladder_record_path(dir, gen);
    let mut busy = None;
    if !rec_path.exists() {
        let usage = Usage::start();
        let make = crate::ladder::maker(v, &cfg.search, &cfg.device);
        let spec = if gen == 0 {
            cfg.gen0
                .clone()
                .unwrap_or_else(|| format!("material@{playouts}"))
        } else {
            format!("net:{}@{playouts}", model_path(dir, gen).display())
        };
        let player = crate::ladder::named(&name, make(&spec).map_err(anyhow::Error::msg)?);
        let start = (0..gen)
            .rev()
            .find_map(|g| {
                std::fs::read_to_string(ladder_record_path(dir, g))
                    .ok()
                    .and_then(|t| serde_json::from_str::<LadderRecord>(&t).ok())
            })
            .and_then(|r| r.top_rung)
            .unwrap_or(0);
        varzero_eval_net::share_threads(o.concurrency);
        let top = crate::ladder::rate_one(&l, &player, start, &make, quiet)?;
        write_atomic(
            &rec_path,
            &serde_json::to_string_pretty(&LadderRecord {
                generation: gen,
                player: name.clone(),
                top_rung: top,
            })?,
        )?;
        busy = Some(usage.record(dir, "ladder", gen)?);
    }
    let ratings = l.ratings().map_err(anyhow::Error::msg)?;
    crate::ladder::write_ratings(&l.cfg.dir, &ratings)?;
    let mut csv = String::from("generation,player,elo,error95,games,cpu_hours\n");
    let mut points = Vec::new();
    for g in 0..=cfg.generations {
        let Some(r) = std::fs::read_to_string(ladder_record_path(dir, g))
            .ok()
            .and_then(|t| serde_json::from_str::<LadderRecord>(&t).ok())
        else {
            continue;
        };
        if let Some(x) = ratings.iter().find(|x| x.player == r.player) {
            let h = cpu_hours_to(dir, g);
            csv.push_str(&format!(
                "{g},{},{:.1},{:.1},{},{:.6}\n",
                x.player, x.elo, x.error, x.games, h
            ));
            points.push(varzero_trainer::EloPoint {
                generation: g,
                cpu_hours: h,
                elo: x.elo,
                error: x.error,
            });
        }
    }
    write_atomic(&dir.join("logs").join("ladder.csv"), &csv)?;
    let rungs: Vec<(String, f64)> = ratings
        .iter()
        .filter(|x| x.rung)
        .map(|x| (x.player.clone(), x.elo))
        .collect();
    let png = dir.join("logs").join("ladder.png");
    let tmp = dir.join("logs").join("ladder.tmp.png");
    varzero_trainer::elo_curves(&points, &rungs, &tmp).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::anyhow!("cannot draw {}: {e}", png.display())
    })?;
    if tmp.exists() {
        std::fs::rename(&tmp, &png)?;
    }
    if let Some(p) = points.last() {
        println!(
            "gen {gen}: ladder {:+.0} +- {:.0} Elo ({} = 0){}",
            p.elo,
            p.error,
            l.cfg.anchor,
            busy.map(|b| format!(", {b:.2} cores busy"))
                .unwrap_or_default()
        );
    }
    Ok(())
}

/// The loop with `overlap`: net `gen` is rated (match, ladder) on a second thread while
/// self-play of generation `gen` and training of net `gen + 1` run; the last net is rated
/// alone. The same stages and files as the plain loop, so either resumes the other's run.
fn run_overlapped(dir: &Path, cfg: &PipelineConfig, v: &Arc<Variant>, quiet: bool) -> Result<()> {
    // One libtorch thread per stage: two stages at once share the cores.
    varzero_eval_net::fix_threads(2);
    for gen in 0..cfg.generations {
        std::thread::scope(|s| -> Result<()> {
            let rating = s.spawn(|| -> Result<()> {
                if gen >= 1 {
                    rate_generation(dir, cfg, v, gen, true)?;
                }
                ladder_generation(dir, cfg, v, gen, true)
            });
            let making = selfplay_generation(dir, cfg, v, gen, quiet)
                .and_then(|()| train_generation(dir, cfg, v, gen + 1, quiet));
            let rated = rating
                .join()
                .map_err(|_| anyhow::anyhow!("the rating thread panicked"))?;
            making.and(rated)
        })?;
        refresh_report(dir);
    }
    rate_generation(dir, cfg, v, cfg.generations, quiet)?;
    ladder_generation(dir, cfg, v, cfg.generations, quiet)?;
    refresh_report(dir);
    Ok(())
}

/// Rewrites `DIR/report.html` (the page is a view of the logs; a failure to draw it is a
/// warning, never the end of a run).
pub fn refresh_report(dir: &Path) {
    if let Err(e) = crate::report::write(dir, &crate::report::ReportOptions::default()) {
        eprintln!("warning: report.html: {}", crate::one_line(&e));
    }
}

/// The end of a run: the last generation against generation 0, `logs/matches.csv`, the page.
pub fn finish(dir: &Path, cfg: &PipelineConfig, v: &Arc<Variant>, quiet: bool) -> Result<()> {
    let last = rate_last_against_gen0(dir, cfg, v, quiet)?;
    if let Some(r) = &last {
        println!("gen {} vs gen 0: {}", r.generation, r.line());
    }
    write_matches_csv(dir, cfg, last)?;
    refresh_report(dir);
    Ok(())
}

/// Removes what writes killed or failed before their rename left in a run directory: in it,
/// in `logs/`, `models/` and each training directory (each self-play directory is cleaned by
/// its own exclusive writer). Only the run's exclusive holder calls it, so no live writer's
/// temporary goes; a training directory that a `varzero train` of its own holds is left alone.
pub fn remove_run_temporaries(dir: &Path) -> Result<()> {
    let mut dirs = vec![
        (dir.to_path_buf(), None),
        (dir.join("logs"), None),
        (dir.join("logs").join("cpu.d"), None),
        (dir.join("models"), None),
    ];
    for e in std::fs::read_dir(dir.join("training"))
        .into_iter()
        .flatten()
        .flatten()
    {
        if e.path().is_dir() {
            match varzero_datasets::DirLock::acquire(
                &e.path(),
                varzero_datasets::LockMode::Exclusive,
            ) {
                Ok(lock) => dirs.push((e.path(), Some(lock))),
                Err(_) => continue,
            }
        }
    }
    for (d, _lock) in &dirs {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_file() && crate::is_temporary(&e.file_name().to_string_lossy()) {
                std::fs::remove_file(&p)
                    .with_context(|| format!("cannot remove {}", p.display()))?;
            }
        }
    }
    Ok(())
}

/// Refused when a generation's self-play directory holds a game twice (written by an older
/// version's concurrent writers), before any stage runs: the error names the repair command.
pub fn check_selfplay_unique(dir: &Path) -> Result<()> {
    let mut gens: Vec<PathBuf> = std::fs::read_dir(dir.join("selfplay"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    gens.sort();
    for g in gens {
        varzero_datasets::check_unique(&g)?;
    }
    Ok(())
}

/// The whole loop in `dir`: every stage of every generation, each skipped when its output is
/// there. The run directory's lock is held exclusively for the whole run: a second `pipeline`
/// on it, or a `--stage` command, is refused while this one runs (one writer per directory).
pub fn run(dir: &Path, cfg: &PipelineConfig, quiet: bool) -> Result<()> {
    // A refused config creates nothing, not even the lock.
    cfg.check()?;
    let _lock = varzero_datasets::DirLock::acquire(dir, varzero_datasets::LockMode::Exclusive)?;
    open_run(dir, cfg)?;
    remove_run_temporaries(dir)?;
    check_selfplay_unique(dir)?;
    let v = Variant::builtin(&cfg.variant)?;
    let start = Instant::now();
    println!(
        "pipeline {} ({}): {} generations in {}",
        cfg.name,
        v.name,
        cfg.generations,
        dir.display()
    );
    if cfg.overlap {
        run_overlapped(dir, cfg, &v, quiet)?;
    } else {
        for gen in 0..cfg.generations {
            selfplay_generation(dir, cfg, &v, gen, quiet)?;
            if gen == 0 {
                ladder_generation(dir, cfg, &v, 0, quiet)?;
            }
            train_generation(dir, cfg, &v, gen + 1, quiet)?;
            rate_generation(dir, cfg, &v, gen + 1, quiet)?;
            ladder_generation(dir, cfg, &v, gen + 1, quiet)?;
            refresh_report(dir);
        }
    }
    finish(dir, cfg, &v, quiet)?;
    println!("report: {}", dir.join("report.html").display());
    println!(
        "done in {:.0} s. outputs: {}/{{selfplay,models,logs,training}} (config.toml, logs/matches.csv)",
        start.elapsed().as_secs_f64(),
        dir.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_match_record_with_an_infinite_elo_reads_back() {
        for elo in [f64::NEG_INFINITY, f64::INFINITY, -12.5] {
            let r = MatchRecord {
                generation: 2,
                opponent: "material@64".into(),
                games: 40,
                wins: 0,
                draws: 0,
                losses: 40,
                score: 0.0,
                score_low: 0.0,
                score_high: 0.0,
                elo,
                accepted: true,
            };
            let text = serde_json::to_string(&r).unwrap();
            let back: MatchRecord = serde_json::from_str(&text).unwrap();
            assert_eq!(back.elo, elo, "{text}");
        }
    }

    /// Every shipped run config parses through the type that reads it (a pipeline config when
    /// it has `generations`, else a self-play config), and every key carries a comment.
    #[test]
    fn shipped_run_configs_parse_and_every_key_is_commented() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/runs");
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let table: toml::Table = crate::config::parse_toml(&path, &text).unwrap();
            if table.contains_key("generations") {
                let cfg: PipelineConfig = crate::config::parse_toml(&path, &text).unwrap();
                Variant::builtin(&cfg.variant).unwrap();
                assert_eq!(
                    Some(cfg.name.as_str()),
                    path.file_stem().and_then(|s| s.to_str()),
                    "{}: name is the file's stem",
                    path.display()
                );
            } else {
                let _: crate::config::RunConfig = crate::config::parse_toml(&path, &text).unwrap();
            }
            let mut previous = "";
            for (i, line) in text.lines().enumerate() {
                let l = line.trim();
                let is_key = !l.starts_with('#') && !l.starts_with('[') && l.contains('=');
                assert!(
                    !is_key || l.contains('#') || previous.trim_start().starts_with('#'),
                    "{}:{}: `{l}` has no comment",
                    path.display(),
                    i + 1
                );
                previous = line;
            }
            names.push(path.file_stem().unwrap().to_string_lossy().to_string());
        }
        names.sort();
        for want in [
            "makruk-cpu",
            "material-selfplay",
            "oxeli-cpu",
            "tiny",
            "xiangqi-cpu",
        ] {
            assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
        }
    }
}
