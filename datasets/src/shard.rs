//! Shards: write atomically, list, validate, and scan as a sliding window.

use crate::error::{Error, Result};
use crate::records::*;
use polars::prelude::*;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

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
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir(&tmp).map_err(|e| Error::io(tmp.display(), e))?;
    // A failure (a full disk) leaves no temporary directory behind.
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
    if let Err(e) = written {
        let _ = fs::remove_dir_all(&tmp);
        return Err(e);
    }
    let dest = dir.join(&name);
    if let Err(e) = fs::rename(&tmp, &dest) {
        let _ = fs::remove_dir_all(&tmp);
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

/// The complete shards of a dataset directory, oldest first, and those that are damaged.
pub fn list_shards(dir: &Path) -> Result<(Vec<ShardInfo>, Vec<SkippedShard>)> {
    let mut shards = Vec::new();
    let mut skipped = Vec::new();
    if !dir.exists() {
        return Ok((shards, skipped));
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
        let p = inspect(&path.join("positions.parquet"), POSITIONS_SCHEMA);
        let g = inspect(&path.join("games.parquet"), GAMES_SCHEMA);
        match (p, g) {
            (Ok(positions), Ok(games)) => shards.push(ShardInfo {
                path,
                seq,
                positions,
                games,
            }),
            (Err(e), _) => skipped.push(SkippedShard {
                path: path.join("positions.parquet"),
                reason: e,
            }),
            (_, Err(e)) => skipped.push(SkippedShard {
                path: path.join("games.parquet"),
                reason: e,
            }),
        }
    }
    shards.sort_by(|a, b| (a.seq, &a.path).cmp(&(b.seq, &b.path)));
    Ok((shards, skipped))
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
    let mut shards = Vec::new();
    let mut skipped = Vec::new();
    for d in dirs {
        let (s, k) = list_shards(d)?;
        shards.extend(s);
        skipped.extend(k);
    }
    let dir = dirs
        .last()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let mut chosen = Vec::new();
    let mut rows = 0;
    for s in shards.iter().rev() {
        if rows >= n {
            break;
        }
        rows += s.positions;
        chosen.push(s.path.join("positions.parquet"));
    }
    if chosen.is_empty() {
        return Ok((None, skipped));
    }
    chosen.reverse();
    let lf = scan(chosen).map_err(|e| Error::polars(&dir, e))?;
    let skip = rows.saturating_sub(n);
    Ok((Some(lf.slice(skip as i64, n as IdxSize)), skipped))
}

/// All games of `dir` as a lazy frame.
pub fn scan_games(dir: &Path) -> Result<(Option<LazyFrame>, Vec<SkippedShard>)> {
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
    positions_from_frame(&df).map_err(|e| Error::polars(p.display(), e))
}

/// The games of one shard.
pub fn read_games(shard: &Path) -> Result<Vec<GameRecord>> {
    let p = shard.join("games.parquet");
    let df = read_df(&p)?;
    games_from_frame(&df).map_err(|e| Error::polars(p.display(), e))
}
