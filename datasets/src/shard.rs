//! Shards: write atomically, list, validate, and scan as a sliding window.

use crate::error::{Error, Result};
use crate::lock::{DirLock, LockMode};
use crate::records::*;
use polars::prelude::*;
use std::collections::HashSet;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A complete shard found in a dataset directory.
#[derive(Clone, Debug)]
pub struct ShardInfo {
    pub path: PathBuf,
    /// Sequence number from the name: larger is newer.
    pub seq: u64,
    pub positions: usize,
    pub games: usize,
}

/// A shard that could not be read, and why (reported by file name, then skipped).
#[derive(Clone, Debug)]
pub struct SkippedShard {
    pub path: PathBuf,
    pub reason: String,
}

impl std::fmt::Display for SkippedShard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} (skipped)", self.path.display(), self.reason)
    }
}

fn write_parquet(path: &Path, df: &mut DataFrame, schema: &str) -> Result<()> {
    let file = File::create(path).map_err(|e| Error::io(path.display(), e))?;
    ParquetWriter::new(file)
        .with_compression(ParquetCompression::Zstd(None))
        .with_key_value_metadata(Some(KeyValueMetadata::from_static(vec![(
            SCHEMA_KEY.to_string(),
            schema.to_string(),
        )])))
        .finish(df)
        .map_err(|e| Error::polars(path.display(), e))?;
    Ok(())
}

/// Writes one shard `DIR/SEQ-TAG/` atomically: both tables go to a temporary directory that is
/// renamed into place once complete (and synced).
pub fn write_shard(
    dir: &Path,
    seq: u64,
    tag: &str,
    positions: &[PositionRecord],
    games: &[GameRecord],
) -> Result<PathBuf> {
    fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    let name = format!("{seq:08}-{tag}");
    let tmp = dir.join(format!(".tmp-{name}"));
    write_tables(&tmp, positions, games)?;
    rename_in(dir, &tmp, &name)
}

/// Both tables of a shard into the directory `tmp` (made afresh and synced); a failure (a full
/// disk) leaves no temporary directory behind.
fn write_tables(tmp: &Path, positions: &[PositionRecord], games: &[GameRecord]) -> Result<()> {
    let _ = fs::remove_dir_all(tmp);
    fs::create_dir(tmp).map_err(|e| Error::io(tmp.display(), e))?;
    let written = (|| {
        let mut pdf = positions_frame(positions).map_err(|e| Error::polars(tmp.display(), e))?;
        let mut gdf = games_frame(games).map_err(|e| Error::polars(tmp.display(), e))?;
        write_parquet(&tmp.join("positions.parquet"), &mut pdf, POSITIONS_SCHEMA)?;
        write_parquet(&tmp.join("games.parquet"), &mut gdf, GAMES_SCHEMA)?;
        for f in ["positions.parquet", "games.parquet"] {
            let p = tmp.join(f);
            File::open(&p)
                .and_then(|f| f.sync_all())
                .map_err(|e| Error::io(p.display(), e))?;
        }
        Ok(())
    })();
    if written.is_err() {
        let _ = fs::remove_dir_all(tmp);
    }
    written
}

/// Renames the complete temporary shard `tmp` to `DIR/NAME` and syncs the directory.
fn rename_in(dir: &Path, tmp: &Path, name: &str) -> Result<PathBuf> {
    let dest = dir.join(name);
    if let Err(e) = fs::rename(tmp, &dest) {
        let _ = fs::remove_dir_all(tmp);
        return Err(Error::io(dest.display(), e));
    }
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(dest)
}

/// Rows and schema version of one Parquet file, or why it cannot be read.
fn inspect(path: &Path, expected: &str) -> std::result::Result<usize, String> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let mut reader = ParquetReader::new(file);
    let meta = reader
        .get_metadata()
        .map_err(|e| format!("not a readable Parquet file: {e}"))?;
    let version = meta.key_value_metadata.as_ref().and_then(|kv| {
        kv.iter()
            .find(|k| k.key == SCHEMA_KEY)
            .and_then(|k| k.value.clone())
    });
    match version {
        Some(v) if v == expected => Ok(meta.num_rows),
        Some(v) => Err(format!("schema '{v}', expected '{expected}'")),
        None => Err(format!("no '{SCHEMA_KEY}' metadata")),
    }
}

