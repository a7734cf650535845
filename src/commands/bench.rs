//! `varzero bench`: speed figures printed with medians (release builds only).

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;
use varzero_rules::{Position, Variant};
use varzero_search::{MaterialEvaluator, SearchConfig};
use varzero_selfplay::{Generator, SelfplayConfig};

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
        /// A Fairy-Stockfish binary to time in the same run (default: $VARZERO_FSF, else
        /// $VARZERO_CACHE/fsf/fairy-stockfish as built by scripts/setup-fsf). Without one, the
        /// ratio is to the issues' reference figures for this machine class.
        #[arg(long)]
        fsf: Option<std::path::PathBuf>,
    },
    /// How fast the UCI engine answers `stop` during `go infinite`: the time from `stop` to
    /// `bestmove`, median, 90th percentile and worst over many stops, per evaluator.
    Stop {
        #[arg(long, default_value = "xiangqi")]
        variant: String,
        /// Evaluators to time (`net:FILE` too).
        #[arg(long, value_delimiter = ',', default_value = "material,uniform")]
        evaluators: Vec<String>,
        /// Stops per evaluator.
        #[arg(long, default_value_t = 30)]
        stops: usize,
        /// Milliseconds each search runs before its `stop`.
        #[arg(long, default_value_t = 200)]
        think_ms: u64,
        #[arg(long, default_value = "cpu")]
        device: String,
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
    /// The default network on this machine: raw batched inference (tch forward, no_grad) at
    /// batch 1/8/32/128, what the self-play evaluator achieves at the same batch sizes, and
    /// trainer samples/s against a raw forward+backward+update loop.
    Net {
        #[arg(long, default_value = "makruk")]
        variant: String,
        /// `cpu` or `cuda[:N]`.
        #[arg(long, default_value = "cpu")]
        device: String,
        /// Seconds per self-play measurement.
        #[arg(long, default_value_t = 8.0)]
        seconds: f64,
        /// Training steps per measurement (batch 256).
        #[arg(long, default_value_t = 12)]
        steps: u64,
        /// libtorch intra-op threads (default: libtorch's choice).
        #[arg(long)]
        torch_threads: Option<i32>,
        /// Residual blocks of the net (default: the trainer's default architecture; the CPU
        /// runs train 4).
        #[arg(long)]
        blocks: Option<usize>,
        /// Channels of each block (default: the trainer's; the CPU runs train 40).
        #[arg(long)]
        channels: Option<usize>,
        /// The attack planes as inputs (`[train.arch] attacks`), so that their encoding's
        /// cost shows against the same net without them.
        #[arg(long)]
        attacks: bool,
        /// The opponent-policy head (`[train.arch] opponent_policy`): its cost shows in the
        /// training step's samples/s (inference never computes it).
        #[arg(long)]
        opponent_policy: bool,
    },
    /// Search threads on one tree with a net (UCI's `Threads`): playouts/s at 1, 2 and N
    /// threads (N: the cores), median of --runs, each run a fresh search of each position.
    Threads {
        #[arg(long, default_value = "xiangqi")]
        variant: String,
        /// The evaluator (`net:FILE`, `net:shipped`, `material`); default a fresh 4 x 40 net
        /// (an untrained net costs what a trained one does).
        #[arg(long)]
        evaluator: Option<String>,
        /// Playouts of each search.
        #[arg(long, default_value_t = 2000)]
        playouts: u64,
        /// Positions searched per run (random openings of 4 plies).
        #[arg(long, default_value_t = 4)]
        positions: usize,
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Weights of the tactical blend, as the CPU configs search (0.5 and 0.5).
        #[arg(long, default_value_t = 0.5)]
        tactics: f32,
        #[arg(long, default_value_t = 0.5)]
        tactics_priors: f32,
    },
    /// A trained net's outputs on another device against the CPU, on positions from random
    /// games: the largest difference of the policy logits and of the values (scripts/gpu-check
    /// checks a GPU-trained net this way). Fails above --tolerance.
    Agree {
        /// The net (`.safetensors`, its JSON sidecar beside it).
        net: PathBuf,
        #[arg(long, default_value = "makruk")]
        variant: String,
        /// The device to compare with the CPU.
        #[arg(long, default_value = "cuda")]
        device: String,
        #[arg(long, default_value_t = 256)]
        positions: usize,
        #[arg(long, default_value_t = 1e-4)]
        tolerance: f64,
        /// Convolutions without cuDNN, whose TF32 kernels (libtorch's default on Ampere and
        /// later) round to a 10-bit mantissa: the strict f32 comparison.
        #[arg(long)]
        no_cudnn: bool,
    },
}

