//! `varzero selfplay`: generate games into a dataset directory, with a progress bar: our
//! self-play (positions with search targets for training), or with `--players` games between
//! any players (UCI engines with options, nets, the material player) for analysis, named in the
//! games table and refereed by our rules core.

use anyhow::Result;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;
use varzero::run_config::VariantArg;
use varzero_search::{Evaluator, MaterialEvaluator, UniformEvaluator};
use varzero_selfplay::Generator;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum EvaluatorKind {
    Uniform,
    /// Material resolved by a quiescence search, with exchange-hint priors (generation 0).
    Material,
    /// The raw material balance with uniform priors (the old generation 0).
    MaterialRaw,
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
    /// Play these players instead of our self-play (one spec plays itself, two play each
    /// other, colours alternating), as `varzero match` takes them: `--players fsf@nodes=1000`.
    /// Games only (no training positions), each from its own random opening.
    #[arg(long, value_delimiter = ';')]
    pub players: Vec<String>,
    /// Random plies of each game's opening (with --players).
    #[arg(long, default_value_t = 4)]
    pub random_plies: u32,
    /// With --players: also write the positions, with the move played as the policy target
    /// and the result as the value target (a teacher's games as training data).
    #[arg(long)]
    pub positions: bool,
    /// No progress bar (for logs).
    #[arg(long)]
    pub quiet: bool,
}

fn run_players(a: &SelfplayArgs) -> Result<()> {
    use indicatif::{ProgressBar, ProgressStyle};
    use varzero_rules::{Color, GameResult};
    let v = a.variant.load()?;
    if a.players.len() > 2 {
        anyhow::bail!(
            "--players: one spec (self-play) or two, not {}",
            a.players.len()
        );
    }
    let cfg = varzero::run_config::load_run_config(&a.config)?;
    // One writer per directory (our self-play takes it in the generator).
    let _lock = varzero_datasets::DirLock::acquire(&a.out, varzero_datasets::LockMode::Exclusive)?;
    let g = varzero::engine_games::EngineGames {
        players: [
            a.players[0].clone(),
            a.players.get(1).unwrap_or(&a.players[0]).clone(),
        ],
        games: a.games,
        random_plies: a.random_plies,
        seed: a.seed.unwrap_or(cfg.selfplay.seed),
        concurrency: a.threads.unwrap_or(cfg.selfplay.threads).max(1),
        device: a.device.clone(),
        positions: a.positions,
        range: None,
        time_control: None,
    };
    let bar = if a.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(a.games)
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:25} {pos}/{len} games  {per_sec}  {msg}").unwrap(),
    );
    let start = Instant::now();
    let (mut w, mut d, mut l) = (0u64, 0u64, 0u64);
    let usage = varzero::usage::Usage::start();
    let s = varzero::engine_games::play(&v, &g, &cfg.search, &a.out, &mut |game, st| {
        match game.result {
            GameResult::Win(Color::White) => w += 1,
            GameResult::Win(Color::Black) => l += 1,
            GameResult::Draw => d += 1,
        }
        bar.set_position(st.games_done);
        bar.set_message(format!("W/D/L {w}/{d}/{l}"));
    })?;
    bar.finish_and_clear();
    println!(
        "selfplay {}: {} vs {}: {} games played ({} already there), {:.1} s, {:.2} cores busy; \
         W/D/L {w}/{d}/{l}; {} failures, {} disagreements -> {}",
        v.name,
        g.players[0],
        g.players[1],
        s.played,
        s.already,
        start.elapsed().as_secs_f64(),
        usage.cores(),
        s.failures.len(),
        s.disagreements.len(),
        a.out.display()
    );
    for (id, m) in s.failures.iter().chain(&s.disagreements).take(10) {
        println!("  game {id}: {m}");
    }
    Ok(())
}

pub fn run(a: SelfplayArgs) -> Result<()> {
    if !a.players.is_empty() {
        return run_players(&a);
    }
    let v = a.variant.load()?;
    let mut cfg = varzero::run_config::load_run_config(&a.config)?;
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
    let cfg = varzero::run_config::apply_run_params(&cfg, &a.params)?;
    let arch = match &a.net {
        Some(path) => Some(varzero_eval_net::Net::read_meta(path)?.arch),
        None => None,
    };
    cfg.check(&v, a.games, arch)?;
    let ev: Arc<dyn Evaluator> = match (&a.net, a.evaluator) {
        (Some(path), _) => {
            varzero_eval_net::share_threads(cfg.selfplay.threads);
            varzero::nets::net_evaluator(path, &v, &a.device)?
        }
        (None, EvaluatorKind::Uniform) => Arc::new(UniformEvaluator),
        (None, EvaluatorKind::Material) => Arc::new(MaterialEvaluator::new(&v)),
        (None, EvaluatorKind::MaterialRaw) => Arc::new(MaterialEvaluator::raw(&v)),
    };
    let gen = Arc::new(Generator::new(
        v.clone(),
        ev,
        cfg.search.clone(),
        cfg.selfplay.clone(),
    ));
    let stats = gen.stats.clone();
    let start = Instant::now();
    let usage = varzero::usage::Usage::start();
    let summary = varzero::progress::run_with_progress(gen, &a.out, a.games, a.quiet)?;
    for s in &summary.skipped_shards {
        eprintln!("warning: {s}");
    }
    // So that `varzero report` and `analyze` replay the games under their own rules, whatever
    // --variant-file or --set made them.
    varzero_datasets::write_variant_file(&a.out, &v)?;
    let secs = start.elapsed().as_secs_f64();
    let games = stats.games.load(Ordering::Relaxed);
    println!(
        "selfplay {}: {} games played ({} already there), {} positions in {} shards, {:.1} s, {:.2} cores busy",
        v.name,
        summary.games_played,
        summary.games_already_done,
        summary.positions,
        summary.shards_written,
        secs,
        usage.cores()
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
