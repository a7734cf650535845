//! `varzero analyse --fen FEN [--moves ...]`: one search of one position, and a table of its
//! best moves (visits, share, Q, win/draw/loss, prior, line), or the same as JSON. The search is
//! the UCI engine's (the evaluator and its tactical blend, `--config`'s [search] table); this is
//! a position's analysis, where `varzero analyze` analyses games tables.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use varzero::run_config::{EngineArgs, VariantArg};
use varzero_search::{Limits, SearchInfo, Searcher};

#[derive(Args)]
pub struct AnalyseArgs {
    #[command(flatten)]
    pub variant: VariantArg,
    /// The position (default: the variant's start).
    #[arg(long)]
    pub fen: Option<String>,
    /// Moves played from it first (UCI notation, spaces or commas between them).
    #[arg(long, num_args = 1.., value_delimiter = ',')]
    pub moves: Vec<String>,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Root visits to reach (default 1600 without --movetime).
    #[arg(long)]
    pub playouts: Option<u64>,
    /// Milliseconds to search (with --playouts, the first limit reached stops it).
    #[arg(long)]
    pub movetime: Option<u64>,
    /// How many moves to show.
    #[arg(long, default_value_t = 5)]
    pub multipv: usize,
    /// One JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: AnalyseArgs) -> Result<()> {
    let v = a.variant.load()?;
    if a.multipv == 0 || a.multipv > varzero_uci::MAX_MULTIPV {
        bail!("--multipv: from 1 to {}", varzero_uci::MAX_MULTIPV);
    }
    if a.playouts == Some(0) || a.movetime == Some(0) {
        bail!("--playouts and --movetime must be at least 1");
    }
    let mut pos = varzero::run_config::position(&v, &a.fen)?;
    for m in a.moves.iter().flat_map(|m| m.split_whitespace()) {
        let mv = pos
            .parse_uci(m)
            .ok()
            .filter(|mv| pos.legal_moves().contains(*mv))
            .with_context(|| format!("--moves: '{m}' is not a legal move in {}", pos.fen()))?;
        pos.make(mv);
    }
    if pos.legal_moves().is_empty() {
        bail!("{}: no legal move to analyse", pos.fen());
    }
    let (resolver, search) = a.engine.load(&v)?;
    let ev = resolver
        .resolve(&a.engine.evaluator, &v)
        .map_err(anyhow::Error::msg)?
        .context("checked by EngineArgs::load")?;
    let id = ev.id();
    let ev = varzero_search::TacticalBlend::for_search(ev, &v, &search);
    let mut searcher = Searcher::new(ev, search);
    searcher.play_on = true;
    searcher.multipv = a.multipv;
    let limits = Limits {
        playouts: Some(
            a.playouts
                .unwrap_or(if a.movetime.is_some() { u64::MAX } else { 1600 }),
        ),
        time: a.movetime.map(Duration::from_millis),
        ..Limits::default()
    };
    let info = searcher.search(&pos, &limits, &AtomicBool::new(false), &mut |_| {});
    if a.json {
        let mut j = as_json(&pos, &info);
        j["evaluator"] = id.into();
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else {
        print!("{}", table(&pos, &info, &id));
    }
    Ok(())
}

/// Win/draw/loss in percent, or dashes for a move the search never visited.
fn pct(x: f32) -> String {
    if x.is_finite() {
        format!("{:.1}", 100.0 * x)
    } else {
        "-".into()
    }
}

fn table(pos: &varzero_rules::Position, i: &SearchInfo, evaluator: &str) -> String {
    let mut s = format!(
        "{}\n{} visits in {:.2} s ({} playouts/s) by {evaluator}, root W/D/L {}/{}/{} %\n",
        pos.fen(),
        i.visits,
        i.elapsed.as_secs_f64(),
        (i.playouts as f64 / i.elapsed.as_secs_f64().max(1e-9)).round(),
        pct(i.wdl[0]),
        pct(i.wdl[1]),
        pct(i.wdl[2]),
    );
    s.push_str(&format!(
        "{:>3}  {:<8} {:>8} {:>6} {:>7} {:>6} {:>6} {:>6} {:>6}  line\n",
        "#", "move", "visits", "share", "Q", "W%", "D%", "L%", "prior"
    ));
    let total: u64 = i.lines.iter().map(|l| l.visits).sum::<u64>().max(1);
    for (k, l) in i.lines.iter().enumerate() {
        let uci = pos.uci_line(&l.pv);
        let q = match l.mate {
            Some(n) => format!("#{n}"),
            None if l.wdl[0].is_finite() => format!("{:+.3}", l.wdl[0] - l.wdl[2]),
            None => "-".into(),
        };
        s.push_str(&format!(
            "{:>3}  {:<8} {:>8} {:>5.1}% {:>7} {:>6} {:>6} {:>6} {:>6.3}  {}\n",
            k + 1,
            uci[0],
            l.visits,
            100.0 * l.visits as f64 / i.visits.max(total) as f64,
            q,
            pct(l.wdl[0]),
            pct(l.wdl[1]),
            pct(l.wdl[2]),
            l.prior,
            uci[1..].join(" ")
        ));
    }
    s
}

fn as_json(pos: &varzero_rules::Position, i: &SearchInfo) -> serde_json::Value {
    let num = |x: f32| {
        if x.is_finite() {
            serde_json::Value::from(x as f64)
        } else {
            serde_json::Value::Null
        }
    };
    serde_json::json!({
        "fen": pos.fen(),
        "variant": pos.variant().name,
        "visits": i.visits,
        "playouts": i.playouts,
        "elapsed_ms": i.elapsed.as_millis() as u64,
        "wdl": i.wdl.map(num),
        "best": i.best.map(|m| pos.uci(m)),
        "mate": i.mate,
        "lines": i.lines.iter().map(|l| serde_json::json!({
            "move": pos.uci(l.mv),
            "visits": l.visits,
            "q": if l.wdl[0].is_finite() { num(l.wdl[0] - l.wdl[2]) } else { serde_json::Value::Null },
            "wdl": l.wdl.map(num),
            "prior": num(l.prior),
            "mate": l.mate,
            "pv": pos.uci_line(&l.pv),
        })).collect::<Vec<_>>(),
    })
}
