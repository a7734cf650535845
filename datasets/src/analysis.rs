//! Analysis of games tables: per variant and rules hash, the results from the first player's
//! view (W/D/L, draw rate, decisive rate and first-player score with Wilson 95% intervals), how
//! games ended, how long they were, and piece values fitted to the results.
//!
//! Piece values: the games' moves are replayed with the rules core and a few positions per game
//! are sampled (quiet ones: from ply [`AnalysisOptions::min_ply`] on, side to move not in check,
//! and the move played from it not a capture, so that material is not in the middle of an
//! exchange). Each sample's features are, per non-royal piece kind, the count difference from
//! the side to move's view, plus a constant (the value of having the move) and ±1 for whether
//! the side to move is the game's first player. A logistic regression of the game's result from
//! the side to move's view (1, 1/2, 0; fractional targets) on these features gives one logit
//! coefficient per kind; values are the coefficients divided by the reference kind's, so the
//! reference is 1. The reference is the piece that promotes (the pawn, bia, dot; with several,
//! the one the variant file values lowest), or without one the non-royal piece the variant file
//! values lowest (the xiangqi soldier). Intervals: percentile bootstrap over games (positions
//! of a game are not independent), refitting on games drawn with replacement.

pub mod plots;

use crate::error::{Error, Result};
use crate::shard::{scan_games, SkippedShard};
use polars::prelude::*;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use varzero_rules::{Color, Position, Variant};
use varzero_stats::Rng;
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

    /// Adds `dir/variant.toml` if there is one.
    pub fn add_dir(&mut self, dir: &Path) -> std::result::Result<(), String> {
        let p = dir.join("variant.toml");
        if p.exists() {
            let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            let v = Variant::from_toml_str(&text, &p.display().to_string())
                .map_err(|e| e.lines().join("; "))?;
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
    /// Bootstrap resamples for the piece-value intervals (0: none).
    pub bootstrap: usize,
    pub seed: u64,
    /// L2 penalty of the regression (in logit units, on all coefficients).
    pub ridge: f64,
    /// Bins of the game-length histogram.
    pub length_bins: usize,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions {
            samples_per_game: 8,
            min_ply: 6,
            bootstrap: 200,
            seed: 1,
            ridge: 1.0,
            length_bins: 20,
        }
    }
}

/// Game-length distribution, in plies.
#[derive(Clone, Debug, Serialize)]
pub struct LengthStats {
    pub mean: f64,
    pub min: u32,
    pub p10: f64,
    pub p25: f64,
    pub median: f64,
    pub p75: f64,
    pub p90: f64,
    pub max: u32,
    /// (from, to exclusive, games)
    pub histogram: Vec<(u32, u32, u64)>,
}

/// How many games ended one way, with the results.
#[derive(Clone, Debug, Serialize)]
pub struct TerminationCount {
    pub termination: String,
    pub games: u64,
    pub first_wins: u64,
    pub draws: u64,
    pub second_wins: u64,
}

