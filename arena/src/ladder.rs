//! The ladder: one Elo scale per variant, on which any player is rated. Its rungs are fixed
//! players, weakest first: Fairy-Stockfish at node budgets 1, 10, 100, 1k and 10k where it
//! plays the variant exactly, else players of our own (random, then the material player at
//! growing playouts). Adjacent rungs play each other once, and the games are cached in a
//! directory that every later rating reuses, so rungs are not replayed. A player climbs:
//! it plays a rung, goes up while it scores at least half, and stops at the first rung it
//! scores below half against (or goes down from its starting rung when it loses there).
//! Ratings come from a maximum-likelihood Bradley-Terry fit over every game in the rung and
//! player directories, with the first rung (or a named anchor) at 0 Elo, as BayesElo and Ordo
//! do.
//!
//! Each pairing is a match directory `DIR/<a>--<b>/` (a games table that a killed match
//! resumes from, `pairing.json` naming the two players, `games.txt`): the pairing of `a`
//! against `b` and of `b` against `a` are the same pairing. One ladder at a time plays a
//! pairing (its directory's lock): another ladder that needs it (two ladders sharing the rung
//! cache) waits for it and then reads the finished games instead of playing them again. A
//! finished pairing's shards are merged into one.

use crate::error::{Error, Result};
use crate::matches::{match_scores, random_openings, Arena, GameWriter, MatchConfig, MatchState};
use crate::players::PlayerFactory;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use varzero_datasets::{DirLock, LockMode};
use varzero_rules::Variant;
use varzero_stats::bradley_terry::{self, Pairing};
use varzero_stats::Wdl;

/// Version of our own players' code as rungs: results cached under another version are not
/// reused (a change to the material player changes what `material@N` means).
pub const RUNG_VERSION: &str = "v1";

#[derive(Clone)]
pub struct LadderConfig {
    pub variant: Arc<Variant>,
    /// Rung player specs, weakest first.
    pub rungs: Vec<String>,
    /// The player rated `anchor_elo` (default: the first rung).
    pub anchor: String,
    pub anchor_elo: f64,
    /// Games per pairing (rounded up to pairs of colours).
    pub games: u64,
    pub random_plies: u32,
    pub seed: u64,
    pub concurrency: usize,
    /// Virtual draws added to every pairing in the fit (BayesElo's prior), which keeps a
    /// perfect score finite.
    pub prior_draws: f64,
    /// Where rung-against-rung games are cached (shared by every rating of the variant).
    pub rung_dir: PathBuf,
    /// Where the rated players' games go.
    pub dir: PathBuf,
    /// The clock of every game (None: each player's own budget).
    pub time_control: Option<crate::clock::TimeControl>,
}

/// The default rungs of a variant: Fairy-Stockfish's node ladder when it plays the variant
/// (and is installed), else our own players.
pub fn default_rungs(v: &Variant, fsf_available: bool) -> Vec<String> {
    if v.fairy_stockfish.is_some() && !v.reconstruction && fsf_available {
        [1, 10, 100, 1000, 10000]
            .iter()
            .map(|n| format!("fsf@nodes={n}"))
            .collect()
    } else {
        own_rungs()
    }
}

/// Our own rungs: random, the raw-material player, then the tactical material player at 16,
/// 128 and 1024 playouts.
pub fn own_rungs() -> Vec<String> {
    vec![
        "random".into(),
        "material-raw@16".into(),
        "material@16".into(),
        "material@128".into(),
        "material@1024".into(),
    ]
}

/// The default cache of rung games: `$VARZERO_CACHE/ladder/VERSION/VARIANT-RULESHASH`.
pub fn default_rung_dir(v: &Variant) -> Option<PathBuf> {
    Some(
        crate::uci_client::cache_dir()?
            .join("ladder")
            .join(RUNG_VERSION)
            .join(format!("{}-{:08x}", v.name, v.rules_hash as u32)),
    )
}

/// A file-name-safe form of a player spec (a net's path is shortened to its file name), with a
/// hash of the whole spec so that two specs never share a directory.
pub fn slug(spec: &str) -> String {
    let short: String = spec
        .rsplit('/')
        .next()
        .unwrap_or(spec)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '=' || c == '@' {
                c
            } else {
                '_'
            }
        })
        .take(48)
        .collect();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in spec.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{short}-{:06x}", h & 0xff_ffff)
}

