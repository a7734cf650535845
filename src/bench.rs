//! `varzero bench`: speed figures printed with medians (release builds only).

use anyhow::Result;
use clap::Subcommand;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;
use varzero_rules::{Position, Variant};
use varzero_selfplay::{Generator, MaterialEvaluator, SearchConfig, SelfplayConfig};

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
    /// Self-play speed with the material evaluator at 1 and 2 threads: playouts/s,
    /// positions/s, the share of time inside evaluator calls, and bytes per position on disk.
    Selfplay {
        #[arg(long, default_value = "makruk")]
        variant: String,
        /// Games per measurement.
        #[arg(long, default_value_t = 48)]
        games: u64,
        #[arg(long, default_value_t = 200)]
        playouts: u32,
        #[arg(long, default_value_t = 3)]
        runs: usize,
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
        BenchCmd::Selfplay {
            variant,
            games,
            playouts,
            runs,
        } => bench_selfplay(&variant, games, playouts, runs)?,
    }
    Ok(())
}

fn dir_bytes(dir: &std::path::Path, file: &str) -> u64 {
    let Ok((shards, _)) = varzero_datasets::list_shards(dir) else {
        return 0;
    };
    shards
        .iter()
        .filter_map(|s| std::fs::metadata(s.path.join(file)).ok())
        .map(|m| m.len())
        .sum()
}

fn bench_selfplay(variant: &str, games: u64, playouts: u32, runs: usize) -> Result<()> {
    let v = Variant::builtin(variant)?;
    println!("self-play {variant}, material evaluator, {playouts} playouts/move, {games} games per run, median of {runs}");
    println!(
        "{:>7} {:>12} {:>12} {:>14} {:>10} {:>10}",
        "threads", "playouts/s", "positions/s", "playouts/s/core", "eval time", "tree time"
    );
    let mut bytes = (0u64, 0u64, 0u64);
    for threads in [1usize, 2] {
        let mut rows = Vec::new();
        for r in 0..runs.max(1) {
            let dir = std::env::temp_dir().join(format!(
                "varzero-bench-{}-{threads}-{r}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            let search = SearchConfig {
                playouts,
                ..SearchConfig::default()
            };
            let run = SelfplayConfig {
                threads,
                games_per_worker: 16,
                seed: 1 + r as u64,
                ..SelfplayConfig::default()
            };
            let gen = Generator::new(v.clone(), Arc::new(MaterialEvaluator::new(&v)), search, run);
            let t = Instant::now();
            let summary = gen.run(&dir, games)?;
            let secs = t.elapsed().as_secs_f64();
            let st = &gen.stats;
            let eval = st.eval_nanos.load(Ordering::Relaxed) as f64;
            let worker = st.worker_nanos.load(Ordering::Relaxed) as f64;
            rows.push((
                st.playouts.load(Ordering::Relaxed) as f64 / secs,
                summary.positions as f64 / secs,
                eval / worker.max(1.0),
            ));
            if threads == 1 && r == 0 {
                bytes = (
                    dir_bytes(&dir, "positions.parquet"),
                    dir_bytes(&dir, "games.parquet"),
                    summary.positions,
                );
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
        let pl = median(rows.iter().map(|r| r.0).collect());
        let ps = median(rows.iter().map(|r| r.1).collect());
        let ev = median(rows.iter().map(|r| r.2).collect());
        println!(
            "{threads:>7} {pl:>12.0} {ps:>12.0} {:>14.0} {:>9.1}% {:>9.1}%",
            pl / threads as f64,
            100.0 * ev,
            100.0 * (1.0 - ev)
        );
    }
    let (pb, gb, n) = bytes;
    println!(
        "disk: {:.1} bytes/position in positions.parquet, {:.1} with the games table ({} positions)",
        pb as f64 / n.max(1) as f64,
        (pb + gb) as f64 / n.max(1) as f64,
        n
    );
    Ok(())
}