/// The shard directories of `dir` (complete or damaged; temporaries left out): name, sequence
/// number and path, in no order.
fn shard_dirs(dir: &Path) -> Result<Vec<(String, u64, PathBuf)>> {
    let mut out = Vec::new();
    if !dir.exists() {
        return Ok(out);
    }
    let entries = fs::read_dir(dir).map_err(|e| Error::io(dir.display(), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir.display(), e))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with('.') || !path.is_dir() {
            continue;
        }
        let Some(seq) = name.split('-').next().and_then(|s| s.parse::<u64>().ok()) else {
            continue;
        };
        out.push((name, seq, path));
    }
    Ok(out)
}

/// One shard directory checked: both tables readable with the expected schema.
fn shard_info(path: PathBuf, seq: u64) -> std::result::Result<ShardInfo, SkippedShard> {
    let p = inspect(&path.join("positions.parquet"), POSITIONS_SCHEMA);
    let g = inspect(&path.join("games.parquet"), GAMES_SCHEMA);
    match (p, g) {
        (Ok(positions), Ok(games)) => Ok(ShardInfo {
            path,
            seq,
            positions,
            games,
        }),
        (Err(e), _) => Err(SkippedShard {
            path: path.join("positions.parquet"),
            reason: e,
        }),
        (_, Err(e)) => Err(SkippedShard {
            path: path.join("games.parquet"),
            reason: e,
        }),
    }
}

/// The complete shards of a dataset directory that count, oldest first, and those that are
/// damaged: a shard a merged one stands for (a compaction stopped before it removed it) is left
/// out, so no reader sees its games twice (`compact.rs`).
pub fn list_shards(dir: &Path) -> Result<(Vec<ShardInfo>, Vec<SkippedShard>)> {
    crate::compact::live_shards(dir)
}

/// Every complete shard of a dataset directory, those a merged shard stands for included (for
/// compaction itself), and those that are damaged.
pub fn list_all_shards(dir: &Path) -> Result<(Vec<ShardInfo>, Vec<SkippedShard>)> {
    let mut shards = Vec::new();
    let mut skipped = Vec::new();
    for (_, seq, path) in shard_dirs(dir)? {
        match shard_info(path, seq) {
            Ok(s) => shards.push(s),
            Err(k) => skipped.push(k),
        }
    }
    shards.sort_by(|a, b| (a.seq, &a.path).cmp(&(b.seq, &b.path)));
    Ok((shards, skipped))
}

/// The game ids of one shard's games table (that column alone is read).
pub fn read_game_ids(shard: &Path) -> Result<Vec<u64>> {
    let p = shard.join("games.parquet");
    let file = File::open(&p).map_err(|e| Error::io(p.display(), e))?;
    let df = ParquetReader::new(file)
        .with_columns(Some(vec!["game_id".to_string()]))
        .finish()
        .map_err(|e| Error::polars(p.display(), e))?;
    let ids = df
        .column("game_id")
        .and_then(|c| c.u64().cloned())
        .map_err(|e| Error::polars(p.display(), e))?;
    Ok(ids.iter().flatten().collect())
}

/// The games a dataset directory holds, as a writer that shares it sees them: the shards read
/// so far (each is read once: [`Committed::refresh`] reads only those that appeared since) and
/// the next free sequence number.
#[derive(Debug, Default)]
pub struct Committed {
    read: HashSet<String>,
    ids: HashSet<u64>,
    next_seq: u64,
    /// Copies of a game already held, found by `refresh` (a directory from before
    /// commit-time checks, or a writer that does not check), and the first of them.
    duplicates: u64,
    first_duplicate: Option<(u64, String)>,
}

impl Committed {
    /// Reads the shards of `dir` that appeared since the last call (damaged ones hold nothing,
    /// as for readers); returns the game ids that were not known.
    pub fn refresh(&mut self, dir: &Path) -> Result<Vec<u64>> {
        let mut new = Vec::new();
        let mut dirs = shard_dirs(dir)?;
        dirs.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        for (name, seq, path) in dirs {
            self.next_seq = self.next_seq.max(seq + 1);
            if !self.read.insert(name.clone()) {
                continue;
            }
            let Ok(info) = shard_info(path, seq) else {
                continue;
            };
            for id in read_game_ids(&info.path)? {
                if self.ids.insert(id) {
                    new.push(id);
                } else {
                    self.duplicates += 1;
                    self.first_duplicate.get_or_insert((id, name.clone()));
                }
            }
        }
        Ok(new)
    }

