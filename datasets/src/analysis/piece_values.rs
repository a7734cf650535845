//! Piece values fitted to game results: feature extraction, position sampling, the logistic
//! regression, the bootstrap over games and the unit (reference) piece; see the notes of the
//! `analysis` module.

use super::{AnalysisOptions, GameRow};
use crate::error::{FitError, Result};
use rayon::prelude::*;
use serde::Serialize;
use std::sync::Arc;
use varzero_rules::variant::SquareSet;
use varzero_rules::{ByColor, Color, Position, Variant};
use varzero_stats::{Interval, Rng};

/// One piece kind's fitted value.
#[derive(Clone, Debug, Serialize)]
pub struct PieceValue {
    pub letter: char,
    /// For a kind counted apart inside the region(s) where it moves differently: the region
    /// (the Xiangqi soldier across the river), else None.
    pub region: Option<String>,
    /// The label: the letter, or `letter@region` (as in reference sets and the JSON maps).
    pub key: String,
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

/// One sampled position: features, the result from its side to move's view, and its game.
#[derive(Clone, Debug)]
pub struct Sample {
    pub game: usize,
    /// Per non-royal kind (in the variant's order) the count difference, then the constant 1,
    /// then +1/-1 for the side to move being the first player.
    pub x: Vec<f64>,
    pub y: f64,
}

/// One material feature: a non-royal kind counted everywhere, or, for a kind with extra moves
/// inside a region (`moves_in`: the Xiangqi soldier across the river), the kind outside and
/// inside the region counted apart. Such a piece is two pieces of different worth (Xiangqi
/// books value a soldier 1 before the river and 2 after it); pooled, its value is an average
/// that depends on where the games' soldiers happened to stand.
#[derive(Clone, Debug)]
pub struct Column {
    pub kind: usize,
    /// The squares (per colour) where this column counts the kind; None: everywhere.
    pub squares: Option<ByColor<SquareSet>>,
    /// The region's name for the inside column; None for the others.
    pub region: Option<String>,
}

/// The feature columns of a variant: its non-royal kinds in order, each kind with region
/// moves split in two (outside, then inside) when `split_regions`.
pub fn feature_columns(v: &Variant, split_regions: bool) -> Vec<Column> {
    let mut out = Vec::new();
    for (kind, p) in v.pieces.iter().enumerate() {
        if p.royal {
            continue;
        }
        if !split_regions || p.moves_in.is_empty() {
            out.push(Column {
                kind,
                squares: None,
                region: None,
            });
            continue;
        }
        let mut inside: ByColor<SquareSet> = ByColor::new(0, 0);
        let mut names: Vec<&str> = Vec::new();
        for (zone, _, name) in &p.moves_in {
            for c in [Color::White, Color::Black] {
                inside[c] |= zone[c];
            }
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
        out.push(Column {
            kind,
            squares: Some(ByColor::new(!inside[Color::White], !inside[Color::Black])),
            region: None,
        });
        out.push(Column {
            kind,
            squares: Some(inside),
            region: Some(names.join("+")),
        });
    }
    out
}

/// The features of a position (see [`Sample::x`]) for its side to move.
pub fn features(pos: &Position, columns: &[Column], first: Color) -> Vec<f64> {
    let stm = pos.side_to_move();
    let count = |col: &Column, c: Color| -> f64 {
        match &col.squares {
            None => pos.count(col.kind, c) as f64,
            Some(sq) => {
                let mut n = 0;
                pos.for_each_piece(c, |s, k| {
                    if k == col.kind && sq[c] >> s.0 & 1 == 1 {
                        n += 1;
                    }
                });
                n as f64
            }
        }
    };
    let mut x: Vec<f64> = columns
        .iter()
        .map(|col| count(col, stm) - count(col, !stm))
        .collect();
    x.push(1.0);
    x.push(if stm == first { 1.0 } else { -1.0 });
    x
}

/// Replays the games and samples quiet positions (see the notes of [`super`]). Returns the
/// samples and the number of games that could not be replayed.
pub fn sample_positions(
    v: &Arc<Variant>,
    games: &[GameRow],
    opts: &AnalysisOptions,
) -> (Vec<Sample>, usize) {
    let columns = feature_columns(v, !opts.pool_regions);
    let mut out = Vec::new();
    let mut bad = 0;
    let mut rng = Rng::new(opts.seed ^ 0x5a5a_0f0f);
    for (gi, g) in games.iter().enumerate() {
        let white = match g.result.as_str() {
            "1-0" => 1.0,
            "0-1" => 0.0,
            "1/2-1/2" if !opts.decisive_only => 0.5,
            _ => continue,
        };
        let Ok(mut pos) = Position::from_fen(v, &g.start_fen) else {
            bad += 1;
            continue;
        };
        let first = pos.side_to_move();
        let mut candidates: Vec<(Vec<f64>, f64)> = Vec::new();
        let mut ok = true;
        // Plies since material last changed (the start counts as settled).
        let mut settled = opts.stable_plies;
        for (ply, m) in g.moves.split_whitespace().enumerate() {
            let Ok(mv) = pos.parse_uci(m) else {
                ok = false;
                break;
            };
            let capture = pos.piece_at(mv.to_sq()).is_some();
            if ply as u32 >= opts.min_ply
                && settled >= opts.stable_plies
                && !capture
                && !pos.in_check()
            {
                let stm = pos.side_to_move();
                let y = if stm == Color::White {
                    white
                } else {
                    1.0 - white
                };
                candidates.push((features(&pos, &columns, first), y));
            }
            settled = if capture || mv.promotion().is_some() {
                0
            } else {
                settled.saturating_add(1)
            };
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

/// The piece values of one group's games (None when they cannot be fitted), noting in `notes`
/// the games that could not be replayed, why a fit failed, or that the unit is not measured.
pub(super) fn group_piece_values(
    v: &Arc<Variant>,
    games: &[GameRow],
    opts: &AnalysisOptions,
    notes: &mut Vec<String>,
) -> Option<PieceValues> {
    let (samples, bad) = sample_positions(v, games, opts);
    if bad > 0 {
        notes.push(format!(
            "{bad} games could not be replayed (a FEN or move the rules reject)"
        ));
    }
    match fit_piece_values(v, &samples, opts) {
        // An unmeasured unit is reported where the values would be (the report says what is
        // missing instead of printing them).
        Ok(pv) => Some(pv),
        Err(e) => {
            notes.push(format!("piece values: {e}"));
            None
        }
    }
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

/// The 95% percentile interval of sorted bootstrap draws around `point` (NaN bounds without
/// draws).
fn percentile_interval(sorted: &[f64], point: f64) -> Interval {
    let (lower, upper) = if sorted.is_empty() {
        (f64::NAN, f64::NAN)
    } else {
        (percentile(sorted, 0.025), percentile(sorted, 0.975))
    };
    Interval {
        value: point,
        lower,
        upper,
    }
}

/// The `q` quantile of sorted values, interpolating linearly between neighbours.
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

/// Fits piece values to samples of `v` (see the notes of [`super`]), with bootstrap intervals.
/// [`Error::Fit`](crate::Error::Fit) says why they cannot be fitted.
pub fn fit_piece_values(
    v: &Arc<Variant>,
    samples: &[Sample],
    opts: &AnalysisOptions,
) -> Result<PieceValues> {
    let kinds = feature_columns(v, !opts.pool_regions);
    let (reference, rule) = reference_kind(v).ok_or(FitError::NoPiece)?;
    // The unit is the reference kind outside any region where it moves differently (the
    // soldier before the river), the first column of its kind.
    let ri = kinds
        .iter()
        .position(|c| c.kind == reference)
        .expect("the reference is not royal");
    let rule = match (&kinds[ri].squares, kinds.get(ri + 1)) {
        (
            Some(_),
            Some(Column {
                region: Some(r), ..
            }),
        ) => {
            format!("{rule}, outside {r}")
        }
        _ => rule.to_string(),
    };
    if samples.len() < 20 {
        return Err(FitError::TooFewSamples {
            samples: samples.len(),
        }
        .into());
    }
    let ones = vec![1.0; samples.len()];
    let beta = logistic_fit(samples, &ones, opts.ridge).ok_or(FitError::NotConverged)?;
    if beta[ri] <= 1e-6 {
        return Err(FitError::NoAdvantage {
            letter: v.pieces[reference].letter,
            logit: beta[ri],
        }
        .into());
    }
    let games = samples.iter().map(|s| s.game).max().map_or(0, |g| g + 1);
    let d = beta.len();
    // Bootstrap over games: per-sample weights = how often its game was drawn.
    let mut by_game: Vec<Vec<usize>> = vec![Vec::new(); games];
    for (i, s) in samples.iter().enumerate() {
        by_game[s.game].push(i);
    }
    let present: Vec<usize> = (0..games).filter(|&g| !by_game[g].is_empty()).collect();
    // Each resample draws from its own seed, so the intervals do not depend on the threads.
    let fits: Vec<Option<Vec<f64>>> = (0..opts.bootstrap)
        .into_par_iter()
        .map(|r| {
            let mut rng = Rng::new(Rng::derive(opts.seed ^ 0xb007_5742, r as u64));
            let mut w = vec![0.0; samples.len()];
            for _ in 0..present.len() {
                let g = present[rng.below(present.len())];
                for &i in &by_game[g] {
                    w[i] += 1.0;
                }
            }
            logistic_fit(samples, &w, opts.ridge)
        })
        .collect();
    let mut draws: Vec<Vec<f64>> = vec![Vec::new(); d];
    let mut ref_draws: Vec<f64> = Vec::new();
    for b in fits.into_iter().flatten() {
        ref_draws.push(b[ri]);
        for j in 0..d {
            // Piece columns scaled by the reference; the two extra terms stay logits.
            draws[j].push(if j < kinds.len() { b[j] / b[ri] } else { b[j] });
        }
    }
    for dj in &mut draws {
        dj.sort_by(f64::total_cmp);
    }
    ref_draws.sort_by(f64::total_cmp);
    let interval = |j: usize, point: f64| percentile_interval(&draws[j], point);
    let values = kinds
        .iter()
        .enumerate()
        .map(|(j, col)| {
            let k = col.kind;
            let value = beta[j] / beta[ri];
            let iv = interval(j, value);
            let letter = v.pieces[k].letter;
            PieceValue {
                letter,
                region: col.region.clone(),
                key: match &col.region {
                    Some(r) => format!("{letter}@{r}"),
                    None => letter.to_string(),
                },
                name: match &col.region {
                    Some(r) => format!("{}, {r}", v.pieces[k].name),
                    None => v.pieces[k].name.clone(),
                },
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
        reference_rule: rule,
        samples: samples.len(),
        games: present.len(),
        values,
        side_to_move: interval(kinds.len(), beta[kinds.len()]),
        first_player: interval(kinds.len() + 1, beta[kinds.len() + 1]),
        reference_logit: percentile_interval(&ref_draws, beta[ri]),
    })
}
