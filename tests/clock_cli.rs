//! Clocks in `varzero match` (issue 30): cutechess's time controls, a player past its time
//! loses the game (`time-forfeit`) with the rules core as referee, the games record each move's
//! time and the clock left, and our own players manage a short clock without losing on time.

mod common;
use common::{err, ok, refused, varzero};
use std::path::{Path, PathBuf};

/// A scripted UCI engine that oversteps: our engine (uniform priors) whose every `bestmove`
/// is held back `delay` seconds.
fn slow_engine(dir: &Path, delay: &str) -> PathBuf {
    let p = dir.join("slow.sh");
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\n\
             VARZERO_NETS=/nonexistent '{}' uci --evaluator uniform | while IFS= read -r line; do\n\
               case \"$line\" in bestmove*) sleep {delay} ;; esac\n\
               echo \"$line\"\n\
             done\n",
            env!("CARGO_BIN_EXE_varzero")
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    p
}

/// `varzero match --variant makruk A B --games 2 --quiet --out OUT CLOCK...`.
fn clocked_match(a: &str, b: &str, out: &Path, clock: &[&str]) -> std::process::Output {
    let mut args = vec![
        "match",
        "--variant",
        "makruk",
        a,
        b,
        "--games",
        "2",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(clock);
    varzero().args(&args).output().unwrap()
}

fn games_txt(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("games.txt")).unwrap()
}

#[test]
fn an_engine_past_its_time_loses_on_time() {
    let t = tempfile::tempdir().unwrap();
    let slow = slow_engine(t.path(), "0.3");
    let engine = format!("uci:{}@clock", slow.display());
    // st=0.1: the engine's first move comes after 0.3 s, every game.
    let out = t.path().join("st");
    let o = clocked_match("material@8", &engine, &out, &["--st", "0.1"]);
    let stdout = ok(&o);
    assert!(
        stdout.contains("clock st=0.1: losses on time A 0, B 2"),
        "{stdout}"
    );
    assert_eq!(
        err(&o).matches("loses by time-forfeit").count(),
        2,
        "{}",
        err(&o)
    );
    assert!(stdout
        .trim_end()
        .ends_with("score A 2/2 (W 2 D 0 L 0) elo +inf [+inf, +inf]"));
    // A whole game under a clock that runs out: 1 s for the game, 0.3 s a move, so the engine
    // is out of time at its fourth move; the game records every move's time and clock.
    let out = t.path().join("tc");
    let o = clocked_match("material@8", &engine, &out, &["--tc", "1+0"]);
    let stdout = ok(&o);
    assert!(stdout.contains("losses on time A 0, B 2"), "{stdout}");
    let text = games_txt(&out);
    assert_eq!(
        text.matches("result 1-0 time-forfeit").count()
            + text.matches("result 0-1 time-forfeit").count(),
        2,
        "{text}"
    );
    for line in text.lines().filter(|l| l.starts_with("clock")) {
        // Both sides' moves, the engine's last one over: "used/left" cells, one negative.
        let cells: Vec<(i64, i64)> = line
            .split_whitespace()
            .skip(1)
            .take_while(|c| c.contains('/'))
            .map(|c| {
                let (u, l) = c.split_once('/').unwrap();
                (u.parse().unwrap(), l.parse().unwrap())
            })
            .collect();
        assert!(cells.len() >= 7, "{line}");
        let (used, left) = *cells.last().unwrap();
        assert!(used >= 300 && left < 0, "{line}");
        assert!(cells[..cells.len() - 1].iter().all(|c| c.1 >= 0), "{line}");
    }
    let games = varzero_datasets::list_shards(&out)
        .unwrap()
        .0
        .iter()
        .flat_map(|s| varzero_datasets::read_games(&s.path).unwrap())
        .collect::<Vec<_>>();
    assert_eq!(games.len(), 2);
    for g in games {
        assert_eq!(g.termination, "time-forfeit");
        let j: serde_json::Value = serde_json::from_str(&g.search).unwrap();
        assert_eq!(j["time_control"], "tc=1");
        assert_eq!(j["move_ms"].as_array().unwrap().len(), g.plies as usize + 1);
    }
}

#[test]
fn our_players_keep_to_a_short_clock() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("m");
    let o = clocked_match(
        "material@clock",
        "material@clock,tactics=0.5",
        &out,
        &["--tc", "1+0.01"],
    );
    let stdout = ok(&o);
    assert!(
        stdout.contains("clock tc=1+0.01: losses on time A 0, B 0"),
        "{stdout}"
    );
}

#[test]
fn clock_players_need_a_clock_and_bad_controls_are_named() {
    refused(
        &varzero()
            .args(["match", "--variant", "makruk", "material@clock", "random"])
            .output()
            .unwrap(),
        "plays by the clock: give the match one (--tc or --st)",
    );
    refused(
        &varzero()
            .args([
                "match",
                "--variant",
                "makruk",
                "material@4",
                "random",
                "--tc",
                "40/x",
            ])
            .output()
            .unwrap(),
        "--tc: time control: time 'x' is not a time",
    );
    refused(
        &varzero()
            .args([
                "match",
                "--variant",
                "makruk",
                "material@4",
                "random",
                "--st",
                "0",
            ])
            .output()
            .unwrap(),
        "--st: time control: st must be above 0",
    );
}

/// A clocked ladder keeps its games apart: the rung cache and the ratings sit under a
/// directory named after the clock, and players of the clock climb it.
#[test]
fn a_clocked_ladder_keeps_its_games_under_its_clock() {
    let t = tempfile::tempdir().unwrap();
    let (d, r) = (t.path().join("d"), t.path().join("r"));
    let o = varzero()
        .args([
            "ladder",
            "--variant",
            "makruk",
            "--rungs",
            "random,material@clock",
            "--games",
            "2",
            "--concurrency",
            "1",
            "--dir",
            d.to_str().unwrap(),
            "--rung-dir",
            r.to_str().unwrap(),
            "--tc",
            "1+0.01",
            "--quiet",
            "material@clock,tactics=0.5",
        ])
        .output()
        .unwrap();
    let stdout = ok(&o);
    assert!(stdout.contains("material@clock,tactics=0.5"), "{stdout}");
    assert!(d.join("tc=1+0.01/ratings.csv").exists(), "{stdout}");
    assert!(r.join("tc=1+0.01").is_dir());
}

/// A rule study's engine arms under a clock (`tc` in the study file): players of the clock
/// play, and a study without a clock refuses them.
#[test]
fn a_study_plays_its_engine_arms_under_a_clock() {
    let t = tempfile::tempdir().unwrap();
    let study = "name = \"clocked\"\ngames = 2\nplayers = [\"material@clock\"]\nrandom_plies = 2\n\
                 tc = \"st=0.02\"\n[[arm]]\nvariant = \"makruk\"\n[[arm]]\nset = [\"stalemate=loss\"]\n";
    let file = t.path().join("s.toml");
    std::fs::write(&file, study).unwrap();
    let out = t.path().join("out");
    let run = |f: &Path| {
        varzero()
            .args([
                "study",
                f.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--quiet",
            ])
            .output()
            .unwrap()
    };
    let text = ok(&run(&file));
    assert!(text.contains("(2 games"), "{text}");
    let bare = t.path().join("bare.toml");
    std::fs::write(&bare, study.replace("tc = \"st=0.02\"\n", "")).unwrap();
    let o = run(&bare);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(err(&o).contains("plays by the clock"), "{}", err(&o));
}