    pub fn contains(&self, id: u64) -> bool {
        self.ids.contains(&id)
    }

    /// The games held whose ids are in `range`.
    pub fn ids_in<'a>(&'a self, range: &'a std::ops::Range<u64>) -> impl Iterator<Item = u64> + 'a {
        self.ids
            .iter()
            .copied()
            .filter(move |id| range.contains(id))
    }

    /// Games held (each once).
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Refused when a game was found more than once: the error names `dir`, a game and the
    /// command that repairs it.
    pub fn check_unique(&self, dir: &Path) -> Result<()> {
        match &self.first_duplicate {
            None => Ok(()),
            Some((id, shard)) => Err(duplicate_error(dir, *id, shard, self.duplicates)),
        }
    }
}

fn duplicate_error(dir: &Path, id: u64, shard: &str, copies: u64) -> Error {
    Error::Duplicate(format!(
        "{} holds game {id} more than once (seen twice: again in shard {shard}; {copies} extra {} in all): \
         `varzero repair {}` keeps one copy of each game",
        dir.display(),
        if copies == 1 { "copy" } else { "copies" },
        dir.display()
    ))
}

/// Refused when a game id is in `dir` more than once (two writers from before the
/// directory's lock, or a copied shard): what trains on, analyses or resumes a directory
/// calls this first, so a duplicated game is never counted twice.
pub fn check_unique(dir: &Path) -> Result<()> {
    let (shards, _) = list_shards(dir)?;
    let mut seen = HashSet::new();
    let mut first = None;
    let mut copies = 0u64;
    for s in &shards {
        for id in read_game_ids(&s.path)? {
            if !seen.insert(id) {
                copies += 1;
                first.get_or_insert_with(|| {
                    (
                        id,
                        s.path
                            .file_name()
                            .map(|n| n.to_string_lossy().to_string())
                            .unwrap_or_default(),
                    )
                });
            }
        }
    }
    match first {
        None => Ok(()),
        Some((id, shard)) => Err(duplicate_error(dir, id, &shard, copies)),
    }
}

/// What [`commit_shard`] did.
#[derive(Clone, Debug, Default)]
pub struct Commit {
    /// The shard written (None: every game of it was there already).
    pub path: Option<PathBuf>,
    /// Games and positions written.
    pub games: usize,
    pub positions: usize,
    /// Games left out because another writer had committed them.
    pub dropped: Vec<u64>,
    /// The games other writers committed since the last call (a writer need not play them).
    pub others: Vec<u64>,
}

