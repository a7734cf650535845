//! Rule-change experiments: the same evaluator and search budget play N self-play games under
//! two rule sets (two variant files, or one variant and `KEY=VALUE` overrides), into `DIR/a` and
//! `DIR/b`; both are analysed and compared. Draw rates are compared by a two-proportion z-test
//! (pooled), first-player scores by a two-sample z-test on per-game scores (1, 1/2, 0) with
//! unpooled variances; both two-sided at the 5% level.

use crate::config::SelfplayConfig;
use crate::error::{Error, Result};
use crate::generator::{Generator, Stats, Summary};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use varzero_datasets::analysis::{
    self, two_mean_z, two_proportion_z, AnalysisOptions, Difference, GroupReport, VariantLookup,
};
use varzero_rules::Variant;
use varzero_search::{EvaluatorResolver, SearchConfig};

/// One side of a study.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StudyArm {
    /// Shown in reports.
    #[serde(default)]
    pub label: Option<String>,
    /// A shipped variant (or Fairy-Stockfish's name for it)...
    #[serde(default)]
    pub variant: Option<String>,
    /// ...or a variant file (relative to the study file).
    #[serde(default)]
    pub variant_file: Option<PathBuf>,
    /// Rule overrides (`stalemate=draw`).
    #[serde(default)]
    pub set: Vec<String>,
}

impl StudyArm {
    pub fn load(&self, base: &Path) -> Result<Arc<Variant>> {
        let v = match (&self.variant_file, &self.variant) {
            (Some(f), _) => {
                let p = if f.is_absolute() {
                    f.clone()
                } else {
                    base.join(f)
                };
                Variant::from_file(&p).map_err(|e| Error::Variant(e.lines().join("; ")))?
            }
            (None, Some(n)) => {
                Variant::builtin(n).map_err(|e| Error::Variant(e.lines().join("; ")))?
            }
            (None, None) => {
                return Err(Error::Study(
                    "a study arm needs `variant` or `variant_file`".into(),
                ))
            }
        };
        if self.set.is_empty() {
            Ok(v)
        } else {
            v.with_overrides(&self.set)
                .map_err(|e| Error::Variant(e.lines().join("; ")))
        }
    }

    pub fn label_or(&self, v: &Variant) -> String {
        self.label.clone().unwrap_or_else(|| {
            if self.set.is_empty() {
                v.name.clone()
            } else {
                format!("{} {}", v.name, self.set.join(" "))
            }
        })
    }
}

/// A study file (TOML).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StudyConfig {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Self-play games per arm.
    pub games: u64,
    /// Evaluator name (`material`, `uniform`, or what the resolver knows).
    #[serde(default = "material")]
    pub evaluator: String,
    /// Playouts per move (overrides `search.playouts`).
    #[serde(default)]
    pub playouts: Option<u32>,
    pub a: StudyArm,
    #[serde(default)]
    pub b: StudyArm,
    #[serde(default)]
    pub search: SearchConfig,
    #[serde(default)]
    pub selfplay: SelfplayConfig,
}

fn material() -> String {
    "material".into()
}

impl StudyConfig {
    pub fn load(path: &Path) -> Result<StudyConfig> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
            path: path.display().to_string(),
            source: e,
        })?;
        toml::from_str(&text).map_err(|e| {
            let at = varzero_rules::toml_location(&path.display().to_string(), &text, &e);
            Error::Study(format!("{at}: {}", e.message()))
        })
    }

    /// The two variants; an arm `b` with neither variant nor file is `a`'s variant with `b`'s
    /// overrides.
    pub fn variants(&self, base: &Path) -> Result<(Arc<Variant>, Arc<Variant>)> {
        let a = self.a.load(base)?;
        let b = if self.b.variant.is_none() && self.b.variant_file.is_none() {
            if self.b.set.is_empty() {
                return Err(Error::Study(
                    "arm b needs a variant, a variant file, or overrides".into(),
                ));
            }
            a.with_overrides(&self.b.set)
                .map_err(|e| Error::Variant(e.lines().join("; ")))?
        } else {
            self.b.load(base)?
        };
        Ok((a, b))
    }

    pub fn search_config(&self) -> SearchConfig {
        let mut s = self.search.clone();
        if let Some(p) = self.playouts {
            s.playouts = p;
        }
        s
    }
}

/// Plays `games` self-play games of `v` into `dir` (resuming), calling `progress` about four
/// times a second. Writes `dir/variant.toml`.
#[allow(clippy::too_many_arguments)]
pub fn play_arm(
    v: &Arc<Variant>,
    evaluator: &str,
    resolver: &dyn EvaluatorResolver,
    search: &SearchConfig,
    run: &SelfplayConfig,
    dir: &Path,
    games: u64,
    progress: &mut dyn FnMut(&Stats),
) -> Result<Summary> {
    let ev = resolver.resolve(evaluator, v)?.ok_or_else(|| {
        Error::Resolve(varzero_search::ResolveError(format!(
            "unknown evaluator '{evaluator}'"
        )))
    })?;
    std::fs::create_dir_all(dir).map_err(|e| Error::Io {
        path: dir.display().to_string(),
        source: e,
    })?;
    varzero_datasets::write_variant_file(dir, v)?;
    let gen = Arc::new(Generator::new(v.clone(), ev, search.clone(), run.clone()));
    let g2 = gen.clone();
    let d2 = dir.to_path_buf();
    let handle = std::thread::spawn(move || g2.run(&d2, games));
    while !handle.is_finished() {
        std::thread::sleep(Duration::from_millis(250));
        progress(&gen.stats);
    }
    progress(&gen.stats);
    Ok(handle.join().map_err(|_| Error::Panicked)??)
}

