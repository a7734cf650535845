//! `varzero study` with any number of rule sets and any players, `varzero selfplay --players`,
//! and `varzero report` on a study: games into the dataset schema with the players named,
//! each arm compared with the first, resumed without replaying, bad study files refused in one
//! line.

use std::path::Path;
use std::process::{Command, Output};

fn varzero(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_varzero"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).to_string()
}

const STUDY: &str = r#"name = "three-arms"
description = "three Makruk rule sets, random players"
games = 6
players = ["random"]
random_plies = 2
[[arm]]
label = "shipped"
variant = "makruk"
[[arm]]
label = "stalemate loses"
set = ["stalemate=loss"]
[[arm]]
label = "no counting"
set = ["rules.counting.mode=none"]
players = ["random", "material@4"]
[selfplay]
threads = 2
seed = 5
"#;

#[test]
fn a_study_of_three_rule_sets_with_any_players() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("three.toml");
    std::fs::write(&file, STUDY).unwrap();
    let out = dir.path().join("out");
    let study = || {
        varzero(&[
            "study",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
            "--bootstrap",
            "10",
        ])
    };
    let text = ok(&study());
    for want in [
        "a: shipped (6 games",
        "b: stalemate loses (6 games",
        "c: no counting (6 games",
        "random vs material@4",
        "draw rate (95% Wilson)",
        "vs a, p = ",
        "game length, plies",
        "games by ending",
        "Bonferroni over 2 comparisons",
        "a: 6 games, 0 failures, 0 disagreements",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    // Each arm is a dataset of its own rules, its players named in the games table.
    for (arm, white) in [("a", "random"), ("b", "random"), ("c", "material@4")] {
        let games = std::fs::read_to_string(out.join(arm).join("games.txt")).unwrap();
        assert_eq!(games.matches("[game ").count(), 6, "{arm}");
        assert!(games.contains(&format!("white  {white}")), "{arm}: {games}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let arms = json["arms"].as_array().unwrap();
    assert_eq!(arms.len(), 3);
    assert!(arms[0]["vs_baseline"].is_null() && !arms[2]["vs_baseline"].is_null());
    assert_ne!(
        arms[0]["report"]["rules_hash"],
        arms[1]["report"]["rules_hash"]
    );
    // A rerun plays nothing again and reports the same.
    let again = study();
    let text2 = ok(&again);
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("a: 0 games played (6 already there)"), "{err}");
    assert_eq!(text, text2);
    // The study as a page.
    let r = ok(&varzero(&["report", out.to_str().unwrap()]));
    assert!(r.contains("report.html"), "{r}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for chart in [
        "study-draw-rate",
        "study-first-player",
        "study-length",
        "study-endings",
    ] {
        assert!(html.contains(&format!("data-chart=\"{chart}\"")), "{chart}");
    }
    assert!(html.contains("c: no counting"));
}

#[test]
fn bad_study_files_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for (name, text, want) in [
        (
            "both.toml",
            format!("{STUDY}[a]\nvariant = \"makruk\"\n"),
            "not both",
        ),
        (
            "one.toml",
            "name = \"x\"\ngames = 2\n[[arm]]\nvariant = \"makruk\"\n".to_string(),
            "at least two arms",
        ),
        (
            "three-players.toml",
            STUDY.replace(
                "players = [\"random\", \"material@4\"]",
                "players = [\"random\", \"random\", \"random\"]",
            ),
            "arm c: players: one spec (self-play) or two",
        ),
        (
            "bad-player.toml",
            STUDY.replace("players = [\"random\"]", "players = [\"nonsense\"]"),
            "nonsense",
        ),
    ] {
        let f = dir.path().join(name);
        std::fs::write(&f, text).unwrap();
        let o = varzero(&[
            "study",
            f.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ]);
        assert!(!o.status.success(), "{name}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
    }
}

#[test]
fn selfplay_with_players_writes_a_dataset_with_the_players_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("games");
    let args = |games: &str| {
        vec![
            "selfplay".to_string(),
            "--variant".into(),
            "makruk".into(),
            "--players".into(),
            "material@4;random".into(),
            "--games".into(),
            games.into(),
            "--out".into(),
            d.to_str().unwrap().into(),
            "--quiet".into(),
        ]
    };
    let o = Command::new(env!("CARGO_BIN_EXE_varzero"))
        .args(args("4"))
        .output()
        .unwrap();
    let text = ok(&o);
    assert!(
        text.contains("material@4 vs random: 4 games played (0 already there)"),
        "{text}"
    );
    let games = std::fs::read_to_string(d.join("games.txt")).unwrap();
    assert_eq!(games.matches("white  material@4 (A)").count(), 2, "{games}");
    assert_eq!(games.matches("white  random (B)").count(), 2, "{games}");
    // More games continue the directory; analysis reads it like any dataset.
    let o = Command::new(env!("CARGO_BIN_EXE_varzero"))
        .args(args("6"))
        .output()
        .unwrap();
    assert!(ok(&o).contains("2 games played (4 already there)"));
    let a = ok(&varzero(&["analyze", "--games", d.to_str().unwrap()]));
    assert!(a.contains("games 6"), "{a}");
    assert!(Path::new(&d.join("variant.toml")).exists());
}