fn median(xs: Vec<f64>) -> f64 {
    varzero_stats::median(xs).expect("a benchmark measures at least once")
}

pub fn run(cmd: BenchCmd) -> Result<()> {
    match cmd {
        BenchCmd::Perft { runs, quick, fsf } => bench_perft(runs, quick, fsf)?,
        BenchCmd::Stop {
            variant,
            evaluators,
            stops,
            think_ms,
            device,
        } => bench_stop(&variant, &evaluators, stops, think_ms, &device)?,
        BenchCmd::Selfplay {
            variant,
            games,
            playouts,
            runs,
        } => bench_selfplay(&variant, games, playouts, runs)?,
        BenchCmd::Net {
            variant,
            device,
            seconds,
            steps,
            torch_threads,
            blocks,
            channels,
            attacks,
            opponent_policy,
        } => bench_net(&variant, &device, seconds, steps, torch_threads, {
            // The first training step is a warm-up and left out of the median.
            if steps < 2 || channels == Some(0) {
                bail!("bench net: --steps must be at least 2 and --channels at least 1");
            }
            let d = varzero_eval_net::Arch::default();
            varzero_eval_net::Arch {
                blocks: blocks.unwrap_or(d.blocks),
                channels: channels.unwrap_or(d.channels),
                attacks,
                opponent_policy,
            }
        })?,
        BenchCmd::Agree {
            net,
            variant,
            device,
            positions,
            tolerance,
            no_cudnn,
        } => {
            if no_cudnn {
                varzero_eval_net::tch::Cuda::set_user_enabled_cudnn(false);
            }
            bench_agree(&net, &variant, &device, positions, tolerance)?
        }
        BenchCmd::Threads {
            variant,
            evaluator,
            playouts,
            positions,
            runs,
            tactics,
            tactics_priors,
        } => bench_threads(
            &variant,
            evaluator.as_deref(),
            playouts,
            positions,
            runs,
            (tactics, tactics_priors),
        )?,
    }
    Ok(())
}

fn bench_agree(
    path: &std::path::Path,
    variant: &str,
    device: &str,
    positions: usize,
    tolerance: f64,
) -> Result<()> {
    use varzero_eval_net::tch::{Device, Kind, Tensor};
    let v = Variant::builtin(variant)?;
    let dev = varzero_eval_net::parse_device(device).map_err(anyhow::Error::msg)?;
    let cpu = varzero_eval_net::Net::load(path, &v, Device::Cpu)?;
    let other = varzero_eval_net::Net::load(path, &v, dev)?;
    let enc = cpu.enc.clone();
    // Positions along random games: openings, middlegames, endings.
    let mut rng = varzero_stats::Rng::new(7);
    let mut planes = vec![0f32; positions * enc.input_len()];
    let mut pos = Position::start(&v);
    for i in 0..positions {
        let (o, moves) = pos.outcome_and_moves();
        if o.is_some() || moves.is_empty() {
            pos = Position::start(&v);
        } else {
            pos.make(moves.as_slice()[rng.below(moves.len())]);
        }
        enc.encode(
            &pos,
            &mut planes[i * enc.input_len()..(i + 1) * enc.input_len()],
        );
    }
    let x = Tensor::from_slice(&planes).view([
        positions as i64,
        enc.planes as i64,
        enc.ranks as i64,
        enc.files as i64,
    ]);
    let (p0, v0) = cpu.infer(&x);
    let (p1, v1) = other.infer(&x.to_device(dev));
    let diff = |a: &Tensor, b: &Tensor| -> f64 {
        (a - b.to_device(Device::Cpu))
            .abs()
            .max()
            .to_kind(Kind::Double)
            .double_value(&[])
    };
    let (dp, dv) = (diff(&p0, &p1), diff(&v0, &v1));
    println!(
        "agree {}: {positions} positions of {variant}, cpu vs {device}: max |policy logit diff| {dp:.2e}, max |value diff| {dv:.2e} (tolerance {tolerance:.0e})",
        path.display()
    );
    if dp > tolerance || dv > tolerance {
        anyhow::bail!("the outputs differ by more than {tolerance:.0e}");
    }
    Ok(())
}