/// One piece kind's fitted value.
#[derive(Clone, Debug, Serialize)]
pub struct PieceValue {
    pub letter: char,
    pub name: String,
    /// Value in reference pieces, with its bootstrap interval.
    pub value: f64,
    pub lower: f64,
    pub upper: f64,
    /// The logit coefficient (per piece of advantage).
    pub logit: f64,
    /// The value in the variant file (what the material evaluator used).
    pub file_value: f32,
    /// Samples where the two sides had a different number of this piece.
    pub imbalanced_samples: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct PieceValues {
    /// FEN letter of the unit piece, and why it was chosen.
    pub reference: char,
    pub reference_rule: String,
    pub samples: usize,
    pub games: usize,
    pub values: Vec<PieceValue>,
    /// Logit of having the move, and of being the first player (each with its interval).
    pub side_to_move: Interval,
    pub first_player: Interval,
    /// The reference piece's logit with its interval: when the interval reaches 0 the unit is
    /// not measured and the values' intervals are unbounded in practice.
    pub reference_logit: Interval,
}

impl PieceValues {
    /// Whether the unit piece's effect is distinguishable from zero (its interval above 0).
    pub fn reference_measured(&self) -> bool {
        self.reference_logit.lower > 0.0
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

impl GroupReport {
    /// The JSON form: rates as numbers with `*_interval` pairs, `piece_values` as a map from
    /// FEN letter to value (`piece_value_intervals`, `piece_value_details` beside it).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::{json, Map, Value};
        let iv = |i: &Interval| json!([i.lower, i.upper]);
        let mut values = Map::new();
        let mut intervals = Map::new();
        if let Some(pv) = &self.piece_values {
            for p in &pv.values {
                values.insert(p.letter.to_string(), json!(p.value));
                intervals.insert(p.letter.to_string(), json!([p.lower, p.upper]));
            }
        }
        let terminations: Map<String, Value> = self
            .terminations
            .iter()
            .map(|t| {
                (
                    t.termination.clone(),
                    json!({
                        "games": t.games,
                        "first_wins": t.first_wins,
                        "draws": t.draws,
                        "second_wins": t.second_wins,
                    }),
                )
            })
            .collect();
        json!({
            "variant": self.variant,
            "rules_hash": self.rules_hash,
            "games": self.games,
            "first_wins": self.first_wins,
            "draws": self.draws,
            "second_wins": self.second_wins,
            "draw_rate": self.draw_rate.value,
            "draw_rate_interval": iv(&self.draw_rate),
            "decisive_rate": self.decisive_rate.value,
            "decisive_rate_interval": iv(&self.decisive_rate),
            "first_player_score": self.first_player_score.value,
            "first_player_score_interval": iv(&self.first_player_score),
            "terminations": terminations,
            "length": self.length,
            "piece_values": values,
            "piece_value_intervals": intervals,
            "piece_value_details": self.piece_values,
            "notes": self.notes,
        })
    }
}

/// The games of dataset directories as one frame, with the damaged shards that were skipped.
pub fn scan_game_dirs(dirs: &[PathBuf]) -> Result<(Option<LazyFrame>, Vec<SkippedShard>)> {
    let mut frames = Vec::new();
    let mut skipped = Vec::new();
    // A game counted twice (a directory given twice, or copied) would bias every figure: the
    // same game is the same variant, rules, id and seed.
    let mut seen: std::collections::HashMap<(String, String, u64, u64), &PathBuf> =
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
        let (lf, s) = scan_games(d)?;
        skipped.extend(s);
        if let Some(lf) = lf {
            let ids = lf
                .clone()
                .select([
                    col("variant"),
                    col("rules_hash"),
                    col("game_id"),
                    col("seed"),
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
            for (((v, h), g), sd) in vs.into_iter().zip(hs).zip(gs).zip(ss) {
                let key = (v, h, g, sd);
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

fn pe(e: PolarsError) -> Error {
    Error::polars("analysis", e)
}

/// The first player's result of each game (1, 1/2, 0) from the start FEN's side to move and
/// the result, as a column `first_score` (null for a result that is not 1-0, 0-1 or 1/2-1/2).
fn with_first_score(df: &mut DataFrame) -> Result<()> {
    let results = df.column("result").map_err(pe)?.str().map_err(pe)?.clone();
    let fens = df
        .column("start_fen")
        .map_err(pe)?
        .str()
        .map_err(pe)?
        .clone();
    let score: Vec<Option<f64>> = results
        .iter()
        .zip(fens.iter())
        .map(|(r, f)| {
            let white_first = f.and_then(|f| f.split_whitespace().nth(1)) != Some("b");
            let white = match r? {
                "1-0" => 1.0,
                "0-1" => 0.0,
                "1/2-1/2" => 0.5,
                _ => return None,
            };
            Some(if white_first { white } else { 1.0 - white })
        })
        .collect();
    df.with_column(Column::new("first_score".into(), score))
        .map_err(pe)?;
    Ok(())
}

fn f64_at(df: &DataFrame, c: &str, i: usize) -> f64 {
    df.column(c)
        .ok()
        .and_then(|c| c.get(i).ok())
        .and_then(|v| v.extract::<f64>())
        .unwrap_or(f64::NAN)
}

fn str_col(df: &DataFrame, c: &str) -> Result<Vec<String>> {
    Ok(df
        .column(c)
        .map_err(pe)?
        .str()
        .map_err(pe)?
        .iter()
        .map(|s| s.unwrap_or_default().to_string())
        .collect())
}

/// Analyses the games of a frame (the columns of the games table), one report per variant and
/// rules hash, sorted by variant then hash.
pub fn analyze(
    games: LazyFrame,
    lookup: &VariantLookup,
    opts: &AnalysisOptions,
) -> Result<Vec<GroupReport>> {
    let mut df = games.collect().map_err(pe)?;
    with_first_score(&mut df)?;
    let keys = [col("variant"), col("rules_hash")];
    let is = |c: &str, v: &str| col(c).eq(lit(v.to_string())).cast(DataType::UInt64).sum();
    let summary = df
        .clone()
        .lazy()
        .group_by(keys.clone())
        .agg([
            len().cast(DataType::UInt64).alias("games"),
            col("first_score")
                .eq(lit(1.0))
                .cast(DataType::UInt64)
                .sum()
                .alias("first_wins"),
            is("result", "1/2-1/2").alias("draws"),
            col("first_score")
                .eq(lit(0.0))
                .cast(DataType::UInt64)
                .sum()
                .alias("second_wins"),
            col("first_score").mean().alias("score_mean"),
            col("first_score").var(0).alias("score_var"),
            col("plies")
                .cast(DataType::Float64)
                .mean()
                .alias("len_mean"),
            col("plies").min().cast(DataType::UInt32).alias("len_min"),
            col("plies").max().cast(DataType::UInt32).alias("len_max"),
            col("plies")
                .cast(DataType::Float64)
                .quantile(lit(0.1), QuantileMethod::Linear)
                .alias("p10"),
            col("plies")
                .cast(DataType::Float64)
                .quantile(lit(0.25), QuantileMethod::Linear)
                .alias("p25"),
            col("plies")
                .cast(DataType::Float64)
                .quantile(lit(0.5), QuantileMethod::Linear)
                .alias("p50"),
            col("plies")
                .cast(DataType::Float64)
                .quantile(lit(0.75), QuantileMethod::Linear)
                .alias("p75"),
            col("plies")
                .cast(DataType::Float64)
                .quantile(lit(0.9), QuantileMethod::Linear)
                .alias("p90"),
        ])
        .sort(["variant", "rules_hash"], SortMultipleOptions::default())
        .collect()
        .map_err(pe)?;
    let terms = df
        .clone()
        .lazy()
        .group_by([col("variant"), col("rules_hash"), col("termination")])
        .agg([
            len().cast(DataType::UInt64).alias("games"),
            col("first_score")
                .eq(lit(1.0))
                .cast(DataType::UInt64)
                .sum()
                .alias("first_wins"),
            is("result", "1/2-1/2").alias("draws"),
            col("first_score")
                .eq(lit(0.0))
                .cast(DataType::UInt64)
                .sum()
                .alias("second_wins"),
        ])
        .sort(
            ["variant", "rules_hash", "games"],
            SortMultipleOptions::default().with_order_descending_multi([false, false, true]),
        )
        .collect()
        .map_err(pe)?;

    let all_variant = str_col(&df, "variant")?;
    let all_hash = str_col(&df, "rules_hash")?;
    let all_plies: Vec<u32> = df
        .column("plies")
        .map_err(pe)?
        .u32()
        .map_err(pe)?
        .iter()
        .map(|p| p.unwrap_or(0))
        .collect();
    let sv = str_col(&summary, "variant")?;
    let sh = str_col(&summary, "rules_hash")?;
    let (tv, th, tt) = (
        str_col(&terms, "variant")?,
        str_col(&terms, "rules_hash")?,
        str_col(&terms, "termination")?,
    );
    let u = |d: &DataFrame, c: &str, i: usize| f64_at(d, c, i) as u64;
    let mut reports = Vec::new();
    for g in 0..summary.height() {
        let games = u(&summary, "games", g);
        let (fw, dr, sw) = (
            u(&summary, "first_wins", g),
            u(&summary, "draws", g),
            u(&summary, "second_wins", g),
        );
        let n = games as f64;
        let rows: Vec<usize> = (0..df.height())
            .filter(|&i| all_variant[i] == sv[g] && all_hash[i] == sh[g])
            .collect();
        let plies: Vec<u32> = rows.iter().map(|&i| all_plies[i]).collect();
        let terminations = (0..terms.height())
            .filter(|&i| tv[i] == sv[g] && th[i] == sh[g])
            .map(|i| TerminationCount {
                termination: tt[i].clone(),
                games: u(&terms, "games", i),
                first_wins: u(&terms, "first_wins", i),
                draws: u(&terms, "draws", i),
                second_wins: u(&terms, "second_wins", i),
            })
            .collect();
        let mut notes = Vec::new();
        let decided = (fw + dr + sw) as f64;
        if decided < n {
            notes.push(format!(
                "{} games with an unknown result are left out of the rates",
                games - (fw + dr + sw)
            ));
        }
        let length = LengthStats {
            mean: f64_at(&summary, "len_mean", g),
            min: u(&summary, "len_min", g) as u32,
            p10: f64_at(&summary, "p10", g),
            p25: f64_at(&summary, "p25", g),
            median: f64_at(&summary, "p50", g),
            p75: f64_at(&summary, "p75", g),
            p90: f64_at(&summary, "p90", g),
            max: u(&summary, "len_max", g) as u32,
            histogram: histogram(&plies, opts.length_bins),
        };
        let (variant, note) = lookup.find(&sv[g], &sh[g]);
        notes.extend(note);
        let piece_values = match &variant {
            Some(v) => {
                let rows: Vec<GameRow> = rows
                    .iter()
                    .map(|&i| -> Result<GameRow> {
                        let s = |c: &str| -> Result<String> {
                            Ok(df
                                .column(c)
                                .map_err(pe)?
                                .str()
                                .map_err(pe)?
                                .get(i)
                                .unwrap_or_default()
                                .to_string())
                        };
                        Ok(GameRow {
                            variant: sv[g].clone(),
                            rules_hash: sh[g].clone(),
                            result: s("result")?,
                            termination: s("termination")?,
                            plies: all_plies[i],
                            start_fen: s("start_fen")?,
                            moves: s("moves")?,
                        })
                    })
                    .collect::<Result<_>>()?;
                let (samples, bad) = sample_positions(v, &rows, opts);
                if bad > 0 {
                    notes.push(format!(
                        "{bad} games could not be replayed (a FEN or move the rules reject)"
                    ));
                }
                match fit_piece_values(v, &samples, opts) {
                    Ok(pv) => {
                        if !pv.reference_measured() && opts.bootstrap > 0 {
                            notes.push(format!(
                                "the {} logit's interval [{:.3}, {:.3}] reaches 0: the unit is \
                                 not measured, so the values' intervals are very wide (more \
                                 games, or more decisive ones, are needed)",
                                pv.reference, pv.reference_logit.lower, pv.reference_logit.upper
                            ));
                        }
                        Some(pv)
                    }
                    Err(e) => {
                        notes.push(format!("piece values: {e}"));
                        None
                    }
                }
            }
            None => None,
        };
        reports.push(GroupReport {
            variant: sv[g].clone(),
            rules_hash: sh[g].clone(),
            games,
            first_wins: fw,
            draws: dr,
            second_wins: sw,
            draw_rate: wilson(dr as f64, decided, Z95),
            decisive_rate: wilson((fw + sw) as f64, decided, Z95),
            first_player_score: wilson(fw as f64 + 0.5 * dr as f64, decided, Z95),
            first_player_score_var: f64_at(&summary, "score_var", g),
            terminations,
            length,
            piece_values,
            notes,
        });
    }
    Ok(reports)
}

fn histogram(plies: &[u32], bins: usize) -> Vec<(u32, u32, u64)> {
    let (Some(&lo), Some(&hi)) = (plies.iter().min(), plies.iter().max()) else {
        return Vec::new();
    };
    let bins = bins.max(1) as u32;
    let width = ((hi - lo) / bins + 1).max(1);
    let start = lo / width * width;
    let n = (hi - start) / width + 1;
    let mut h: Vec<(u32, u32, u64)> = (0..n)
        .map(|i| (start + i * width, start + (i + 1) * width, 0))
        .collect();
    for &p in plies {
        h[((p - start) / width) as usize].2 += 1;
    }
    h
}

/// One sampled position: features, the result from its side to move's view, and its game.
#[derive(Clone, Debug)]
pub struct Sample {
    pub game: usize,
    /// Per non-royal kind (in the variant's order) the count difference, then the constant 1,
    /// then +1/-1 for the side to move being the first player.
    pub x: Vec<f64>,
    pub y: f64,
}

/// The non-royal kinds of a variant, in order.
pub fn feature_kinds(v: &Variant) -> Vec<usize> {
    (0..v.pieces.len())
        .filter(|&k| !v.pieces[k].royal)
        .collect()
}

/// The features of a position (see [`Sample::x`]) for its side to move.
pub fn features(pos: &Position, kinds: &[usize], first: Color) -> Vec<f64> {
    let stm = pos.side_to_move();
    let mut x: Vec<f64> = kinds
        .iter()
        .map(|&k| pos.count(k, stm) as f64 - pos.count(k, !stm) as f64)
        .collect();
    x.push(1.0);
    x.push(if stm == first { 1.0 } else { -1.0 });
    x
}

/// Replays the games and samples quiet positions (see the module notes). Returns the samples
/// and the number of games that could not be replayed.
pub fn sample_positions(
    v: &Arc<Variant>,
    games: &[GameRow],
    opts: &AnalysisOptions,
) -> (Vec<Sample>, usize) {
    let kinds = feature_kinds(v);
    let mut out = Vec::new();
    let mut bad = 0;
    let mut rng = Rng::new(opts.seed ^ 0x5a5a_0f0f);
    for (gi, g) in games.iter().enumerate() {
        let white = match g.result.as_str() {
            "1-0" => 1.0,
            "0-1" => 0.0,
            "1/2-1/2" => 0.5,
            _ => continue,
        };
        let Ok(mut pos) = Position::from_fen(v, &g.start_fen) else {
            bad += 1;
            continue;
        };
        let first = pos.side_to_move();
        let mut candidates: Vec<(Vec<f64>, f64)> = Vec::new();
        let mut ok = true;
        for (ply, m) in g.moves.split_whitespace().enumerate() {
            let Ok(mv) = pos.parse_uci(m) else {
                ok = false;
                break;
            };
            let capture = pos.piece_at(mv.to_sq()).is_some();
            if ply as u32 >= opts.min_ply && !capture && !pos.in_check() {
                let stm = pos.side_to_move();
                let y = if stm == Color::White {
                    white
                } else {
                    1.0 - white
                };
                candidates.push((features(&pos, &kinds, first), y));
            }
            pos.make(mv);
        }
        if !ok {
            bad += 1;
            continue;
        }
        // Up to `samples_per_game` of them, drawn without replacement.
        let k = opts.samples_per_game.min(candidates.len());
        for j in 0..k {
            let pick = j + rng.below(candidates.len() - j);
            candidates.swap(j, pick);
            let (x, y) = candidates[j].clone();
            out.push(Sample { game: gi, x, y });
        }
    }
    (out, bad)
}

/// Solves `a x = b` (a symmetric positive definite `d x d`, row-major) by Gaussian elimination
/// with partial pivoting; None when singular.
fn solve(mut a: Vec<f64>, mut b: Vec<f64>, d: usize) -> Option<Vec<f64>> {
    for c in 0..d {
        let p = (c..d).max_by(|&i, &j| a[i * d + c].abs().total_cmp(&a[j * d + c].abs()))?;
        if a[p * d + c].abs() < 1e-12 {
            return None;
        }
        if p != c {
            for k in 0..d {
                a.swap(p * d + k, c * d + k);
            }
            b.swap(p, c);
        }
        for r in c + 1..d {
            let f = a[r * d + c] / a[c * d + c];
            if f != 0.0 {
                for k in c..d {
                    a[r * d + k] -= f * a[c * d + k];
                }
                b[r] -= f * b[c];
            }
        }
    }
    let mut x = vec![0.0; d];
    for r in (0..d).rev() {
        let s: f64 = (r + 1..d).map(|k| a[r * d + k] * x[k]).sum();
        x[r] = (b[r] - s) / a[r * d + r];
    }
    Some(x)
}

/// Logistic regression with fractional targets by Newton's method: minimises
/// `-Σ w_i [y_i ln p_i + (1-y_i) ln(1-p_i)] + ridge/2 |β|²` with `p_i = σ(x_i·β)`; `weights`
/// count each sample (the bootstrap's multiplicities).
pub fn logistic_fit(samples: &[Sample], weights: &[f64], ridge: f64) -> Option<Vec<f64>> {
    let d = samples.first()?.x.len();
    let mut beta = vec![0.0; d];
    for _ in 0..100 {
        let mut grad: Vec<f64> = beta.iter().map(|b| ridge * b).collect();
        let mut hess = vec![0.0; d * d];
        for i in 0..d {
            hess[i * d + i] = ridge;
        }
        for (s, &w) in samples.iter().zip(weights) {
            if w == 0.0 {
                continue;
            }
            let z: f64 = s.x.iter().zip(&beta).map(|(x, b)| x * b).sum();
            let p = 1.0 / (1.0 + (-z).exp());
            let r = w * (p - s.y);
            let h = w * (p * (1.0 - p)).max(1e-12);
            for (i, &xi) in s.x.iter().enumerate() {
                if xi == 0.0 {
                    continue;
                }
                grad[i] += r * xi;
                for (j, &xj) in s.x.iter().enumerate().skip(i) {
                    hess[i * d + j] += h * xi * xj;
                }
            }
        }
        for i in 0..d {
            for j in 0..i {
                hess[i * d + j] = hess[j * d + i];
            }
        }
        let step = solve(hess, grad, d)?;
        let mut size: f64 = 0.0;
        for (b, s) in beta.iter_mut().zip(&step) {
            *b -= s;
            size = size.max(s.abs());
        }
        if !beta.iter().all(|b| b.is_finite()) {
            return None;
        }
        if size < 1e-9 {
            break;
        }
    }
    Some(beta)
}

/// The unit piece: the promoting kind the file values lowest, else the non-royal kind the file
/// values lowest. Returns (kind, rule).
pub fn reference_kind(v: &Variant) -> Option<(usize, &'static str)> {
    let lowest = |it: &mut dyn Iterator<Item = usize>| {
        it.min_by(|&a, &b| v.pieces[a].value.total_cmp(&v.pieces[b].value))
    };
    if let Some(k) = lowest(&mut (0..v.pieces.len()).filter(|&k| v.pieces[k].is_pawn())) {
        return Some((k, "the piece that promotes"));
    }
    lowest(&mut (0..v.pieces.len()).filter(|&k| !v.pieces[k].royal)).map(|k| {
        (
            k,
            "the lowest-valued piece of the variant file (none promotes)",
        )
    })
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let (i, f) = (pos.floor() as usize, pos.fract());
    if i + 1 < sorted.len() {
        sorted[i] * (1.0 - f) + sorted[i + 1] * f
    } else {
        sorted[i]
    }
}

/// Fits piece values to samples of `v` (see the module notes), with bootstrap intervals.
pub fn fit_piece_values(
    v: &Arc<Variant>,
    samples: &[Sample],
    opts: &AnalysisOptions,
) -> std::result::Result<PieceValues, String> {
    let kinds = feature_kinds(v);
    let (reference, rule) = reference_kind(v).ok_or("no non-royal piece")?;
    let ri = kinds
        .iter()
        .position(|&k| k == reference)
        .expect("the reference is not royal");
    if samples.len() < 20 {
        return Err(format!("only {} positions sampled", samples.len()));
    }
    let ones = vec![1.0; samples.len()];
    let beta = logistic_fit(samples, &ones, opts.ridge).ok_or("the regression did not converge")?;
    if beta[ri] <= 1e-6 {
        return Err(format!(
            "the {} coefficient is {:.4} (no advantage measured): values undefined",
            v.pieces[reference].letter, beta[ri]
        ));
    }
    let games = samples.iter().map(|s| s.game).max().map_or(0, |g| g + 1);
    let d = beta.len();
    // Bootstrap over games: per-sample weights = how often its game was drawn.
    let mut by_game: Vec<Vec<usize>> = vec![Vec::new(); games];
    for (i, s) in samples.iter().enumerate() {
        by_game[s.game].push(i);
    }
    let present: Vec<usize> = (0..games).filter(|&g| !by_game[g].is_empty()).collect();
    let mut rng = Rng::new(opts.seed ^ 0xb007_5742);
    let mut draws: Vec<Vec<f64>> = vec![Vec::new(); d];
    let mut ref_draws: Vec<f64> = Vec::new();
    for _ in 0..opts.bootstrap {
        let mut w = vec![0.0; samples.len()];
        for _ in 0..present.len() {
            let g = present[rng.below(present.len())];
            for &i in &by_game[g] {
                w[i] += 1.0;
            }
        }
        if let Some(b) = logistic_fit(samples, &w, opts.ridge) {
            ref_draws.push(b[ri]);
            for j in 0..d {
                // Piece columns scaled by the reference; the two extra terms stay logits.
                draws[j].push(if j < kinds.len() { b[j] / b[ri] } else { b[j] });
            }
        }
    }
    for dj in &mut draws {
        dj.sort_by(f64::total_cmp);
    }
    ref_draws.sort_by(f64::total_cmp);
    let interval = |j: usize, point: f64| {
        if draws[j].is_empty() {
            (f64::NAN, f64::NAN)
        } else {
            (percentile(&draws[j], 0.025), percentile(&draws[j], 0.975))
        }
        .into_interval(point)
    };
    let values = kinds
        .iter()
        .enumerate()
        .map(|(j, &k)| {
            let value = beta[j] / beta[ri];
            let iv = interval(j, value);
            PieceValue {
                letter: v.pieces[k].letter,
                name: v.pieces[k].name.clone(),
                value,
                lower: iv.lower,
                upper: iv.upper,
                logit: beta[j],
                file_value: v.pieces[k].value,
                imbalanced_samples: samples.iter().filter(|s| s.x[j] != 0.0).count(),
            }
        })
        .collect();
    Ok(PieceValues {
        reference: v.pieces[reference].letter,
        reference_rule: rule.to_string(),
        samples: samples.len(),
        games: present.len(),
        values,
        side_to_move: interval(kinds.len(), beta[kinds.len()]),
        first_player: interval(kinds.len() + 1, beta[kinds.len() + 1]),
        reference_logit: if ref_draws.is_empty() {
            (f64::NAN, f64::NAN)
        } else {
            (percentile(&ref_draws, 0.025), percentile(&ref_draws, 0.975))
        }
        .into_interval(beta[ri]),
    })
}

trait IntoInterval {
    fn into_interval(self, value: f64) -> Interval;
}

impl IntoInterval for (f64, f64) {
    fn into_interval(self, value: f64) -> Interval {
        Interval {
            value,
            lower: self.0,
            upper: self.1,
        }
    }
}

/// A short label of a group: `variant (hash8)`.
pub fn group_label(r: &GroupReport) -> String {
    format!(
        "{} ({})",
        r.variant,
        &r.rules_hash[..r.rules_hash.len().min(8)]
    )
}

/// The reports as a text table (what `varzero analyze` prints).
pub fn format_reports(reports: &[GroupReport]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for r in reports {
        let _ = writeln!(s, "== {} rules {}", r.variant, r.rules_hash);
        let _ = writeln!(
            s,
            "games {}  first player W/D/L {}/{}/{}",
            r.games, r.first_wins, r.draws, r.second_wins
        );
        let _ = writeln!(s, "draw rate           {}", r.draw_rate);
        let _ = writeln!(s, "decisive rate       {}", r.decisive_rate);
        let _ = writeln!(s, "first-player score  {}", r.first_player_score);
        let _ = writeln!(s, "terminations:");
        for t in &r.terminations {
            let _ = writeln!(
                s,
                "  {:<22} {:>6}  ({:.1}%)  first W/D/L {}/{}/{}",
                t.termination,
                t.games,
                100.0 * t.games as f64 / r.games.max(1) as f64,
                t.first_wins,
                t.draws,
                t.second_wins
            );
        }
        let l = &r.length;
        let _ = writeln!(
            s,
            "length (plies): mean {:.1}  min {}  p10 {:.0}  p25 {:.0}  median {:.0}  p75 {:.0}  \
             p90 {:.0}  max {}",
            l.mean, l.min, l.p10, l.p25, l.median, l.p75, l.p90, l.max
        );
        match &r.piece_values {
            Some(pv) => {
                let _ = writeln!(
                    s,
                    "piece values ({} = 1, {}; {} positions of {} games; 95% bootstrap):",
                    pv.reference, pv.reference_rule, pv.samples, pv.games
                );
                let _ = writeln!(
                    s,
                    "  {:<6} {:<14} {:>7}  {:<17} {:>7} {:>6}  {:>9}",
                    "letter", "name", "value", "interval", "logit", "file", "imbalanced"
                );
                for p in &pv.values {
                    let _ = writeln!(
                        s,
                        "  {:<6} {:<14} {:>7.2}  [{:>6.2}, {:>6.2}] {:>7.3} {:>6.1}  {:>9}",
                        p.letter,
                        p.name,
                        p.value,
                        p.lower,
                        p.upper,
                        p.logit,
                        p.file_value,
                        p.imbalanced_samples
                    );
                }
                let _ = writeln!(
                    s,
                    "  logit of having the move {:.3} [{:.3}, {:.3}], of being first {:.3} [{:.3}, {:.3}]",
                    pv.side_to_move.value,
                    pv.side_to_move.lower,
                    pv.side_to_move.upper,
                    pv.first_player.value,
                    pv.first_player.lower,
                    pv.first_player.upper
                );
                let _ = writeln!(
                    s,
                    "  unit ({}) logit {:.3} [{:.3}, {:.3}]",
                    pv.reference,
                    pv.reference_logit.value,
                    pv.reference_logit.lower,
                    pv.reference_logit.upper
                );
            }
            None => {
                let _ = writeln!(s, "piece values: none");
            }
        }
        for n in &r.notes {
            let _ = writeln!(s, "note: {n}");
        }
        s.push('\n');
    }
    s
}
