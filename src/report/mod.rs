//! `DIR/report.html`: one self-contained page (inline CSS and SVG, no script, no network) for a
//! pipeline run, a rule study or a dataset directory. A run shows its Elo per generation on the
//! ladder, its matches, the training curves, self-play statistics per generation and the piece
//! values against the reference sets; a study shows its arms side by side; a dataset its
//! analysis. Everything is read from what the stages already wrote (logs/*.csv, report.json,
//! the games tables), so the page can be rebuilt at any time and the pipeline refreshes it after
//! every generation.

use crate::run_dir::{MatchRecord, RunDir};
use anyhow::{Context, Result};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use varzero_charts::{self as charts, Bar, Chart};
use varzero_datasets::analysis::{self, AnalysisOptions, ReferenceSet, VariantLookup};
use varzero_rules::Variant;
use varzero_trainer::{EloPoint, StepLog};

/// What a directory holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Run,
    Study,
    Dataset,
}

pub fn kind_of(dir: &Path) -> Option<Kind> {
    if dir.join("study.toml").exists() && dir.join("report.json").exists() {
        Some(Kind::Study)
    } else if crate::run_dir::RunDir::new(dir).is_run() {
        Some(Kind::Run)
    } else if varzero_datasets::list_shards(dir).is_ok_and(|(s, _)| !s.is_empty()) {
        Some(Kind::Dataset)
    } else {
        None
    }
}

/// Options of a report.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// Reference piece-value sets besides the shipped ones.
    pub references: Vec<ReferenceSet>,
    /// Bootstrap resamples for piece values computed here (runs and datasets).
    pub bootstrap: usize,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            references: Vec::new(),
            bootstrap: 100,
        }
    }
}

/// Builds the page for `dir` and writes it to `DIR/report.html` (by rename); returns its path
/// and the number of charts.
pub fn write(dir: &Path, opts: &ReportOptions) -> Result<(PathBuf, usize)> {
    let kind = kind_of(dir).with_context(|| {
        format!(
            "{}: not a run (config.toml), a study (study.toml and report.json) or a dataset \
             (shards)",
            dir.display()
        )
    })?;
    let mut refs = ReferenceSet::shipped();
    refs.extend(opts.references.iter().cloned());
    let mut page = Page::default();
    match kind {
        Kind::Run => run_page(dir, opts, &refs, &mut page)?,
        Kind::Study => study_page(dir, &refs, &mut page)?,
        Kind::Dataset => dataset_page(dir, opts, &refs, &mut page)?,
    }
    let html = page.html(&format!(
        "{} — varzero {}",
        dir.file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| dir.display().to_string()),
        match kind {
            Kind::Run => "run",
            Kind::Study => "study",
            Kind::Dataset => "dataset",
        }
    ));
    // A run's page, a study's and a dataset's are all DIR/report.html.
    let path = RunDir::new(dir).report();
    crate::write_atomic(&path, html)?;
    Ok((path, page.charts))
}

/// The size of an inline chart, in CSS pixels.
const CHART_SIZE: (u32, u32) = (640, 300);

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[derive(Default)]
struct Page {
    body: String,
    charts: usize,
}

