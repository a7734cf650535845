//! Betza movement notation, the subset the variant files use.
//!
//! Atoms: `W F D N A H C Z G` (leaps), `K` (= WF), `R` (= WW), `B` (= FF), `Q` (= WWFF); a
//! doubled atom letter is a rider (`NN`). Modifiers before an atom: `m` move only, `c` capture
//! only, `n` lame (every point on the way must be empty; an oblique leap steps orthogonally
//! first, as the xiangqi horse does), `p` hopper (a rider that captures or moves by jumping
//! exactly one piece), `i` initial (only while the piece keeps its first-move right), and the
//! directions `f b l r s v` (forward/backward/left/right/sideways/vertical, from the mover's
//! side). Two adjacent direction letters mean their intersection (`fl` on `F` is one diagonal,
//! `fs` on `N` the two wide forward jumps) or, where that is empty, their union (`fs` on `W` is
//! forward plus sideways); a doubled letter on an oblique atom means the narrow pair (`ffN`).

use std::fmt;

/// One movement vector of a piece, from White's point of view (`dy > 0` is forward).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Atom {
    pub dx: i8,
    pub dy: i8,
    pub rider: bool,
    pub can_move: bool,
    pub can_capture: bool,
    pub lame: bool,
    pub hopper: bool,
    pub initial: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BetzaError {
    pub pos: usize,
    pub reason: String,
}

impl fmt::Display for BetzaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at character {}: {}", self.pos + 1, self.reason)
    }
}

impl std::error::Error for BetzaError {}

fn base(letter: char) -> Option<&'static [(i8, i8, bool)]> {
    // (a, b, rider)
    Some(match letter {
        'W' => &[(1, 0, false)],
        'F' => &[(1, 1, false)],
        'D' => &[(2, 0, false)],
        'N' => &[(2, 1, false)],
        'A' => &[(2, 2, false)],
        'H' => &[(3, 0, false)],
        'C' => &[(3, 1, false)],
        'Z' => &[(3, 2, false)],
        'G' => &[(3, 3, false)],
        'K' => &[(1, 0, false), (1, 1, false)],
        'R' => &[(1, 0, true)],
        'B' => &[(1, 1, true)],
        'Q' => &[(1, 0, true), (1, 1, true)],
        _ => return None,
    })
}

fn vectors(a: i8, b: i8) -> Vec<(i8, i8)> {
    let mut v = Vec::new();
    for (x, y) in [(a, b), (b, a)] {
        for sx in [1, -1] {
            for sy in [1, -1] {
                let p = (x * sx, y * sy);
                if !v.contains(&p) {
                    v.push(p);
                }
            }
        }
    }
    v
}

fn single(c: char, x: i8, y: i8) -> bool {
    let orth = x == 0 || y == 0;
    let diag = x.abs() == y.abs();
    match c {
        'f' => y > 0,
        'b' => y < 0,
        'l' => x < 0,
        'r' => x > 0,
        's' => {
            if orth {
                x != 0
            } else if diag {
                true
            } else {
                x.abs() > y.abs()
            }
        }
        'v' => {
            if orth {
                y != 0
            } else if diag {
                true
            } else {
                y.abs() > x.abs()
            }
        }
        _ => false,
    }
}

/// Direction chunks: one or two letters each.
fn chunks(dirs: &str) -> Vec<String> {
    let c: Vec<char> = dirs.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if i + 1 < c.len() && "fblr".contains(c[i]) {
            out.push(format!("{}{}", c[i], c[i + 1]));
            i += 2;
        } else {
            out.push(c[i].to_string());
            i += 1;
        }
    }
    out
}

fn select(all: &[(i8, i8)], chunk: &str) -> Vec<(i8, i8)> {
    let cs: Vec<char> = chunk.chars().collect();
    if cs.len() == 1 {
        return all
            .iter()
            .copied()
            .filter(|&(x, y)| single(cs[0], x, y))
            .collect();
    }
    let (a, b) = (cs[0], cs[1]);
    let oblique = |x: i8, y: i8| x != 0 && y != 0 && x.abs() != y.abs();
    if a == b {
        // Doubled: the narrow pair of an oblique atom in that direction.
        return all
            .iter()
            .copied()
            .filter(|&(x, y)| {
                single(a, x, y)
                    && (!oblique(x, y)
                        || if "fb".contains(a) {
                            y.abs() > x.abs()
                        } else {
                            x.abs() > y.abs()
                        })
            })
            .collect();
    }
    let inter: Vec<_> = all
        .iter()
        .copied()
        .filter(|&(x, y)| single(a, x, y) && single(b, x, y))
        .collect();
    if !inter.is_empty() {
        return inter;
    }
    all.iter()
        .copied()
        .filter(|&(x, y)| single(a, x, y) || single(b, x, y))
        .collect()
}

