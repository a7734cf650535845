//! A two-generation pipeline on a tiny configuration runs end to end, and a rerun resumes
//! (finds every stage done) without redoing work.

use std::path::Path;
use std::process::{Command, Output};

/// `varzero pipeline --quiet --config CFG --dir DIR`.
fn pipeline(cfg: &Path, dir: &Path) -> Output {
    pipeline_with(cfg, dir, &[])
}

/// The same with more arguments (`--param`, `--stage`).
fn pipeline_with(cfg: &Path, dir: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_varzero"))
        .args(["pipeline", "--quiet", "--config"])
        .arg(cfg)
        .arg("--dir")
        .arg(dir)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn two_generations_then_resume() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("tiny.toml");
    std::fs::write(
        &cfg,
        r#"name = "ci"
variant = "makruk"
generations = 2
games_per_generation = 6
match_games = 2
match_playouts = 8
reanalyse = 10
[search]
playouts = 12
[selfplay]
threads = 1
games_per_worker = 6
[train]
steps = 6
batch_size = 16
checkpoint_every = 3
selfplay_share = 0.5
[train.arch]
blocks = 1
channels = 8
"#,
    )
    .unwrap();
    let run = dir.path().join("run");
    let go = || pipeline(&cfg, &run);
    let out = go();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in [
        "models/gen-001.safetensors",
        "models/gen-001.json",
        "models/gen-002.safetensors",
        "logs/matches.csv",
        "logs/match-last-vs-gen-000.json",
        "config.toml",
    ] {
        assert!(run.join(f).exists(), "{f} missing");
    }
    let csv = std::fs::read_to_string(run.join("logs/matches.csv")).unwrap();
    // Header, generation 1 vs material, generation 2 vs 1, generation 2 vs material.
    assert_eq!(csv.lines().count(), 4, "{csv}");
    assert!(
        csv.lines().last().unwrap().starts_with("2,material@8,2,"),
        "{csv}"
    );
    // The closing matches: the search here blends nothing, so net 2 against net 1 raw, and the
    // final match against generation 0's player; the run's output ends with them.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("logs/summary.json")).unwrap())
            .unwrap();
    let labels: Vec<&str> = summary
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["net 2 vs net 1, raw", "net 2 vs generation 0's player, raw"]
    );
    assert!(summary[0]["player"]
        .as_str()
        .unwrap()
        .ends_with("gen-002.safetensors@8,tactics=0,tactics_priors=0"));
    assert_eq!(summary[0]["games"], 2);
    assert_eq!(summary[1]["opponent"], "material@8");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("what the loop learnt"), "{text}");
    // Each closing row says how to read it.
    let raw_row = text
        .lines()
        .find(|l| l.trim_start().starts_with("net 2 vs net 1, raw"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        ["stronger", "weaker", "no measurable difference"]
            .iter()
            .any(|v| raw_row.ends_with(v)),
        "{raw_row}"
    );
    // Reanalyse: before net 2, ten positions of generation 0 searched again with net 1.
    assert!(
        text.contains("gen 1: reanalysed 10 positions of generations 0..0 with net 1"),
        "{text}"
    );
    assert!(run.join("reanalyse/gen-001").is_dir());
    assert!(text.contains("net 2 vs net 1, raw"), "{text}");
    let again = go();
    assert!(again.status.success());
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(text.contains("0 games (6 already there)"), "{text}");
    assert!(
        !text.contains("trained"),
        "a finished run trains nothing again: {text}"
    );
    // Another config in the same directory is refused before anything is touched.
    let other = dir.path().join("other.toml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&other, text.replace("makruk", "xiangqi")).unwrap();
    let out = pipeline(&other, &run);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("holds a run with another config (variant differ)"),
        "{err}"
    );
    assert!(std::fs::read_to_string(run.join("config.toml"))
        .unwrap()
        .contains("makruk"));
    // Extending the finished run by a generation: the last-vs-generation-0 match and the CSV
    // describe generation 3, not the old last one.
    let out = pipeline_with(&cfg, &run, &["--param", "generations=3"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = std::fs::read_to_string(run.join("logs/match-last-vs-gen-000.json")).unwrap();
    assert!(last.contains("\"generation\": 3"), "{last}");
    let csv = std::fs::read_to_string(run.join("logs/matches.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert!(
        csv.lines().last().unwrap().starts_with("3,material@8,"),
        "{csv}"
    );
    assert!(
        !csv.contains("\n2,material@8,"),
        "the old final match is gone: {csv}"
    );
    // The closing matches are played again for net 3.
    let summary = std::fs::read_to_string(run.join("logs/summary.json")).unwrap();
    assert!(summary.contains("net 3 vs net 1, raw"), "{summary}");
    assert!(!summary.contains("net 2 vs"), "{summary}");
    // Closing a run at other match settings (how a stopped run is rated after it): the final
    // and closing matches are played again with them; another `[search]` is still refused.
    let finish = |params: &[&str]| {
        let mut args = vec!["--stage", "finish", "--param", "generations=3"];
        for p in params {
            args.extend(["--param", *p]);
        }
        pipeline_with(&cfg, &run, &args)
    };
    let out = finish(&["match_games=4", "match_playouts=6"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("logs/match-last-vs-gen-000.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        (last["opponent"].as_str(), last["games"].as_u64()),
        (Some("material@6"), Some(4)),
        "{last}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("logs/summary.json")).unwrap())
            .unwrap();
    for r in summary.as_array().unwrap() {
        assert_eq!(r["games"], 4, "{r}");
        assert!(r["player"].as_str().unwrap().contains("@6"), "{r}");
    }
    let out = finish(&["match_games=4", "search.playouts=10"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("(search differ)"), "{err}");
    // Six nets: the closing matches add the last third against the first third, raw: nets 5
    // and 6 against nets 1 and 2, one pair each (4 games in all).
    let out = pipeline_with(
        &cfg,
        &run,
        &[
            "--param",
            "generations=6",
            "--param",
            "match_games=4",
            "--param",
            "match_playouts=6",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("logs/summary.json")).unwrap())
            .unwrap();
    let thirds = summary
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "nets 5..6 vs nets 1..2, raw")
        .unwrap_or_else(|| panic!("no thirds row: {summary}"));
    assert_eq!(thirds["games"], 4, "{thirds}");
    let wdl = ["wins", "draws", "losses"].map(|k| thirds[k].as_u64().unwrap());
    assert_eq!(wdl.iter().sum::<u64>(), 4, "{thirds}");
    assert!(thirds["player"]
        .as_str()
        .unwrap()
        .ends_with("@6,tactics=0,tactics_priors=0"));
    // Elo against CPU-hours: nets 1, 6/3 and 2 x 6/3 against generation 0's player on the final
    // match's games, then the final match; each row with its generation and a CPU-hour count
    // that grows with it (every generation adds self-play and training time).
    let curve: Vec<&serde_json::Value> = summary
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r.get("cpu_hours").is_some())
        .collect();
    let gens: Vec<u64> = curve
        .iter()
        .map(|r| r["generation"].as_u64().unwrap())
        .collect();
    assert_eq!(gens, [1, 2, 4, 6], "{summary}");
    assert_eq!(
        curve[0]["label"], "net 1 vs generation 0's player, raw",
        "{summary}"
    );
    for r in &curve {
        assert_eq!(r["opponent"], "material@6", "{r}");
        assert_eq!(r["games"], 4, "{r}");
    }
    let hours: Vec<f64> = curve
        .iter()
        .map(|r| r["cpu_hours"].as_f64().unwrap())
        .collect();
    assert!(hours.windows(2).all(|w| w[0] < w[1]), "{hours:?}");
    let page = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(
        page.contains("Elo against material@6 by CPU-hours"),
        "no Elo-against-CPU-hours chart in report.html"
    );
}

/// `overlap = true`: net N is rated on a second thread while self-play and training make net
/// N + 1. The run makes the same files as the plain loop (every match, both nets), and every
/// stage records its utilisation in logs/stages.csv.
#[test]
fn overlapped_rating_makes_the_same_run_and_records_utilisation() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("overlap.toml");
    std::fs::write(
        &cfg,
        r#"name = "ci"
variant = "makruk"
generations = 2
games_per_generation = 4
match_games = 2
match_playouts = 8
overlap = true
[search]
playouts = 12
[selfplay]
threads = 1
games_per_worker = 4
[train]
steps = 4
batch_size = 16
[train.arch]
blocks = 1
channels = 8
"#,
    )
    .unwrap();
    let run = dir.path().join("run");
    let out = pipeline(&cfg, &run);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(run.join("logs/matches.csv")).unwrap();
    assert_eq!(csv.lines().count(), 4, "{csv}");
    let stages = std::fs::read_to_string(run.join("logs/stages.csv")).unwrap();
    let mut rows: Vec<(String, u32)> = stages
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 5, "{l}");
            let busy: f64 = f[4].parse().unwrap();
            assert!(busy.is_finite() && busy >= 0.0, "{l}");
            (f[0].to_string(), f[1].parse().unwrap())
        })
        .collect();
    rows.sort();
    let want: Vec<(String, u32)> = [
        ("match", 1),
        ("match", 2),
        ("selfplay", 0),
        ("selfplay", 1),
        ("train", 1),
        ("train", 2),
    ]
    .iter()
    .map(|(s, g)| (s.to_string(), *g))
    .collect();
    assert_eq!(rows, want, "{stages}");
    // Gating needs the match's verdict before self-play: the two do not mix.
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replace("overlap = true", "overlap = true\ngating = true"),
    )
    .unwrap();
    let out = pipeline(&cfg, &dir.path().join("gated"));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("overlap"), "{err}");
}

