//! Rule-change experiments: the same players and search budget play N games under each of
//! several rule sets (variant files, or one variant and `KEY=VALUE` overrides), arm `k` into
//! `DIR/<letter k>` (`a`, `b`, `c`, ...); every arm is analysed and compared with the first (the
//! baseline). The players are our self-play (an evaluator and a playout budget) or any two
//! player specs (`fsf@nodes=1000`, `uci:...`, `net:...@400`), whose games are played by the
//! binary's arena. Draw and decisive rates are compared by a two-proportion z-test (pooled),
//! first-player scores and game lengths by a two-sample z-test with unpooled variances; all
//! two-sided, and with k arms against one baseline each test is also judged at the
//! Bonferroni level 5%/(k-1).

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
    /// This arm's players, replacing the study's (an engine needs to be told the changed
    /// rules: `fsf@nodes=1000,variant=makruk-sl,option.VariantPath=fsf-rules.ini`; a relative
    /// `VariantPath` is relative to the study file).
    #[serde(default)]
    pub players: Vec<String>,
}

/// An arm ready to play: its directory name, label, rules and players.
#[derive(Clone, Debug)]
pub struct ResolvedArm {
    /// `a`, `b`, `c`, ...: the arm's directory under the study's output.
    pub key: String,
    pub label: String,
    pub variant: Arc<Variant>,
    /// Empty: self-play with the study's evaluator. Otherwise players A and B.
    pub players: Vec<String>,
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
    /// Players of every arm, as `varzero match` takes them (one spec: it plays itself; two:
    /// A against B, colours alternating). Empty: self-play with `evaluator` at `playouts`.
    #[serde(default)]
    pub players: Vec<String>,
    /// Random plies of each engine game's opening (every game its own; engine arms only).
    #[serde(default = "four")]
    pub random_plies: u32,
    /// The clock of every engine game, in cutechess's notation (`10+0.1`, `40/60`, `st=1`;
    /// engine arms only): players of the clock (`fsf@clock`, `material@clock`) need it.
    #[serde(default)]
    pub tc: Option<String>,
    /// Two arms: `a` (the baseline) and `b`...
    #[serde(default)]
    pub a: Option<StudyArm>,
    #[serde(default)]
    pub b: StudyArm,
    /// ...or any number, `[[arm]]`, the first the baseline.
    #[serde(default)]
    pub arm: Vec<StudyArm>,
    #[serde(default)]
    pub search: SearchConfig,
    #[serde(default)]
    pub selfplay: SelfplayConfig,
}

fn material() -> String {
    "material".into()
}

fn four() -> u32 {
    4
}

