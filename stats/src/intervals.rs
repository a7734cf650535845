//! Intervals and tests for proportions and means: the Wilson interval, the normal quantile
//! and tail (`Z95`, `erfc`), two-sample z-tests, and the score interval of a match. Analysis,
//! studies, matches and the pipeline all take theirs from here.

use serde::Serialize;

/// 97.5% quantile of the standard normal: a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// A value with a 95% interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    pub value: f64,
    pub lower: f64,
    pub upper: f64,
}

impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.3} [{:.3}, {:.3}]",
            self.value, self.lower, self.upper
        )
    }
}

/// Wilson score interval of a proportion `k/n` (k may be fractional: a score with draws, which
/// makes the interval slightly conservative since draws lower the variance).
pub fn wilson(k: f64, n: f64, z: f64) -> Interval {
    if n <= 0.0 {
        return Interval {
            value: f64::NAN,
            lower: 0.0,
            upper: 1.0,
        };
    }
    let p = k / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Interval {
        value: p,
        lower: (center - half).max(0.0),
        upper: (center + half).min(1.0),
    }
}

/// Complementary error function (Numerical Recipes' `erfcc`, fractional error below 1.2e-7).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Two-sided p-value of a standard normal statistic.
pub fn two_sided_p(z: f64) -> f64 {
    erfc(z.abs() / std::f64::consts::SQRT_2)
}

/// A comparison of two samples: difference (a - b), its z statistic and two-sided p-value.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Difference {
    pub a: f64,
    pub b: f64,
    pub diff: f64,
    /// 95% interval of the difference (unpooled standard error).
    pub lower: f64,
    pub upper: f64,
    pub z: f64,
    pub p_value: f64,
    pub test: &'static str,
}

impl Difference {
    pub fn significant(&self, level: f64) -> bool {
        self.p_value < level
    }
}

/// Two-proportion z-test (pooled variance under equal proportions) of `k1/n1` against `k2/n2`.
pub fn two_proportion_z(k1: f64, n1: f64, k2: f64, n2: f64) -> Difference {
    let (p1, p2) = (k1 / n1, k2 / n2);
    let pool = (k1 + k2) / (n1 + n2);
    let se0 = (pool * (1.0 - pool) * (1.0 / n1 + 1.0 / n2)).sqrt();
    let se = (p1 * (1.0 - p1) / n1 + p2 * (1.0 - p2) / n2).sqrt();
    let z = if se0 > 0.0 { (p1 - p2) / se0 } else { 0.0 };
    Difference {
        a: p1,
        b: p2,
        diff: p1 - p2,
        lower: p1 - p2 - Z95 * se,
        upper: p1 - p2 + Z95 * se,
        z,
        p_value: if se0 > 0.0 { two_sided_p(z) } else { 1.0 },
        test: "two-proportion z-test (pooled)",
    }
}

/// Two-sample z-test of means with unpooled variances (Welch's statistic, large samples), for
/// per-game scores 1, 1/2, 0: means `m`, variances `v` (per game), sizes `n`.
pub fn two_mean_z(m1: f64, v1: f64, n1: f64, m2: f64, v2: f64, n2: f64) -> Difference {
    let se = (v1 / n1 + v2 / n2).sqrt();
    let z = if se > 0.0 { (m1 - m2) / se } else { 0.0 };
    Difference {
        a: m1,
        b: m2,
        diff: m1 - m2,
        lower: m1 - m2 - Z95 * se,
        upper: m1 - m2 + Z95 * se,
        z,
        p_value: if se > 0.0 { two_sided_p(z) } else { 1.0 },
        test: "two-sample z-test on per-game scores (unpooled variances)",
    }
}

/// The mean score of `wins`, `draws` and `losses` (1, 1/2, 0 per game) with its 95% interval:
/// the normal approximation with the variance of the observed per-game scores, clamped to
/// [0, 1].
pub fn score_interval(wins: u64, draws: u64, losses: u64) -> Interval {
    let n = (wins + draws + losses).max(1) as f64;
    let score = (wins as f64 + 0.5 * draws as f64) / n;
    let m2 = (wins as f64 + 0.25 * draws as f64) / n;
    let sd = ((m2 - score * score).max(0.0) / n).sqrt();
    Interval {
        value: score,
        lower: (score - Z95 * sd).max(0.0),
        upper: (score + Z95 * sd).min(1.0),
    }
}
