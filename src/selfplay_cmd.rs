//! `varzero selfplay`: generate games into a dataset directory, with a progress bar.

use crate::VariantArg;
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use varzero_search::{Evaluator, MaterialEvaluator, SearchConfig, UniformEvaluator};
use varzero_selfplay::{Generator, SelfplayConfig};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum EvaluatorKind {
    Uniform,
    Material,
}

/// A run configuration file: `[search]` and `[selfplay]` tables (all keys optional).
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    #[serde(default)]
    pub search: SearchConfig,
    #[serde(default)]
    pub selfplay: SelfplayConfig,
}

#[derive(Args)]
pub struct SelfplayArgs {
    #[command(flatten)]
    pub variant: VariantArg,
    /// Games the output directory should hold when done (a rerun continues to this number).
    #[arg(long)]
    pub games: u64,
    /// Dataset directory (shards are written here).
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long, value_enum, default_value = "material")]
    pub evaluator: EvaluatorKind,
    /// A trained net (`.safetensors`, its JSON sidecar beside it): overrides --evaluator.
    #[arg(long)]
    pub net: Option<PathBuf>,
    /// Device for the net: cpu, cuda or cuda:N.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Run configuration (TOML with [search] and [selfplay]); options below override it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Playouts per full search.
    #[arg(long)]
    pub playouts: Option<u32>,
    /// Worker threads.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Games each worker advances at once (their leaves share one evaluator batch).
    #[arg(long)]
    pub games_per_worker: Option<usize>,
    /// Seed of the first game; game i uses seed + i, so a rerun or another worker count plays
    /// the same games.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Positions per shard.
    #[arg(long)]
    pub shard_positions: Option<usize>,
    /// Fraction of cheap (playout-capped) searches.
    #[arg(long)]
    pub cheap_fraction: Option<f32>,
    /// Any search or self-play setting, e.g. `--param c_puct=2.0 --param dirichlet_alpha=0.15
    /// --param selfplay.noise=false` (keys of `[search]` and `[selfplay]`, see
    /// search/src/config.rs and selfplay/src/config.rs); applied after --config and the options above.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// No progress bar (for logs).
    #[arg(long)]
    pub quiet: bool,
}

impl RunConfig {
    /// Every out-of-range setting, named (`search.playouts: at least 1 (got 0)`): the file and
    /// the flags are checked together, before anything is written.
    pub fn check(&self) -> Result<()> {
        let mut p = varzero_search::Problems::default();
        self.search.check("search", &mut p);
        self.selfplay.check("selfplay", &mut p);
        if !p.is_empty() {
            bail!("{p}");
        }
        Ok(())
    }
}

/// `cfg` with `key=value` settings applied; a bare key is looked up in `[search]`, then in
/// `[selfplay]`.
pub fn apply_params(cfg: &RunConfig, params: &[String]) -> Result<RunConfig> {
    crate::params::apply_params(cfg, params, &["search", "selfplay"])
}

pub fn load_run_config(path: &Option<PathBuf>) -> Result<RunConfig> {
    match path {
        None => Ok(RunConfig::default()),
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            crate::parse_toml(p, &text)
        }
    }
}

/// A net as an evaluator, checked against the variant.
pub fn net_evaluator(
    path: &std::path::Path,
    v: &Arc<varzero_rules::Variant>,
    device: &str,
) -> Result<Arc<dyn Evaluator>> {
    let device = varzero_eval_net::parse_device(device).map_err(anyhow::Error::msg)?;
    let net = varzero_eval_net::Net::load(path, v, device)?;
    let id = format!(
        "net:{}@{}",
        path.file_name()
            .map(|f| f.to_string_lossy().to_string())
            .unwrap_or_default(),
        net.meta.step
    );
    Ok(varzero_eval_net::NetEvaluator::new(net, id))
}

