//! `varzero pipeline --config configs/runs/NAME.toml`: the AlphaZero loop in one run directory
//! (`varzero::pipeline`); rerunning the same command resumes it. `--stage` runs one stage of
//! one generation, which is how a cluster's driver (scripts/ray/driver.py) runs the same loop on
//! many machines: every stage is idempotent, and a self-play `--range` can run beside others.
//! A whole run holds the run directory's lock alone; stages hold it shared.

use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use varzero::pipeline::PipelineConfig;
use varzero::run_config::{apply_params, parse_toml};

#[derive(Args)]
pub struct PipelineArgs {
    /// Run configuration (see configs/runs/).
    #[arg(long)]
    pub config: PathBuf,
    /// Run directory (default: runs/NAME).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Any key of the run config, e.g. `--param generations=3 --param playouts=32
    /// --param train.arch.blocks=2` (a bare key is looked up at the top level, then in
    /// [search], [selfplay] and [train]); applied after --config.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// Run one stage only (of generation --gen) in a run directory opened before (`open`):
    /// what the cluster driver's tasks do.
    #[arg(long, value_enum, default_value = "all")]
    pub stage: Stage,
    /// The generation of --stage: self-play plays generation N's games; train, rate and
    /// ladder make and rate generation N's net (N >= 1; ladder also 0).
    #[arg(long)]
    pub gen: Option<u32>,
    /// Self-play only the games START..END of the generation (with --stage selfplay); several
    /// ranges may run at once into the run directory.
    #[arg(long, value_name = "START..END")]
    pub range: Option<String>,
    /// No progress bars (for logs).
    #[arg(long)]
    pub quiet: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Stage {
    /// The whole loop.
    All,
    /// Create the run directory (or check it holds this run) and write config.toml.
    Open,
    Selfplay,
    Train,
    Rate,
    Ladder,
    /// The last generation against generation 0, logs/matches.csv and report.html.
    Finish,
    /// report.html only.
    Report,
    /// Print the run directory's layout as JSON (every path, per generation where it is one;
    /// what a cluster driver reads instead of spelling paths itself). Writes nothing.
    Layout,
}

fn parse_range(s: &str) -> Result<std::ops::Range<u64>> {
    let (a, b) = s
        .split_once("..")
        .with_context(|| format!("--range {s}: expected START..END"))?;
    let (a, b): (u64, u64) = (
        a.trim()
            .parse()
            .with_context(|| format!("--range {s}: start"))?,
        b.trim()
            .parse()
            .with_context(|| format!("--range {s}: end"))?,
    );
    if a >= b {
        anyhow::bail!("--range {s}: START must be below END");
    }
    Ok(a..b)
}

pub fn run(a: PipelineArgs) -> Result<()> {
    let text = std::fs::read_to_string(&a.config)
        .with_context(|| format!("cannot read {}", a.config.display()))?;
    let cfg: PipelineConfig = parse_toml(&a.config, &text)?;
    let cfg = apply_params(&cfg, &a.params, &["search", "selfplay", "train"])?;
    cfg.check()
        .with_context(|| format!("{}", a.config.display()))?;
    let dir = a
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(&cfg.name));
    use varzero::pipeline as p;
    let run = varzero::run_dir::RunDir::new(&dir);
    if a.range.is_some() && a.stage != Stage::Selfplay {
        anyhow::bail!("--range goes with --stage selfplay");
    }
    // The stages of a cluster's driver share the run directory (each is idempotent, and
    // self-play ranges check every shard as it is committed); a whole `pipeline` run holds it
    // alone, so a stage is refused while one runs, and the other way round.
    let shared = varzero_datasets::LockMode::Shared;
    let _lock = match a.stage {
        Stage::All => return p::run(&run, &cfg, a.quiet),
        Stage::Open => {
            let lock = varzero_datasets::DirLock::acquire(&dir, shared)?;
            return p::open_run(&run, &cfg).map(|()| drop(lock));
        }
        Stage::Layout => {
            run.check_format()?;
            println!(
                "{}",
                serde_json::to_string_pretty(&run.layout_json(cfg.generations))?
            );
            return Ok(());
        }
        _ => {
            p::check_run(&run, &cfg)?;
            varzero_datasets::DirLock::acquire(&dir, shared)?
        }
    };
    let v = varzero_rules::Variant::builtin(&cfg.variant)?;
    let gen = || {
        a.gen.with_context(|| {
            format!(
                "--stage {} needs --gen N",
                format!("{:?}", a.stage).to_lowercase()
            )
        })
    };
    let next = || -> Result<u32> {
        let g = gen()?;
        if g == 0 {
            anyhow::bail!("--gen: nets are generations 1 and up");
        }
        Ok(g)
    };
    match a.stage {
        Stage::Selfplay => {
            // A range may go past games_per_generation: the asynchronous driver keeps playing
            // with a generation's net while the next one trains.
            let range = a.range.as_deref().map(parse_range).transpose()?;
            p::selfplay_games(&run, &cfg, &v, gen()?, range, a.quiet)
        }
        Stage::Train => p::train_generation(&run, &cfg, &v, next()?, a.quiet),
        Stage::Rate => p::rate_generation(&run, &cfg, &v, next()?, a.quiet),
        Stage::Ladder => p::ladder_generation(&run, &cfg, &v, gen()?, a.quiet),
        Stage::Finish => p::finish(&run, &cfg, &v, a.quiet),
        Stage::Report => {
            p::refresh_report(&run);
            Ok(())
        }
        Stage::All | Stage::Open | Stage::Layout => unreachable!("handled above"),
    }
}