/// The directory of the pairing of `a` and `b` under `base` (the same for either order).
pub fn pairing_dir(base: &Path, a: &str, b: &str) -> PathBuf {
    let (x, y) = if a <= b { (a, b) } else { (b, a) };
    base.join(format!("{}--{}", slug(x), slug(y)))
}

#[derive(serde::Serialize, serde::Deserialize)]
struct PairingFile {
    a: String,
    b: String,
}

/// The games of one pairing, from `a`'s view.
#[derive(Clone, Debug, PartialEq)]
pub struct PairingResult {
    pub a: String,
    pub b: String,
    pub wdl: Wdl,
}

/// Every pairing under `base`.
pub fn read_pairings(base: &Path) -> Result<Vec<PairingResult>> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(base) else {
        return Ok(out);
    };
    let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    dirs.sort();
    for d in dirs {
        let f = d.join("pairing.json");
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let p: PairingFile = serde_json::from_str(&text).map_err(|e| Error::Io {
            path: f.display().to_string(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        })?;
        let mut wdl = Wdl::default();
        for (_, s) in match_scores(&d, &p.a, &p.b)? {
            wdl.add(s);
        }
        out.push(PairingResult {
            a: p.a,
            b: p.b,
            wdl,
        });
    }
    Ok(out)
}

/// One line of the ratings table.
#[derive(Clone, Debug, PartialEq)]
pub struct Rating {
    pub player: String,
    pub elo: f64,
    /// Half-width of the 95% interval, relative to the anchor.
    pub error: f64,
    pub games: u64,
    /// Score over all its games (0..1).
    pub score: f64,
    pub rung: bool,
}

/// What a pairing reports while it plays: the players, and the running state.
pub type Progress<'a> = dyn FnMut(&str, &str, &MatchState) + 'a;

/// What a user of the ladder sets (the `ladder` command, a run's `[ladder]` table); the rest
/// is resolved by [`Ladder::open`].
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
    /// The clock of every game. A clocked ladder keeps its games apart from the unclocked
    /// one's and from other clocks': both directories get a subdirectory named after it.
    pub time_control: Option<crate::clock::TimeControl>,
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
            time_control: None,
        }
    }
}

/// Makes a player from its spec (the caller knows how to load nets).
pub type Maker<'a> = dyn Fn(&str) -> Result<Arc<dyn PlayerFactory>> + 'a;

pub struct Ladder {
    pub cfg: LadderConfig,
    openings: Vec<String>,
}

impl Ladder {
    pub fn new(cfg: LadderConfig) -> Result<Ladder> {
        if cfg.rungs.is_empty() {
            return Err(Error::Spec("the ladder needs at least one rung".into()));
        }
        let pairs = cfg.games.div_ceil(2) as usize;
        let openings = if cfg.random_plies == 0 {
            vec![cfg.variant.start_fen.clone()]
        } else {
            random_openings(&cfg.variant, pairs.max(1), cfg.random_plies, cfg.seed)?
        };
        Ok(Ladder { cfg, openings })
    }

    /// The ladder of `v` with `o`'s settings: the variant's default rungs (Fairy-Stockfish's
    /// when it is installed and plays the variant), the shared rung cache, the first rung as
    /// the anchor; every rung spec checked.
    pub fn open(v: &Arc<Variant>, o: &LadderOptions) -> Result<Ladder> {
        let fsf = crate::uci_client::fairy_stockfish_path().is_some();
        let rungs = o.rungs.clone().unwrap_or_else(|| default_rungs(v, fsf));
        let rung_dir = match &o.rung_dir {
            Some(d) => d.clone(),
            None => default_rung_dir(v).ok_or_else(|| {
                Error::Spec(
                    "no cache directory for the ladder's rungs: set VARZERO_CACHE or HOME".into(),
                )
            })?,
        };
        if rungs.is_empty() {
            return Err(Error::Spec("the ladder needs at least one rung".into()));
        }
        for r in &rungs {
            crate::PlayerSpec::parse(r).map_err(|e| Error::Spec(format!("rung {r}: {e}")))?;
        }
        let anchor = o.anchor.clone().unwrap_or_else(|| rungs[0].clone());
        let (rung_dir, dir) = match o.time_control {
            Some(tc) => (rung_dir.join(tc.to_string()), o.dir.join(tc.to_string())),
            None => (rung_dir, o.dir.clone()),
        };
        Ladder::new(LadderConfig {
            variant: v.clone(),
            anchor,
            anchor_elo: 0.0,
            games: o.games,
            random_plies: o.random_plies,
            seed: o.seed,
            concurrency: o.concurrency,
            prior_draws: o.prior_draws,
            rung_dir,
            dir,
            rungs,
            time_control: o.time_control,
        })
    }

