//! Rating players on the ladder (the arena's `ladder`), for the `ladder` command and the
//! pipeline: where the rung games are cached, how players are made from specs (nets
//! included), a progress bar per pairing, and the ratings table written by rename.

use crate::nets::NetResolver;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use varzero_arena::ladder::{self, Ladder, LadderConfig, Rating};
use varzero_arena::players::PlayerError;
use varzero_arena::{PlayerFactory, PlayerSpec};
use varzero_rules::Variant;
use varzero_search::SearchConfig;

/// What a user may set; everything else has the ladder's defaults.
#[derive(Clone, Debug)]
pub struct LadderOptions {
    /// Rung specs, weakest first (default: Fairy-Stockfish's node ladder or our own).
    pub rungs: Option<Vec<String>>,
    /// The player at 0 Elo (default: the first rung).
    pub anchor: Option<String>,
    pub games: u64,
    pub concurrency: usize,
    /// The rung cache (default: `$VARZERO_CACHE/ladder/...`).
    pub rung_dir: Option<PathBuf>,
    /// Where the rated players' games and `ratings.csv` go.
    pub dir: PathBuf,
    pub random_plies: u32,
    pub seed: u64,
    pub prior_draws: f64,
}

impl LadderOptions {
    pub fn new(dir: &Path) -> LadderOptions {
        LadderOptions {
            rungs: None,
            anchor: None,
            games: 20,
            concurrency: 2,
            rung_dir: None,
            dir: dir.to_path_buf(),
            random_plies: 4,
            seed: 1,
            prior_draws: 2.0,
        }
    }
}

/// The ladder of `v` with `o`'s settings.
pub fn open(v: &Arc<Variant>, o: &LadderOptions) -> Result<Ladder> {
    let fsf = varzero_arena::uci_client::fairy_stockfish_path().is_some();
    let rungs = o
        .rungs
        .clone()
        .unwrap_or_else(|| ladder::default_rungs(v, fsf));
    let rung_dir = match &o.rung_dir {
        Some(d) => d.clone(),
        None => ladder::default_rung_dir(v)
            .context("no cache directory for the ladder's rungs: set VARZERO_CACHE or HOME")?,
    };
    if rungs.is_empty() {
        anyhow::bail!("the ladder needs at least one rung");
    }
    for r in &rungs {
        PlayerSpec::parse(r).map_err(|e| anyhow::anyhow!("rung {r}: {e}"))?;
    }
    let anchor = o.anchor.clone().unwrap_or_else(|| rungs[0].clone());
    Ok(Ladder::new(LadderConfig {
        variant: v.clone(),
        anchor,
        anchor_elo: 0.0,
        games: o.games,
        random_plies: o.random_plies,
        seed: o.seed,
        concurrency: o.concurrency,
        prior_draws: o.prior_draws,
        rung_dir,
        dir: o.dir.clone(),
        rungs,
    })?)
}

/// Makes players from specs (nets on `device`, searches with `search`).
pub fn maker(
    v: &Arc<Variant>,
    search: &SearchConfig,
    device: &str,
) -> impl Fn(&str) -> varzero_arena::Result<Arc<dyn PlayerFactory>> {
    let resolver = NetResolver::new(device);
    let (v, search) = (v.clone(), search.clone());
    move |spec: &str| {
        let f = PlayerSpec::parse(spec)?.factory(spec, &v, &resolver, &search)?;
        f.check()
            .map_err(|e| varzero_arena::Error::Spec(format!("player {spec}: {e}")))?;
        Ok(f)
    }
}

/// Plays the rungs (once, cached), climbs each of `players` from rung `start`, refits, writes
/// `ratings.csv` into the player directory and returns the ratings.
pub fn rate(
    l: &Ladder,
    players: &[String],
    start: usize,
    make: &dyn Fn(&str) -> varzero_arena::Result<Arc<dyn PlayerFactory>>,
    quiet: bool,
) -> Result<Vec<Rating>> {
    for p in players {
        let f = make(p).map_err(anyhow::Error::msg)?;
        rate_one(l, &f, start, make, quiet).with_context(|| format!("rating {p}"))?;
    }
    if players.is_empty() {
        with_progress(quiet, l, |progress| {
            l.ensure_rungs(make, progress).map_err(anyhow::Error::msg)
        })?;
    }
    let r = l.ratings().map_err(anyhow::Error::msg)?;
    write_ratings(&l.cfg.dir, &r)?;
    Ok(r)
}

/// Plays the rungs (once, cached) and climbs `player` from rung `start`; returns the highest
/// rung it scored at least half against.
pub fn rate_one(
    l: &Ladder,
    player: &Arc<dyn PlayerFactory>,
    start: usize,
    make: &dyn Fn(&str) -> varzero_arena::Result<Arc<dyn PlayerFactory>>,
    quiet: bool,
) -> Result<Option<usize>> {
    with_progress(quiet, l, |progress| {
        l.ensure_rungs(make, progress)
            .map_err(anyhow::Error::msg)
            .context("playing the ladder's rungs")?;
        l.climb(player, make, start, progress)
            .map_err(anyhow::Error::msg)
    })
}

/// Runs `f` with a progress bar that follows the pairing being played.
fn with_progress<T>(
    quiet: bool,
    l: &Ladder,
    f: impl FnOnce(&mut varzero_arena::ladder::Progress) -> Result<T>,
) -> Result<T> {
    let bar = crate::progress::progress_bar(quiet, l.cfg.games.div_ceil(2) * 2, "games");
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
    out
}

/// A player under another name (a generation's net is `gen-003@64` on the ladder, whatever
/// the path of its file).
pub fn named(name: &str, inner: Arc<dyn PlayerFactory>) -> Arc<dyn PlayerFactory> {
    Arc::new(Named {
        name: name.to_string(),
        inner,
    })
}

struct Named {
    name: String,
    inner: Arc<dyn PlayerFactory>,
}

impl PlayerFactory for Named {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn create(&self, seed: u64) -> Result<Box<dyn varzero_arena::players::Player>, PlayerError> {
        self.inner.create(seed)
    }
    fn check(&self) -> Result<(), PlayerError> {
        self.inner.check()
    }
}

/// `dir/ratings.csv`, by rename.
pub fn write_ratings(dir: &Path, r: &[Rating]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    crate::write_atomic(&dir.join("ratings.csv"), ladder::ratings_csv(r))
}
