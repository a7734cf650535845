//! `varzero study`: a rule-change experiment in one command. Two rule sets (a study file, or
//! `--a`/`--b` variants and `--set` overrides), the same evaluator and search budget, N
//! self-play games each into `OUT/a` and `OUT/b`, then both analyses side by side with the
//! differences and their significance; `OUT/report.txt`, `OUT/report.json`, `OUT/plots/`.

use anyhow::{bail, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use varzero_datasets::analysis::{plots, AnalysisOptions};
use varzero_selfplay::study::{self, StudyArm, StudyConfig};

#[derive(Args)]
pub struct StudyArgs {
    /// A study file (TOML: name, games, evaluator, playouts, [a], [b], [search], [selfplay]).
    pub study: Option<PathBuf>,
    /// Arm a: a shipped variant or a variant file (.toml).
    #[arg(long)]
    pub a: Option<String>,
    /// Arm b: a shipped variant or a variant file (default: arm a's variant).
    #[arg(long)]
    pub b: Option<String>,
    /// Overrides of arm a.
    #[arg(long = "set-a")]
    pub set_a: Vec<String>,
    /// Overrides of arm b (`--set stalemate=draw`).
    #[arg(long = "set", alias = "set-b")]
    pub set_b: Vec<String>,
    /// Self-play games per arm.
    #[arg(long)]
    pub games: Option<u64>,
    #[arg(long)]
    pub evaluator: Option<String>,
    #[arg(long)]
    pub playouts: Option<u32>,
    #[arg(long)]
    pub threads: Option<usize>,
    #[arg(long)]
    pub seed: Option<u64>,
    /// Output directory (a/, b/, report.txt, report.json, plots/).
    #[arg(long)]
    pub out: PathBuf,
    /// Bootstrap resamples for the piece-value intervals.
    #[arg(long, default_value_t = 200)]
    pub bootstrap: usize,
    /// No charts.
    #[arg(long)]
    pub no_plots: bool,
    /// Print the JSON report instead of the table.
    #[arg(long)]
    pub json: bool,
    #[arg(long)]
    pub quiet: bool,
}

fn arm_of(spec: &str, set: &[String]) -> StudyArm {
    let is_file = spec.ends_with(".toml") || Path::new(spec).exists();
    StudyArm {
        label: None,
        variant: (!is_file).then(|| spec.to_string()),
        variant_file: is_file.then(|| PathBuf::from(spec)),
        set: set.to_vec(),
    }
}

pub fn run(a: StudyArgs) -> Result<()> {
    let (mut cfg, base) = match &a.study {
        Some(p) => (
            StudyConfig::load(p).map_err(anyhow::Error::msg)?,
            p.parent().map(Path::to_path_buf).unwrap_or_default(),
        ),
        None => {
            let Some(spec) = &a.a else {
                bail!("give a study file or --a VARIANT (and --b VARIANT or --set KEY=VALUE)");
            };
            let cfg = StudyConfig {
                name: "study".into(),
                description: String::new(),
                games: 100,
                evaluator: "material".into(),
                playouts: Some(100),
                a: arm_of(spec, &a.set_a),
                b: match &a.b {
                    Some(b) => arm_of(b, &a.set_b),
                    None => StudyArm {
                        set: a.set_b.clone(),
                        ..StudyArm::default()
                    },
                },
                search: Default::default(),
                selfplay: varzero_selfplay::SelfplayConfig {
                    threads: 2,
                    ..Default::default()
                },
            };
            (cfg, PathBuf::from("."))
        }
    };
    if a.study.is_some() {
        if let Some(spec) = &a.a {
            cfg.a = arm_of(spec, &a.set_a);
        } else if !a.set_a.is_empty() {
            cfg.a.set = a.set_a.clone();
        }
        if let Some(spec) = &a.b {
            cfg.b = arm_of(spec, &a.set_b);
        } else if !a.set_b.is_empty() {
            cfg.b.set = a.set_b.clone();
        }
    }
    if let Some(g) = a.games {
        cfg.games = g;
    }
    if let Some(e) = &a.evaluator {
        cfg.evaluator = e.clone();
    }
    if let Some(p) = a.playouts {
        cfg.playouts = Some(p);
    }
    if let Some(t) = a.threads {
        cfg.selfplay.threads = t;
    }
    if let Some(s) = a.seed {
        cfg.selfplay.seed = s;
    }
    {
        let mut p = varzero_search::Problems::default();
        p.check(cfg.games >= 1, "games", "at least 1", cfg.games);
        cfg.search_config().check("search", &mut p);
        cfg.selfplay.check("selfplay", &mut p);
        if !p.is_empty() {
            match &a.study {
                Some(f) => bail!("{}: {p}", f.display()),
                None => bail!("{p}"),
            }
        }
    }
    let (va, vb) = cfg.variants(&base).map_err(anyhow::Error::msg)?;
    let la = cfg.a.label_or(&va);
    let lb = if cfg.b.variant.is_none() && cfg.b.variant_file.is_none() {
        cfg.b
            .label
            .clone()
            .unwrap_or_else(|| format!("{} {}", va.name, cfg.b.set.join(" ")))
    } else {
        cfg.b.label_or(&vb)
    };
    if va.rules_hash == vb.rules_hash {
        eprintln!(
            "warning: both arms have the same rules (hash {:016x})",
            va.rules_hash
        );
    }
    let search = cfg.search_config();
    let resolver = varzero::nets::evaluators("cpu");
    eprintln!(
        "study {}: a = {la} (rules {:016x}), b = {lb} (rules {:016x}); {} games each, {}@{}",
        cfg.name, va.rules_hash, vb.rules_hash, cfg.games, cfg.evaluator, search.playouts
    );
    std::fs::create_dir_all(&a.out)?;
    std::fs::write(a.out.join("study.toml"), toml::to_string(&cfg)?)?;
    for (arm, v) in [("a", &va), ("b", &vb)] {
        let bar = if a.quiet {
            ProgressBar::hidden()
        } else {
            ProgressBar::new(cfg.games)
        };
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{arm}: {{bar:25}} {{pos}}/{{len}} games  {{msg}}"
            ))
            .unwrap(),
        );
        let summary = study::play_arm(
            v,
            &cfg.evaluator,
            &*resolver,
            &search,
            &cfg.selfplay,
            &a.out.join(arm),
            cfg.games,
            &mut |s| {
                bar.set_position(s.games.load(Ordering::Relaxed));
                bar.set_message(format!(
                    "W/D/L {}/{}/{}",
                    s.white_wins.load(Ordering::Relaxed),
                    s.draws.load(Ordering::Relaxed),
                    s.black_wins.load(Ordering::Relaxed)
                ));
            },
        )
        .map_err(anyhow::Error::msg)?;
        bar.finish_and_clear();
        eprintln!(
            "{arm}: {} games played ({} already there)",
            summary.games_played, summary.games_already_done
        );
    }
    let opts = AnalysisOptions {
        bootstrap: a.bootstrap,
        ..AnalysisOptions::default()
    };
    let ra = study::analyze_arm(&a.out.join("a"), &va, &opts).map_err(anyhow::Error::msg)?;
    let rb = study::analyze_arm(&a.out.join("b"), &vb, &opts).map_err(anyhow::Error::msg)?;
    let c = study::compare(&ra, &rb);
    let mut text = format!(
        "study {}: {}\na = {la} (rules {}), b = {lb} (rules {}); {} games each, {}@{}\n\n",
        cfg.name,
        cfg.description,
        ra.rules_hash,
        rb.rules_hash,
        cfg.games,
        cfg.evaluator,
        search.playouts
    );
    text.push_str(&study::format_comparison((&la, &lb), &ra, &rb, &c));
    let json = serde_json::json!({
        "study": cfg.name,
        "labels": { "a": la, "b": lb },
        "a": ra.to_json(),
        "b": rb.to_json(),
        "comparison": c,
    });
    std::fs::write(a.out.join("report.txt"), &text)?;
    std::fs::write(
        a.out.join("report.json"),
        serde_json::to_string_pretty(&json)?,
    )?;
    if !a.no_plots {
        let labels = vec![format!("a: {la}"), format!("b: {lb}")];
        let reports = [ra.clone(), rb.clone()];
        plots::write_plots(
            &a.out.join("plots"),
            &reports,
            Some(&labels),
            plots::PlotFormats::default(),
        )
        .map_err(anyhow::Error::msg)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        print!("{text}");
    }
    let d = &c.draw_rate;
    println!(
        "draw rate a {:.3} vs b {:.3}: {:+.3} [{:+.3}, {:+.3}], p = {:.4} ({}); first-player score a {:.3} vs b {:.3}: {:+.3}, p = {:.4} ({})",
        d.a,
        d.b,
        d.diff,
        d.lower,
        d.upper,
        d.p_value,
        if d.significant(0.05) { "significant" } else { "not significant" },
        c.first_player_score.a,
        c.first_player_score.b,
        c.first_player_score.diff,
        c.first_player_score.p_value,
        if c.first_player_score.significant(0.05) { "significant" } else { "not significant" },
    );
    Ok(())
}
