//! `varzero match`, `varzero uci`, `varzero analyze` and `varzero study` as a user runs them:
//! our engine plays itself through UCI, a crashing engine loses its games while the match goes
//! on, the last line of a match is its result, and the analysis reads what a match wrote.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_varzero")
}

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(bin()).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn last_line(s: &str) -> &str {
    s.lines().last().unwrap_or("")
}

#[test]
fn uci_session_over_stdin_and_stdout() {
    let mut child = Command::new(bin())
        .arg("uci")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(stdout).lines() {
            if tx.send(l.unwrap()).is_err() {
                break;
            }
        }
    });
    let wait_for = |prefix: &str| -> (String, Vec<String>) {
        let mut before = Vec::new();
        loop {
            let l = rx
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("no '{prefix}' after {before:?}"));
            if l.starts_with(prefix) {
                return (l, before);
            }
            before.push(l);
        }
    };
    let mut send = |s: &str| {
        writeln!(stdin, "{s}").unwrap();
        stdin.flush().unwrap();
    };
    send("uci");
    let (_, header) = wait_for("uciok");
    assert!(header.iter().any(|l| l.starts_with("id name varzero")));
    assert!(header
        .iter()
        .any(|l| l.starts_with("option name UCI_Variant") && l.contains("var cambodian")));
    send("setoption name UCI_Variant value cambodian");
    send("nonsense");
    let (err, _) = wait_for("info string error");
    assert!(err.contains("unknown command 'nonsense'"), "{err}");
    send("position startpos moves e3e4");
    send("go nodes 100");
    let (best, infos) = wait_for("bestmove");
    assert!(
        infos.iter().any(|l| l.starts_with("info depth")),
        "{infos:?}"
    );
    assert!(best.split_whitespace().nth(1).unwrap().len() >= 4, "{best}");
    send("isready");
    wait_for("readyok");
    send("quit");
    let status = child.wait().unwrap();
    assert!(status.success());
}

fn dir_games(dir: &Path) -> Vec<varzero_datasets::GameRecord> {
    let (shards, skipped) = varzero_datasets::list_shards(dir).unwrap();
    assert!(skipped.is_empty());
    shards
        .iter()
        .flat_map(|s| varzero_datasets::read_games(&s.path).unwrap())
        .collect()
}

#[test]
fn our_engine_plays_itself_through_uci() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("match");
    let engine = format!("uci:{} uci@nodes=40", bin());
    let engine_b = format!(
        "uci:{} uci --evaluator uniform@nodes=40,name=varzero-uniform",
        bin()
    );
    let (ok, stdout, stderr) = run(&[
        "match",
        "--variant",
        "ouk-chatrang",
        &engine,
        &engine_b,
        "--games",
        "4",
        "--concurrency",
        "2",
        "--random-plies",
        "2",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stdout}\n{stderr}");
    let last = last_line(&stdout);
    assert!(last.starts_with("score A "), "{stdout}");
    assert!(last.contains("/4 (W "), "{last}");
    assert!(
        !stdout.contains("failures"),
        "no engine failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("varzero-uniform"), "{stdout}");
    let games = dir_games(&out);
    assert_eq!(games.len(), 4);
    for g in &games {
        assert!(g.plies > 0);
        assert!(!["crash", "timeout", "illegal-move"].contains(&g.termination.as_str()));
    }
    assert!(out.join("games.txt").exists());

    // The analysis reads the match's games.
    let (ok, json, stderr) = run(&["analyze", "--games", out.to_str().unwrap(), "--json"]);
    assert!(ok, "{stderr}");
    let j: serde_json::Value = serde_json::from_str(&json).unwrap();
    let g = &j["groups"][0];
    assert_eq!(g["variant"], "ouk-chatrang");
    assert_eq!(g["games"], 4);
    assert!(g["draw_rate"].is_number() && g["first_player_score"].is_number());
    assert!(g["piece_values"].is_object());
}

fn crash_script(dir: &Path) -> PathBuf {
    let p = dir.join("crash.sh");
    std::fs::write(
        &p,
        "#!/bin/sh\n\
         while read -r line; do\n\
           case \"$line\" in\n\
             uci) echo 'id name crasher'; echo uciok ;;\n\
             isready) echo readyok ;;\n\
             go*) exit 1 ;;\n\
           esac\n\
         done\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    p
}

#[test]
fn a_crashing_engine_loses_its_games_and_the_match_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let s = crash_script(dir.path());
    let out = dir.path().join("m");
    let (ok, stdout, stderr) = run(&[
        "match",
        "material@20",
        &format!("uci:{}@nodes=10", s.display()),
        "--games",
        "4",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stdout}\n{stderr}");
    assert_eq!(stderr.matches("loses by crash").count(), 4, "{stderr}");
    assert!(
        stdout.contains("failures (lost games): A 0, B 4"),
        "{stdout}"
    );
    assert_eq!(
        last_line(&stdout),
        "score A 4/4 (W 4 D 0 L 0) elo +inf [+inf, +inf]"
    );
    let games = dir_games(&out);
    assert_eq!(games.len(), 4);
    assert!(games.iter().all(|g| g.termination == "crash"));
    let text = std::fs::read_to_string(out.join("games.txt")).unwrap();
    assert_eq!(text.matches("failed B").count(), 4);
}

#[test]
fn sprt_stops_a_decided_match() {
    let (ok, stdout, stderr) = run(&[
        "match",
        "--variant",
        "kar-ouk",
        "material@300",
        "random",
        "--games",
        "400",
        "--concurrency",
        "2",
        "--sprt",
        "elo0=0,elo1=200,alpha=0.1,beta=0.1,model=logistic",
        "--quiet",
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("H1 accepted"), "{stdout}");
    let last = last_line(&stdout);
    let played: u32 = last
        .split('/')
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(played < 400, "{last}");
}

#[test]
fn bad_players_are_refused() {
    let (ok, _, stderr) = run(&["match", "material@10", "nosuch@10", "--games", "2"]);
    assert!(!ok);
    assert!(stderr.contains("unknown evaluator"), "{stderr}");
    let (ok, _, stderr) = run(&["match", "material@10", "uci:/no/such/engine@nodes=5"]);
    assert!(!ok);
    assert!(stderr.contains("cannot start"), "{stderr}");
}

#[test]
fn a_small_study() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("study");
    let (ok, stdout, stderr) = run(&[
        "study",
        "--a",
        "oxeli",
        "--set",
        "stalemate=draw",
        "--games",
        "6",
        "--playouts",
        "16",
        "--threads",
        "2",
        "--bootstrap",
        "5",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stdout}\n{stderr}");
    assert!(stdout.contains("draw rate (95% Wilson)"), "{stdout}");
    assert!(
        stdout.contains("b: oxeli stalemate=draw (6 games"),
        "{stdout}"
    );
    assert!(
        last_line(&stdout).contains("two-proportion z-test"),
        "{stdout}"
    );
    for f in [
        "report.txt",
        "report.json",
        "study.toml",
        "a/variant.toml",
        "b/variant.toml",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let arms = j["arms"].as_array().unwrap();
    assert_eq!(arms[0]["report"]["games"], 6);
    assert_eq!(arms[1]["report"]["games"], 6);
    assert_ne!(
        arms[0]["report"]["rules_hash"],
        arms[1]["report"]["rules_hash"]
    );
    assert!(arms[1]["vs_baseline"]["draw_rate"]["p_value"].is_number());
    assert!(out.join("plots").join("rates.svg").exists());
}