pub fn run(a: SelfplayArgs) -> Result<()> {
    let v = a.variant.load()?;
    let mut cfg = load_run_config(&a.config)?;
    if let Some(p) = a.playouts {
        cfg.search.playouts = p;
    }
    if let Some(c) = a.cheap_fraction {
        cfg.search.cheap_fraction = c;
    }
    if let Some(t) = a.threads {
        cfg.selfplay.threads = t;
    }
    if let Some(g) = a.games_per_worker {
        cfg.selfplay.games_per_worker = g;
    }
    if let Some(s) = a.seed {
        cfg.selfplay.seed = s;
    }
    if let Some(s) = a.shard_positions {
        cfg.selfplay.shard_positions = s;
    }
    let cfg = apply_params(&cfg, &a.params)?;
    cfg.check()?;
    let ev: Arc<dyn Evaluator> = match (&a.net, a.evaluator) {
        (Some(path), _) => {
            varzero_eval_net::share_threads(cfg.selfplay.threads);
            net_evaluator(path, &v, &a.device)?
        }
        (None, EvaluatorKind::Uniform) => Arc::new(UniformEvaluator),
        (None, EvaluatorKind::Material) => Arc::new(MaterialEvaluator::new(&v)),
    };
    let gen = Arc::new(Generator::new(
        v.clone(),
        ev,
        cfg.search.clone(),
        cfg.selfplay.clone(),
    ));
    let stats = gen.stats.clone();
    let start = Instant::now();
    let summary = run_with_progress(gen, &a.out, a.games, a.quiet)?;
    for s in &summary.skipped_shards {
        eprintln!("warning: {s}");
    }
    let secs = start.elapsed().as_secs_f64();
    let games = stats.games.load(Ordering::Relaxed);
    println!(
        "selfplay {}: {} games played ({} already there), {} positions in {} shards, {:.1} s",
        v.name,
        summary.games_played,
        summary.games_already_done,
        summary.positions,
        summary.shards_written,
        secs
    );
    println!(
        "W/D/L {}/{}/{}  mean length {:.1} plies  {:.0} positions/s  {:.0} playouts/s  -> {}",
        stats.white_wins.load(Ordering::Relaxed),
        stats.draws.load(Ordering::Relaxed),
        stats.black_wins.load(Ordering::Relaxed),
        stats.plies.load(Ordering::Relaxed) as f64 / games.max(1) as f64,
        summary.positions as f64 / secs.max(1e-9),
        stats.playouts.load(Ordering::Relaxed) as f64 / secs.max(1e-9),
        a.out.display()
    );
    Ok(())
}

/// Runs `gen` to `total` games in `out` with a progress bar (games, positions/s, playouts/s,
/// W/D/L) unless `quiet`.
pub fn run_with_progress(
    gen: Arc<Generator>,
    out: &std::path::Path,
    total: u64,
    quiet: bool,
) -> Result<varzero_selfplay::Summary> {
    let stats = gen.stats.clone();
    let start = Instant::now();
    let out = out.to_path_buf();
    let handle = std::thread::spawn(move || gen.run(&out, total));
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(total)
    };
    bar.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} games  {msg}").unwrap());
    while !handle.is_finished() {
        std::thread::sleep(Duration::from_millis(250));
        let secs = start.elapsed().as_secs_f64().max(1e-3);
        let games = stats.games.load(Ordering::Relaxed);
        bar.set_position(games);
        bar.set_message(format!(
            "{:.0} pos/s  {:.0} playouts/s  mean {:.1} plies  W/D/L {}/{}/{}",
            stats.positions.load(Ordering::Relaxed) as f64 / secs,
            stats.playouts.load(Ordering::Relaxed) as f64 / secs,
            stats.plies.load(Ordering::Relaxed) as f64 / games.max(1) as f64,
            stats.white_wins.load(Ordering::Relaxed),
            stats.draws.load(Ordering::Relaxed),
            stats.black_wins.load(Ordering::Relaxed),
        ));
    }
    bar.finish_and_clear();
    Ok(handle
        .join()
        .map_err(|_| anyhow::anyhow!("self-play worker panicked"))??)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(list: &[&str]) -> Result<RunConfig> {
        let v: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        apply_params(&RunConfig::default(), &v)
    }

    #[test]
    fn params_set_search_and_selfplay_keys() {
        let c = params(&[
            "c_puct=2.5",
            "search.tree_reuse=false",
            "noise=false",
            "selfplay.seed=9",
        ])
        .unwrap();
        assert_eq!(c.search.c_puct, 2.5);
        assert!(!c.search.tree_reuse);
        assert!(!c.selfplay.noise);
        assert_eq!(c.selfplay.seed, 9);
        // Everything else keeps its default.
        assert_eq!(c.search.playouts, SearchConfig::default().playouts);
    }

    #[test]
    fn bad_params_name_the_problem() {
        let e = params(&["c_pucct=2"]).unwrap_err().to_string();
        assert!(
            e.contains("no key `c_pucct`") && e.contains("c_puct"),
            "{e}"
        );
        let e = params(&["playouts=many"]).unwrap_err().to_string();
        assert!(e.contains("playouts") || e.contains("invalid"), "{e}");
        let e = params(&["c_puct"]).unwrap_err().to_string();
        assert!(e.contains("KEY=VALUE"), "{e}");
        let e = params(&["mcts.c_puct=1"]).unwrap_err().to_string();
        assert!(e.contains("no section `mcts`"), "{e}");
    }
}