/// Where `bench perft` looks for Fairy-Stockfish when `--fsf` is not given.
fn default_fsf() -> Option<PathBuf> {
    varzero_arena::uci_client::fairy_stockfish_path()
}

/// A Fairy-Stockfish process kept open across runs, so its start-up and table set-up are not
/// timed: only `go perft N` until it prints the node count.
struct Fsf {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Fsf {
    fn start(path: &Path) -> Result<Fsf> {
        let mut child = Command::new(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("{}: cannot start Fairy-Stockfish", path.display()))?;
        let stdin = child.stdin.take().context("Fairy-Stockfish stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("Fairy-Stockfish stdout")?);
        let mut fsf = Fsf {
            child,
            stdin,
            stdout,
        };
        fsf.send("uci")?;
        fsf.wait_for(|l| l == "uciok")?;
        Ok(fsf)
    }

    fn send(&mut self, line: &str) -> Result<()> {
        writeln!(self.stdin, "{line}")?;
        self.stdin.flush()?;
        Ok(())
    }

    fn wait_for(&mut self, done: impl Fn(&str) -> bool) -> Result<String> {
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line)? == 0 {
                bail!("Fairy-Stockfish exited unexpectedly");
            }
            if done(line.trim()) {
                return Ok(line.trim().to_string());
            }
        }
    }