/// A spec with a relative `option.VariantPath=` made relative to `base` (the study file's
/// directory), so a study runs from any working directory.
pub fn resolve_player(spec: &str, base: &Path) -> String {
    let key = "option.VariantPath=";
    let Some(i) = spec.find(key) else {
        return spec.to_string();
    };
    let start = i + key.len();
    let end = spec[start..].find(',').map_or(spec.len(), |e| start + e);
    let path = Path::new(&spec[start..end]);
    if path.is_absolute() || base.as_os_str().is_empty() {
        return spec.to_string();
    }
    // Absolute, so that the spec (the player's name in the games table) is the same from any
    // working directory and a resumed arm is recognised as the same player.
    let full = base.join(path);
    let full = std::fs::canonicalize(&full).unwrap_or(full);
    format!("{}{}{}", &spec[..start], full.display(), &spec[end..])
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

    /// The arms as written: `[[arm]]`, or `a` and `b`.
    pub fn arm_list(&self) -> Result<Vec<StudyArm>> {
        match (&self.a, self.arm.is_empty()) {
            (Some(_), false) => Err(Error::Study(
                "give arms as [a] and [b], or as [[arm]], not both".into(),
            )),
            (Some(a), true) => Ok(vec![a.clone(), self.b.clone()]),
            (None, false) if self.arm.len() >= 2 => Ok(self.arm.clone()),
            (None, _) => Err(Error::Study(
                "a study needs at least two arms ([a] and [b], or two [[arm]])".into(),
            )),
        }
    }

    /// The arms ready to play. An arm after the first with neither variant nor file is the
    /// first arm's variant with its own overrides.
    pub fn arms(&self, base: &Path) -> Result<Vec<ResolvedArm>> {
        let list = self.arm_list()?;
        let mut out: Vec<ResolvedArm> = Vec::new();
        for (k, arm) in list.iter().enumerate() {
            let key = ((b'a' + (k as u8 % 26)) as char).to_string()
                + &if k >= 26 {
                    (k / 26).to_string()
                } else {
                    String::new()
                };
            let inherits = k > 0 && arm.variant.is_none() && arm.variant_file.is_none();
            let variant = if inherits {
                if arm.set.is_empty() && arm.players.is_empty() {
                    return Err(Error::Study(format!(
                        "arm {key} needs a variant, a variant file, overrides or its own players"
                    )));
                }
                out[0]
                    .variant
                    .with_overrides(&arm.set)
                    .map_err(|e| Error::Variant(format!("arm {key}: {}", e.lines().join("; "))))?
            } else {
                arm.load(base)
                    .map_err(|e| Error::Study(format!("arm {key}: {e}")))?
            };
            let label = match (&arm.label, inherits) {
                (Some(l), _) => l.clone(),
                (None, true) => format!("{} {}", variant.name, arm.set.join(" ")),
                (None, false) => arm.label_or(&variant),
            };
            let specs = if arm.players.is_empty() {
                &self.players
            } else {
                &arm.players
            };
            if specs.len() > 2 {
                return Err(Error::Study(format!(
                    "arm {key}: players: one spec (self-play) or two (A and B), not {}",
                    specs.len()
                )));
            }
            let mut players: Vec<String> = specs.iter().map(|p| resolve_player(p, base)).collect();
            if players.len() == 1 {
                players.push(players[0].clone());
            }
            out.push(ResolvedArm {
                key,
                label,
                variant,
                players,
            });
        }
        Ok(out)
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
    /// Mean game length, plies.
    pub length: Difference,
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
        length: two_mean_z(
            a.length.mean,
            a.length.sd.powi(2),
            a.games as f64,
            b.length.mean,
            b.length.sd.powi(2),
            b.games as f64,
        ),
    }
}

/// Terminations of games lost by a player's failure rather than by the rules: a rule study
/// leaves them out of its figures and lists them.
pub const FAILURE_TERMINATIONS: [&str; 4] = ["crash", "timeout", "illegal-move", "engine-error"];

/// What our rules core, as referee, found in an arm's engine games.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Adjudication {
    pub games: u64,
    /// Games a player lost by an illegal move, a crash or a timeout: id and message.
    pub failures: Vec<(u64, String)>,
    /// Final positions an engine scored otherwise than our rules: id and message.
    pub disagreements: Vec<(u64, String)>,
}

/// Reads the referee's records of an arm's games (the `search` column of the games table).
pub fn adjudication(dir: &Path) -> Result<Adjudication> {
    let (shards, _) = varzero_datasets::read_live_games(dir)?;
    let mut out = Adjudication::default();
    for (_, games) in shards {
        for g in games {
            out.games += 1;
            let meta: serde_json::Value = serde_json::from_str(&g.search).unwrap_or_default();
            if let Some(f) = meta["failure"].as_str() {
                out.failures.push((g.game_id, f.to_string()));
            }
            if let Some(ds) = meta["disagreements"].as_array() {
                for d in ds.iter().filter_map(|d| d.as_str()) {
                    out.disagreements.push((g.game_id, d.to_string()));
                }
            }
        }
    }
    out.failures.sort();
    out.disagreements.sort();
    Ok(out)
}

/// One arm's results, for the report.
pub struct ArmResult<'a> {
    pub key: &'a str,
    pub label: &'a str,
    pub players: &'a [String],
    pub report: &'a GroupReport,
    /// Against the baseline (None for the baseline).
    pub vs_baseline: Option<&'a Comparison>,
    pub adjudication: Option<&'a Adjudication>,
}

