//! Analysis of games tables: per variant and rules hash, the results from the first player's
//! view (W/D/L, draw rate, decisive rate and first-player score with Wilson 95% intervals), how
//! games ended, how long they were, and piece values fitted to the results.
//!
//! Piece values: the games' moves are replayed with the rules core and a few positions per game
//! are sampled (quiet ones: from ply [`AnalysisOptions::min_ply`] on, at least
//! [`AnalysisOptions::stable_plies`] plies after the last capture or promotion, side to move not
//! in check, and the move played from it not a capture, so that material is not in the middle
//! of an exchange; with [`AnalysisOptions::decisive_only`], from decisive games only). Each sample's features are, per non-royal piece kind, the count difference from
//! the side to move's view, plus a constant (the value of having the move) and ±1 for whether
//! the side to move is the game's first player. A logistic regression of the game's result from
//! the side to move's view (1, 1/2, 0; fractional targets) on these features gives one logit
//! coefficient per kind; values are the coefficients divided by the reference kind's, so the
//! reference is 1. The reference is the piece that promotes (the pawn, bia, dot; with several,
//! the one the variant file values lowest), or without one the non-royal piece the variant file
//! values lowest (the xiangqi soldier). Intervals: percentile bootstrap over games (positions
//! of a game are not independent), refitting on games drawn with replacement.

mod piece_values;
pub mod plots;
mod references;
mod report;
mod summary;

use crate::error::{Error, Result};
use crate::shard::SkippedShard;
pub use piece_values::{
    feature_columns, features, fit_piece_values, logistic_fit, reference_kind, sample_positions,
    Column, PieceValue, PieceValues, Sample,
};
use polars::prelude::*;
pub use references::ReferenceSet;
pub use report::{format_reports, format_reports_with, group_label};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
pub use summary::{analyze, LengthStats, TerminationCount};
use varzero_rules::Variant;
pub use varzero_stats::{
    erfc, two_mean_z, two_proportion_z, two_sided_p, wilson, Difference, Interval, Z95,
};

/// One game as the analysis needs it.
#[derive(Clone, Debug)]
pub struct GameRow {
    pub variant: String,
    pub rules_hash: String,
    pub result: String,
    pub termination: String,
    pub plies: u32,
    pub start_fen: String,
    pub moves: String,
}

/// Finds the variant a group of games was played under: by rules hash among the given
/// variants (files, `variant.toml` of dataset directories) and the built-in ones, else the
/// built-in variant of that name (noted: the rules differ).
#[derive(Default)]
pub struct VariantLookup {
    pub known: Vec<Arc<Variant>>,
}

impl VariantLookup {
    pub fn new() -> VariantLookup {
        let known = Variant::builtin_names()
            .filter_map(|n| Variant::builtin(n).ok())
            .collect();
        VariantLookup { known }
    }

    /// Adds a variant (tried before the built-in ones).
    pub fn add(&mut self, v: Arc<Variant>) {
        self.known.insert(0, v);
    }

    /// Adds `dir/variant.toml` if there is one: [`Error::Io`] when it cannot be read,
    /// [`Error::Variant`] when the rules core rejects it.
    pub fn add_dir(&mut self, dir: &Path) -> Result<()> {
        let p = dir.join("variant.toml");
        if p.exists() {
            let text = std::fs::read_to_string(&p).map_err(|e| Error::io(p.display(), e))?;
            let v =
                Variant::from_toml_str(&text, &p.display().to_string()).map_err(Error::Variant)?;
            self.add(v);
        }
        Ok(())
    }

    pub fn find(&self, name: &str, rules_hash: &str) -> (Option<Arc<Variant>>, Option<String>) {
        if let Some(v) = self
            .known
            .iter()
            .find(|v| format!("{:016x}", v.rules_hash) == rules_hash)
        {
            return (Some(v.clone()), None);
        }
        match Variant::builtin(name) {
            Ok(v) => (
                Some(v),
                Some(format!(
                    "no definition with rules hash {rules_hash}: moves replayed with the built-in \
                     {name} (pass its variant file to match)"
                )),
            ),
            Err(_) => (
                None,
                Some(format!(
                    "unknown variant '{name}' (rules hash {rules_hash}): no piece values"
                )),
            ),
        }
    }
}

/// Settings of the analysis.
#[derive(Clone, Debug)]
pub struct AnalysisOptions {
    /// Positions sampled per game (at most).
    pub samples_per_game: usize,
    /// Samples start at this ply.
    pub min_ply: u32,
    /// Samples are at least this many plies after the last capture or promotion (a position
    /// where material just changed is often still resolving: ianfab's chess-variant-stats
    /// samples well after the last change).
    pub stable_plies: u32,
    /// Fit the values to decisive games only (draws carry little information on material and
    /// dilute it).
    pub decisive_only: bool,
    /// Count a kind with extra moves inside a region (the Xiangqi soldier across the river)
    /// as one piece wherever it stands, instead of as two (outside and inside the region).
    pub pool_regions: bool,
    /// Bootstrap resamples for the piece-value intervals (0: none).
    pub bootstrap: usize,
    pub seed: u64,
    /// L2 penalty of the regression (in logit units, on all coefficients).
    pub ridge: f64,
    /// Bins of the game-length histogram.
    pub length_bins: usize,
    /// Games that ended so are left out (a player's failure, not the rules: `illegal-move`).
    pub exclude_terminations: Vec<String>,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions {
            samples_per_game: 8,
            min_ply: 6,
            stable_plies: 0,
            decisive_only: false,
            pool_regions: false,
            bootstrap: 200,
            seed: 1,
            ridge: 1.0,
            length_bins: 20,
            exclude_terminations: Vec::new(),
        }
    }
}

