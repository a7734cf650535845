//! `varzero uci`: our engine (MCTS with a trained net, or the material or uniform evaluator)
//! speaking UCI with Fairy-Stockfish's conventions on stdin/stdout (see `varzero_uci::protocol`).

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use varzero::run_config::VariantArg;
use varzero_uci::{Output, UciEngine};

#[derive(Args)]
pub struct UciArgs {
    /// The variant until `setoption name UCI_Variant` (`--variant-file`, `--set` apply too).
    #[command(flatten)]
    pub variant: VariantArg,
    /// The evaluator until `setoption name Evaluator`.
    #[arg(long, default_value = "material")]
    pub evaluator: String,
    /// Device of a `net:` evaluator: `cpu` or `cuda[:N]`.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Search settings (a run config's [search] table).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

pub fn run(a: UciArgs) -> Result<()> {
    let v = a.variant.load()?;
    let search = varzero::run_config::load_run_config(&a.config)?.search;
    let resolver = varzero::nets::evaluators(&a.device);
    if resolver
        .resolve(&a.evaluator, &v)
        .map_err(anyhow::Error::msg)?
        .is_none()
    {
        anyhow::bail!(
            "unknown evaluator '{}' (known: {})",
            a.evaluator,
            resolver.known().join(", ")
        );
    }
    let out: Output = Arc::new(Mutex::new(Box::new(std::io::stdout())));
    let mut engine = UciEngine::new(out, resolver, v, &a.evaluator, search);
    engine.run(std::io::stdin().lock());
    Ok(())
}