/// The text of a study with any number of arms: each figure per arm, and for every arm after
/// the first its difference from the first with the 95% interval and p-value; `*` marks
/// p < 5%, `**` p below the Bonferroni level 5%/(arms-1).
pub fn format_study(arms: &[ArmResult]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let bonferroni = 0.05 / (arms.len().saturating_sub(1).max(1)) as f64;
    let star = |d: &Difference| {
        if d.significant(bonferroni) {
            " **"
        } else if d.significant(0.05) {
            " *"
        } else {
            ""
        }
    };
    let w = arms.iter().map(|a| a.label.len()).max().unwrap_or(0) + 4;
    for a in arms {
        let who = if a.players.is_empty() {
            "self-play".to_string()
        } else if a.players[0] == a.players[1] {
            a.players[0].clone()
        } else {
            format!("{} vs {}", a.players[0], a.players[1])
        };
        let _ = writeln!(
            s,
            "{}: {} ({} games, rules {}, {who})",
            a.key, a.label, a.report.games, a.report.rules_hash
        );
    }
    let figure = |s: &mut String,
                  name: &str,
                  value: &dyn Fn(&GroupReport) -> String,
                  diff: &dyn Fn(&Comparison) -> Difference,
                  digits: usize| {
        let _ = writeln!(s, "\n{name}");
        for a in arms {
            let tail = a.vs_baseline.map_or(String::new(), |c| {
                let d = diff(c);
                format!(
                    "  {:+.digits$} [{:+.digits$}, {:+.digits$}] vs a, p = {:.4}{}",
                    d.diff,
                    d.lower,
                    d.upper,
                    d.p_value,
                    star(&d)
                )
            });
            let _ = writeln!(
                s,
                "  {:<w$} {:<24}{tail}",
                format!("{}: {}", a.key, a.label),
                value(a.report)
            );
        }
    };
    figure(
        &mut s,
        "draw rate (95% Wilson)",
        &|r| r.draw_rate.to_string(),
        &|c| c.draw_rate,
        3,
    );
    figure(
        &mut s,
        "decisive rate",
        &|r| r.decisive_rate.to_string(),
        &|c| c.decisive_rate,
        3,
    );
    figure(
        &mut s,
        "first-player score",
        &|r| r.first_player_score.to_string(),
        &|c| c.first_player_score,
        3,
    );
    figure(
        &mut s,
        "game length, plies (mean ± sd)",
        &|r| format!("{:.1} ± {:.1}", r.length.mean, r.length.sd),
        &|c| c.length,
        1,
    );
    let mut terms: Vec<&str> = arms
        .iter()
        .flat_map(|a| a.report.terminations.iter().map(|t| t.termination.as_str()))
        .collect();
    terms.sort();
    terms.dedup();
    let _ = writeln!(
        s,
        "\ngames by ending: count, % [95% Wilson] (first-player wins/draws/second-player wins)"
    );
    for t in terms {
        let _ = writeln!(s, "  {t}");
        for a in arms {
            let r = a.report;
            let x = r.terminations.iter().find(|x| x.termination == t);
            let n = x.map_or(0, |x| x.games);
            let iv = analysis::wilson(n as f64, r.games.max(1) as f64, analysis::Z95);
            let _ = writeln!(
                s,
                "    {:<w$} {:>5}  {:5.1}% [{:.1}, {:.1}]  ({})",
                format!("{}: {}", a.key, a.label),
                n,
                100.0 * iv.value,
                100.0 * iv.lower,
                100.0 * iv.upper,
                x.map_or("-".into(), |x| format!(
                    "{}/{}/{}",
                    x.first_wins, x.draws, x.second_wins
                ))
            );
        }
    }
    if arms.iter().any(|a| a.report.piece_values.is_some()) {
        let unit = arms
            .iter()
            .find_map(|a| a.report.piece_values.as_ref().map(|p| p.reference))
            .unwrap_or_default();
        let _ = writeln!(s, "\npiece values ({unit} = 1, 95% bootstrap over games)");
        let mut keys: Vec<&str> = Vec::new();
        for a in arms {
            for p in a.report.piece_values.iter().flat_map(|p| &p.values) {
                if !keys.contains(&p.key.as_str()) {
                    keys.push(&p.key);
                }
            }
        }
        let w = keys.iter().map(|k| k.len()).max().unwrap_or(0).max(4);
        for l in keys {
            let _ = write!(s, "  {l:<w$}");
            for a in arms {
                let cell = a
                    .report
                    .piece_values
                    .as_ref()
                    .and_then(|pv| pv.values.iter().find(|p| p.key == l))
                    .map_or("-".to_string(), |p| {
                        format!("{:.2} [{:.2}, {:.2}]", p.value, p.lower, p.upper)
                    });
                let _ = write!(s, " {}: {cell:<22}", a.key);
            }
            s.push('\n');
        }
    }
    for a in arms {
        for n in &a.report.notes {
            let _ = writeln!(s, "note ({}): {n}", a.key);
        }
    }
    let adj: Vec<_> = arms
        .iter()
        .filter_map(|a| a.adjudication.map(|d| (a, d)))
        .collect();
    if !adj.is_empty() {
        let _ = writeln!(
            s,
            "\nreferee (our rules core): games lost by a player's failure are left out above; \
             final positions an engine scores otherwise are counted"
        );
        for (a, d) in adj {
            let _ = writeln!(
                s,
                "  {}: {} games, {} failures, {} disagreements",
                a.key,
                d.games,
                d.failures.len(),
                d.disagreements.len()
            );
            for (id, m) in d.failures.iter().chain(&d.disagreements).take(5) {
                let _ = writeln!(s, "    game {id}: {m}");
            }
        }
    }
    if arms.len() > 1 {
        let _ = writeln!(
            s,
            "\ntests against a: rates by the two-proportion z-test (pooled), first-player score \
             and length by the two-sample z-test (unpooled); * p < 0.05, ** p < {:.4} \
             (Bonferroni over {} comparisons)",
            bonferroni,
            arms.len() - 1
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shipped study file parses and its arms resolve (players are checked where they
    /// are played: an `fsf@` player needs the engine built).
    #[test]
    fn shipped_studies_resolve() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/studies");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_none_or(|x| x != "toml") {
                continue;
            }
            let cfg = StudyConfig::load(&p).unwrap();
            let arms = cfg.arms(&dir).unwrap();
            assert!(arms.len() >= 2, "{}", p.display());
            let hashes: std::collections::HashSet<u64> =
                arms.iter().map(|a| a.variant.rules_hash).collect();
            assert_eq!(
                hashes.len(),
                arms.len(),
                "{}: arms differ in rules",
                p.display()
            );
            for a in &arms {
                assert!(a.players.is_empty() || a.players.len() == 2);
                for s in &a.players {
                    if let Some(i) = s.find("option.VariantPath=") {
                        let path = s[i + 19..].split(',').next().unwrap();
                        assert!(Path::new(path).is_file(), "{}: {path}", p.display());
                    }
                }
            }
            n += 1;
        }
        assert!(n >= 3);
    }

    #[test]
    fn arms_inherit_the_first_variant_and_name_their_directories() {
        let cfg: StudyConfig = toml::from_str(
            r#"name = "x"
games = 2
players = ["random"]
[[arm]]
variant = "makruk"
[[arm]]
set = ["stalemate=loss"]
[[arm]]
set = ["rules.counting.mode=none"]
players = ["material@8", "uci:./engine@nodes=5,option.VariantPath=rules.ini"]
"#,
        )
        .unwrap();
        let arms = cfg.arms(Path::new("/studies")).unwrap();
        let keys: Vec<&str> = arms.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(keys, ["a", "b", "c"]);
        assert_eq!(arms[1].label, "makruk stalemate=loss");
        assert_eq!(arms[0].players, ["random", "random"]);
        assert_eq!(
            arms[2].players[1],
            "uci:./engine@nodes=5,option.VariantPath=/studies/rules.ini"
        );
        assert_ne!(arms[0].variant.rules_hash, arms[1].variant.rules_hash);
        assert_eq!(arms[1].variant.name, "makruk");
    }
}