#[test]
fn a_bad_config_is_one_line_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("bad.toml");
    std::fs::write(
        &cfg,
        "name = \"x\"\nvariant = \"makruk\"\ngenerations = \"two\"\n",
    )
    .unwrap();
    let out = pipeline(&cfg, &dir.path().join("run"));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("error: {}:3: ", cfg.display())),
        "{err}"
    );
    assert!(!dir.path().join("run").exists(), "nothing written");
}

#[test]
fn an_anchor_that_is_no_rung_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("anchor.toml");
    std::fs::write(
        &cfg,
        "name = \"x\"\nvariant = \"makruk\"\ngenerations = 1\ngames_per_generation = 4\n[ladder]\nenabled = true\n\
         rungs = [\"random\", \"material@2\"]\nanchor = \"fsf@nodes=1\"\n",
    )
    .unwrap();
    let out = pipeline(&cfg, &dir.path().join("run"));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("ladder.anchor") && err.contains("fsf@nodes=1"),
        "{err}"
    );
    assert!(!dir.path().join("run").exists(), "nothing written");
}

#[test]
fn every_generation_is_rated_on_the_ladder() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("ladder.toml");
    let rungs = dir.path().join("rungs");
    std::fs::write(
        &cfg,
        format!(
            r#"name = "ci-ladder"
variant = "makruk"
generations = 1
games_per_generation = 4
match_games = 2
match_playouts = 4
[search]
playouts = 8
[selfplay]
threads = 1
games_per_worker = 4
[train]
steps = 4
batch_size = 16
[train.arch]
blocks = 1
channels = 8
[ladder]
enabled = true
games = 2
playouts = 4
rungs = ["random", "material@2"]
anchor = "material@2"
rung_dir = "{}"
"#,
            rungs.display()
        ),
    )
    .unwrap();
    // The run stays in the clone's (ignored) runs/ after the test: its report.html and the
    // screenshot report.png are the CI artifacts of the report check below.
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("runs/ci/report-run");
    let _ = std::fs::remove_dir_all(&run);
    let out = pipeline(&cfg, &run);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("gen 1: ladder "), "{stdout}");
    check_report(&run);
    let csv = std::fs::read_to_string(run.join("logs/ladder.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "generation,player,elo,error95,games,cpu_hours");
    assert_eq!(rows.len(), 3, "generations 0 and 1: {csv}");
    assert!(rows[1].starts_with("0,gen-000@4,") && rows[2].starts_with("1,gen-001@4,"));
    // CPU-hours grow from generation 0 (nothing spent yet) to 1.
    let hours = |r: &str| r.rsplit(',').next().unwrap().parse::<f64>().unwrap();
    assert_eq!(hours(rows[1]), 0.0);
    assert!(hours(rows[2]) > 0.0, "{csv}");
    assert!(run.join("logs/ladder.png").exists());
    let ratings = std::fs::read_to_string(run.join("ladder/ratings.csv")).unwrap();
    assert!(
        // Only the anchor's interval is 0: it is the reference of every other one.
        ratings.contains("\nmaterial@2,0.0,0.0,") && !ratings.contains("\nrandom,0.0,0.0,"),
        "the anchor, not the first rung: {ratings}"
    );
    // A rerun rates nothing again.
    let games = |d: &Path| -> usize {
        walk(d)
            .iter()
            .filter(|p| p.file_name().is_some_and(|n| n == "games.txt"))
            .map(|p| {
                std::fs::read_to_string(p)
                    .unwrap()
                    .matches("[game ")
                    .count()
            })
            .sum()
    };
    let before = (games(&run.join("ladder")), games(&rungs));
    let again = pipeline(&cfg, &run);
    assert!(again.status.success());
    assert_eq!((games(&run.join("ladder")), games(&rungs)), before);
}

/// The run's report.html: written by the pipeline, self-contained (no script, no external
/// resource), with the charts of every section; then opened in headless Chromium, where every
/// chart with data must have drawn its marks, and photographed into `RUN/report.png`.
fn check_report(run: &Path) {
    let html = std::fs::read_to_string(run.join("report.html")).expect("the pipeline writes it");
    assert!(!html.contains("<script"), "no script in the page");
    assert!(
        !html.contains("http://")
            || html.matches("http://").count()
                == html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count(),
        "no external resource"
    );
    assert!(
        !html.contains("https://") && !html.contains("src="),
        "no external resource"
    );
    let want = [
        "ladder-elo",
        "ladder-cpu",
        "training-loss",
        "training-accuracy",
        "selfplay-draw-rate",
        "selfplay-first-player",
        "selfplay-length",
        "selfplay-endings",
        "selfplay-piece-values",
    ];
    for w in want {
        assert!(
            html.contains(&format!("data-chart=\"{w}\"")),
            "chart {w} missing"
        );
    }
    let Some(chromium) = chromium() else {
        assert!(
            std::env::var_os("VARZERO_REQUIRE_CHROMIUM").is_none(),
            "VARZERO_REQUIRE_CHROMIUM is set but no chromium was found (scripts/setup-chromium)"
        );
        eprintln!("skipped: the report in headless Chromium (no chromium; scripts/setup-chromium)");
        return;
    };
    // A copy of the page with a probe that, once laid out, lists every chart's size and how
    // many of its data marks (lines, points, bars) have a non-empty box.
    let probe = r#"<script>
window.addEventListener('load', () => {
  const rows = [];
  document.querySelectorAll('svg.chart').forEach(s => {
    const r = s.getBoundingClientRect();
    let marks = 0;
    s.querySelectorAll('.data').forEach(e => { const b = e.getBBox(); if (b.width > 0 || b.height > 0) marks++; });
    const empty = s.querySelector('.empty') ? 1 : 0;
    rows.push([s.dataset.chart, Math.round(r.width), Math.round(r.height), marks, empty].join(' '));
  });
  const pre = document.createElement('pre');
  pre.id = 'chart-check';
  pre.textContent = rows.join(';');
  document.body.appendChild(pre);
});
</script></body>"#;
    let probed = run.join("report-probe.html");
    std::fs::write(&probed, html.replace("</body>", probe)).unwrap();
    let base = |extra: &[&str]| {
        let mut c = Command::new(&chromium);
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1100,5200",
            "--virtual-time-budget=5000",
        ]);
        c.args(extra);
        c
    };
    let out = base(&["--dump-dom"]).arg(&probed).output().unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let rows = dom
        .split("<pre id=\"chart-check\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .unwrap_or_else(|| panic!("no probe output: {}", String::from_utf8_lossy(&out.stderr)));
    let charts: Vec<Vec<&str>> = rows.split(';').map(|r| r.split(' ').collect()).collect();
    assert_eq!(
        charts.len(),
        html.matches("class=\"chart\"").count(),
        "{rows}"
    );
    for c in &charts {
        let (name, w, h, marks, empty) = (c[0], c[1], c[2], c[3], c[4]);
        assert!(w != "0" && h != "0", "chart {name} has no size: {rows}");
        // A chart without data says so; every other one drew its marks. In this run only the
        // piece values may be unmeasured (4 games).
        if name != "selfplay-piece-values" {
            assert_eq!(empty, "0", "chart {name} is empty: {rows}");
        }
        if empty == "0" {
            assert!(
                marks.parse::<u32>().unwrap() > 0,
                "chart {name} drew nothing: {rows}"
            );
        }
    }
    let _ = std::fs::remove_file(&probed);
    let png = run.join("report.png");
    let shot = base(&[&format!("--screenshot={}", png.display())])
        .arg(run.join("report.html"))
        .output()
        .unwrap();
    let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 10_000,
        "screenshot {size} bytes: {}",
        String::from_utf8_lossy(&shot.stderr)
    );
}

