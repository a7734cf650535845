//! `varzero`: one command line for the whole pipeline. This file parses the command line and
//! dispatches; each verb is a file of `src/commands/`, and what verbs share (configs, nets,
//! progress, the pipeline's stages) is the `varzero` library (`src/lib.rs`).
#![forbid(unsafe_code)]

use clap::{Parser, Subcommand};

mod commands;
use commands::*;

#[derive(Parser)]
#[command(
    name = "varzero",
    version,
    about = "Self-play training and analysis for chess variants"
)]
struct Cli {
    /// Arithmetic of net inference: auto (bf16 where the CPU computes in it natively, f32
    /// elsewhere), f32 or bf16. Also $VARZERO_PRECISION. Training is always f32.
    #[arg(long, global = true, value_name = "auto|f32|bf16")]
    precision: Option<String>,
    /// Slots of each net's evaluation cache (0: none; default 262144). Also $VARZERO_EVAL_CACHE.
    #[arg(long, global = true, value_name = "SLOTS")]
    eval_cache: Option<String>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Count legal move sequences (perft).
    Perft(perft::PerftArgs),
    /// Play a move list and print the position and the outcome.
    Play(play::PlayArgs),
    /// Variant files: list, check, show.
    Variant {
        #[command(subcommand)]
        cmd: variant::VariantCmd,
    },
    /// Self-play games into a dataset directory (Parquet shards); reruns resume.
    Selfplay(selfplay::SelfplayArgs),
    /// The closed loop: self-play -> train -> match, generation by generation (resumable).
    Pipeline(pipeline::PipelineArgs),
    /// Train a policy/value net on the newest positions of dataset directories.
    Train(train::TrainArgs),
    /// Play a match between two players (evaluator@playouts, random, uci:ENGINE).
    Match(r#match::MatchArgs),
    /// Rate players on the variant's ladder (Fairy-Stockfish's node ladder or our own rungs).
    Ladder(ladder::LadderArgs),
    /// Our engine as a UCI engine (Fairy-Stockfish conventions) on stdin/stdout.
    Uci(uci::UciArgs),
    /// Analyse one position: a search, and a table of its best moves (visits, Q, W/D/L, line).
    Analyse(analyse::AnalyseArgs),
    /// Analyse games tables: results, draw rates, lengths, fitted piece values.
    Analyze(analyze::AnalyzeArgs),
    /// List the games of dataset directories, one per line (id, result, ending, players, moves).
    Games(games::GamesArgs),
    /// Merge a dataset directory's shards into few; drop games an older version wrote twice.
    Compact(compact::CompactArgs),
    /// A rule-change experiment: any players under several rule sets, analysed side by side.
    Study(study::StudyArgs),
    /// A run, study or dataset directory as one self-contained HTML page (DIR/report.html).
    Report(report::ReportArgs),
    /// Keep one copy of each game in dataset or run directories (written twice by old versions).
    Repair(repair::RepairArgs),
    /// Machine interface: one JSON request per line on stdin, one JSON answer per line.
    Probe,
    /// The shipped nets (nets/): list their cards, check them, ship a run's net.
    Nets {
        #[command(subcommand)]
        cmd: nets::NetsCmd,
    },
    /// Benchmarks (release builds only).
    Bench {
        #[command(subcommand)]
        cmd: bench::BenchCmd,
    },
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) =
        varzero::nets::set_inference(cli.precision.as_deref(), cli.eval_cache.as_deref())
    {
        eprintln!("error: {}", varzero::one_line(&e));
        std::process::exit(1);
    }
    let done = match cli.cmd {
        Cmd::Perft(a) => perft::run(a),
        Cmd::Play(a) => play::run(a),
        Cmd::Variant { cmd } => variant::run(cmd),
        Cmd::Selfplay(a) => selfplay::run(a),
        Cmd::Pipeline(a) => pipeline::run(a),
        Cmd::Train(a) => train::run(a),
        Cmd::Match(a) => r#match::run(a),
        Cmd::Ladder(a) => ladder::run(a),
        Cmd::Uci(a) => uci::run(a),
        Cmd::Analyse(a) => analyse::run(a),
        Cmd::Analyze(a) => analyze::run(a),
        Cmd::Games(a) => games::run(a),
        Cmd::Compact(a) => compact::run(a),
        Cmd::Study(a) => study::run(a),
        Cmd::Report(a) => report::run(a),
        Cmd::Repair(a) => repair::run(a),
        Cmd::Probe => probe::run(),
        Cmd::Nets { cmd } => nets::run(cmd),
        Cmd::Bench { cmd } => bench::run(cmd),
    };
    if let Err(e) = done {
        eprintln!("error: {}", varzero::one_line(&e));
        std::process::exit(1);
    }
}
