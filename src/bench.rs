//! `varzero bench`: speed figures printed with medians (release builds only).

use anyhow::Result;
use clap::Subcommand;
use std::time::Instant;
use varzero_rules::{Position, Variant};

#[derive(Subcommand)]
pub enum BenchCmd {
    /// Perft nodes/s, single thread, bulk counting at the last ply.
    Perft {
        /// Repetitions per position; the median is reported.
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Only these variants (default: makruk depth 6 and xiangqi depth 5).
        #[arg(long)]
        quick: bool,
    },
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    xs[xs.len() / 2]
}

pub fn run(cmd: BenchCmd) -> Result<()> {
    match cmd {
        BenchCmd::Perft { runs, quick } => {
            let cases: &[(&str, u32, f64)] = if quick {
                &[("makruk", 5, 14.7e6), ("xiangqi", 4, 11.9e6)]
            } else {
                // Fairy-Stockfish references on this machine class (issue figures).
                &[
                    ("makruk", 6, 14.7e6),
                    ("xiangqi", 5, 11.9e6),
                    ("oxeli", 5, 0.0),
                    ("ouk-chatrang", 5, 0.0),
                ]
            };
            println!(
                "{:<14} {:>5} {:>12} {:>9} {:>12} {:>8}",
                "variant", "depth", "nodes", "median s", "nodes/s", "vs FSF"
            );
            for &(name, depth, fsf) in cases {
                let v = Variant::builtin(name)?;
                let mut times = Vec::new();
                let mut nodes = 0;
                for _ in 0..runs.max(1) {
                    let mut pos = Position::start(&v);
                    let t = Instant::now();
                    nodes = pos.perft(depth);
                    times.push(t.elapsed().as_secs_f64());
                }
                let s = median(times);
                let nps = nodes as f64 / s;
                let ratio = if fsf > 0.0 {
                    format!("{:.2}x", nps / fsf)
                } else {
                    "-".into()
                };
                println!("{name:<14} {depth:>5} {nodes:>12} {s:>9.3} {nps:>12.0} {ratio:>8}");
            }
        }
    }
    Ok(())
}