/// Temporary shards of this process, numbered (a tag names the writer, this the shard).
static TMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// Writes one shard into `dir`, which other writers may be filling at once, so that no game
/// is there twice: the tables go to a temporary directory; then, under the directory's commit
/// lock, the games another writer committed meanwhile are dropped (the shard is rewritten
/// without them, or not written at all) and it is renamed in under the next free sequence
/// number. `committed` is the caller's view of `dir`, kept from one call to the next. The
/// check is by game id: a range writer plays game i as every other writer does.
pub fn commit_shard(
    dir: &Path,
    tag: &str,
    positions: &[PositionRecord],
    games: &[GameRecord],
    committed: &mut Committed,
) -> Result<Commit> {
    fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    let mut dropped = Vec::new();
    // Outside the lock first, so that the rewrite under it is the rare case.
    let mut others = committed.refresh(dir)?;
    let (mut pos, mut gs) = without(positions, games, committed, &mut dropped);
    if gs.is_empty() {
        return Ok(Commit {
            dropped,
            others,
            ..Commit::default()
        });
    }
    let tmp = dir.join(format!(
        ".tmp-{tag}-{}",
        TMP_SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    write_tables(&tmp, &pos, &gs)?;
    let _commit = match DirLock::commit(dir) {
        Ok(l) => l,
        Err(e) => {
            let _ = fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    match committed.refresh(dir) {
        Ok(more) => others.extend(more),
        Err(e) => {
            let _ = fs::remove_dir_all(&tmp);
            return Err(e);
        }
    }
    if gs.iter().any(|g| committed.contains(g.game_id)) {
        let _ = fs::remove_dir_all(&tmp);
        (pos, gs) = without(&pos, &gs, committed, &mut dropped);
        if gs.is_empty() {
            return Ok(Commit {
                dropped,
                others,
                ..Commit::default()
            });
        }
        write_tables(&tmp, &pos, &gs)?;
    }
    let name = format!("{:08}-{tag}", committed.next_seq);
    let path = rename_in(dir, &tmp, &name)?;
    committed.read.insert(name);
    committed.next_seq += 1;
    committed.ids.extend(gs.iter().map(|g| g.game_id));
    Ok(Commit {
        path: Some(path),
        games: gs.len(),
        positions: pos.len(),
        dropped,
        others,
    })
}

/// The positions and games whose game is not in `committed` (the others' ids pushed to
/// `dropped`).
fn without(
    positions: &[PositionRecord],
    games: &[GameRecord],
    committed: &Committed,
    dropped: &mut Vec<u64>,
) -> (Vec<PositionRecord>, Vec<GameRecord>) {
    let gs: Vec<GameRecord> = games
        .iter()
        .filter(|g| {
            let have = committed.contains(g.game_id);
            if have {
                dropped.push(g.game_id);
            }
            !have
        })
        .cloned()
        .collect();
    let pos = positions
        .iter()
        .filter(|p| !committed.contains(p.game_id))
        .cloned()
        .collect();
    (pos, gs)
}

/// What [`repair_duplicates`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Repair {
    /// Shards rewritten without their extra copies, and shards removed (all copies).
    pub rewritten: usize,
    pub removed: usize,
    /// Extra copies of games removed.
    pub copies: u64,
}

/// Keeps one copy of each game in `dir`: the first, in the shards' order (oldest first). A
/// shard holding a later copy is rewritten without it (or removed when nothing else is in it):
/// the rewritten shard is renamed in beside the old one, which is then renamed away and
/// deleted, so a crash at any point loses no game (at worst the copies are still there, and
/// a rerun removes them). Takes `dir`'s lock exclusively: refused while a writer is at work.
pub fn repair_duplicates(dir: &Path) -> Result<Repair> {
    let _lock = DirLock::acquire(dir, LockMode::Exclusive)?;
    crate::manifest::remove_temporaries(dir)?;
    let (shards, _) = list_shards(dir)?;
    let mut seen = HashSet::new();
    let mut out = Repair::default();
    for s in &shards {
        let ids = read_game_ids(&s.path)?;
        let mut here = HashSet::new();
        if ids.iter().all(|id| !seen.contains(id) && here.insert(*id)) {
            seen.extend(ids);
            continue;
        }
        let games = read_games(&s.path)?;
        let positions = read_positions(&s.path)?;
        let mut keep = HashSet::new();
        let kept: Vec<GameRecord> = games
            .into_iter()
            .filter(|g| !seen.contains(&g.game_id) && keep.insert(g.game_id))
            .collect();
        out.copies += (ids.len() - kept.len()) as u64;
        let kept_pos: Vec<PositionRecord> = positions
            .into_iter()
            .filter(|p| keep.contains(&p.game_id))
            .collect();
        let name = s
            .path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        // The same sequence number: the shard keeps its place in the window.
        let fixed = format!("{name}-r");
        let done_before = dir.join(&fixed).is_dir();
        if kept.is_empty() {
            out.removed += 1;
        } else if !done_before {
            let tmp = dir.join(format!(".tmp-repair-{name}"));
            write_tables(&tmp, &kept_pos, &kept)?;
            rename_in(dir, &tmp, &fixed)?;
            out.rewritten += 1;
        }
        let old = dir.join(format!(".tmp-repaired-{name}"));
        fs::rename(&s.path, &old).map_err(|e| Error::io(s.path.display(), e))?;
        fs::remove_dir_all(&old).map_err(|e| Error::io(old.display(), e))?;
        if kept.is_empty() || !done_before {
            seen.extend(keep);
        }
        // else: a repair killed after its rename left the rewritten shard, which comes later
        // in this listing and counts its games itself.
    }
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(out)
}

fn scan(paths: Vec<PathBuf>) -> PolarsResult<LazyFrame> {
    let frames = paths
        .iter()
        .map(|p| {
            // Never read `key=value` in a path as a hive partition column: a directory named
            // after a player (`fsf@nodes=100--material@400`) is just a name.
            let args = ScanArgsParquet {
                hive_options: HiveOptions::new_disabled(),
                ..ScanArgsParquet::default()
            };
            LazyFrame::scan_parquet(PlRefPath::try_from_path(p)?, args)
        })
        .collect::<PolarsResult<Vec<_>>>()?;
    if frames.is_empty() {
        return Err(PolarsError::NoData("no shards".into()));
    }
    concat(frames, UnionArgs::default())
}

/// The newest `n` positions across the shards of `dir` as a lazy frame (only the newest shards
/// that hold them are scanned), with the damaged shards that were skipped.
pub fn scan_positions_window(
    dir: &Path,
    n: usize,
) -> Result<(Option<LazyFrame>, Vec<SkippedShard>)> {
    scan_positions_window_dirs(&[dir.to_path_buf()], n)
}

/// As `scan_positions_window`, over several directories (in order, the last one newest), such
/// as the self-play directories of a run's generations.
pub fn scan_positions_window_dirs(
    dirs: &[PathBuf],
    n: usize,
) -> Result<(Option<LazyFrame>, Vec<SkippedShard>)> {
    let (lf, _, skipped) = scan_positions_window_sources(dirs, n)?;
    Ok((lf, skipped))
}

/// As `scan_positions_window_dirs`, with the rows of the frame each directory holds (one count
/// per directory, in order): the frame's rows are the directories' in that order, so row `r`
/// comes from the directory whose running count first exceeds `r`.
pub fn scan_positions_window_sources(
    dirs: &[PathBuf],
    n: usize,
) -> Result<(Option<LazyFrame>, Vec<usize>, Vec<SkippedShard>)> {
    let mut shards = Vec::new();
    let mut skipped = Vec::new();
    for (i, d) in dirs.iter().enumerate() {
        check_unique(d)?;
        let (s, k) = list_shards(d)?;
        shards.extend(s.into_iter().map(|s| (i, s)));
        skipped.extend(k);
    }
    let dir = dirs
        .last()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let mut chosen = Vec::new();
    let mut rows = 0;
    for (i, s) in shards.iter().rev() {
        if rows >= n {
            break;
        }
        rows += s.positions;
        chosen.push((*i, s));
    }
    let mut per_dir = vec![0usize; dirs.len()];
    if chosen.is_empty() {
        return Ok((None, per_dir, skipped));
    }
    chosen.reverse();
    // The slice drops the oldest rows, which are the first directories' first.
    let skip = rows.saturating_sub(n);
    let mut left = skip;
    for (i, s) in &chosen {
        let dropped = left.min(s.positions);
        left -= dropped;
        per_dir[*i] += s.positions - dropped;
    }
    let lf = scan(
        chosen
            .iter()
            .map(|(_, s)| s.path.join("positions.parquet"))
            .collect(),
    )
    .map_err(|e| Error::polars(&dir, e))?;
    Ok((Some(lf.slice(skip as i64, n as IdxSize)), per_dir, skipped))
}

/// All games of `dir` as a lazy frame.
pub fn scan_games(dir: &Path) -> Result<(Option<LazyFrame>, Vec<SkippedShard>)> {
    check_unique(dir)?;
    let (shards, skipped) = list_shards(dir)?;
    if shards.is_empty() {
        return Ok((None, skipped));
    }
    let lf = scan(
        shards
            .iter()
            .map(|s| s.path.join("games.parquet"))
            .collect(),
    )
    .map_err(|e| Error::polars(dir.display(), e))?;
    Ok((Some(lf), skipped))
}

fn read_df(path: &Path) -> Result<DataFrame> {
    let file = File::open(path).map_err(|e| Error::io(path.display(), e))?;
    ParquetReader::new(file)
        .finish()
        .map_err(|e| Error::polars(path.display(), e))
}

/// The positions of one shard.
pub fn read_positions(shard: &Path) -> Result<Vec<PositionRecord>> {
    let p = shard.join("positions.parquet");
    let df = read_df(&p)?;
    // A match's shard holds no positions: its empty list columns are stored without a type.
    if df.height() == 0 {
        return Ok(Vec::new());
    }
    positions_from_frame(&df).map_err(|e| Error::polars(p.display(), e))
}

/// The games of one shard.
pub fn read_games(shard: &Path) -> Result<Vec<GameRecord>> {
    let p = shard.join("games.parquet");
    let df = read_df(&p)?;
    games_from_frame(&df).map_err(|e| Error::polars(p.display(), e))
}