    /// Perft from the start position: (nodes, seconds).
    fn perft(&mut self, variant: &str, depth: u32) -> Result<(u64, f64)> {
        self.send(&format!("setoption name UCI_Variant value {variant}"))?;
        self.send("position startpos")?;
        self.send("isready")?;
        self.wait_for(|l| l == "readyok")?;
        let t = Instant::now();
        self.send(&format!("go perft {depth}"))?;
        let line = self.wait_for(|l| l.starts_with("Nodes searched"))?;
        let secs = t.elapsed().as_secs_f64();
        let nodes = line
            .rsplit(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .with_context(|| format!("Fairy-Stockfish perft: unexpected line {line:?}"))?;
        Ok((nodes, secs))
    }
}

impl Drop for Fsf {
    fn drop(&mut self) {
        let _ = self.send("quit");
        let _ = self.child.wait();
    }
}

fn bench_perft(runs: usize, quick: bool, fsf: Option<PathBuf>) -> Result<()> {
    // (ours, depth, Fairy-Stockfish's name, its reference nodes/s on this machine class from
    // the issues: Makruk 14.7 M, Xiangqi 11.9 M).
    let cases: &[(&str, u32, Option<&str>, f64)] = if quick {
        &[
            ("makruk", 5, Some("makruk"), 14.7e6),
            ("xiangqi", 4, Some("xiangqi"), 11.9e6),
        ]
    } else {
        &[
            ("makruk", 6, Some("makruk"), 14.7e6),
            ("xiangqi", 5, Some("xiangqi"), 11.9e6),
            ("ouk-chatrang", 5, Some("cambodian"), 0.0),
            // Fairy-Stockfish cannot express Oxeli's diagonal face-off: no comparison.
            ("oxeli", 5, None, 0.0),
        ]
    };
    let fsf_path = fsf.or_else(default_fsf);
    let mut engine = match &fsf_path {
        Some(p) => Some(Fsf::start(p)?),
        None => None,
    };
    match &fsf_path {
        Some(p) => println!(
            "perft from the start, single thread, median of {runs}; Fairy-Stockfish {} timed in the same run, runs interleaved",
            p.display()
        ),
        None => println!(
            "perft from the start, single thread, median of {runs}; no Fairy-Stockfish binary (scripts/setup-fsf builds one): ratios are to the issues' reference figures"
        ),
    }
    println!(
        "{:<14} {:>5} {:>12} {:>9} {:>12} {:>19} {:>8}",
        "variant", "depth", "nodes", "median s", "nodes/s", "FSF nodes/s", "vs FSF"
    );
    for &(name, depth, fsf_name, reference) in cases {
        let v = Variant::builtin(name)?;
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        let mut nodes = 0;
        for _ in 0..runs.max(1) {
            let mut pos = Position::start(&v);
            let t = Instant::now();
            nodes = pos.perft(depth);
            ours.push(t.elapsed().as_secs_f64());
            if let (Some(e), Some(fname)) = (engine.as_mut(), fsf_name) {
                let (n, s) = e.perft(fname, depth)?;
                if n != nodes {
                    bail!(
                        "{name} perft {depth}: Fairy-Stockfish counts {n} nodes, we count {nodes}"
                    );
                }
                theirs.push(s);
            }
        }
        let s = median(ours);
        let nps = nodes as f64 / s;
        let measured = !theirs.is_empty();
        let fsf_nps = if measured {
            nodes as f64 / median(theirs)
        } else {
            reference
        };
        let (fsf_col, ratio) = if fsf_nps > 0.0 {
            let mark = if measured { "" } else { " (ref)" };
            (
                format!("{fsf_nps:.0}{mark}"),
                format!("{:.2}x", nps / fsf_nps),
            )
        } else {
            ("-".into(), "-".into())
        };
        println!("{name:<14} {depth:>5} {nodes:>12} {s:>9.3} {nps:>12.0} {fsf_col:>19} {ratio:>8}");
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

/// Median seconds of `f` over `reps` runs after one warm-up run.
fn time_median(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    median(
        (0..reps.max(1))
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

/// Raw inference positions/s of `forward` at batch `b` of `net`'s input shape: one forward on
/// a random input, outputs copied back to the host (as the evaluator must).
fn raw_forward(
    net: &varzero_eval_net::Net,
    b: usize,
    device: varzero_eval_net::tch::Device,
    forward: impl Fn(
        &varzero_eval_net::tch::Tensor,
    ) -> (varzero_eval_net::tch::Tensor, varzero_eval_net::tch::Tensor),
) -> f64 {
    use varzero_eval_net::tch::{Kind, Tensor};
    let e = &net.enc;
    let x = Tensor::randn(
        [b as i64, e.planes as i64, e.ranks as i64, e.files as i64],
        (Kind::Float, device),
    );
    // Enough repetitions for about a second of work at the reference speeds.
    let reps = (2000 / b).clamp(5, 200);
    let s = time_median(reps, || {
        let (p, v) = forward(&x);
        let _ = p.to_device(varzero_eval_net::tch::Device::Cpu);
        let _ = v.to_device(varzero_eval_net::tch::Device::Cpu);
    });
    b as f64 / s
}

/// One row of the self-play table: a worker of `games` games gathering `leaves` leaves each
/// for `seconds`, 100 playouts a move.
fn selfplay_row(
    v: &Arc<Variant>,
    ev: Arc<varzero_eval_net::NetEvaluator>,
    games: usize,
    leaves: u32,
    seconds: f64,
) -> Result<()> {
    let dir =
        std::env::temp_dir().join(format!("varzero-bench-net-{}-{games}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let search = SearchConfig {
        playouts: 100,
        leaves_per_game: leaves,
        ..SearchConfig::default()
    };
    let run = SelfplayConfig {
        threads: 1,
        games_per_worker: games,
        seed: 1,
        ..SelfplayConfig::default()
    };
    let gen = Generator::new(v.clone(), ev.clone(), search, run);
    let stop = gen.stop.clone();
    let timer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
    });
    let t = Instant::now();
    gen.run(&dir, 1_000_000)?;
    let wall = t.elapsed().as_secs_f64();
    let _ = timer.join();
    let _ = std::fs::remove_dir_all(&dir);
    let st = &gen.stats;
    let evals = st.evals.load(Ordering::Relaxed) as f64;
    let batches = st.eval_batches.load(Ordering::Relaxed).max(1) as f64;
    let eval_s = st.eval_nanos.load(Ordering::Relaxed) as f64 * 1e-9;
    let worker_s = st.worker_nanos.load(Ordering::Relaxed) as f64 * 1e-9;
    let share = eval_s / worker_s.max(1e-9);
    let hit = ev
        .cache_hit_rate()
        .map_or("-".to_string(), |h| format!("{:.1}%", 100.0 * h));
    println!(
        "{:>6} {:>10.1} {:>16.0} {:>10.1}% {:>9.1}% {:>10.0} {hit:>9}",
        games * leaves as usize,
        evals / batches,
        evals / eval_s.max(1e-9),
        100.0 * share,
        100.0 * (1.0 - share),
        evals / wall
    );
    Ok(())
}

fn bench_net(
    variant: &str,
    device: &str,
    seconds: f64,
    steps: u64,
    torch_threads: Option<i32>,
    arch: varzero_eval_net::Arch,
) -> Result<()> {
    use varzero_eval_net::{Net, NetEvaluator};
    let v = Variant::builtin(variant)?;
    let dev = varzero_eval_net::parse_device(device).map_err(anyhow::Error::msg)?;
    if let Some(t) = torch_threads {
        varzero_eval_net::tch::set_num_threads(t);
    }
    let net = Net::new(&v, arch, dev);
    println!(
        "net {}x{} ({} parameters, {} input planes, policy {}), {variant}, device {device}, {} libtorch threads",
        arch.blocks,
        arch.channels,
        net.parameters(),
        net.enc.planes,
        net.enc.policy_len(),
        varzero_eval_net::tch::get_num_threads()
    );

    println!(
        "\ninference, median positions/s (this CPU computes in bf16 natively: {}; auto picks {})",
        if varzero_eval_net::infer::cpu_has_bf16() {
            "yes"
        } else {
            "no"
        },
        varzero_eval_net::Precision::auto(dev).name()
    );
    println!(
        "{:>6} {:>12} {:>12} {:>12} {:>10} {:>10}",
        "batch", "raw forward", "folded f32", "folded bf16", "f32 ratio", "bf16 ratio"
    );
    let folded32 = varzero_eval_net::Folded::new(&net.model, varzero_eval_net::Precision::F32);
    let folded16 = varzero_eval_net::Folded::new(&net.model, varzero_eval_net::Precision::Bf16);
    for b in [1usize, 8, 32, 128] {
        let r = raw_forward(&net, b, dev, |x| net.infer(x));
        let f = raw_forward(&net, b, dev, |x| folded32.forward(x));
        let h = raw_forward(&net, b, dev, |x| folded16.forward(x));
        println!(
            "{b:>6} {r:>12.0} {f:>12.0} {h:>12.0} {:>9.2}x {:>9.2}x",
            f / r,
            h / r
        );
    }

    // The evaluator against the raw forward on the same batch of real positions, the calls
    // interleaved so that both see the same machine.
    println!("\nevaluator vs raw forward on the same positions (interleaved), median positions/s");
    println!("(evaluate() runs batches under 32 on one libtorch thread; the raw forward here then does too)");
    println!(
        "{:>6} {:>12} {:>12} {:>8}",
        "batch", "raw forward", "evaluate()", "ratio"
    );
    let opts = varzero_eval_net::InferenceOptions::default_for(dev);
    let uncached = varzero_eval_net::InferenceOptions {
        cache_entries: 0,
        ..opts
    };
    let ev = NetEvaluator::with_options(net.clone_net(), "net:bench".into(), uncached);
    println!(
        "(evaluate(): {} inference, no cache, against the raw f32 forward)",
        opts.precision.name()
    );
    let positions = sample_positions(&v, 128, 7);
    for b in [1usize, 8, 32, 128] {
        let mut batch = varzero_search::Batch::default();
        for p in &positions[..b] {
            batch.push(&*ev, p, p.legal_moves().as_slice());
        }
        let e = &net.enc;
        let x = varzero_eval_net::tch::Tensor::from_slice(&batch.inputs)
            .view([b as i64, e.planes as i64, e.ranks as i64, e.files as i64])
            .to_device(dev);
        let mut out = varzero_search::Evaluation::default();
        let reps = (3000 / b).clamp(10, 300);
        let (mut raw, mut evs) = (Vec::new(), Vec::new());
        for i in 0..=reps {
            let t = Instant::now();
            let (p, v) = net.infer(&x);
            let _ = (
                p.to_device(varzero_eval_net::tch::Device::Cpu),
                v.to_device(varzero_eval_net::tch::Device::Cpu),
            );
            let r = t.elapsed().as_secs_f64();
            let t = Instant::now();
            varzero_search::Evaluator::evaluate(&*ev, &batch, &mut out);
            let q = t.elapsed().as_secs_f64();
            if i > 0 {
                raw.push(r);
                evs.push(q);
            }
        }
        let (r, q) = (b as f64 / median(raw), b as f64 / median(evs));
        println!("{b:>6} {r:>12.0} {q:>12.0} {:>7.0}%", 100.0 * q / r);
    }

    // Self-play with the net evaluator: one worker gathering `games x leaves` leaves per call.
    println!(
        "\nself-play with the net evaluator ({seconds:.0} s per row, 1 worker thread, {}, cache {})",
        opts.precision.name(),
        opts.cache_entries
    );
    println!(
        "{:>6} {:>10} {:>16} {:>11} {:>10} {:>10} {:>9}",
        "target",
        "mean batch",
        "evaluate() pos/s",
        "eval share",
        "tree share",
        "pos/s wall",
        "cache hit"
    );
    for (games, leaves) in [(1usize, 1u32), (2, 4), (8, 4), (32, 4)] {
        let ev = NetEvaluator::with_options(net.clone_net(), "net:bench".into(), opts);
        selfplay_row(&v, ev, games, leaves, seconds)?;
    }
    // Each inference option alone, at the self-play default's batch target (32 games x 8).
    println!("\ninference options in self-play (games 32 x leaves 8, 1 worker thread, {seconds:.0} s per row)");
    println!(
        "{:>6} {:>10} {:>16} {:>11} {:>10} {:>10} {:>9}",
        "", "mean batch", "evaluate() pos/s", "eval share", "tree share", "pos/s wall", "cache hit"
    );
    for (name, o) in [
        ("f32", (varzero_eval_net::Precision::F32, 0)),
        ("bf16", (varzero_eval_net::Precision::Bf16, 0)),
        (
            "f32+c",
            (
                varzero_eval_net::Precision::F32,
                opts.cache_entries.max(1 << 18),
            ),
        ),
        (
            "bf16+c",
            (
                varzero_eval_net::Precision::Bf16,
                opts.cache_entries.max(1 << 18),
            ),
        ),
    ] {
        print!("{name:>6}");
        let o = varzero_eval_net::InferenceOptions {
            precision: o.0,
            cache_entries: o.1,
        };
        let ev = NetEvaluator::with_options(net.clone_net(), "net:bench".into(), o);
        selfplay_row(&v, ev, 32, 8, seconds)?;
    }

    // Training: the trainer on real self-play data against the same step on a fixed batch.
    println!("\ntraining, batch 256, {steps} steps, median samples/s per step");
    let data = std::env::temp_dir().join(format!("varzero-bench-train-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let gen = Generator::new(
        v.clone(),
        Arc::new(MaterialEvaluator::new(&v)),
        SearchConfig {
            playouts: 64,
            ..SearchConfig::default()
        },
        SelfplayConfig {
            games_per_worker: 16,
            ..SelfplayConfig::default()
        },
    );
    gen.run(&data.join("selfplay"), 32)?;
    let cfg = varzero_trainer::TrainConfig {
        steps,
        checkpoint_every: steps + 1,
        ..Default::default()
    };
    let mut per_step = Vec::new();
    varzero_trainer::train(
        &v,
        &[data.join("selfplay")],
        &data.join("out"),
        None,
        &cfg,
        dev,
        &mut |l| per_step.push(l.samples_per_s),
    )?;
    let _ = std::fs::remove_dir_all(&data);
    per_step.remove(0); // the first step warms libtorch up
    let trainer = median(per_step);
    let raw = varzero_trainer::raw_loop_samples_per_s(&v, &cfg, dev, steps as usize);
    println!("{:>14} {:>14} {:>9}", "trainer", "raw loop", "ratio");
    println!(
        "{trainer:>14.0} {raw:>14.0} {:>8.0}%",
        100.0 * trainer / raw
    );
    Ok(())
}

/// `n` positions from random games (a few random plies each, a new game every 24 plies), so a
/// batch holds varied, real positions.
fn sample_positions(v: &Arc<Variant>, n: usize, seed: u64) -> Vec<Position> {
    let mut rng = varzero_stats::Rng::new(seed);
    let mut out = Vec::with_capacity(n);
    let mut pos = Position::start(v);
    while out.len() < n {
        let moves = pos.legal_moves();
        if moves.is_empty() || pos.history_len() >= 24 {
            pos = Position::start(v);
            continue;
        }
        pos.make(moves.as_slice()[rng.below(moves.len())]);
        out.push(pos.clone());
    }
    out
}

/// Records when the engine wrote `bestmove`.
#[derive(Clone, Default)]
struct Stamped(std::sync::Arc<std::sync::Mutex<Option<std::time::Instant>>>);

impl std::io::Write for Stamped {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if b.windows(8).any(|w| w == b"bestmove") {
            *self.0.lock().unwrap() = Some(std::time::Instant::now());
        }
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn bench_threads(
    variant: &str,
    evaluator: Option<&str>,
    playouts: u64,
    positions: usize,
    runs: usize,
    (tactics, tactics_priors): (f32, f32),
) -> Result<()> {
    use std::sync::Arc;
    let v = varzero_rules::Variant::builtin(variant)?;
    // A new evaluator for each thread count: its evaluation cache would otherwise answer the
    // next count's searches of the same positions.
    let make = || -> Result<Arc<dyn varzero_search::Evaluator>> {
        Ok(match evaluator {
            Some(name) => varzero::nets::evaluators("cpu")
                .resolve(name, &v)
                .map_err(anyhow::Error::msg)?
                .with_context(|| format!("unknown evaluator '{name}'"))?,
            None => {
                varzero_eval_net::tch::manual_seed(1);
                varzero_eval_net::NetEvaluator::new(
                    varzero_eval_net::Net::new(
                        &v,
                        varzero_eval_net::Arch {
                            blocks: 4,
                            channels: 40,
                            attacks: false,
                            opponent_policy: false,
                        },
                        varzero_eval_net::tch::Device::Cpu,
                    ),
                    "net:fresh-4x40".into(),
                )
            }
        })
    };
    let ev = make()?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut counts = vec![1usize, 2];
    if cores > 2 {
        counts.push(cores);
    }
    let openings =
        varzero_arena::random_openings(&v, positions.max(1), 4, 1).map_err(anyhow::Error::msg)?;
    println!(
        "search threads on one tree, {variant}, {}, {playouts} playouts from {} openings, \
         tactics {tactics} / {tactics_priors}, median of {runs} runs ({cores} cores)",
        ev.id(),
        openings.len()
    );
    println!("{:>8} {:>12} {:>8}", "threads", "playouts/s", "ratio");
    let mut base = 0.0;
    for &threads in &counts {
        let cfg = varzero_search::SearchConfig {
            threads: threads as u32,
            leaves_per_game: 8,
            tactics,
            tactics_priors,
            ..varzero_search::SearchConfig::default()
        };
        let mut rates = Vec::new();
        // One search unmeasured first (libtorch's first forwards), then the runs, each with a
        // fresh evaluator and its empty cache.
        for run in 0..=runs.max(1) {
            let blended = varzero_search::TacticalBlend::for_search(make()?, &v, &cfg);
            let (mut n, t) = (0u64, std::time::Instant::now());
            for fen in &openings {
                let pos = varzero_rules::Position::from_fen(&v, fen)?;
                let mut s = varzero_search::Searcher::new(blended.clone(), cfg.clone());
                let info = s.search(
                    &pos,
                    &varzero_search::Limits {
                        playouts: Some(playouts),
                        ..Default::default()
                    },
                    &std::sync::atomic::AtomicBool::new(false),
                    &mut |_| {},
                );
                n += info.playouts;
                if run == 0 {
                    break;
                }
            }
            if run > 0 {
                rates.push(n as f64 / t.elapsed().as_secs_f64());
            }
        }
        let r = median(rates);
        if threads == 1 {
            base = r;
        }
        println!("{threads:>8} {r:>12.0} {:>7.2}x", r / base.max(1e-9));
    }
    Ok(())
}

fn bench_stop(
    variant: &str,
    evaluators: &[String],
    stops: usize,
    think_ms: u64,
    device: &str,
) -> Result<()> {
    use std::time::{Duration, Instant};
    let v = varzero_rules::Variant::builtin(variant)?;
    let stops = stops.max(1);
    println!(
        "stop during go infinite, {variant} from the start, {stops} stops after {think_ms} ms each"
    );
    let w = evaluators.iter().map(|e| e.len()).max().unwrap_or(9).max(9);
    println!(
        "{:<w$} {:>10} {:>10} {:>10}",
        "evaluator", "median ms", "p90 ms", "max ms"
    );
    for ev in evaluators {
        let stamp = Stamped::default();
        let out: varzero_uci::Output =
            std::sync::Arc::new(std::sync::Mutex::new(Box::new(stamp.clone())));
        let mut engine = varzero_uci::UciEngine::new(
            out,
            varzero::nets::evaluators(device),
            v.clone(),
            ev,
            varzero_search::SearchConfig::default(),
        );
        let mut ms = Vec::with_capacity(stops);
        for i in 0..stops {
            // Another position each time, so that no search reuses the last one's tree.
            engine.command(if i % 2 == 0 {
                "position startpos"
            } else {
                "ucinewgame"
            });
            *stamp.0.lock().unwrap() = None;
            engine.command("go infinite");
            std::thread::sleep(Duration::from_millis(think_ms));
            let t0 = Instant::now();
            engine.command("stop");
            let t1 = stamp
                .0
                .lock()
                .unwrap()
                .with_context(|| format!("{ev}: no bestmove after stop"))?;
            ms.push(t1.saturating_duration_since(t0).as_secs_f64() * 1000.0);
        }
        ms.sort_by(f64::total_cmp);
        let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
        println!(
            "{:<w$} {:>10.2} {:>10.2} {:>10.2}",
            ev,
            at(0.5),
            at(0.9),
            ms[ms.len() - 1]
        );
    }
    Ok(())
}
