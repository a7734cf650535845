//! Ratings of many players from all their games at once: the maximum-likelihood Bradley-Terry
//! fit on the Elo scale, as Ordo does. A draw counts half a win for each side (the likelihood
//! of a score `s` out of `n` games is `p^s (1-p)^(n-s)` with `p = 1 / (1 + 10^(-d/400))`), so
//! two players alone get exactly the Elo difference of their score. One player is the anchor,
//! with a fixed rating; the others' 95% intervals come from the inverse of the observed
//! information (the curvature of the log-likelihood at its maximum), relative to the anchor.
//!
//! A player who won or lost every game has no finite maximum: `prior_draws` virtual draws
//! against each opponent it met (BayesElo's prior) keep every rating finite; with 0 such a
//! player makes the fit fail with [`FitError::Unbounded`].

use crate::elo::Wdl;
use crate::intervals::Z95;

/// The games between two players, from `a`'s view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pairing {
    pub a: usize,
    pub b: usize,
    pub wdl: Wdl,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Ratings {
    /// Elo per player (the anchor at its given value).
    pub elo: Vec<f64>,
    /// Half-width of the 95% interval relative to the anchor (0 for the anchor).
    pub error: Vec<f64>,
    /// Games played by each player.
    pub games: Vec<u64>,
    /// Points scored by each player.
    pub points: Vec<f64>,
    pub iterations: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FitError {
    #[error("no games")]
    NoGames,
    #[error("player {0} is not connected to the anchor by games")]
    Disconnected(usize),
    #[error("player {0} won or lost every game: its rating is unbounded (use prior draws)")]
    Unbounded(usize),
    #[error("the fit did not converge")]
    NoConvergence,
}

const K: f64 = std::f64::consts::LN_10 / 400.0;

fn expected(d: f64) -> f64 {
    1.0 / (1.0 + (-K * d).exp())
}

/// Fits ratings for `n` players from `games`, player `anchor` fixed at `anchor_elo`.
pub fn fit(
    n: usize,
    games: &[Pairing],
    anchor: usize,
    anchor_elo: f64,
    prior_draws: f64,
) -> Result<Ratings, FitError> {
    // Per pair (a < b): games and a's points, the prior's draws included.
    let mut pairs: Vec<(usize, usize, f64, f64)> = Vec::new();
    let mut games_of = vec![0u64; n];
    let mut points_of = vec![0.0f64; n];
    for g in games {
        let (gn, pts) = (g.wdl.games() as f64, g.wdl.points());
        if gn == 0.0 || g.a == g.b {
            continue;
        }
        games_of[g.a] += g.wdl.games();
        games_of[g.b] += g.wdl.games();
        points_of[g.a] += pts;
        points_of[g.b] += gn - pts;
        let (a, b, s) = if g.a < g.b {
            (g.a, g.b, pts)
        } else {
            (g.b, g.a, gn - pts)
        };
        match pairs.iter_mut().find(|p| p.0 == a && p.1 == b) {
            Some(p) => {
                p.2 += gn;
                p.3 += s;
            }
            None => pairs.push((a, b, gn, s)),
        }
    }
    if pairs.is_empty() {
        return Err(FitError::NoGames);
    }
    for p in &mut pairs {
        p.2 += prior_draws;
        p.3 += prior_draws / 2.0;
    }
    // Every player must reach the anchor through games.
    let mut seen = vec![false; n];
    seen[anchor] = true;
    let mut changed = true;
    while changed {
        changed = false;
        for &(a, b, _, _) in &pairs {
            if seen[a] != seen[b] {
                seen[a] = true;
                seen[b] = true;
                changed = true;
            }
        }
    }
    if let Some(i) = (0..n).find(|&i| !seen[i]) {
        return Err(FitError::Disconnected(i));
    }
    // A player with a perfect or a zero score has no finite maximum.
    for i in 0..n {
        let (g, s): (f64, f64) = pairs
            .iter()
            .filter(|p| p.0 == i || p.1 == i)
            .map(|p| (p.2, if p.0 == i { p.3 } else { p.2 - p.3 }))
            .fold((0.0, 0.0), |x, y| (x.0 + y.0, x.1 + y.1));
        if i != anchor && (s <= 0.0 || s >= g) {
            return Err(FitError::Unbounded(i));
        }
    }
    // Newton's method on the free ratings (all but the anchor).
    let free: Vec<usize> = (0..n).filter(|&i| i != anchor).collect();
    let idx = |i: usize| free.iter().position(|&f| f == i);
    let mut r = vec![0.0f64; n];
    let m = free.len();
    let mut iterations = 0;
    let info = loop {
        iterations += 1;
        let mut grad = vec![0.0; m];
        let mut h = vec![vec![0.0; m]; m];
        for &(a, b, g, s) in &pairs {
            let p = expected(r[a] - r[b]);
            let d = K * (s - g * p);
            let w = K * K * g * p * (1.0 - p);
            if let Some(i) = idx(a) {
                grad[i] += d;
                h[i][i] += w;
            }
            if let Some(j) = idx(b) {
                grad[j] -= d;
                h[j][j] += w;
            }
            if let (Some(i), Some(j)) = (idx(a), idx(b)) {
                h[i][j] -= w;
                h[j][i] -= w;
            }
        }
        let step = solve(&h, &grad).ok_or(FitError::NoConvergence)?;
        let mut biggest = 0.0f64;
        for (k, &i) in free.iter().enumerate() {
            // Damped: no step of more than 400 Elo at once.
            let s = step[k].clamp(-400.0, 400.0);
            r[i] += s;
            biggest = biggest.max(s.abs());
        }
        if biggest < 1e-9 {
            break h;
        }
        if iterations > 200 {
            return Err(FitError::NoConvergence);
        }
    };
    let cov = invert(&info).ok_or(FitError::NoConvergence)?;
    let mut error = vec![0.0; n];
    for (k, &i) in free.iter().enumerate() {
        error[i] = Z95 * cov[k][k].max(0.0).sqrt();
    }
    Ok(Ratings {
        elo: r.iter().map(|x| x + anchor_elo).collect(),
        error,
        games: games_of,
        points: points_of,
        iterations,
    })
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting.
fn solve(a: &[Vec<f64>], b: &[f64]) -> Option<Vec<f64>> {
    let n = b.len();
    let mut m: Vec<Vec<f64>> = a
        .iter()
        .zip(b)
        .map(|(row, &x)| {
            let mut r = row.clone();
            r.push(x);
            r
        })
        .collect();
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs()))?;
        if m[p][c].abs() < 1e-300 {
            return None;
        }
        m.swap(c, p);
        let pivot = m[c].clone();
        for (i, row) in m.iter_mut().enumerate() {
            if i != c {
                let f = row[c] / pivot[c];
                for (x, &p) in row[c..].iter_mut().zip(&pivot[c..]) {
                    *x -= f * p;
                }
            }
        }
    }
    Some((0..n).map(|i| m[i][n] / m[i][i]).collect())
}

