//! Progress of long work on the terminal (indicatif): self-play with rates, and plain bars.

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use varzero_selfplay::Generator;

/// A bar of `len` `unit`s, hidden when `quiet`.
pub fn progress_bar(quiet: bool, len: u64, unit: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(&format!("{{bar:30}} {{pos}}/{{len}} {unit}  {{msg}}"))
            .expect("a valid template"),
    );
    bar
}

/// Runs `gen` to `total` games in `out` with a progress bar (games, positions/s, playouts/s,
/// W/D/L) unless `quiet`.
pub fn run_with_progress(
    gen: Arc<Generator>,
    out: &std::path::Path,
    total: u64,
    quiet: bool,
) -> Result<varzero_selfplay::Summary> {
    let stats = gen.stats.clone();
    let start = Instant::now();
    let out = out.to_path_buf();
    let handle = std::thread::spawn(move || gen.run(&out, total));
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(total)
    };
    bar.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} games  {msg}").unwrap());
    while !handle.is_finished() {
        std::thread::sleep(Duration::from_millis(250));
        let secs = start.elapsed().as_secs_f64().max(1e-3);
        let games = stats.games.load(Ordering::Relaxed);
        bar.set_position(games);
        bar.set_message(format!(
            "{:.0} pos/s  {:.0} playouts/s  mean {:.1} plies  W/D/L {}/{}/{}",
            stats.positions.load(Ordering::Relaxed) as f64 / secs,
            stats.playouts.load(Ordering::Relaxed) as f64 / secs,
            stats.plies.load(Ordering::Relaxed) as f64 / games.max(1) as f64,
            stats.white_wins.load(Ordering::Relaxed),
            stats.draws.load(Ordering::Relaxed),
            stats.black_wins.load(Ordering::Relaxed),
        ));
    }
    bar.finish_and_clear();
    Ok(handle
        .join()
        .map_err(|_| anyhow::anyhow!("self-play worker panicked"))??)
}

/// Runs `f` (rungs and climbs on `l`) with a progress bar that follows the pairing being
/// played.
pub fn with_ladder_progress<T>(
    quiet: bool,
    l: &varzero_arena::ladder::Ladder,
    f: impl FnOnce(&mut varzero_arena::ladder::Progress) -> varzero_arena::Result<T>,
) -> Result<T> {
    let bar = progress_bar(quiet, l.games_per_pairing(), "games");
    let mut current = String::new();
    let mut progress = |a: &str, b: &str, st: &varzero_arena::MatchState| {
        let pair = format!("{a} vs {b}");
        if pair != current {
            current = pair;
            bar.set_length(st.games_total);
        }
        bar.set_position(st.games_done);
        bar.set_message(format!(
            "{current}: W {} D {} L {}",
            st.wdl.wins, st.wdl.draws, st.wdl.losses
        ));
    };
    let out = f(&mut progress);
    bar.finish_and_clear();
    Ok(out?)
}
