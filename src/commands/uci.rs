//! `varzero uci`: our engine (MCTS with a trained net, or the material or uniform evaluator)
//! speaking UCI with Fairy-Stockfish's conventions on stdin/stdout (see `varzero_uci::protocol`).

use anyhow::Result;
use clap::Args;
use std::sync::{Arc, Mutex};
use varzero::run_config::{EngineArgs, VariantArg};
use varzero_uci::{Output, UciEngine};

#[derive(Args)]
pub struct UciArgs {
    /// The variant until `setoption name UCI_Variant` (`--variant-file`, `--set` apply too).
    #[command(flatten)]
    pub variant: VariantArg,
    // The evaluator plays until `setoption name Evaluator` names another.
    #[command(flatten)]
    pub engine: EngineArgs,
}

pub fn run(a: UciArgs) -> Result<()> {
    let v = a.variant.load()?;
    let (resolver, search) = a.engine.load(&v)?;
    let out: Output = Arc::new(Mutex::new(Box::new(std::io::stdout())));
    let mut engine = UciEngine::new(out, resolver, v, &a.engine.evaluator, search);
    engine.run(std::io::stdin().lock());
    Ok(())
}