/// VARZERO_CHROMIUM, or chromium on the PATH.
fn chromium() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("VARZERO_CHROMIUM").filter(|p| !p.is_empty()) {
        return Some(p.into());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser", "google-chrome"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

fn walk(d: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A teacher makes generation 0: a scripted UCI engine (our own `varzero uci` with uniform
/// priors) plays the games, its moves become one-hot policy targets and the results value
/// targets, the first net trains on them and is rated against the teacher.
#[test]
fn a_teacher_makes_generation_0() {
    let dir = tempfile::tempdir().unwrap();
    let engine = dir.path().join("teacher.sh");
    std::fs::write(
        &engine,
        format!(
            "#!/bin/sh\nexec '{}' uci --evaluator uniform\n",
            env!("CARGO_BIN_EXE_varzero")
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&engine, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let cfg = dir.path().join("teacher.toml");
    std::fs::write(
        &cfg,
        format!(
            r#"name = "ci-teacher"
variant = "makruk"
generations = 1
games_per_generation = 4
match_games = 2
match_playouts = 4
gen0 = "uci:{}@nodes=8"
gen1_steps = 6
gen1_window = 100000
[search]
playouts = 8
[selfplay]
threads = 2
[train]
steps = 4
batch_size = 16
window = 5
[train.arch]
blocks = 1
channels = 8
"#,
            engine.display()
        ),
    )
    .unwrap();
    let run = dir.path().join("run");
    let out = pipeline(&cfg, &run);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("gen 0: the teacher uci:") && stdout.contains("4 games (0 already there)"),
        "{stdout}"
    );
    // The teacher's games as positions: one per move, the move played as the whole policy.
    let games = Command::new(env!("CARGO_BIN_EXE_varzero"))
        .args(["games"])
        .arg(run.join("selfplay/gen-000"))
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&games.stdout);
    assert_eq!(listing.lines().count(), 4, "{listing}");
    let moves: usize = listing
        .lines()
        .map(|l| l.rsplit('\t').next().unwrap().split_whitespace().count())
        .sum();
    // The first net trains gen1_steps (6), not train.steps (4), on gen1_window (all the
    // teacher's positions), not train.window (5).
    assert!(stdout.contains("gen 1: trained 6 steps"), "{stdout}");
    assert!(
        stdout.contains(&format!("on {moves} positions")),
        "every move of the teacher is a training position ({moves}): {stdout}"
    );
    // Net 1 is rated against the teacher and kept (there is no earlier net).
    let rec: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("logs/match-gen-001.json")).unwrap(),
    )
    .unwrap();
    assert!(
        rec["opponent"].as_str().unwrap().starts_with("uci:"),
        "{rec}"
    );
    assert_eq!(rec["accepted"], true);
    // A rerun plays no teacher game again.
    let again = pipeline(&cfg, &run);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).contains("0 games (4 already there)"));
}