/// Everything about one (variant, rules hash) group.
#[derive(Clone, Debug, Serialize)]
pub struct GroupReport {
    pub variant: String,
    pub rules_hash: String,
    pub games: u64,
    pub first_wins: u64,
    pub draws: u64,
    pub second_wins: u64,
    pub draw_rate: Interval,
    pub decisive_rate: Interval,
    pub first_player_score: Interval,
    /// Variance of the first player's per-game score (for comparisons).
    pub first_player_score_var: f64,
    pub terminations: Vec<TerminationCount>,
    pub length: LengthStats,
    pub piece_values: Option<PieceValues>,
    pub notes: Vec<String>,
}

/// The games of dataset directories as one frame, with the damaged shards that were skipped.
pub fn scan_game_dirs(dirs: &[PathBuf]) -> Result<(Option<LazyFrame>, Vec<SkippedShard>)> {
    let mut frames = Vec::new();
    let mut skipped = Vec::new();
    // A game counted twice (a directory given twice, or copied) would bias every figure: the
    // same game is the same variant, rules, id, seed, moves and players (matches number their
    // games from 0 with seed 0: the moves and the players, recorded in `search`, tell two
    // matches' game 1 apart, even when two engines play the same moves).
    let mut seen: std::collections::HashMap<(String, String, u64, u64, u64), &PathBuf> =
        std::collections::HashMap::new();
    let mut canonical = std::collections::HashMap::new();
    for d in dirs {
        let c = std::fs::canonicalize(d).unwrap_or_else(|_| d.clone());
        if let Some(first) = canonical.insert(c, d) {
            return Err(Error::Duplicate(format!(
                "{} is given twice (also as {})",
                d.display(),
                first.display()
            )));
        }
        let (lf, s) = crate::shard::scan_games(d)?;
        skipped.extend(s);
        if let Some(lf) = lf {
            let ids = lf
                .clone()
                .select([
                    col("variant"),
                    col("rules_hash"),
                    col("game_id"),
                    col("seed"),
                    col("moves"),
                    col("search"),
                ])
                .collect()
                .map_err(|e| Error::polars(d.display(), e))?;
            let col_str = |n: &str| -> Result<Vec<String>> {
                let ca = ids
                    .column(n)
                    .and_then(|c| c.str().cloned())
                    .map_err(|e| Error::polars(d.display(), e))?;
                Ok(ca
                    .iter()
                    .map(|x| x.unwrap_or_default().to_string())
                    .collect())
            };
            let col_u64 = |n: &str| -> Result<Vec<u64>> {
                let ca = ids
                    .column(n)
                    .and_then(|c| c.cast(&DataType::UInt64))
                    .and_then(|c| c.u64().cloned())
                    .map_err(|e| Error::polars(d.display(), e))?;
                Ok(ca.iter().map(|x| x.unwrap_or_default()).collect())
            };
            let (vs, hs, gs, ss) = (
                col_str("variant")?,
                col_str("rules_hash")?,
                col_u64("game_id")?,
                col_u64("seed")?,
            );
            let ms: Vec<u64> = col_str("moves")?
                .iter()
                .zip(col_str("search")?)
                .map(|(m, who)| {
                    use std::hash::{Hash, Hasher};
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    (m, who).hash(&mut h);
                    h.finish()
                })
                .collect();
            for ((((v, h), g), sd), mh) in vs.into_iter().zip(hs).zip(gs).zip(ss).zip(ms) {
                let key = (v, h, g, sd, mh);
                if let Some(first) = seen.get(&key) {
                    return Err(Error::Duplicate(format!(
                        "game {} of {} (seed {}) is in {} and again in {}",
                        key.2,
                        key.0,
                        key.3,
                        first.display(),
                        d.display()
                    )));
                }
                seen.insert(key, d);
            }
            frames.push(lf.select([
                col("variant"),
                col("rules_hash"),
                col("result"),
                col("termination"),
                col("plies"),
                col("start_fen"),
                col("moves"),
            ]));
        }
    }
    if frames.is_empty() {
        return Ok((None, skipped));
    }
    let lf = concat(frames, UnionArgs::default()).map_err(|e| Error::polars("games", e))?;
    Ok((Some(lf), skipped))
}

pub(super) fn pe(e: PolarsError) -> Error {
    Error::polars("analysis", e)
}
