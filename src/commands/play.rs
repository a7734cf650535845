//! `varzero play`: play a move list and print the position and the outcome.

use anyhow::{bail, Context, Result};
use clap::Args;
use varzero::run_config::VariantArg;

#[derive(Args)]
pub struct PlayArgs {
    #[command(flatten)]
    pub variant: VariantArg,
    #[arg(long)]
    pub fen: Option<String>,
    /// UCI moves, separated by spaces or commas.
    #[arg(long, num_args = 0.., value_delimiter = ',')]
    pub moves: Vec<String>,
}

pub fn run(a: PlayArgs) -> Result<()> {
    let PlayArgs {
        variant,
        fen,
        moves,
    } = a;
    let v = variant.load()?;
    let mut pos = varzero::run_config::position(&v, &fen)?;
    for (i, m) in moves.iter().flat_map(|s| s.split_whitespace()).enumerate() {
        if let Some(o) = pos.outcome() {
            bail!("move {} '{m}': the game is already over ({o})", i + 1);
        }
        pos.play_uci(m).with_context(|| format!("move {}", i + 1))?;
    }
    print!("{}", pos.diagram());
    println!("fen {}", pos.fen());
    println!("in-check {}", pos.in_check());
    let (ply, limit) = pos.counting();
    if limit != 0 {
        println!("counting {ply}/{limit} plies");
    }
    match pos.outcome() {
        Some(o) => println!("outcome {o}"),
        None => {
            let moves = pos.game_moves();
            let list: Vec<String> = moves.iter().map(|&m| pos.uci(m)).collect();
            println!("outcome none");
            println!("legal {} {}", list.len(), list.join(" "));
        }
    }
    Ok(())
}
