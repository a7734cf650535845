//! Match statistics: score and Elo difference with a 95% interval from win/draw/loss counts
//! (trinomial) or from game pairs (pentanomial), and the sequential probability ratio test on
//! game pairs as fishtest and fastchess run it.
//!
//! Elo here is logistic Elo: a score `s` is worth `-400 log10(1/s - 1)`. The interval is the
//! normal approximation of the mean score, `s ± 1.96 σ/√n` with the variance of the observed
//! per-game (or per-pair) scores, each end converted to Elo.
//!
//! The SPRT is the generalised SPRT of M. Van den Bergh ("A Generalized Sequential Probability
//! Ratio Test", and "Normalized Elo", http://hardy.uhasselt.be/Fishtest/ : the notes
//! `support_MLE_multinomial.pdf` and `normalized_elo_practical.pdf`), with the approximation
//! that fastchess uses (src/matchmaking/sprt/sprt.cpp): for pair scores `x_i` in
//! {0, 1/4, 1/2, 3/4, 1} with observed frequencies `p_i` over `N` pairs,
//!
//! ```text
//!   var(t) = Σ p_i (x_i - t)²            (the variance around a hypothesised mean score t)
//!   LLR    = N/2 · ln(var(t0) / var(t1))
//! ```
//!
//! where `t0`, `t1` are the mean scores of the two hypotheses. With the `normalized` model
//! (fishtest's and fastchess's default) the bounds are normalised Elo: `t = 1/2 + nelo ·
//! √(2 var) · ln10/800` with `var` the observed per-pair variance; with `logistic` they are
//! logistic Elo, `t = 1 / (1 + 10^(-elo/400))`. The test stops at `LLR ≥ ln((1-β)/α)` (H1,
//! the engines differ by elo1) or `LLR ≤ ln(β/(1-α))` (H0, elo0). Empty pentanomial cells
//! count 0.001 pairs (fishtest's regularisation).

use crate::Z95;
use std::fmt;

/// Logistic Elo of a mean score (±infinity at 1 and 0).
///
/// ```
/// use varzero_stats::{elo_from_score, score_from_elo, Wdl};
/// assert!((elo_from_score(0.75) - 190.85).abs() < 0.01);
/// assert!((score_from_elo(elo_from_score(0.3)) - 0.3).abs() < 1e-12);
/// // 30 wins, 40 draws, 30 losses: even, with a 95% interval either side.
/// let e = Wdl { wins: 30, draws: 40, losses: 30 }.elo();
/// assert!(e.elo.abs() < 1e-9 && e.lower < 0.0 && e.upper > 0.0);
/// ```
pub fn elo_from_score(s: f64) -> f64 {
    if s <= 0.0 {
        f64::NEG_INFINITY
    } else if s >= 1.0 {
        f64::INFINITY
    } else {
        -400.0 * (1.0 / s - 1.0).log10()
    }
}

/// Mean score of a logistic Elo difference.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// An Elo estimate with its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EloEstimate {
    pub score: f64,
    pub elo: f64,
    pub lower: f64,
    pub upper: f64,
}

fn fmt_elo(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x == f64::INFINITY {
        "+inf".into()
    } else if x == f64::NEG_INFINITY {
        "-inf".into()
    } else {
        // `+ 0.0` turns -0 into 0.
        format!("{:+.0}", x.round() + 0.0)
    }
}

impl fmt::Display for EloEstimate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} [{}, {}]",
            fmt_elo(self.elo),
            fmt_elo(self.lower),
            fmt_elo(self.upper)
        )
    }
}

/// Mean and variance of a discrete distribution over scores `xs` with counts `ns`.
fn mean_var(xs: &[f64], ns: &[u64]) -> Option<(f64, f64, f64)> {
    let n: u64 = ns.iter().sum();
    if n == 0 {
        return None;
    }
    let nf = n as f64;
    let mean = xs.iter().zip(ns).map(|(x, &k)| x * k as f64).sum::<f64>() / nf;
    let var = xs
        .iter()
        .zip(ns)
        .map(|(x, &k)| k as f64 * (x - mean).powi(2))
        .sum::<f64>()
        / nf;
    Some((nf, mean, var))
}

fn estimate(xs: &[f64], ns: &[u64]) -> EloEstimate {
    let Some((n, mean, var)) = mean_var(xs, ns) else {
        return EloEstimate {
            score: f64::NAN,
            elo: f64::NAN,
            lower: f64::NAN,
            upper: f64::NAN,
        };
    };
    let se = (var / n).sqrt();
    EloEstimate {
        score: mean,
        elo: elo_from_score(mean),
        lower: elo_from_score(mean - Z95 * se),
        upper: elo_from_score(mean + Z95 * se),
    }
}

