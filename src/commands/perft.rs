//! `varzero perft`: count legal move sequences (perft), the rules core's reference check.

use anyhow::{bail, Result};
use clap::Args;
use std::time::Instant;
use varzero::run_config::VariantArg;

#[derive(Args)]
pub struct PerftArgs {
    #[command(flatten)]
    pub variant: VariantArg,
    /// Start from this FEN instead of the variant's start position.
    #[arg(long)]
    pub fen: Option<String>,
    #[arg(long, short = 'd')]
    pub depth: u32,
    /// One `move: count` line per root move.
    #[arg(long)]
    pub divide: bool,
}

/// Deeper perft runs for days from any real position: refused rather than left to run.
const MAX_PERFT_DEPTH: u32 = 12;

pub fn run(a: PerftArgs) -> Result<()> {
    let PerftArgs {
        variant,
        fen,
        depth,
        divide,
    } = a;
    if depth > MAX_PERFT_DEPTH {
        bail!("--depth {depth}: at most {MAX_PERFT_DEPTH} (a start position's perft 9 already takes hours)");
    }
    let v = variant.load()?;
    let mut pos = varzero::run_config::position(&v, &fen)?;
    let t = Instant::now();
    // Deep counts go root move by root move, with a progress bar on stderr.
    let nodes = if divide || depth >= 6 {
        let moves = pos.legal_moves();
        let bar = indicatif::ProgressBar::new(moves.len() as u64);
        if divide || depth < 6 {
            bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:30} {pos}/{len} root moves  {msg}  {elapsed}",
            )
            .expect("a valid template"),
        );
        let mut total = 0;
        for &m in moves.iter() {
            pos.make(m);
            let n = if depth <= 1 { 1 } else { pos.perft(depth - 1) };
            pos.unmake();
            if divide {
                println!("{}: {n}", pos.uci(m));
            }
            total += n;
            bar.inc(1);
            bar.set_message(format!(
                "{total} nodes, {:.1} M nodes/s",
                total as f64 / t.elapsed().as_secs_f64().max(1e-9) / 1e6
            ));
        }
        bar.finish_and_clear();
        if depth == 0 {
            1
        } else {
            total
        }
    } else {
        pos.perft(depth)
    };
    let secs = t.elapsed().as_secs_f64();
    println!("nodes {nodes}");
    eprintln!(
        "time {:.3} s, {:.0} nodes/s",
        secs,
        nodes as f64 / secs.max(1e-9)
    );
    Ok(())
}
