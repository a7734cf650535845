//! `varzero pipeline --config configs/runs/NAME.toml`: the AlphaZero loop in one run directory
//! (`varzero::pipeline`); rerunning the same command resumes it.

use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use varzero::config::{apply_params, parse_toml};
use varzero::pipeline::PipelineConfig;

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
    /// No progress bars (for logs).
    #[arg(long)]
    pub quiet: bool,
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
    varzero::pipeline::run(&dir, &cfg, a.quiet)
}