/// Win/draw/loss counts of one player.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wdl {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Wdl {
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }
    /// Points: a win 1, a draw 1/2.
    pub fn points(&self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }
    /// Elo difference with a 95% interval from the trinomial model (games independent).
    pub fn elo(&self) -> EloEstimate {
        estimate(&[1.0, 0.5, 0.0], &[self.wins, self.draws, self.losses])
    }
    pub fn add(&mut self, score: GameScore) {
        match score {
            GameScore::Win => self.wins += 1,
            GameScore::Draw => self.draws += 1,
            GameScore::Loss => self.losses += 1,
        }
    }
    /// Adds another match's counts (the same player on the same side): a pooled match.
    pub fn merge(&mut self, other: &Wdl) {
        self.wins += other.wins;
        self.draws += other.draws;
        self.losses += other.losses;
    }
}

/// One game's result for a player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameScore {
    Win,
    Draw,
    Loss,
}

impl GameScore {
    /// Points: 1, 1/2, 0.
    pub fn points(self) -> f64 {
        match self {
            GameScore::Win => 1.0,
            GameScore::Draw => 0.5,
            GameScore::Loss => 0.0,
        }
    }
    pub fn flip(self) -> GameScore {
        match self {
            GameScore::Win => GameScore::Loss,
            GameScore::Draw => GameScore::Draw,
            GameScore::Loss => GameScore::Win,
        }
    }
}

/// Game pairs (the same opening with both colours) by the pair's points for one player:
/// `counts[k]` pairs scored `k/2` points of 2 (LL, LD, WL or DD, WD, WW).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pentanomial {
    pub counts: [u64; 5],
    /// Of `counts[2]`: pairs of a win and a loss (the rest are two draws).
    pub win_loss: u64,
}

impl Pentanomial {
    pub fn from_counts(ll: u64, ld: u64, wl: u64, dd: u64, wd: u64, ww: u64) -> Pentanomial {
        Pentanomial {
            counts: [ll, ld, wl + dd, wd, ww],
            win_loss: wl,
        }
    }
    pub fn pairs(&self) -> u64 {
        self.counts.iter().sum()
    }
    pub fn add(&mut self, a: GameScore, b: GameScore) {
        let k = ((a.points() + b.points()) * 2.0).round() as usize;
        self.counts[k] += 1;
        if k == 2 && a != GameScore::Draw {
            self.win_loss += 1;
        }
    }
    /// Elo difference with a 95% interval from the pentanomial model (pairs independent).
    pub fn elo(&self) -> EloEstimate {
        estimate(&PAIR_SCORES, &self.counts)
    }
    /// Adds another match's pairs: several matches pooled into one estimate.
    pub fn merge(&mut self, other: &Pentanomial) {
        for (c, o) in self.counts.iter_mut().zip(other.counts) {
            *c += o;
        }
        self.win_loss += other.win_loss;
    }
}

impl fmt::Display for Pentanomial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.counts;
        write!(f, "[{}, {}, {}, {}, {}]", c[0], c[1], c[2], c[3], c[4])
    }
}

/// Pair scores, normalised to one game: 0, 1/4, 1/2, 3/4, 1.
pub const PAIR_SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// How the SPRT bounds are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EloModel {
    /// Normalised Elo (fishtest, fastchess default).
    Normalized,
    /// Logistic Elo.
    Logistic,
}

/// Pairs before an SPRT may stop a match. The LLR uses the sample variance of the pair scores,
/// which means nothing after a handful of pairs: one pair won and lost (score 1/2) already gives
/// LLR -2.36 against elo0=0, elo1=200 (logistic), past the bound of alpha = beta = 0.1.
/// fishtest and OpenBench only ever test after batches of many pairs.
pub const SPRT_MIN_PAIRS: u64 = 10;

/// SPRT settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub model: EloModel,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtDecision {
    /// H0 accepted: no better than elo0.
    H0,
    /// H1 accepted: at least elo1.
    H1,
    Continue,
}

impl Default for Sprt {
    fn default() -> Self {
        Sprt {
            elo0: 0.0,
            elo1: 10.0,
            alpha: 0.05,
            beta: 0.05,
            model: EloModel::Normalized,
        }
    }
}

/// A bad SPRT specification, by what is wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SprtError {
    #[error("'{0}': expected KEY=VALUE")]
    Syntax(String),
    #[error("'{0}': not a number")]
    Number(String),
    #[error("model '{0}': normalized or logistic")]
    Model(String),
    #[error("unknown SPRT key '{0}'")]
    Key(String),
    #[error("alpha and beta must lie in (0, 1)")]
    Errors,
    #[error("elo0 must be below elo1")]
    Bounds,
}

