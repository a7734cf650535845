//! The AlphaZero loop (`varzero pipeline`) as stages. Generation 0 plays
//! with the material evaluator; each generation trains a net on the window of the newest
//! positions, plays its self-play games with it, and plays a short match against the previous
//! generation (score with a 95% interval, recorded; optional gating). Everything lives in one
//! run directory, and every stage resumes from what is on disk, so rerunning the same command
//! continues an interrupted run. The stages are functions ([`selfplay_generation`],
//! [`train_generation`], [`rate_generation`], [`rate_last_against_gen0`]) that talk only
//! through the run directory: [`run`] calls them one by one, and workers on other machines can
//! call them for their part of a run.
//!
//! What lives where: this file holds the run config, opening a run directory and the loop;
//! [`stages`] makes a generation (self-play, training); [`rating`] rates a net (matches, the
//! ladder). The directory's layout and records are [`crate::run_dir`]; CPU accounting is
//! [`crate::usage`].

pub mod rating;
pub mod stages;

pub use rating::{ladder_generation, rate_generation, rate_last_against_gen0, write_matches_csv};
pub use stages::{selfplay_games, selfplay_generation, selfplay_net, train_generation};

use crate::run_dir::RunDir;
use crate::write_atomic;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use varzero_arena::PlayerSpec;
use varzero_rules::Variant;
use varzero_search::SearchConfig;
use varzero_selfplay::SelfplayConfig;
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
    /// MuZero's Reanalyse: before net g + 1 is trained, this many positions of the self-play
    /// generations before g (not a teacher's generation 0) are searched again with net g, as
    /// self-play searches, into `reanalyse/gen-g`, and trained on beside the originals (0: off).
    #[serde(default)]
    pub reanalyse: usize,
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
    /// Also rate each net raw (`tactics=0,tactics_priors=0`) where the run's search blends, so
    /// that what the net learned shows apart from the search (a second row per generation in
    /// logs/ladder.csv, its player named `...-raw`).
    pub raw: bool,
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
            raw: false,
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
        let mut p = varzero_settings::Problems::default();
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
    fn check_sizes(&self, v: &Arc<Variant>, p: &mut varzero_settings::Problems) {
        use crate::sizes;
        sizes::check_threads("selfplay.threads", self.selfplay.threads, p);
        let enc = varzero_eval_net::Encoding::new(v).with_attacks(self.train.arch.attacks);
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
fn check_name(name: &str, p: &mut varzero_settings::Problems) {
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

/// The keys a resumed run may change: how far it goes and how its nets are rated, not how they
/// are made.
const RESUMABLE: [&str; 4] = ["generations", "ladder", "match_games", "match_playouts"];

/// A run directory resumes only the run it holds: its config.toml must match `cfg` in everything
/// but [`RESUMABLE`] (`generations` may grow to extend a run).
fn check_same_run(path: &Path, cfg: &PipelineConfig) -> Result<()> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(());
    };
    // Through the config type, so a key added since (with its default) is not a difference.
    let old: PipelineConfig = crate::run_config::parse_toml(path, &text)?;
    let old = toml::Table::try_from(&old)?;
    let new = toml::Table::try_from(cfg)?;
    let mut differ: Vec<&str> = old
        .keys()
        .chain(new.keys())
        // How many generations and how they are rated may change when a run is resumed: a
        // stopped run is closed (`--stage finish`) with more games or playouts than its
        // per-generation matches had.
        .filter(|k| !RESUMABLE.contains(&k.as_str()) && old.get(*k) != new.get(*k))
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

/// The run directory made ready for `cfg`: its directories and format file, and the effective
/// config written by rename (refused when it holds another run's config, or another format).
pub fn open_run(run: &RunDir, cfg: &PipelineConfig) -> Result<()> {
    cfg.check()?;
    run.create()?;
    let path = run.config();
    if let Err(e) = check_same_run(&path, cfg) {
        // A run that has made nothing yet (say, its config was refused by a later check, or
        // the first try ran out of memory) is not a run to protect: the new config replaces it.
        if made_anything(run) {
            return Err(e);
        }
        eprintln!(
            "note: {} held another config, but no game or net was finished under it: replaced",
            path.display()
        );
    }
    write_atomic(&path, &toml::to_string(cfg)?)
}

/// Whether the run holds a finished game (a complete shard in a self-play directory) or a net.
fn made_anything(run: &RunDir) -> bool {
    let games = run
        .selfplay_generations()
        .unwrap_or_default()
        .into_iter()
        .any(|g| varzero_datasets::list_shards(&run.selfplay(g)).is_ok_and(|(s, _)| !s.is_empty()));
    games
        || std::fs::read_dir(run.models())
            .map(|rd| {
                rd.flatten()
                    .any(|e| e.path().extension().is_some_and(|e| e == "safetensors"))
            })
            .unwrap_or(false)
}

/// A run directory opened by another process (a cluster's driver): refused when it holds
/// another run's config or none, or another format; nothing written.
pub fn check_run(run: &RunDir, cfg: &PipelineConfig) -> Result<()> {
    cfg.check()?;
    run.check_format()?;
    let path = run.config();
    if !path.exists() {
        anyhow::bail!(
            "{}: no run here (open it first: varzero pipeline --stage open)",
            run.root().display()
        );
    }
    check_same_run(&path, cfg)
}

/// The loop with `overlap`: net `gen` is rated (match, ladder) on a second thread while
/// self-play of generation `gen` and training of net `gen + 1` run; the last net is rated
/// alone. The same stages and files as the plain loop, so either resumes the other's run.
fn run_overlapped(run: &RunDir, cfg: &PipelineConfig, v: &Arc<Variant>, quiet: bool) -> Result<()> {
    // One libtorch thread per stage: two stages at once share the cores.
    varzero_eval_net::fix_threads(2);
    for gen in 0..cfg.generations {
        std::thread::scope(|s| -> Result<()> {
            let rating = s.spawn(|| -> Result<()> {
                if gen >= 1 {
                    rate_generation(run, cfg, v, gen, true)?;
                }
                ladder_generation(run, cfg, v, gen, true)
            });
            let making = selfplay_generation(run, cfg, v, gen, quiet)
                .and_then(|()| train_generation(run, cfg, v, gen + 1, quiet));
            let rated = rating
                .join()
                .map_err(|_| anyhow::anyhow!("the rating thread panicked"))?;
            making.and(rated)
        })?;
        refresh_report(run);
    }
    rate_generation(run, cfg, v, cfg.generations, quiet)?;
    ladder_generation(run, cfg, v, cfg.generations, quiet)?;
    refresh_report(run);
    Ok(())
}

/// Rewrites `DIR/report.html` (the page is a view of the logs; a failure to draw it is a
/// warning, never the end of a run).
pub fn refresh_report(run: &RunDir) {
    if let Err(e) = crate::report::write(run.root(), &crate::report::ReportOptions::default()) {
        eprintln!("warning: report.html: {}", crate::one_line(&e));
    }
}

/// The end of a run: the last generation against generation 0, `logs/matches.csv`, the page.
pub fn finish(run: &RunDir, cfg: &PipelineConfig, v: &Arc<Variant>, quiet: bool) -> Result<()> {
    let last = rate_last_against_gen0(run, cfg, v, quiet)?;
    if let Some(r) = &last {
        println!("gen {} vs gen 0: {}", r.generation, r.line());
    }
    let summary = rating::closing_matches(run, cfg, v, last.as_ref(), quiet)?;
    write_matches_csv(run, cfg, last)?;
    if !summary.is_empty() {
        println!(
            "\nwhat the loop learnt ({} playouts a move, {} games each, 95% intervals from game pairs;\n\
             raw: the nets alone, no quiescence blend; logs/summary.json):",
            cfg.match_playouts,
            cfg.match_games.div_ceil(2) * 2
        );
        for r in &summary {
            println!("  {}  {}", r.line(), r.verdict());
        }
        if let Some(w) = typical_half_width(&summary) {
            println!(
                "(\"stronger\" or \"weaker\" only where the whole interval is on that side of 0: \
                 these matches resolve about +-{w:.0} Elo;\n a longer run, or more games \
                 (--param match_games=N), separates smaller differences: docs/runs.md)"
            );
        }
    }
    refresh_report(run);
    Ok(())
}

/// The median half-width of the rows' finite intervals: how large a difference the closing
/// matches can tell from none.
fn typical_half_width(rows: &[crate::run_dir::SummaryMatch]) -> Option<f64> {
    varzero_stats::median(
        rows.iter()
            .map(|r| (r.elo_high - r.elo_low) / 2.0)
            .filter(|w| w.is_finite())
            .collect(),
    )
}

/// Removes what writes killed or failed before their rename left in a run directory: in it,
/// in `logs/`, `models/` and each training directory (each self-play directory is cleaned by
/// its own exclusive writer). Only the run's exclusive holder calls it, so no live writer's
/// temporary goes; a training directory that a `varzero train` of its own holds is left alone.
pub fn remove_run_temporaries(run: &RunDir) -> Result<()> {
    let mut dirs = vec![
        (run.root().to_path_buf(), None),
        (run.logs(), None),
        (run.cpu_ranges(), None),
        (run.models(), None),
    ];
    for e in std::fs::read_dir(run.training_root())
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
pub fn check_selfplay_unique(run: &RunDir) -> Result<()> {
    for g in run.selfplay_generations()? {
        varzero_datasets::check_unique(&run.selfplay(g))?;
    }
    Ok(())
}

/// The whole loop in the run directory: every stage of every generation, each skipped when its
/// output is there. The directory's lock is held exclusively for the whole run: a second
/// `pipeline` on it, or a `--stage` command, is refused while this one runs (one writer per
/// directory).
pub fn run(run: &RunDir, cfg: &PipelineConfig, quiet: bool) -> Result<()> {
    // A refused config creates nothing, not even the lock.
    cfg.check()?;
    let _lock =
        varzero_datasets::DirLock::acquire(run.root(), varzero_datasets::LockMode::Exclusive)?;
    open_run(run, cfg)?;
    remove_run_temporaries(run)?;
    check_selfplay_unique(run)?;
    let v = Variant::builtin(&cfg.variant)?;
    let start = Instant::now();
    println!(
        "pipeline {} ({}): {} generations in {}",
        cfg.name,
        v.name,
        cfg.generations,
        run.root().display()
    );
    if cfg.overlap {
        run_overlapped(run, cfg, &v, quiet)?;
    } else {
        for gen in 0..cfg.generations {
            selfplay_generation(run, cfg, &v, gen, quiet)?;
            if gen == 0 {
                ladder_generation(run, cfg, &v, 0, quiet)?;
            }
            train_generation(run, cfg, &v, gen + 1, quiet)?;
            rate_generation(run, cfg, &v, gen + 1, quiet)?;
            ladder_generation(run, cfg, &v, gen + 1, quiet)?;
            refresh_report(run);
        }
    }
    finish(run, cfg, &v, quiet)?;
    println!("report: {}", run.report().display());
    println!(
        "done in {:.0} s. outputs: {}/{{selfplay,models,logs,training}} (config.toml, logs/matches.csv)",
        start.elapsed().as_secs_f64(),
        run.root().display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let table: toml::Table = crate::run_config::parse_toml(&path, &text).unwrap();
            if table.contains_key("generations") {
                let cfg: PipelineConfig = crate::run_config::parse_toml(&path, &text).unwrap();
                Variant::builtin(&cfg.variant).unwrap();
                assert_eq!(
                    Some(cfg.name.as_str()),
                    path.file_stem().and_then(|s| s.to_str()),
                    "{}: name is the file's stem",
                    path.display()
                );
            } else {
                let _: crate::run_config::RunConfig =
                    crate::run_config::parse_toml(&path, &text).unwrap();
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
