//! `varzero`: one command line for the whole pipeline.

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use varzero_rules::{Position, Variant};

mod analyze_cmd;
mod bench;
mod match_cmd;
mod nets;
mod params;
mod pipeline;
mod probe;
mod selfplay_cmd;
mod study_cmd;
mod train_cmd;
mod uci_cmd;

#[derive(Parser)]
#[command(
    name = "varzero",
    version,
    about = "Self-play training and analysis for chess variants"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// Which variant: a shipped one by name, or a user's file.
#[derive(Args, Clone)]
pub struct VariantArg {
    /// A shipped variant (`varzero variant list`), or Fairy-Stockfish's name for it.
    #[arg(long, short = 'v', default_value = "makruk")]
    variant: String,
    /// A variant file (TOML); overrides --variant.
    #[arg(long)]
    variant_file: Option<PathBuf>,
    /// Rule overrides, e.g. `--set stalemate=loss` or `--set rules.face_off=none`.
    #[arg(long = "set")]
    sets: Vec<String>,
}

impl VariantArg {
    pub fn load(&self) -> Result<Arc<Variant>> {
        let v = match &self.variant_file {
            Some(p) => Variant::from_file(p)?,
            None => Variant::builtin(&self.variant)?,
        };
        Ok(if self.sets.is_empty() {
            v
        } else {
            v.with_overrides(&self.sets)?
        })
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Count legal move sequences (perft).
    Perft {
        #[command(flatten)]
        variant: VariantArg,
        /// Start from this FEN instead of the variant's start position.
        #[arg(long)]
        fen: Option<String>,
        #[arg(long, short = 'd')]
        depth: u32,
        /// One `move: count` line per root move.
        #[arg(long)]
        divide: bool,
    },
    /// Play a move list and print the position and the outcome.
    Play {
        #[command(flatten)]
        variant: VariantArg,
        #[arg(long)]
        fen: Option<String>,
        /// UCI moves, separated by spaces or commas.
        #[arg(long, num_args = 0.., value_delimiter = ',')]
        moves: Vec<String>,
    },
    /// Variant files: list, check, show.
    Variant {
        #[command(subcommand)]
        cmd: VariantCmd,
    },
    /// Self-play games into a dataset directory (Parquet shards); reruns resume.
    Selfplay(selfplay_cmd::SelfplayArgs),
    /// The closed loop: self-play -> train -> match, generation by generation (resumable).
    Pipeline(pipeline::PipelineArgs),
    /// Train a policy/value net on the newest positions of dataset directories.
    Train(train_cmd::TrainArgs),
    /// Play a match between two players (evaluator@playouts, random, uci:ENGINE).
    Match(match_cmd::MatchArgs),
    /// Our engine as a UCI engine (Fairy-Stockfish conventions) on stdin/stdout.
    Uci(uci_cmd::UciArgs),
    /// Analyse games tables: results, draw rates, lengths, fitted piece values.
    Analyze(analyze_cmd::AnalyzeArgs),
    /// A rule-change experiment: self-play under two rule sets, analysed side by side.
    Study(study_cmd::StudyArgs),
    /// Machine interface: one JSON request per line on stdin, one JSON answer per line.
    Probe,
    /// Benchmarks (release builds only).
    Bench {
        #[command(subcommand)]
        cmd: bench::BenchCmd,
    },
}

#[derive(Subcommand)]
enum VariantCmd {
    /// The shipped variants.
    List,
    /// Check variant files; reports every problem of every file.
    Check { files: Vec<PathBuf> },
    /// The effective (merged) definition of a variant as TOML.
    Show {
        #[command(flatten)]
        variant: VariantArg,
    },
}

/// Deeper perft runs for days from any real position: refused rather than left to run.
const MAX_PERFT_DEPTH: u32 = 12;

fn position(v: &Arc<Variant>, fen: &Option<String>) -> Result<Position> {
    match fen {
        Some(f) => Position::from_fen(v, f).with_context(|| format!("bad --fen '{f}'")),
        None => Ok(Position::start(v)),
    }
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(cli) {
        eprintln!("error: {}", one_line(&e));
        std::process::exit(1);
    }
}

/// The error and its causes on one line, leaving out a cause the message above already ends
/// with (our error types print their source themselves: "path: No such file ...").
pub fn one_line(e: &anyhow::Error) -> String {
    let mut msg = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !msg.ends_with(&c) {
            msg = format!("{msg}: {c}");
        }
    }
    msg
}

/// A TOML file parsed into `T`; an error names the file and line (`FILE:LINE: message`).
pub fn parse_toml<T: serde::de::DeserializeOwned>(path: &std::path::Path, text: &str) -> Result<T> {
    toml::from_str(text).map_err(|e| {
        let at = varzero_rules::toml_location(&path.display().to_string(), text, &e);
        anyhow::anyhow!("{at}: {}", e.message())
    })
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Perft {
            variant,
            fen,
            depth,
            divide,
        } => {
            if depth > MAX_PERFT_DEPTH {
                bail!("--depth {depth}: at most {MAX_PERFT_DEPTH} (a start position's perft 9 already takes hours)");
            }
            let v = variant.load()?;
            let mut pos = position(&v, &fen)?;
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
        }
        Cmd::Play {
            variant,
            fen,
            moves,
        } => {
            let v = variant.load()?;
            let mut pos = position(&v, &fen)?;
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
        }
        Cmd::Variant { cmd } => match cmd {
            VariantCmd::List => {
                for name in Variant::builtin_names() {
                    let v = Variant::builtin(name)?;
                    println!(
                        "{:<16} {}x{}  {}",
                        name, v.size.files, v.size.ranks, v.description
                    );
                }
            }
            VariantCmd::Check { files } => {
                if files.is_empty() {
                    bail!("no files given");
                }
                let mut bad = 0;
                for f in &files {
                    match Variant::from_file(f) {
                        Ok(v) => println!(
                            "{}: ok ({}, {} pieces, rules hash {:016x})",
                            f.display(),
                            v.name,
                            v.pieces.len(),
                            v.rules_hash
                        ),
                        Err(e) => {
                            bad += 1;
                            for line in e.lines() {
                                println!("{line}");
                            }
                        }
                    }
                }
                if bad > 0 {
                    bail!("{bad} of {} variant files have problems", files.len());
                }
            }
            VariantCmd::Show { variant } => {
                let v = variant.load()?;
                print!("{}", toml::to_string(&v.config)?);
            }
        },
        Cmd::Bench { cmd } => bench::run(cmd)?,
        Cmd::Probe => probe::run()?,
        Cmd::Selfplay(a) => selfplay_cmd::run(a)?,
        Cmd::Train(a) => train_cmd::run(a)?,
        Cmd::Pipeline(a) => pipeline::run(a)?,
        Cmd::Match(a) => match_cmd::run(a)?,
        Cmd::Uci(a) => uci_cmd::run(a)?,
        Cmd::Analyze(a) => analyze_cmd::run(a)?,
        Cmd::Study(a) => study_cmd::run(a)?,
    }
    Ok(())
}