impl Page {
    fn h2(&mut self, t: &str) {
        let _ = write!(self.body, "<h2>{}</h2>", esc(t));
    }
    fn p(&mut self, t: &str) {
        let _ = write!(self.body, "<p>{}</p>", esc(t));
    }
    fn chart(&mut self, c: Chart) {
        self.charts += 1;
        let _ = write!(self.body, "<figure>{}</figure>", c.svg(CHART_SIZE));
    }
    fn table(&mut self, head: &[&str], rows: &[Vec<String>]) {
        self.body.push_str("<table><tr>");
        for h in head {
            let _ = write!(self.body, "<th>{}</th>", esc(h));
        }
        self.body.push_str("</tr>");
        for r in rows {
            self.body.push_str("<tr>");
            for c in r {
                let _ = write!(self.body, "<td>{}</td>", esc(c));
            }
            self.body.push_str("</tr>");
        }
        self.body.push_str("</table>");
    }
    fn html(&self, title: &str) -> String {
        format!(
            r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{t}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 24px auto; max-width: 1000px; color: #222; }}
h1 {{ font-size: 22px; }} h2 {{ font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ddd; }}
table {{ border-collapse: collapse; font-size: 13px; margin: 8px 0; }}
td, th {{ border: 1px solid #ccc; padding: 3px 8px; text-align: right; }}
th {{ background: #f4f4f4; }} td:first-child {{ text-align: left; }}
figure {{ margin: 12px 0; }} .note {{ color: #666; font-size: 13px; }}
pre {{ background: #f7f7f7; padding: 8px; font-size: 12px; overflow-x: auto; }}
</style></head><body>
<h1>{t}</h1>
<p class="note">Written by <code>varzero report</code> at {now} (UTC seconds since 1970). Intervals are 95%.</p>
{body}
</body></html>
"#,
            t = esc(title),
            now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            body = self.body
        )
    }
}

/// A row's cells exactly as its file holds them (the table shows what the log says).
fn cells<R: varzero_datasets::Row>(r: &R) -> Vec<String> {
    r.line().split(',').map(str::to_string).collect()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

fn pair(v: &Value) -> Option<(f64, f64)> {
    Some((v.get(0)?.as_f64()?, v.get(1)?.as_f64()?))
}

/// Elo against CPU-hours from the closing rows that carry them (nets 1, N/3, 2N/3 and the last
/// against generation 0's player): the run's curve when the ladder was off. None with fewer
/// than two points.
fn gen0_curve(rows: &[crate::run_dir::SummaryMatch]) -> Option<Chart> {
    let points: Vec<charts::Point> = rows
        .iter()
        .filter_map(|r| {
            let h = r.cpu_hours?;
            // A clean sweep has no finite Elo to draw; its row is in the table.
            r.elo.is_finite().then(|| {
                let bar = (r.elo_low.is_finite() && r.elo_high.is_finite())
                    .then_some((r.elo_low, r.elo_high));
                (h, r.elo, bar)
            })
        })
        .collect();
    if points.len() < 2 {
        return None;
    }
    let opponent = rows
        .iter()
        .rev()
        .find(|r| r.cpu_hours.is_some())
        .map(|r| r.opponent.clone())
        .unwrap_or_default();
    Some(charts::line_chart(
        "gen0-elo-cpu",
        &format!("Elo against {opponent} by CPU-hours of self-play and training"),
        "CPU-hours",
        "Elo",
        &[charts::Series {
            name: "net".into(),
            points,
        }],
        &[(0.0, opponent)],
    ))
}

fn run_page(
    dir: &Path,
    opts: &ReportOptions,
    refs: &[ReferenceSet],
    page: &mut Page,
) -> Result<()> {
    let run = RunDir::new(dir);
    run.check_format()?;
    let cfg_text = std::fs::read_to_string(run.config())
        .with_context(|| format!("cannot read {}", run.config().display()))?;
    let _ = write!(
        page.body,
        "<details><summary>run configuration (config.toml)</summary><pre>{}</pre></details>",
        esc(&cfg_text)
    );
    // The closing matches first: they answer whether the loop learnt.
    if let Some(rows) = run.read_summary()?.filter(|r| !r.is_empty()) {
        page.h2("What the loop learnt: the closing matches");
        page.p(
            "The last net against net 1 with the nets alone (raw: no quiescence blend, no \
             material priors) and with the run's search, and against generation 0's player \
             (from six nets on, nets 1, N/3 and 2N/3 too: the chart, Elo against CPU-hours). \
             Elo intervals are 95%, from game pairs (the last row's from games).",
        );
        let e = crate::run_dir::SummaryMatch::elo_text;
        if let Some(c) = gen0_curve(&rows) {
            page.chart(c);
        }
        let rows: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                vec![
                    r.label.clone(),
                    format!("{}", r.wins as f64 + r.draws as f64 / 2.0),
                    r.games.to_string(),
                    format!("{} / {} / {}", r.wins, r.draws, r.losses),
                    e(r.elo),
                    format!("[{}, {}]", e(r.elo_low), e(r.elo_high)),
                    r.verdict().to_string(),
                    format!("{} vs {}", r.player, r.opponent),
                ]
            })
            .collect();
        page.table(
            &[
                "match",
                "score",
                "games",
                "W / D / L",
                "Elo",
                "95%",
                "reads",
                "players",
            ],
            &rows,
        );
    }
    // The ladder.
    page.h2("Strength: Elo per generation on the ladder");
    let ladder = run.read_ladder_csv()?;
    let rungs: Vec<(String, f64)> = run
        .read_ladder_ratings()?
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.rung)
        .map(|r| (r.player, r.elo))
        .collect();
    // The chart follows the run's search; raw ratings (`[ladder] raw`) are in the table.
    let elo_points: Vec<EloPoint> = ladder
        .iter()
        .flatten()
        .filter(|r| !r.player.ends_with("-raw"))
        .map(|r| EloPoint {
            generation: r.generation,
            cpu_hours: r.cpu_hours,
            elo: r.elo,
            error: r.error95,
        })
        .collect();
    for c in varzero_trainer::elo_charts(&elo_points, &rungs) {
        page.chart(c);
    }
    match &ladder {
        None => page.p(&format!(
            "No ladder ratings yet: {} not yet written ([ladder] enabled = false, or no generation rated).",
            run.ladder_csv().display()
        )),
        Some(rows) if rows.is_empty() => page.p("No generation rated on the ladder yet."),
        Some(rows) => {
            let rows: Vec<Vec<String>> = rows.iter().map(cells).collect();
            page.table(
                &[
                    "generation",
                    "player",
                    "Elo",
                    "± (95%)",
                    "games",
                    "CPU-hours",
                ],
                &rows,
            );
        }
    }
    if let Some(matches) = run.read_matches_csv()?.filter(|m| !m.is_empty()) {
        page.h2("Gating and evaluation matches");
        let rows: Vec<Vec<String>> = matches.iter().map(cells).collect();
        page.table(<MatchRecord as varzero_datasets::Row>::COLUMNS, &rows);
    }
    // Training curves, generations one after another.
    page.h2("Training");
    let generations = toml::from_str::<toml::Table>(&cfg_text)
        .ok()
        .and_then(|t| t.get("generations").and_then(|g| g.as_integer()))
        .unwrap_or(0)
        .max(0) as u32;
    let mut logs = Vec::new();
    for g in 1..=generations {
        if let Some(l) = run.read_train_log(g)? {
            logs.push(l);
        }
    }
    let mut steps: Vec<StepLog> = Vec::new();
    let mut offset = 0u64;
    for rows in &logs {
        let last = rows.iter().map(|r| r.step).max().unwrap_or(0);
        for r in rows {
            steps.push(StepLog {
                step: offset + r.step,
                ..r.clone()
            });
        }
        offset += last;
    }
    for c in varzero_trainer::training_charts(&steps) {
        page.chart(c);
    }
    if logs.is_empty() {
        page.p(&format!(
            "No training log yet: {} not yet written.",
            run.train_log(1).display()
        ));
    }
    // Self-play, per generation.
    let gens: Vec<PathBuf> = run
        .selfplay_generations()?
        .into_iter()
        .map(|g| run.selfplay(g))
        .collect();
    page.h2("Self-play per generation");
    let mut groups: Vec<(String, Value)> = Vec::new();
    let mut all_dirs = Vec::new();
    let mut variant = None;
    // Self-play directories name their variant in dataset.json; the run config says which.
    let run_variant = toml::from_str::<toml::Table>(&cfg_text)
        .ok()
        .and_then(|t| {
            t.get("variant")
                .and_then(|v| v.as_str())
                .map(str::to_string)
        })
        .and_then(|n| Variant::builtin(&n).ok());
    for g in &gens {
        let Some(v) = dataset_variant(g).or_else(|| run_variant.clone()) else {
            continue;
        };
        let quick = AnalysisOptions {
            bootstrap: 0,
            samples_per_game: 0,
            ..AnalysisOptions::default()
        };
        if let Some(r) = analyse(std::slice::from_ref(g), &v, &quick)? {
            groups.push((
                g.file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default(),
                r,
            ));
            all_dirs.push(g.clone());
            variant = Some(v);
        }
    }
    per_group_charts(page, "selfplay", "generation", &groups);
    // Piece values over all self-play.
    page.h2("Piece values from all self-play games");
    match variant {
        Some(v) => {
            let full = AnalysisOptions {
                bootstrap: opts.bootstrap,
                stable_plies: 4,
                ..AnalysisOptions::default()
            };
            match analyse(&all_dirs, &v, &full)? {
                Some(r) => piece_values(page, "selfplay-piece-values", &[("all".into(), r)], refs),
                None => page.p("No games."),
            }
        }
        None => page.p("No self-play games yet."),
    }
    Ok(())
}

/// The variant a dataset directory was played under: its `variant.toml`, else the shipped
/// variant its manifest (`dataset.json`) names, if the rules hash is that variant's (self-play
/// of a run writes no variant.toml).
fn dataset_variant(dir: &Path) -> Option<Arc<Variant>> {
    Variant::from_file(&dir.join("variant.toml"))
        .ok()
        .or_else(|| shipped_variant(dir).ok())
}

/// The shipped variant of the rules in `dir`'s manifest, or why there is none.
fn shipped_variant(dir: &Path) -> Result<Arc<Variant>> {
    let rules = varzero_datasets::common_rules(&[dir.to_path_buf()])
        .map_err(anyhow::Error::msg)?
        .with_context(|| format!("{}: no variant.toml and no manifest", dir.display()))?;
    match VariantLookup::new().find(&rules.variant, &rules.rules_hash) {
        (Some(v), None) => Ok(v),
        _ => anyhow::bail!(
            "{}: played under {rules}, which no shipped variant has, and no variant.toml",
            dir.display()
        ),
    }
}

/// The analysis of `dirs` (one rule set) as JSON, or None without games.
fn analyse(dirs: &[PathBuf], v: &Arc<Variant>, opts: &AnalysisOptions) -> Result<Option<Value>> {
    let (lf, _) = analysis::scan_game_dirs(dirs).map_err(anyhow::Error::msg)?;
    let Some(lf) = lf else {
        return Ok(None);
    };
    let mut lookup = VariantLookup::new();
    lookup.add(v.clone());
    let reports = analysis::analyze(lf, &lookup, opts).map_err(anyhow::Error::msg)?;
    let hash = format!("{:016x}", v.rules_hash);
    Ok(reports
        .into_iter()
        .find(|r| r.rules_hash == hash)
        .map(|r| r.to_json()))
}

/// Draw rate, first-player score and length per group, the endings as shares, and a table.
fn per_group_charts(page: &mut Page, id: &str, what: &str, groups: &[(String, Value)]) {
    let bars = |key: &str| -> Vec<Bar> {
        groups
            .iter()
            .map(|(label, r)| Bar {
                label: label.clone(),
                value: f(&r[key]),
                interval: pair(&r[format!("{key}_interval")]),
                reference: None,
                group: 0,
            })
            .collect()
    };
    page.chart(charts::bar_chart(
        &format!("{id}-draw-rate"),
        &format!("Draw rate by {what}"),
        "draw rate",
        &bars("draw_rate"),
        &[],
    ));
    page.chart(charts::bar_chart(
        &format!("{id}-first-player"),
        &format!("First player's score by {what}"),
        "score",
        &bars("first_player_score"),
        &[],
    ));
    let lengths: Vec<Bar> = groups
        .iter()
        .map(|(label, r)| Bar {
            label: label.clone(),
            value: f(&r["length"]["mean"]),
            interval: Some((f(&r["length"]["p10"]), f(&r["length"]["p90"]))),
            reference: None,
            group: 0,
        })
        .collect();
    page.chart(charts::bar_chart(
        &format!("{id}-length"),
        &format!("Game length by {what} (mean; 10th to 90th percentile)"),
        "plies",
        &lengths,
        &[],
    ));
    let mut cats: Vec<String> = groups
        .iter()
        .flat_map(|(_, r)| {
            r["terminations"]
                .as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default()
        })
        .collect();
    cats.sort();
    cats.dedup();
    let rows: Vec<(String, Vec<f64>)> = groups
        .iter()
        .map(|(label, r)| {
            let n = f(&r["games"]).max(1.0);
            (
                label.clone(),
                cats.iter()
                    .map(|c| f(&r["terminations"][c]["games"]).max(0.0) / n)
                    .collect(),
            )
        })
        .collect();
    page.chart(charts::stacked_shares(
        &format!("{id}-endings"),
        &format!("How games ended, by {what}"),
        &cats,
        &rows,
    ));
    let iv = |r: &Value, k: &str| {
        let (lo, hi) = pair(&r[format!("{k}_interval")]).unwrap_or((f64::NAN, f64::NAN));
        format!("{:.3} [{lo:.3}, {hi:.3}]", f(&r[k]))
    };
    let table: Vec<Vec<String>> = groups
        .iter()
        .map(|(label, r)| {
            let mut ends: Vec<(String, u64)> = r["terminations"]
                .as_object()
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| (k.clone(), v["games"].as_u64().unwrap_or(0)))
                        .collect()
                })
                .unwrap_or_default();
            ends.sort_by_key(|e| std::cmp::Reverse(e.1));
            vec![
                label.clone(),
                r["games"].to_string(),
                format!("{}/{}/{}", r["first_wins"], r["draws"], r["second_wins"]),
                iv(r, "draw_rate"),
                iv(r, "first_player_score"),
                format!("{:.1}", f(&r["length"]["mean"])),
                ends.iter()
                    .map(|(k, n)| format!("{k} {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ]
        })
        .collect();
    page.table(
        &[
            what,
            "games",
            "first W/D/L",
            "draw rate",
            "first-player score",
            "mean plies",
            "endings",
        ],
        &table,
    );
}

/// Piece values per group with intervals, the first applicable reference set as marks, and a
/// table with every applicable set.
fn piece_values(page: &mut Page, id: &str, groups: &[(String, Value)], refs: &[ReferenceSet]) {
    let variant = groups
        .first()
        .and_then(|(_, r)| r["variant"].as_str())
        .unwrap_or("")
        .to_string();
    let refs: Vec<&ReferenceSet> = refs.iter().filter(|s| s.applies_to(&variant)).collect();
    let mut bars = Vec::new();
    let mut rows = Vec::new();
    let mut measured = false;
    for (gi, (label, r)) in groups.iter().enumerate() {
        let d = &r["piece_value_details"];
        let Some(values) = d["values"].as_array() else {
            continue;
        };
        let unit = d["reference"].as_str().unwrap_or("P").to_string();
        let unit_iv = pair(&json_interval(&d["reference_logit"]));
        let unit_ok = unit_iv.is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0);
        if !unit_ok {
            page.p(&format!(
                "{label}: the unit piece ({unit}) is not measured (its logit interval includes 0); \
                 more games, or games that are decided, are needed."
            ));
            continue;
        }
        measured = true;
        for v in values {
            // `key` is the letter, or `letter@region` for a piece counted apart in a region.
            let letter = v["key"]
                .as_str()
                .or_else(|| v["letter"].as_str())
                .unwrap_or("?")
                .to_string();
            if letter.eq_ignore_ascii_case(&unit) {
                continue;
            }
            let reference = refs.first().and_then(|s| s.value_in(&letter, &unit));
            bars.push(Bar {
                label: if groups.len() > 1 {
                    format!("{letter} {}", label.chars().next().unwrap_or(' '))
                } else {
                    letter.to_string()
                },
                value: f(&v["value"]),
                interval: Some((f(&v["lower"]), f(&v["upper"]))),
                reference,
                group: gi,
            });
            let mut row = vec![
                label.clone(),
                format!("{letter} ({})", v["name"].as_str().unwrap_or("")),
                format!(
                    "{:.2} [{:.2}, {:.2}]",
                    f(&v["value"]),
                    f(&v["lower"]),
                    f(&v["upper"])
                ),
                format!(
                    "±{:.0}%",
                    50.0 * (f(&v["upper"]) - f(&v["lower"])) / f(&v["value"]).abs()
                ),
            ];
            for s in &refs {
                row.push(
                    s.value_in(&letter, &unit)
                        .map_or("-".into(), |x| format!("{x:.2}")),
                );
            }
            rows.push(row);
        }
    }
    let names: Vec<String> = groups.iter().map(|(l, _)| l.clone()).collect();
    page.chart(charts::bar_chart(
        id,
        &format!(
            "Piece values (pawn/soldier = 1){}",
            refs.first()
                .map(|s| format!("; diamonds: {}", s.name))
                .unwrap_or_default()
        ),
        "value",
        &bars,
        &names,
    ));
    if measured {
        let mut head = vec!["group", "piece", "value [95%]", "half-width"];
        let ref_names: Vec<String> = refs.iter().map(|s| s.name.clone()).collect();
        head.extend(ref_names.iter().map(String::as_str));
        page.table(&head, &rows);
        for s in &refs {
            page.p(&format!("{}: {}", s.name, s.source));
        }
    }
}

/// An `Interval` serialized as an object (`lower`, `upper`) as a JSON pair.
fn json_interval(v: &Value) -> Value {
    serde_json::json!([v["lower"], v["upper"]])
}

fn study_page(dir: &Path, refs: &[ReferenceSet], page: &mut Page) -> Result<()> {
    let text = std::fs::read_to_string(dir.join("report.json"))
        .with_context(|| format!("{}", dir.join("report.json").display()))?;
    let j: Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a study report", dir.join("report.json").display()))?;
    let arms = j["arms"].as_array().cloned().unwrap_or_default();
    let _ = write!(
        page.body,
        "<p>{} — {} games per arm, {}</p>",
        esc(j["description"].as_str().unwrap_or("")),
        arms.first()
            .map_or(0, |a| a["report"]["games"].as_u64().unwrap_or(0)),
        esc(j["players"].as_str().unwrap_or(""))
    );
    let groups: Vec<(String, Value)> = arms
        .iter()
        .map(|a| {
            (
                format!(
                    "{}: {}",
                    a["key"].as_str().unwrap_or("?"),
                    a["label"].as_str().unwrap_or("")
                ),
                a["report"].clone(),
            )
        })
        .collect();
    page.h2("The arms");
    per_group_charts(page, "study", "arm", &groups);
    page.h2("Differences from the first arm");
    let mut rows = Vec::new();
    for a in arms.iter().skip(1) {
        let c = &a["vs_baseline"];
        for (name, key, digits) in [
            ("draw rate", "draw_rate", 3),
            ("decisive rate", "decisive_rate", 3),
            ("first-player score", "first_player_score", 3),
            ("length (plies)", "length", 1),
        ] {
            let d = &c[key];
            rows.push(vec![
                format!(
                    "{}: {}",
                    a["key"].as_str().unwrap_or("?"),
                    a["label"].as_str().unwrap_or("")
                ),
                name.to_string(),
                format!("{:+.digits$}", f(&d["diff"])),
                format!(
                    "[{:+.digits$}, {:+.digits$}]",
                    f(&d["lower"]),
                    f(&d["upper"])
                ),
                format!("{:.4}", f(&d["p_value"])),
            ]);
        }
    }
    page.table(&["arm", "figure", "difference", "95%", "p-value"], &rows);
    page.h2("Referee");
    let rows: Vec<Vec<String>> = arms
        .iter()
        .filter(|a| !a["adjudication"].is_null())
        .map(|a| {
            let d = &a["adjudication"];
            vec![
                a["key"].as_str().unwrap_or("?").to_string(),
                d["games"].to_string(),
                d["failures"].as_array().map_or(0, Vec::len).to_string(),
                d["disagreements"]
                    .as_array()
                    .map_or(0, Vec::len)
                    .to_string(),
            ]
        })
        .collect();
    if rows.is_empty() {
        page.p("Self-play arms: our rules core plays every move.");
    } else {
        page.table(&["arm", "games", "failures", "disagreements"], &rows);
    }
    page.h2("Piece values");
    piece_values(page, "study-piece-values", &groups, refs);
    Ok(())
}

fn dataset_page(
    dir: &Path,
    opts: &ReportOptions,
    refs: &[ReferenceSet],
    page: &mut Page,
) -> Result<()> {
    let file = dir.join("variant.toml");
    let v = if file.exists() {
        Variant::from_file(&file)?
    } else {
        shipped_variant(dir)?
    };
    let full = AnalysisOptions {
        bootstrap: opts.bootstrap,
        stable_plies: 4,
        ..AnalysisOptions::default()
    };
    let Some(r) = analyse(&[dir.to_path_buf()], &v, &full)? else {
        page.p("No games.");
        return Ok(());
    };
    let groups = vec![(v.name.clone(), r)];
    page.h2("Games");
    per_group_charts(page, "dataset", "rule set", &groups);
    page.h2("Piece values");
    piece_values(page, "dataset-piece-values", &groups, refs);
    Ok(())
}
