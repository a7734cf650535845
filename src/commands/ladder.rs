//! `varzero ladder`: rates players on one Elo scale per variant. The rungs (Fairy-Stockfish at
//! 1 to 10k nodes where it plays the variant, else random and our material player) play each
//! other once into a cache; each player climbs from a rung until it scores below half; a
//! Bradley-Terry fit over every game gives the table, first rung at 0 Elo. Rerunning reuses
//! every finished game.

use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;
use varzero::run_config::VariantArg;
use varzero_arena::ladder::{ratings_table, Ladder, LadderOptions};

#[derive(Args)]
pub struct LadderArgs {
    #[command(flatten)]
    pub variant: VariantArg,
    /// Players to rate (same forms as `match`: material@400, net:FILE@800, uci:ENGINE@nodes=N,
    /// fsf@nodes=N). With none, the rungs are played and the table printed.
    pub players: Vec<String>,
    /// Rungs, weakest first, comma-separated (default: fsf@nodes=1,...,fsf@nodes=10000 where
    /// Fairy-Stockfish plays the variant, else random,material-raw@16,material@16,...).
    #[arg(long, value_delimiter = ',')]
    pub rungs: Option<Vec<String>>,
    /// The player at 0 Elo (default: the first rung).
    #[arg(long)]
    pub anchor: Option<String>,
    /// Games per pairing (pairs of colours).
    #[arg(long, default_value_t = 20)]
    pub games: u64,
    /// Games played at once.
    #[arg(long, default_value_t = 2)]
    pub concurrency: usize,
    /// The rung the players start climbing from (0: the weakest).
    #[arg(long, default_value_t = 0)]
    pub start_rung: usize,
    /// Where the players' games and ratings.csv go.
    #[arg(long, default_value = "ladder")]
    pub dir: PathBuf,
    /// The cache of rung-against-rung games (default: $VARZERO_CACHE/ladder/v1/VARIANT-HASH).
    #[arg(long)]
    pub rung_dir: Option<PathBuf>,
    /// Random plies from the start for each opening.
    #[arg(long, default_value_t = 4)]
    pub random_plies: u32,
    /// Seed of the openings.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Virtual draws per pairing in the fit (keeps a perfect score finite).
    #[arg(long, default_value_t = 2.0)]
    pub prior_draws: f64,
    /// Device of `net:` players.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Search settings for our players: the [search] table of a run config (configs/runs/*.toml,
    /// as `varzero pipeline` takes it) or of a self-play config. Without it, a shipped net
    /// searches as its card says (docs/nets.md), others by default.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// The clock of every game, as `varzero match --tc` takes it (`10+0.1`, `40/60`): rungs and
    /// players may then be `@clock` players. Clocked games are kept in a subdirectory of the
    /// rung cache and of --dir named after the clock.
    #[arg(long, conflicts_with = "st")]
    pub tc: Option<String>,
    /// A fixed time per move in seconds.
    #[arg(long)]
    pub st: Option<String>,
}

pub fn run(a: LadderArgs) -> Result<()> {
    let v = a.variant.load()?;
    if a.games == 0 || a.concurrency == 0 {
        bail!("--games and --concurrency must be at least 1");
    }
    if !(a.prior_draws >= 0.0 && a.prior_draws.is_finite()) {
        bail!("--prior-draws must be a number at least 0");
    }
    let time_control = varzero::run_config::time_control(&a.tc, &a.st)?;
    let o = LadderOptions {
        rungs: a.rungs.clone(),
        anchor: a.anchor.clone(),
        games: a.games,
        concurrency: a.concurrency,
        rung_dir: a.rung_dir.clone(),
        dir: a.dir.clone(),
        random_plies: a.random_plies,
        seed: a.seed,
        prior_draws: a.prior_draws,
        time_control,
    };
    if a.players.iter().any(|p| p.starts_with("net:")) {
        varzero_eval_net::share_threads(a.concurrency);
    }
    let l = Ladder::open(&v, &o)?;
    if !l.cfg.rungs.contains(&l.cfg.anchor) && !a.players.contains(&l.cfg.anchor) {
        bail!(
            "--anchor {}: not a rung or a player being rated (rungs: {})",
            l.cfg.anchor,
            l.cfg.rungs.join(", ")
        );
    }
    let search = varzero::run_config::search_config(&a.config)?;
    let make = varzero::nets::player_maker(&v, &search, a.config.is_some(), &a.device);
    eprintln!(
        "ladder {}: rungs {} (cached in {}), {} games per pairing",
        v.name,
        l.cfg.rungs.join(", "),
        l.cfg.rung_dir.display(),
        l.games_per_pairing()
    );
    let t = std::time::Instant::now();
    let r = varzero::progress::with_ladder_progress(a.quiet, &l, |progress| {
        l.rate(&a.players, a.start_rung, &make, progress)
    })?;
    print!("{}", ratings_table(&r));
    println!(
        "anchor {} = 0 Elo; * = rated player; +-95% is relative to the anchor. {:.0} s. ratings written to {}",
        l.cfg.anchor,
        t.elapsed().as_secs_f64(),
        l.cfg.dir.join("ratings.csv").display()
    );
    Ok(())
}