fn invert(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut cols = vec![vec![0.0; n]; n];
    for c in 0..n {
        let mut e = vec![0.0; n];
        e[c] = 1.0;
        let x = solve(a, &e)?;
        for r in 0..n {
            cols[r][c] = x[r];
        }
    }
    Some(cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wdl(w: u64, d: u64, l: u64) -> Wdl {
        Wdl {
            wins: w,
            draws: d,
            losses: l,
        }
    }

    #[test]
    fn two_players_get_the_elo_of_their_score() {
        // 3 wins, 2 draws, 1 loss: 4 points of 6, so 400 log10(2) = 120.41 Elo.
        let r = fit(
            2,
            &[Pairing {
                a: 1,
                b: 0,
                wdl: wdl(3, 2, 1),
            }],
            0,
            0.0,
            0.0,
        )
        .unwrap();
        assert!((r.elo[1] - 400.0 * 2f64.log10()).abs() < 1e-6, "{r:?}");
        // The interval: information = n p (1-p) K^2 = 6 (2/3)(1/3) K^2.
        let se = 1.0 / (6.0 * (2.0 / 9.0) * K * K).sqrt();
        assert!((r.error[1] - Z95 * se).abs() < 1e-6);
        assert_eq!(r.games, vec![6, 6]);
        assert_eq!(r.points, vec![2.0, 4.0]);
    }

    #[test]
    fn a_chain_adds_up_and_the_anchor_sets_the_origin() {
        // A beats B 3:1 and B beats C 3:1 (all wins and losses), no A-C games: each step is
        // 400 log10(3) = 190.85 Elo.
        let step = 400.0 * 3f64.log10();
        let games = [
            Pairing {
                a: 0,
                b: 1,
                wdl: wdl(3, 0, 1),
            },
            Pairing {
                a: 2,
                b: 1,
                wdl: wdl(1, 0, 3),
            },
        ];
        let r = fit(3, &games, 2, 1000.0, 0.0).unwrap();
        assert!((r.elo[2] - 1000.0).abs() < 1e-9);
        assert!((r.elo[1] - (1000.0 + step)).abs() < 1e-6, "{r:?}");
        assert!((r.elo[0] - (1000.0 + 2.0 * step)).abs() < 1e-6, "{r:?}");
        assert_eq!(r.error[2], 0.0);
        assert!(r.error[0] > r.error[1], "further from the anchor, wider");
    }

    #[test]
    fn a_consistent_triangle_is_recovered() {
        // Scores drawn exactly from ratings 0, 100, 300 (draws included as half points):
        // the fit gives those ratings back.
        let elo = [0.0, 100.0, 300.0];
        let mut games = Vec::new();
        for a in 0..3 {
            for b in a + 1..3 {
                // 1000 games with a's expected score, as wins, draws and losses.
                let p = expected(elo[a] - elo[b]);
                let draws = 200.0;
                let wins = 1000.0 * p - draws / 2.0;
                let wdl = Wdl {
                    wins: (wins * 1000.0).round() as u64,
                    draws: (draws * 1000.0) as u64,
                    losses: ((1000.0 - wins - draws) * 1000.0).round() as u64,
                };
                games.push(Pairing { a, b, wdl });
            }
        }
        let r = fit(3, &games, 0, 0.0, 0.0).unwrap();
        for (got, want) in r.elo.iter().zip(elo) {
            assert!((got - want).abs() < 0.01, "{r:?}");
        }
    }

    #[test]
    fn perfect_scores_need_the_prior_and_disconnected_players_are_named() {
        let games = [Pairing {
            a: 1,
            b: 0,
            wdl: wdl(5, 0, 0),
        }];
        assert_eq!(fit(2, &games, 0, 0.0, 0.0), Err(FitError::Unbounded(1)));
        // One virtual draw: 5.5 of 6, 400 log10(11) = 416.55 Elo.
        let r = fit(2, &games, 0, 0.0, 1.0).unwrap();
        assert!((r.elo[1] - 400.0 * 11f64.log10()).abs() < 1e-6, "{r:?}");
        assert_eq!(fit(3, &games, 0, 0.0, 1.0), Err(FitError::Disconnected(2)));
        assert_eq!(fit(2, &[], 0, 0.0, 1.0), Err(FitError::NoGames));
    }
}
