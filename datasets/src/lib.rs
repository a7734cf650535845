//! Datasets: the Parquet schema of self-play data and how it is stored. A dataset directory
//! holds shards; each shard is a directory `NNNNNNNN-TAG/` with `positions.parquet` (one row
//! per position: FEN, sparse policy target, game result and root value, from the side to
//! move's view) and `games.parquet` (one row per game). A shard appears by renaming a finished
//! temporary directory, so readers never see half a shard and an interrupted writer loses no
//! finished one. The schema version is stored in each file's key-value metadata, and `dataset.json` names
//! the variant and rules hash the directory holds (never mixed). Readers return
//! polars `LazyFrame`s over the newest shards (a sliding window), reading only what they need.
#![forbid(unsafe_code)]

pub mod analysis;
mod compact;
mod error;
mod lock;
mod manifest;
mod records;
mod shard;
pub mod table;

pub use compact::{
    compact, compact_with, duplicate_games, read_live_games, remove_superseded, seq_range,
    superseded, CompactStep, Compaction, COMPACT_GAMES, COMPACT_POSITIONS, COMPACT_TAG,
};
pub use error::{Error, FitError, Result};
pub use lock::{DirLock, LockMode, COMMIT_LOCK_FILE, LOCK_FILE};
pub use manifest::{
    claim, claim_shared, common_rules, read_rules, remove_temporaries, write_variant_file,
    DatasetRules, MANIFEST,
};
pub use polars;
pub use records::{
    games_from_frame, positions_from_frame, GameRecord, PositionRecord, GAMES_SCHEMA,
    POSITIONS_SCHEMA, SCHEMA_KEY,
};
pub use shard::{
    check_unique, commit_shard, list_shards, read_game_ids, read_games, read_positions,
    repair_duplicates, scan_games, scan_positions_window, scan_positions_window_dirs,
    scan_positions_window_sources, write_shard, Commit, Committed, Repair, ShardInfo, SkippedShard,
};
pub use table::{Row, TableError};