    /// Games a pairing plays (pairs of colours).
    pub fn games_per_pairing(&self) -> u64 {
        self.cfg.games.div_ceil(2) * 2
    }

    /// Plays the rungs (once, cached) and climbs `player` from rung `start`; returns the
    /// highest rung it scored at least half against.
    pub fn rate_one(
        &self,
        player: &Arc<dyn PlayerFactory>,
        start: usize,
        make: &Maker,
        progress: &mut Progress,
    ) -> Result<Option<usize>> {
        self.ensure_rungs(make, progress)?;
        self.climb(player, make, start, progress)
    }

    /// Rates each of `players` (climbing from rung `start`; with none, the rungs alone), refits,
    /// writes `ratings.csv` into the player directory and returns the ratings.
    pub fn rate(
        &self,
        players: &[String],
        start: usize,
        make: &Maker,
        progress: &mut Progress,
    ) -> Result<Vec<Rating>> {
        // Every player is made before a game is played: a bad spec stops nothing half-way.
        let made: Vec<Arc<dyn PlayerFactory>> =
            players.iter().map(|p| make(p)).collect::<Result<_>>()?;
        self.ensure_rungs(make, progress)?;
        for (p, f) in players.iter().zip(&made) {
            self.climb(f, make, start, progress)
                .map_err(|e| Error::Spec(format!("rating {p}: {e}")))?;
        }
        let r = self.ratings()?;
        self.write_ratings(&r)?;
        Ok(r)
    }