/// Parses a Betza string into movement atoms.
pub fn parse(s: &str) -> Result<Vec<Atom>, BetzaError> {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return Err(BetzaError {
            pos: 0,
            reason: "empty movement".into(),
        });
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        let mut dirs = String::new();
        let (mut m, mut c, mut n, mut p, mut ini) = (false, false, false, false, false);
        while i < chars.len() && chars[i].is_ascii_lowercase() {
            match chars[i] {
                'm' => m = true,
                'c' => c = true,
                'n' => n = true,
                'p' => p = true,
                'i' => ini = true,
                'f' | 'b' | 'l' | 'r' | 's' | 'v' => dirs.push(chars[i]),
                other => {
                    return Err(BetzaError {
                        pos: i,
                        reason: format!("unsupported modifier '{other}'"),
                    })
                }
            }
            i += 1;
        }
        let Some(&letter) = chars.get(i) else {
            return Err(BetzaError {
                pos: start,
                reason: "modifiers without an atom".into(),
            });
        };
        let Some(parts) = base(letter) else {
            return Err(BetzaError {
                pos: i,
                reason: format!("unknown atom '{letter}'"),
            });
        };
        i += 1;
        let mut doubled = false;
        if chars.get(i) == Some(&letter) && !matches!(letter, 'R' | 'B' | 'Q' | 'K') {
            doubled = true;
            i += 1;
        }
        if let Some(d) = chars.get(i).filter(|d| d.is_ascii_digit()) {
            return Err(BetzaError {
                pos: i,
                reason: format!("range limits ('{d}') are not supported"),
            });
        }
        let (can_move, can_capture) = if m || c { (m, c) } else { (true, true) };
        for &(a, b, rider) in parts {
            let rider = rider || doubled;
            if p && !rider {
                return Err(BetzaError {
                    pos: start,
                    reason: "'p' (hopper) needs a rider such as R or B".into(),
                });
            }
            if n && rider {
                return Err(BetzaError {
                    pos: start,
                    reason: "'n' (lame) applies to leaps, not riders".into(),
                });
            }
            let all = vectors(a, b);
            let mut chosen: Vec<(i8, i8)> = Vec::new();
            if dirs.is_empty() {
                chosen = all.clone();
            } else {
                for ch in chunks(&dirs) {
                    for v in select(&all, &ch) {
                        if !chosen.contains(&v) {
                            chosen.push(v);
                        }
                    }
                }
            }
            for (dx, dy) in chosen {
                out.push(Atom {
                    dx,
                    dy,
                    rider,
                    can_move,
                    can_capture,
                    lame: n && (a > 1 || b > 1),
                    hopper: p,
                    initial: ini,
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vecs(s: &str) -> Vec<(i8, i8, bool, bool)> {
        let mut v: Vec<_> = parse(s)
            .unwrap()
            .iter()
            .map(|a| (a.dx, a.dy, a.can_move, a.can_capture))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn pawn_and_khon() {
        assert_eq!(
            vecs("fmWfcF"),
            vec![
                (-1, 1, false, true),
                (0, 1, true, false),
                (1, 1, false, true)
            ]
        );
        let k = vecs("FfW");
        assert_eq!(k.len(), 5);
        assert!(k.contains(&(0, 1, true, true)));
    }

    #[test]
    fn knight_directions() {
        let fs: Vec<_> = vecs("fsN").iter().map(|v| (v.0, v.1)).collect();
        assert_eq!(fs, vec![(-2, 1), (2, 1)]);
        let ff: Vec<_> = vecs("ffN").iter().map(|v| (v.0, v.1)).collect();
        assert_eq!(ff, vec![(-1, 2), (1, 2)]);
        assert_eq!(vecs("fN").len(), 4);
        assert_eq!(vecs("N").len(), 8);
    }

    #[test]
    fn soldier_and_hill_pieces() {
        let fs: Vec<_> = vecs("fsW").iter().map(|v| (v.0, v.1)).collect();
        assert_eq!(fs, vec![(-1, 0), (0, 1), (1, 0)]);
        // Hill's elephant: moves as K, captures forward, diagonally forward or sideways.
        let e = parse("mKcfKcsW").unwrap();
        let caps: Vec<_> = e
            .iter()
            .filter(|a| a.can_capture)
            .map(|a| (a.dx, a.dy))
            .collect();
        assert_eq!(caps.len(), 5);
        assert!(!caps.iter().any(|&(_, y)| y < 0));
    }

    #[test]
    fn riders_hoppers_lame() {
        let c = parse("mRcpR").unwrap();
        assert_eq!(c.len(), 8);
        assert!(c.iter().all(|a| a.rider));
        assert_eq!(
            c.iter()
                .filter(|a| a.hopper && a.can_capture && !a.can_move)
                .count(),
            4
        );
        assert!(parse("nN").unwrap().iter().all(|a| a.lame));
        assert!(parse("nA").unwrap().iter().all(|a| a.lame));
        assert_eq!(parse("Q").unwrap().len(), 8);
        assert_eq!(parse("NN").unwrap().len(), 8);
        assert!(parse("NN").unwrap()[0].rider);
        assert!(parse("imfD")
            .unwrap()
            .iter()
            .all(|a| a.initial && a.dy == 2 && !a.can_capture));
    }

    #[test]
    fn errors() {
        assert!(parse("").is_err());
        assert!(parse("fX").is_err());
        assert!(parse("fm").is_err());
        assert!(parse("pN").is_err());
        assert!(parse("nR").is_err());
        assert!(parse("R4").is_err());
        assert!(parse("jW").is_err());
    }
}