impl Sprt {
    /// Parses `elo0=0,elo1=10,alpha=0.05,beta=0.05[,model=normalized|logistic]`; keys not given
    /// keep their defaults (0, 10, 0.05, 0.05, normalized).
    pub fn parse(s: &str) -> Result<Sprt, SprtError> {
        let mut t = Sprt::default();
        for part in s.split([',', ' ']).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| SprtError::Syntax(part.to_string()))?;
            let num = || {
                v.trim()
                    .parse::<f64>()
                    .map_err(|_| SprtError::Number(part.to_string()))
            };
            match k.trim() {
                "elo0" => t.elo0 = num()?,
                "elo1" => t.elo1 = num()?,
                "alpha" => t.alpha = num()?,
                "beta" => t.beta = num()?,
                "model" => {
                    t.model = match v.trim() {
                        "normalized" | "normalised" => EloModel::Normalized,
                        "logistic" => EloModel::Logistic,
                        other => return Err(SprtError::Model(other.to_string())),
                    }
                }
                other => return Err(SprtError::Key(other.to_string())),
            }
        }
        t.validate()?;
        Ok(t)
    }

    pub fn validate(&self) -> Result<(), SprtError> {
        if !(self.alpha > 0.0 && self.alpha < 1.0 && self.beta > 0.0 && self.beta < 1.0) {
            return Err(SprtError::Errors);
        }
        if self.elo0.partial_cmp(&self.elo1) != Some(std::cmp::Ordering::Less) {
            return Err(SprtError::Bounds);
        }
        Ok(())
    }

    /// `ln(β/(1-α))`: at or below it H0 is accepted.
    pub fn lower_bound(&self) -> f64 {
        (self.beta / (1.0 - self.alpha)).ln()
    }

    /// `ln((1-β)/α)`: at or above it H1 is accepted.
    pub fn upper_bound(&self) -> f64 {
        ((1.0 - self.beta) / self.alpha).ln()
    }

    /// The log-likelihood ratio of H1 against H0 for these game pairs (0 without pairs). Empty
    /// cells count 0.001 pairs, as fishtest regularises (`LLRcalc.regularize`), so that a one-sided
    /// sample (all pairs won) still has a variance.
    pub fn llr(&self, p: &Pentanomial) -> f64 {
        if p.pairs() == 0 {
            return 0.0;
        }
        let counts: Vec<f64> = p
            .counts
            .iter()
            .map(|&k| if k == 0 { 1e-3 } else { k as f64 })
            .collect();
        let n: f64 = counts.iter().sum();
        let mean = PAIR_SCORES
            .iter()
            .zip(&counts)
            .map(|(x, k)| x * k)
            .sum::<f64>()
            / n;
        let var = PAIR_SCORES
            .iter()
            .zip(&counts)
            .map(|(x, k)| k * (x - mean).powi(2))
            .sum::<f64>()
            / n;
        let (t0, t1) = match self.model {
            EloModel::Normalized => {
                if var == 0.0 {
                    return 0.0;
                }
                let k = (2.0 * var).sqrt() * std::f64::consts::LN_10 / 800.0;
                (0.5 + self.elo0 * k, 0.5 + self.elo1 * k)
            }
            EloModel::Logistic => (score_from_elo(self.elo0), score_from_elo(self.elo1)),
        };
        let var_at = |t: f64| {
            PAIR_SCORES
                .iter()
                .zip(&counts)
                .map(|(x, k)| k / n * (x - t).powi(2))
                .sum::<f64>()
        };
        let (v0, v1) = (var_at(t0), var_at(t1));
        if v0 == 0.0 || v1 == 0.0 {
            return 0.0;
        }
        0.5 * n * (v0 / v1).ln()
    }

    /// The LLR of these pairs and the decision it gives, none before [`SPRT_MIN_PAIRS`] pairs.
    pub fn verdict(&self, p: &Pentanomial) -> (f64, SprtDecision) {
        let llr = self.llr(p);
        if p.pairs() < SPRT_MIN_PAIRS {
            return (llr, SprtDecision::Continue);
        }
        (llr, self.decide(llr))
    }

    pub fn decide(&self, llr: f64) -> SprtDecision {
        if llr >= self.upper_bound() {
            SprtDecision::H1
        } else if llr <= self.lower_bound() {
            SprtDecision::H0
        } else {
            SprtDecision::Continue
        }
    }
}

impl fmt::Display for Sprt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "elo0={} elo1={} alpha={} beta={} model={}",
            self.elo0,
            self.elo1,
            self.alpha,
            self.beta,
            match self.model {
                EloModel::Normalized => "normalized",
                EloModel::Logistic => "logistic",
            }
        )
    }
}