    /// `ratings.csv` of the player directory, by rename.
    pub fn write_ratings(&self, r: &[Rating]) -> Result<()> {
        let dir = &self.cfg.dir;
        let io = |p: &Path| {
            let p = p.display().to_string();
            move |e| Error::Io { path: p, source: e }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let path = dir.join("ratings.csv");
        let tmp = dir.join(format!(".ratings.csv.{}.tmp", std::process::id()));
        std::fs::write(&tmp, ratings_csv(r))
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                io(&path)(e)
            })
    }

    /// Plays what is missing of `a` against `b` under `base`; returns `a`'s result.
    pub fn play(
        &self,
        base: &Path,
        a: &Arc<dyn PlayerFactory>,
        b: &Arc<dyn PlayerFactory>,
        progress: &mut Progress,
    ) -> Result<Wdl> {
        let (na, nb) = (a.name(), b.name());
        let dir = pairing_dir(base, &na, &nb);
        // Held until the pairing is played: everything below reads and writes the directory.
        let lock = DirLock::wait(&dir, LockMode::Exclusive, &mut |holder| {
            eprintln!("ladder: {na} vs {nb} is being played by {holder}; waiting for it to finish")
        })?;
        // The pairing is stored in the order it was first played.
        let (first, second, swapped) = match std::fs::read_to_string(dir.join("pairing.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<PairingFile>(&t).ok())
        {
            Some(p) if p.a == nb && p.b == na => (b, a, true),
            _ => (a, b, false),
        };
        std::fs::create_dir_all(&dir).map_err(|e| Error::Io {
            path: dir.display().to_string(),
            source: e,
        })?;
        let pf = dir.join("pairing.json");
        if !pf.exists() {
            let text = serde_json::to_string_pretty(&PairingFile {
                a: first.name(),
                b: second.name(),
            })
            .expect("two strings serialise");
            let tmp = dir.join(".pairing.json.tmp");
            std::fs::write(&tmp, text)
                .and_then(|_| std::fs::rename(&tmp, &pf))
                .map_err(|e| Error::Io {
                    path: pf.display().to_string(),
                    source: e,
                })?;
        }
        let mut writer = GameWriter::with_lock(
            lock,
            LockMode::Exclusive,
            &dir,
            &self.cfg.variant,
            &first.name(),
            &second.name(),
        )?;
        let done = writer.done().to_vec();
        let mut wdl = Wdl::default();
        if (done.len() as u64) < self.games_per_pairing() {
            let arena = Arena::new(
                MatchConfig {
                    variant: self.cfg.variant.clone(),
                    games: self.games_per_pairing(),
                    openings: self.openings.clone(),
                    concurrency: self.cfg.concurrency.max(1),
                    paired: true,
                    verify_endings: false,
                    sprt: None,
                    done: done.clone(),
                    time_control: self.cfg.time_control,
                },
                first.clone(),
                second.clone(),
            );
            let mut write_error = None;
            let (fa, fb) = (first.name(), second.name());
            arena.run(&mut |g, st| {
                if let Err(e) = writer.push(g) {
                    write_error.get_or_insert(e);
                }
                progress(&fa, &fb, st);
            });
            writer.flush()?;
            if let Some(e) = write_error {
                return Err(e);
            }
        }
        // Also a pairing finished by an older version, in one shard per game.
        writer.compact()?;
        for (_, s) in match_scores(&dir, &first.name(), &second.name())? {
            wdl.add(if swapped { s.flip() } else { s });
        }
        drop(writer);
        Ok(wdl)
    }

    /// Plays every adjacent pair of rungs (cached in the rung directory).
    pub fn ensure_rungs(
        &self,
        make: &dyn Fn(&str) -> Result<Arc<dyn PlayerFactory>>,
        progress: &mut Progress,
    ) -> Result<()> {
        let f: Vec<Arc<dyn PlayerFactory>> = self
            .cfg
            .rungs
            .iter()
            .map(|r| make(r))
            .collect::<Result<_>>()?;
        for w in f.windows(2) {
            self.play(&self.cfg.rung_dir, &w[1], &w[0], progress)?;
        }
        Ok(())
    }

    /// Rates `player`: from rung `start`, up while it scores at least half, down while it
    /// scores less from where it started. Returns the index of the highest rung it scored at
    /// least half against (None: not even the lowest it played).
    pub fn climb(
        &self,
        player: &Arc<dyn PlayerFactory>,
        make: &dyn Fn(&str) -> Result<Arc<dyn PlayerFactory>>,
        start: usize,
        progress: &mut Progress,
    ) -> Result<Option<usize>> {
        let n = self.cfg.rungs.len();
        let mut i = start.min(n - 1);
        let mut played = vec![None::<f64>; n];
        loop {
            let rung = make(&self.cfg.rungs[i])?;
            let wdl = self.play(&self.cfg.dir, player, &rung, progress)?;
            let s = wdl.points() / wdl.games().max(1) as f64;
            played[i] = Some(s);
            if s >= 0.5 {
                if i + 1 < n && played[i + 1].is_none() {
                    i += 1;
                    continue;
                }
            } else if i > 0 && played[i - 1].is_none() {
                i -= 1;
                continue;
            }
            break;
        }
        Ok((0..n).rev().find(|&k| played[k].is_some_and(|s| s >= 0.5)))
    }

    /// The pairings of this ladder: rung against rung in the rung directory, and any game with
    /// a rung in the player directory. Games against rungs of another ladder (another `--rungs`
    /// sharing a directory) are left out, so that two scales never mix.
    pub fn pairings(&self) -> Result<Vec<PairingResult>> {
        let rung = |n: &String| self.cfg.rungs.contains(n);
        let mut all: Vec<PairingResult> = read_pairings(&self.cfg.rung_dir)?
            .into_iter()
            .filter(|p| rung(&p.a) && rung(&p.b))
            .collect();
        if self.cfg.dir != self.cfg.rung_dir {
            all.extend(
                read_pairings(&self.cfg.dir)?
                    .into_iter()
                    .filter(|p| rung(&p.a) || rung(&p.b)),
            );
        }
        Ok(all)
    }

    /// The ratings of every player in the pairings, strongest first.
    pub fn ratings(&self) -> Result<Vec<Rating>> {
        let pairings = self.pairings()?;
        let mut names: Vec<String> = self.cfg.rungs.clone();
        for p in &pairings {
            for n in [&p.a, &p.b] {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
        }
        let index = |n: &str| {
            names
                .iter()
                .position(|x| x == n)
                .expect("every name is listed")
        };
        let games: Vec<Pairing> = pairings
            .iter()
            .map(|p| Pairing {
                a: index(&p.a),
                b: index(&p.b),
                wdl: p.wdl,
            })
            .collect();
        // Players without games (rungs not played yet) are left out of the fit.
        let mut played = vec![false; names.len()];
        for g in &games {
            if g.wdl.games() > 0 {
                played[g.a] = true;
                played[g.b] = true;
            }
        }
        let keep: Vec<usize> = (0..names.len()).filter(|&i| played[i]).collect();
        if keep.is_empty() {
            return Ok(Vec::new());
        }
        let anchor = names
            .iter()
            .position(|n| *n == self.cfg.anchor)
            .filter(|&a| played[a])
            .ok_or_else(|| {
                Error::Spec(format!(
                    "the anchor {} has no games in the ladder",
                    self.cfg.anchor
                ))
            })?;
        let remap = |i: usize| keep.iter().position(|&k| k == i).expect("kept");
        let games: Vec<Pairing> = games
            .iter()
            .filter(|g| g.wdl.games() > 0)
            .map(|g| Pairing {
                a: remap(g.a),
                b: remap(g.b),
                wdl: g.wdl,
            })
            .collect();
        let r = bradley_terry::fit(
            keep.len(),
            &games,
            remap(anchor),
            self.cfg.anchor_elo,
            self.cfg.prior_draws,
        )
        .map_err(|e| match e {
            bradley_terry::FitError::Disconnected(i) | bradley_terry::FitError::Unbounded(i) => {
                Error::Spec(format!("ladder fit: {}: {e}", names[keep[i]]))
            }
            e => Error::Spec(format!("ladder fit: {e}")),
        })?;
        let mut out: Vec<Rating> = keep
            .iter()
            .enumerate()
            .map(|(k, &i)| Rating {
                player: names[i].clone(),
                elo: r.elo[k],
                error: r.error[k],
                games: r.games[k],
                score: r.points[k] / r.games[k].max(1) as f64,
                rung: self.cfg.rungs.contains(&names[i]),
            })
            .collect();
        out.sort_by(|a, b| b.elo.total_cmp(&a.elo));
        Ok(out)
    }
}

impl varzero_datasets::Row for Rating {
    const COLUMNS: &'static [&'static str] =
        &["player", "elo", "error95", "games", "score", "rung"];
    fn line(&self) -> String {
        format!(
            "{},{:.1},{:.1},{},{:.4},{}",
            self.player, self.elo, self.error, self.games, self.score, self.rung
        )
    }
    fn read(
        f: &varzero_datasets::table::Fields,
    ) -> std::result::Result<Self, varzero_datasets::TableError> {
        Ok(Rating {
            player: f.raw("player")?.to_string(),
            elo: f.get("elo")?,
            error: f.get("error95")?,
            games: f.get("games")?,
            score: f.get("score")?,
            rung: f.get("rung")?,
        })
    }
}

/// The ratings as CSV: `player,elo,error95,games,score,rung`.
pub fn ratings_csv(r: &[Rating]) -> String {
    varzero_datasets::table::to_csv(r)
}

/// `ratings.csv` as written by [`ratings_csv`]; `None` when it is not there yet.
pub fn read_ratings(path: &Path) -> Result<Option<Vec<Rating>>> {
    Ok(varzero_datasets::table::read_csv(path).map_err(varzero_datasets::Error::from)?)
}

/// The ratings as an aligned text table.
pub fn ratings_table(r: &[Rating]) -> String {
    let w = r.iter().map(|x| x.player.len()).max().unwrap_or(6).max(6);
    let mut s = format!(
        "{:<w$}  {:>7}  {:>6}  {:>6}  {:>6}\n",
        "player", "elo", "+-95%", "games", "score"
    );
    for x in r {
        s.push_str(&format!(
            "{:<w$}  {:>+7.0}  {:>6.0}  {:>6}  {:>5.1}%{}\n",
            x.player,
            x.elo,
            x.error,
            x.games,
            100.0 * x.score,
            if x.rung { "" } else { "  *" }
        ));
    }
    s
}
