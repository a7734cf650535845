//! `varzero match`: two players, N games in pairs of the same opening with colours swapped,
//! several at once, with a progress bar (score, Elo with its 95% interval, SPRT LLR); games go
//! to a dataset directory (games table) and a text file, which this match alone writes (a
//! second match on the same `--out` is refused) and merges into few shards once it is over.
//! The last line of stdout is the result.

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use varzero::run_config::VariantArg;
use varzero_arena::matches::{self as arena, Arena, GameWriter, MatchConfig, MatchState};
use varzero_arena::players::parse_player;
use varzero_stats::{EloModel, Sprt, SprtDecision};

#[derive(Args)]
pub struct MatchArgs {
    #[command(flatten)]
    pub variant: VariantArg,
    /// Player A: `EVALUATOR@PLAYOUTS` (net:FILE.safetensors@800, net:shipped@400, material@400),
    /// `EVALUATOR@clock` (searches by the match's clock), `random`, `fsf@nodes=N|clock`, or
    /// `uci:COMMAND ARGS@nodes=N|movetime=MS|clock[,timeout=MS,variant=NAME,option.NAME=VALUE]`.
    pub player_a: String,
    /// Player B (same forms).
    pub player_b: String,
    /// Device of `net:` players: `cpu` or `cuda[:N]`.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Games to play (pairs of games from the same opening, colours swapped).
    #[arg(long, default_value_t = 20)]
    pub games: u64,
    /// Openings: a file with one FEN per line (# comments); default: random openings.
    #[arg(long)]
    pub openings: Option<PathBuf>,
    /// Random plies from the start position for each generated opening (0: the start position).
    #[arg(long, default_value_t = 4)]
    pub random_plies: u32,
    /// Seed of the random openings.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// SPRT on game pairs: `elo0=0,elo1=10,alpha=0.05,beta=0.05[,model=normalized|logistic]`.
    #[arg(long)]
    pub sprt: Option<String>,
    /// SPRT bounds and errors as separate flags (any of them turns the SPRT on).
    #[arg(long, allow_hyphen_values = true)]
    pub elo0: Option<f64>,
    #[arg(long, allow_hyphen_values = true)]
    pub elo1: Option<f64>,
    #[arg(long)]
    pub alpha: Option<f64>,
    #[arg(long)]
    pub beta: Option<f64>,
    /// Dataset directory for the games (games table shards, games.txt, variant.toml).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Search settings for our players: the [search] table of a run config (configs/runs/*.toml,
    /// as `varzero pipeline` takes it) or of a self-play config. Without it, a shipped net
    /// (`net:shipped`, `net:NAME`) searches as its card says (docs/nets.md), others by default.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The clock of every game, in cutechess's notation: `40/60` (40 moves in 60 s),
    /// `10+0.1` (10 s and 0.1 s a move), `2:30+1`, `inf`. A player whose move comes after its
    /// time ran out loses (time-forfeit). Players with a budget (`@400`, `nodes=`) keep it too.
    #[arg(long, conflicts_with = "st")]
    pub tc: Option<String>,
    /// A fixed time per move in seconds (cutechess's `st`): a later move loses on time.
    #[arg(long)]
    pub st: Option<String>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

fn sprt_of(a: &MatchArgs) -> Result<Option<Sprt>> {
    let mut s = match &a.sprt {
        Some(text) => Some(Sprt::parse(text).map_err(|e| anyhow::anyhow!("--sprt: {e}"))?),
        None => None,
    };
    if a.elo0.is_some() || a.elo1.is_some() || a.alpha.is_some() || a.beta.is_some() {
        let t = s.get_or_insert_with(Sprt::default);
        if let Some(x) = a.elo0 {
            t.elo0 = x;
        }
        if let Some(x) = a.elo1 {
            t.elo1 = x;
        }
        if let Some(x) = a.alpha {
            t.alpha = x;
        }
        if let Some(x) = a.beta {
            t.beta = x;
        }
        t.validate().map_err(|e| anyhow::anyhow!("SPRT: {e}"))?;
    }
    Ok(s)
}

/// The result line: `score A 14.5/20 (W 12 D 5 L 3) elo +91 [+12, +185]`.
fn score_line(st: &MatchState) -> String {
    format!(
        "score A {}/{} (W {} D {} L {}) elo {}",
        st.wdl.points(),
        st.wdl.games(),
        st.wdl.wins,
        st.wdl.draws,
        st.wdl.losses,
        st.wdl.elo()
    )
}

fn status(st: &MatchState, sprt: &Option<Sprt>) -> String {
    let mut s = score_line(st);
    if let (Some(t), Some(llr)) = (sprt, st.llr) {
        s.push_str(&format!(
            "  llr {llr:.2} ({:.2}, {:.2})",
            t.lower_bound(),
            t.upper_bound()
        ));
    }
    s
}

pub fn run(a: MatchArgs) -> Result<()> {
    let v = a.variant.load()?;
    if a.games == 0 || a.concurrency == 0 {
        bail!("--games and --concurrency must be at least 1");
    }
    {
        let mut p = varzero_settings::Problems::default();
        varzero::sizes::check_threads("--concurrency", a.concurrency, &mut p);
        // The openings are made up front; players' trees are counted where they are parsed.
        let mut b = varzero::sizes::Budget::default();
        b.add("--games", a.games as f64 / 2.0 * varzero::sizes::OPENING);
        b.check(
            "a match",
            varzero::sizes::physical_memory(),
            &|_| a.games.to_string(),
            &mut p,
        );
        if !p.is_empty() {
            bail!("{p}");
        }
    }
    if [&a.player_a, &a.player_b]
        .iter()
        .any(|p| p.starts_with("net:"))
    {
        varzero_eval_net::share_threads(a.concurrency);
    }
    let sprt = sprt_of(&a)?;
    let time_control = varzero::run_config::time_control(&a.tc, &a.st)?;
    if time_control.is_none() {
        for (which, spec) in [("A", &a.player_a), ("B", &a.player_b)] {
            if varzero_arena::PlayerSpec::parse(spec).is_ok_and(|p| p.needs_clock()) {
                bail!(
                    "player {which} ({spec}) plays by the clock: give the match one (--tc or --st)"
                );
            }
        }
    }
    let usage = varzero::usage::Usage::start();
    let search = varzero::run_config::search_config(&a.config)?;
    let resolver = varzero::nets::evaluators(&a.device);
    let base = |spec: &str| varzero::nets::base_search(spec, &v, &search, a.config.is_some());
    let pa = parse_player(&a.player_a, &v, &*resolver, &base(&a.player_a))
        .map_err(|e| anyhow::anyhow!("player A: {e}"))?;
    let pb = parse_player(&a.player_b, &v, &*resolver, &base(&a.player_b))
        .map_err(|e| anyhow::anyhow!("player B: {e}"))?;
    pa.check()
        .map_err(|e| anyhow::anyhow!("player A ({}): {e}", pa.name()))?;
    pb.check()
        .map_err(|e| anyhow::anyhow!("player B ({}): {e}", pb.name()))?;
    let pairs = a.games.div_ceil(2) as usize;
    let (openings, source) = match &a.openings {
        Some(p) => (
            arena::read_openings(&v, p).map_err(anyhow::Error::msg)?,
            format!("from {}", p.display()),
        ),
        None if a.random_plies == 0 => (vec![v.start_fen.clone()], "the start position".into()),
        None => (
            arena::random_openings(&v, pairs, a.random_plies, a.seed)
                .map_err(anyhow::Error::msg)?,
            format!("{} random plies, seed {}", a.random_plies, a.seed),
        ),
    };
    let mut writer = match &a.out {
        Some(d) => Some(
            GameWriter::create(d, &v, &pa.name(), &pb.name())
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("--out {}", d.display()))?,
        ),
        None => None,
    };
    if let Some(w) = writer.as_ref().filter(|w| !w.done().is_empty()) {
        eprintln!(
            "resuming: {} games already in {}",
            w.done().len(),
            a.out.as_ref().expect("a writer has a directory").display()
        );
    }
    eprintln!(
        "match {}: A = {}, B = {}; {} games, {} openings ({source}), concurrency {}{}{}",
        v.name,
        pa.name(),
        pb.name(),
        a.games,
        openings.len().min(pairs),
        a.concurrency,
        time_control
            .map(|t| format!(", clock {t}"))
            .unwrap_or_default(),
        sprt.map(|s| format!(", SPRT {s}")).unwrap_or_default()
    );
    let arena = Arena::new(
        MatchConfig {
            variant: v.clone(),
            games: a.games,
            openings,
            concurrency: a.concurrency,
            paired: true,
            verify_endings: false,
            sprt,
            done: writer
                .as_ref()
                .map(|w| w.done().to_vec())
                .unwrap_or_default(),
            time_control,
        },
        pa.clone(),
        pb.clone(),
    );
    let bar = if a.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(a.games)
    };
    bar.set_style(ProgressStyle::with_template("{bar:25} {pos}/{len} games  {msg}").unwrap());
    let mut write_error: Option<String> = None;
    let mut time_losses = [0u64; 2];
    // Per player: milliseconds used and moves made under the clock.
    let mut clock_use = [(0u64, 0u64); 2];
    let summary = arena.run(&mut |g, st| {
        if !g.clock.is_empty() {
            let white_first = varzero_rules::Position::from_fen(&v, &g.start_fen)
                .map(|p| p.side_to_move() == varzero_rules::Color::White)
                .unwrap_or(true);
            for (k, t) in g.clock.iter().enumerate() {
                let white = (k % 2 == 0) == white_first;
                let a = white == g.a_white;
                let c = &mut clock_use[usize::from(!a)];
                c.0 += t.used_ms;
                c.1 += 1;
            }
        }
        if let Some(f) = g
            .failure
            .as_ref()
            .filter(|f| f.error.termination() == "time-forfeit")
        {
            time_losses[usize::from(f.player == "B")] += 1;
        }
        bar.set_position(st.games_done);
        bar.set_message(status(st, &sprt));
        if let Some(f) = &g.failure {
            bar.suspend(|| {
                eprintln!(
                    "game {}: {} ({}) loses by {}: {}",
                    g.index,
                    f.player,
                    f.name,
                    f.error.termination(),
                    f.error.message()
                )
            });
        }
        if let Some(w) = &mut writer {
            if let Err(e) = w.push(g) {
                write_error.get_or_insert(e.to_string());
            }
        }
    });
    bar.finish_and_clear();
    if let Some(w) = &mut writer {
        w.flush().map_err(anyhow::Error::msg)?;
    }
    if let Some(e) = write_error {
        bail!("writing games: {e}");
    }
    // The match is over (every game played, or the SPRT decided): its one-game shards merge.
    if let Some(w) = &mut writer {
        w.compact()
            .map_err(anyhow::Error::msg)
            .context("merging the match's shards")?;
    }
    let st = &summary.state;
    println!(
        "match {}: A = {}, B = {}; {} games in {:.1} s, {:.2} cores busy (engines included)",
        v.name,
        pa.name(),
        pb.name(),
        st.games_done,
        summary.elapsed.as_secs_f64(),
        usage.cores()
    );
    if st.penta.pairs() > 0 {
        println!(
            "pairs {}  pentanomial [LL, LD, WL+DD, WD, WW] = {} (WL {})  elo from pairs {}",
            st.penta.pairs(),
            st.penta,
            st.penta.win_loss,
            st.penta.elo()
        );
    }
    if st.failures_a + st.failures_b > 0 {
        println!(
            "failures (lost games): A {}, B {}",
            st.failures_a, st.failures_b
        );
    }
    if let Some(t) = &time_control {
        let mean = |c: (u64, u64)| c.0 as f64 / c.1.max(1) as f64;
        println!(
            "clock {t}: losses on time A {}, B {}; mean time a move A {:.0} ms, B {:.0} ms",
            time_losses[0],
            time_losses[1],
            mean(clock_use[0]),
            mean(clock_use[1])
        );
    }
    if let Some(t) = &sprt {
        let (llr, decision) = t.verdict(&st.penta);
        let verdict = match decision {
            SprtDecision::H1 => "H1 accepted (A is stronger by elo1)".to_string(),
            SprtDecision::H0 => "H0 accepted (A is not stronger than elo0)".to_string(),
            SprtDecision::Continue => "no decision".to_string(),
        };
        println!(
            "sprt {t}: llr {llr:.2} ({:.2}, {:.2}) {verdict}{}",
            t.lower_bound(),
            t.upper_bound(),
            if t.model == EloModel::Normalized {
                " (bounds in normalized Elo)"
            } else {
                ""
            }
        );
    }
    if let Some(d) = &a.out {
        println!("games written to {}", d.display());
    }
    println!("{}", score_line(st));
    Ok(())
}