/// Analyses one arm's directory (a single group is expected).
pub fn analyze_arm(dir: &Path, v: &Arc<Variant>, opts: &AnalysisOptions) -> Result<GroupReport> {
    let mut lookup = VariantLookup::new();
    lookup.add(v.clone());
    let (lf, skipped) = analysis::scan_game_dirs(&[dir.to_path_buf()])?;
    for s in skipped {
        eprintln!("warning: {s}");
    }
    let lf = lf.ok_or_else(|| Error::Study(format!("{}: no games", dir.display())))?;
    let mut reports = analysis::analyze(lf, &lookup, opts)?;
    let hash = format!("{:016x}", v.rules_hash);
    let i = reports
        .iter()
        .position(|r| r.rules_hash == hash)
        .ok_or_else(|| {
            Error::Study(format!(
                "{}: no games with rules hash {hash}",
                dir.display()
            ))
        })?;
    if reports.len() > 1 {
        eprintln!(
            "warning: {} holds games of {} rule sets; only rules hash {hash} is used",
            dir.display(),
            reports.len()
        );
    }
    Ok(reports.swap_remove(i))
}

/// The comparison of two arms.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub draw_rate: Difference,
    pub first_player_score: Difference,
    pub decisive_rate: Difference,
}

pub fn compare(a: &GroupReport, b: &GroupReport) -> Comparison {
    let na = (a.first_wins + a.draws + a.second_wins) as f64;
    let nb = (b.first_wins + b.draws + b.second_wins) as f64;
    // Per-game variance of the first player's score, as a population variance.
    let var = |r: &GroupReport, n: f64| {
        let m = r.first_player_score.value;
        (r.first_wins as f64 * (1.0 - m).powi(2)
            + r.draws as f64 * (0.5 - m).powi(2)
            + r.second_wins as f64 * m.powi(2))
            / n.max(1.0)
    };
    Comparison {
        draw_rate: two_proportion_z(a.draws as f64, na, b.draws as f64, nb),
        first_player_score: two_mean_z(
            a.first_player_score.value,
            var(a, na),
            na,
            b.first_player_score.value,
            var(b, nb),
            nb,
        ),
        decisive_rate: two_proportion_z(
            (a.first_wins + a.second_wins) as f64,
            na,
            (b.first_wins + b.second_wins) as f64,
            nb,
        ),
    }
}

/// The side-by-side text of a study.
pub fn format_comparison(
    labels: (&str, &str),
    a: &GroupReport,
    b: &GroupReport,
    c: &Comparison,
) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let w = 30;
    let _ = writeln!(
        s,
        "{:<20} {:<w$} {:<w$} difference a-b [95%]   p-value",
        "",
        format!("a: {}", labels.0),
        format!("b: {}", labels.1)
    );
    let _ = writeln!(s, "{:<20} {:<w$} {:<w$}", "games", a.games, b.games);
    let _ = writeln!(
        s,
        "{:<20} {:<w$} {:<w$}",
        "first W/D/L",
        format!("{}/{}/{}", a.first_wins, a.draws, a.second_wins),
        format!("{}/{}/{}", b.first_wins, b.draws, b.second_wins)
    );
    let row = |s: &mut String,
               name: &str,
               x: &analysis::Interval,
               y: &analysis::Interval,
               d: &Difference| {
        let _ = writeln!(
            s,
            "{:<20} {:<w$} {:<w$} {:+.3} [{:+.3}, {:+.3}]  {:.4}{}",
            name,
            x.to_string(),
            y.to_string(),
            d.diff,
            d.lower,
            d.upper,
            d.p_value,
            if d.significant(0.05) { " *" } else { "" }
        );
    };
    row(
        &mut s,
        "draw rate",
        &a.draw_rate,
        &b.draw_rate,
        &c.draw_rate,
    );
    row(
        &mut s,
        "decisive rate",
        &a.decisive_rate,
        &b.decisive_rate,
        &c.decisive_rate,
    );
    row(
        &mut s,
        "first-player score",
        &a.first_player_score,
        &b.first_player_score,
        &c.first_player_score,
    );
    let _ = writeln!(
        s,
        "{:<20} {:<w$} {:<w$}",
        "mean length (plies)",
        format!("{:.1}", a.length.mean),
        format!("{:.1}", b.length.mean)
    );
    let mut terms: Vec<&str> = a
        .terminations
        .iter()
        .chain(&b.terminations)
        .map(|t| t.termination.as_str())
        .collect();
    terms.sort();
    terms.dedup();
    for t in terms {
        let count = |r: &GroupReport| {
            let n = r
                .terminations
                .iter()
                .find(|x| x.termination == t)
                .map_or(0, |x| x.games);
            format!("{n} ({:.1}%)", 100.0 * n as f64 / r.games.max(1) as f64)
        };
        let _ = writeln!(s, "  {:<18} {:<w$} {:<w$}", t, count(a), count(b));
    }
    if let (Some(pa), Some(pb)) = (&a.piece_values, &b.piece_values) {
        let _ = writeln!(s, "piece values ({} = 1, 95% bootstrap)", pa.reference);
        for p in &pa.values {
            let q = pb.values.iter().find(|q| q.letter == p.letter);
            let _ = writeln!(
                s,
                "  {:<18} {:<w$} {:<w$}",
                p.letter,
                format!("{:.2} [{:.2}, {:.2}]", p.value, p.lower, p.upper),
                q.map_or("-".into(), |q| format!(
                    "{:.2} [{:.2}, {:.2}]",
                    q.value, q.lower, q.upper
                ))
            );
        }
    }
    let _ = writeln!(
        s,
        "tests: draw and decisive rates: {}; first-player score: {}; * = significant at 5% \
         (two-sided)",
        c.draw_rate.test, c.first_player_score.test
    );
    s
}
