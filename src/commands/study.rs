//! `varzero study`: a rule-change experiment in one command. Any number of rule sets (a study
//! file with `[[arm]]`, or `[a]`/`[b]`, or `--a`/`--b` variants and `--set` overrides), the same
//! players (our self-play, or any two player specs such as Fairy-Stockfish) and budget, N games
//! each into `OUT/a`, `OUT/b`, ..., then every arm's analysis with its differences from the
//! first and their significance; `OUT/report.txt`, `OUT/report.json`, `OUT/plots/`.

use anyhow::{bail, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use varzero::engine_games::{self, EngineGames};
use varzero_datasets::analysis::{plots, AnalysisOptions};
use varzero_rules::{Color, GameResult};
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
    /// Games per arm.
    #[arg(long)]
    pub games: Option<u64>,
    /// Players of every arm (one spec plays itself, two play each other), replacing the study
    /// file's: `--players fsf@nodes=1000`.
    #[arg(long, value_delimiter = ';')]
    pub players: Vec<String>,
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
    /// Piece values are fitted on positions at least this many plies after the last capture
    /// or promotion.
    #[arg(long, default_value_t = 4)]
    pub stable_plies: u32,
    /// Fit piece values on decisive games only.
    #[arg(long)]
    pub decisive_only: bool,
    /// Count a piece with extra moves in a region (the Xiangqi soldier across the river) as
    /// one piece in the fit, not as two.
    #[arg(long)]
    pub pool_regions: bool,
    /// Only analyse the games already played (no new games).
    #[arg(long)]
    pub analyze_only: bool,
    /// Device of `net:` players.
    #[arg(long, default_value = "cpu")]
    pub device: String,
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
        players: Vec::new(),
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
                players: Vec::new(),
                random_plies: 4,
                tc: None,
                a: Some(arm_of(spec, &a.set_a)),
                b: match &a.b {
                    Some(b) => arm_of(b, &a.set_b),
                    None => StudyArm {
                        set: a.set_b.clone(),
                        ..StudyArm::default()
                    },
                },
                arm: Vec::new(),
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
        let has_ab = cfg.a.is_some();
        let changes_arms =
            a.a.is_some() || !a.set_a.is_empty() || a.b.is_some() || !a.set_b.is_empty();
        if changes_arms && !has_ab {
            bail!("--a, --b and --set change the arms of an [a]/[b] study, not of [[arm]]");
        }
        if let Some(spec) = &a.a {
            cfg.a = Some(arm_of(spec, &a.set_a));
        } else if !a.set_a.is_empty() {
            if let Some(arm) = cfg.a.as_mut() {
                arm.set = a.set_a.clone();
            }
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
    if !a.players.is_empty() {
        cfg.players = a.players.clone();
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
    let in_file = |m: String| match &a.study {
        Some(f) => anyhow::anyhow!("{}: {m}", f.display()),
        None => anyhow::anyhow!("{m}"),
    };
    {
        let mut p = varzero_settings::Problems::default();
        p.check(cfg.games >= 1, "games", "at least 1", cfg.games);
        cfg.search_config().check("search", &mut p);
        cfg.selfplay.check("selfplay", &mut p);
        if !p.is_empty() {
            return Err(in_file(p.to_string()));
        }
    }
    let arms = cfg.arms(&base).map_err(|e| in_file(e.to_string()))?;
    for x in &arms {
        for p in &x.players {
            varzero_arena::PlayerSpec::parse(p)
                .map_err(|e| in_file(format!("arm {}: players: {e}", x.key)))?;
        }
    }
    for (i, x) in arms.iter().enumerate() {
        if let Some(y) = arms[..i]
            .iter()
            .find(|y| y.variant.rules_hash == x.variant.rules_hash && y.players == x.players)
        {
            eprintln!(
                "warning: arms {} and {} have the same rules (hash {:016x}) and players",
                y.key, x.key, x.variant.rules_hash
            );
        }
    }
    let search = cfg.search_config();
    let time_control = match &cfg.tc {
        Some(t) => varzero_arena::TimeControl::parse(t).map_err(|e| anyhow::anyhow!("tc: {e}"))?,
        None => None,
    };
    let resolver = varzero::nets::evaluators(&a.device);
    let budget = if cfg.players.is_empty() {
        format!("{}@{}", cfg.evaluator, search.playouts)
    } else {
        cfg.players.join(" vs ")
    };
    eprintln!(
        "study {}: {} arms ({}); {} games each, {budget}",
        cfg.name,
        arms.len(),
        arms.iter()
            .map(|x| format!("{} = {}", x.key, x.label))
            .collect::<Vec<_>>()
            .join(", "),
        cfg.games
    );
    std::fs::create_dir_all(&a.out)?;
    varzero::write_atomic(&a.out.join("study.toml"), toml::to_string(&cfg)?)?;
    if !a.analyze_only {
        for x in &arms {
            let dir = a.out.join(&x.key);
            let bar = if a.quiet {
                ProgressBar::hidden()
            } else {
                ProgressBar::new(cfg.games)
            };
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{}: {{bar:25}} {{pos}}/{{len}} games  {{per_sec}}  {{msg}}",
                    x.key
                ))
                .unwrap(),
            );
            let started = std::time::Instant::now();
            if x.players.is_empty() {
                let summary = study::play_arm(
                    &x.variant,
                    &cfg.evaluator,
                    &*resolver,
                    &search,
                    &cfg.selfplay,
                    &dir,
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
                    "{}: {} games played ({} already there) in {:.0} s",
                    x.key,
                    summary.games_played,
                    summary.games_already_done,
                    started.elapsed().as_secs_f64()
                );
            } else {
                let g = EngineGames {
                    players: [x.players[0].clone(), x.players[1].clone()],
                    games: cfg.games,
                    random_plies: cfg.random_plies,
                    seed: cfg.selfplay.seed,
                    concurrency: cfg.selfplay.threads,
                    device: a.device.clone(),
                    positions: false,
                    range: None,
                    time_control,
                };
                let (mut w, mut d, mut l) = (0u64, 0u64, 0u64);
                let summary = engine_games::play(&x.variant, &g, &search, &dir, &mut |game, st| {
                    match game.result {
                        GameResult::Win(Color::White) => w += 1,
                        GameResult::Win(Color::Black) => l += 1,
                        GameResult::Draw => d += 1,
                    }
                    bar.set_position(st.games_done);
                    bar.set_message(format!("W/D/L {w}/{d}/{l} (this session)"));
                })
                .map_err(|e| anyhow::anyhow!("arm {}: {}", x.key, varzero::one_line(&e)))?;
                bar.finish_and_clear();
                eprintln!(
                    "{}: {} games played ({} already there) in {:.0} s; {} failures, {} disagreements",
                    x.key,
                    summary.played,
                    summary.already,
                    started.elapsed().as_secs_f64(),
                    summary.failures.len(),
                    summary.disagreements.len()
                );
            }
        }
    }
    let opts = AnalysisOptions {
        bootstrap: a.bootstrap,
        stable_plies: a.stable_plies,
        decisive_only: a.decisive_only,
        pool_regions: a.pool_regions,
        exclude_terminations: study::FAILURE_TERMINATIONS
            .iter()
            .map(|t| t.to_string())
            .collect(),
        ..AnalysisOptions::default()
    };
    let mut reports = Vec::new();
    let mut adjudications = Vec::new();
    for x in &arms {
        let dir = a.out.join(&x.key);
        reports.push(study::analyze_arm(&dir, &x.variant, &opts).map_err(anyhow::Error::msg)?);
        adjudications.push(if x.players.is_empty() {
            None
        } else {
            Some(study::adjudication(&dir).map_err(anyhow::Error::msg)?)
        });
    }
    let comparisons: Vec<study::Comparison> = reports
        .iter()
        .map(|r| study::compare(r, &reports[0]))
        .collect();
    let results: Vec<study::ArmResult> = arms
        .iter()
        .enumerate()
        .map(|(i, x)| study::ArmResult {
            key: &x.key,
            label: &x.label,
            players: &x.players,
            report: &reports[i],
            vs_baseline: (i > 0).then(|| &comparisons[i]),
            adjudication: adjudications[i].as_ref(),
        })
        .collect();
    let mut text = format!(
        "study {}: {}\n{} games per arm, {budget}\n\n",
        cfg.name, cfg.description, cfg.games
    );
    text.push_str(&study::format_study(&results));
    let json = serde_json::json!({
        "study": cfg.name,
        "description": cfg.description,
        "players": budget,
        "arms": arms.iter().enumerate().map(|(i, x)| serde_json::json!({
            "key": x.key,
            "label": x.label,
            "players": x.players,
            "report": reports[i].to_json(),
            "vs_baseline": (i > 0).then(|| &comparisons[i]),
            "adjudication": adjudications[i],
        })).collect::<Vec<_>>(),
    });
    varzero::write_atomic(&a.out.join("report.txt"), &text)?;
    varzero::write_atomic(
        &a.out.join("report.json"),
        serde_json::to_string_pretty(&json)?,
    )?;
    if !a.no_plots {
        let labels: Vec<String> = arms
            .iter()
            .map(|x| format!("{}: {}", x.key, x.label))
            .collect();
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
    Ok(())
}
