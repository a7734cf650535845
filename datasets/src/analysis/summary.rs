//! The per-group summary: results from the first player's view, draw and decisive rates,
//! first-player score, terminations and game lengths.

use super::piece_values::group_piece_values;
use super::{pe, AnalysisOptions, GameRow, GroupReport, VariantLookup};
use crate::error::Result;
use polars::prelude::*;
use serde::Serialize;
use varzero_stats::{wilson, Z95};

/// Game-length distribution, in plies.
#[derive(Clone, Debug, Serialize)]
pub struct LengthStats {
    pub mean: f64,
    /// Standard deviation (population).
    pub sd: f64,
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
    let mut games = games;
    for t in &opts.exclude_terminations {
        games = games.filter(col("termination").neq(lit(t.as_str())));
    }
    let mut df = games.collect().map_err(pe)?;
    with_first_score(&mut df)?;
    let summary = df
        .clone()
        .lazy()
        .group_by([col("variant"), col("rules_hash")])
        .agg(
            result_counts()
                .into_iter()
                .chain([
                    col("first_score").mean().alias("score_mean"),
                    col("first_score").var(0).alias("score_var"),
                ])
                .chain(length_aggs())
                .collect::<Vec<_>>(),
        )
        .sort(["variant", "rules_hash"], SortMultipleOptions::default())
        .collect()
        .map_err(pe)?;
    let terms = df
        .clone()
        .lazy()
        .group_by([col("variant"), col("rules_hash"), col("termination")])
        .agg(result_counts())
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
    let mut reports = Vec::new();
    for g in 0..summary.height() {
        let [games, fw, dr, sw] = counts_at(&summary, g);
        let n = games as f64;
        let rows: Vec<usize> = (0..df.height())
            .filter(|&i| all_variant[i] == sv[g] && all_hash[i] == sh[g])
            .collect();
        let plies: Vec<u32> = rows.iter().map(|&i| all_plies[i]).collect();
        let terminations = (0..terms.height())
            .filter(|&i| tv[i] == sv[g] && th[i] == sh[g])
            .map(|i| {
                let [games, first_wins, draws, second_wins] = counts_at(&terms, i);
                TerminationCount {
                    termination: tt[i].clone(),
                    games,
                    first_wins,
                    draws,
                    second_wins,
                }
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
        let length = length_at(&summary, g, &plies, opts.length_bins);
        let (variant, note) = lookup.find(&sv[g], &sh[g]);
        notes.extend(note);
        let piece_values = match &variant {
            Some(v) => {
                let rows = game_rows(&df, &rows, &sv[g], &sh[g], &all_plies)?;
                group_piece_values(v, &rows, opts, &mut notes)
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

/// The games of `rows` of the frame, of one group.
fn game_rows(
    df: &DataFrame,
    rows: &[usize],
    variant: &str,
    rules_hash: &str,
    all_plies: &[u32],
) -> Result<Vec<GameRow>> {
    rows.iter()
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
                variant: variant.to_string(),
                rules_hash: rules_hash.to_string(),
                result: s("result")?,
                termination: s("termination")?,
                plies: all_plies[i],
                start_fen: s("start_fen")?,
                moves: s("moves")?,
            })
        })
        .collect()
}

/// Games, first-player wins, draws and second-player wins of a group (columns `games`,
/// `first_wins`, `draws`, `second_wins`; read back by [`counts_at`]).
fn result_counts() -> [Expr; 4] {
    let first_score_is = |s: f64| col("first_score").eq(lit(s)).cast(DataType::UInt64).sum();
    [
        len().cast(DataType::UInt64).alias("games"),
        first_score_is(1.0).alias("first_wins"),
        col("result")
            .eq(lit("1/2-1/2".to_string()))
            .cast(DataType::UInt64)
            .sum()
            .alias("draws"),
        first_score_is(0.0).alias("second_wins"),
    ]
}

/// Row `i`'s [`result_counts`]: games, first-player wins, draws, second-player wins.
fn counts_at(df: &DataFrame, i: usize) -> [u64; 4] {
    ["games", "first_wins", "draws", "second_wins"].map(|c| f64_at(df, c, i) as u64)
}

/// The game-length quantiles of [`LengthStats`]: (quantile, summary column).
const LENGTH_QUANTILES: [(f64, &str); 5] = [
    (0.1, "p10"),
    (0.25, "p25"),
    (0.5, "p50"),
    (0.75, "p75"),
    (0.9, "p90"),
];

/// The game-length aggregations of a group: mean, min, max and the [`LENGTH_QUANTILES`] of
/// the plies (linear interpolation). Read back by [`length_at`].
fn length_aggs() -> impl Iterator<Item = Expr> {
    let plies = || col("plies").cast(DataType::Float64);
    [
        plies().mean().alias("len_mean"),
        col("plies").min().cast(DataType::UInt32).alias("len_min"),
        col("plies").max().cast(DataType::UInt32).alias("len_max"),
    ]
    .into_iter()
    .chain(
        LENGTH_QUANTILES
            .iter()
            .map(move |&(q, name)| plies().quantile(lit(q), QuantileMethod::Linear).alias(name)),
    )
}

/// Row `g`'s [`length_aggs`], with the histogram of the group's `plies`.
fn length_at(summary: &DataFrame, g: usize, plies: &[u32], bins: usize) -> LengthStats {
    let [p10, p25, median, p75, p90] = LENGTH_QUANTILES.map(|(_, name)| f64_at(summary, name, g));
    let n = plies.len().max(1) as f64;
    let m = plies.iter().map(|&p| p as f64).sum::<f64>() / n;
    let var = plies.iter().map(|&p| (p as f64 - m).powi(2)).sum::<f64>() / n;
    LengthStats {
        mean: f64_at(summary, "len_mean", g),
        sd: var.sqrt(),
        min: f64_at(summary, "len_min", g) as u64 as u32,
        p10,
        p25,
        median,
        p75,
        p90,
        max: f64_at(summary, "len_max", g) as u64 as u32,
        histogram: histogram(plies, bins),
    }
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
