//! `varzero ladder` end to end on a tiny budget, with a scripted stand-in for Fairy-Stockfish:
//! a shell script found through `VARZERO_FSF` (as the real one is) that runs our own UCI engine
//! with uniform priors, so `fsf@nodes=N` rungs are external engines at growing node budgets.
//! The rungs play each other once into the cache; a second rating replays nothing there.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_varzero")
}

/// The fake engine: `varzero uci` with uniform priors, whatever arguments it is given.
fn fake_fsf(dir: &Path) -> PathBuf {
    let p = dir.join("fake-fsf.sh");
    std::fs::write(
        &p,
        format!("#!/bin/sh\nexec '{}' uci --evaluator uniform\n", bin()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    p
}

fn ladder(fsf: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(bin())
        .arg("ladder")
        .args(args)
        .env("VARZERO_FSF", fsf)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// Games recorded under `dir` (every pairing's games.txt).
fn shards(dir: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            n += shards(&e.path());
        } else if e.file_name() == "games.txt" {
            n += std::fs::read_to_string(e.path())
                .unwrap()
                .lines()
                .filter(|l| l.starts_with("[game "))
                .count();
        }
    }
    n
}

#[test]
fn players_climb_a_cached_ladder_of_external_engines() {
    let tmp = tempfile::tempdir().unwrap();
    let fsf = fake_fsf(tmp.path());
    let (dir, rungs) = (tmp.path().join("ratings"), tmp.path().join("rungs"));
    let (d, r) = (dir.to_str().unwrap(), rungs.to_str().unwrap());
    let common = [
        "--variant",
        "makruk",
        "--rungs",
        "fsf@nodes=1,fsf@nodes=4,fsf@nodes=32",
        "--games",
        "2",
        "--dir",
        d,
        "--rung-dir",
        r,
        "--quiet",
    ];
    let mut args = common.to_vec();
    args.push("material@16");
    let (ok, out, err) = ladder(&fsf, &args);
    assert!(ok, "{out}\n{err}");
    // The two adjacent pairs of rungs, two games each.
    assert_eq!(shards(&rungs), 4, "{err}");
    let played = shards(&dir);
    assert!(played >= 2 && played.is_multiple_of(2), "{played}");
    // The table: every rung and the player, the anchor at 0.
    for name in ["fsf@nodes=1", "fsf@nodes=4", "fsf@nodes=32", "material@16"] {
        assert!(out.contains(name), "{name} missing:\n{out}");
    }
    let anchor = out.lines().find(|l| l.starts_with("fsf@nodes=1 ")).unwrap();
    assert!(anchor.contains(" +0 "), "{anchor}");
    let csv = std::fs::read_to_string(dir.join("ratings.csv")).unwrap();
    assert!(
        csv.starts_with("player,elo,error95,games,score,rung\n"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert!(
        csv.contains("material@16,") && csv.contains(",false\n"),
        "{csv}"
    );

    // The same command again plays nothing and prints the same table.
    let (ok, again, err) = ladder(&fsf, &args);
    assert!(ok, "{err}");
    assert_eq!((shards(&rungs), shards(&dir)), (4, played));
    let table = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with("anchor"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(table(&again), table(&out));

    // Another player reuses the rung games and adds its own.
    let mut args = common.to_vec();
    args.push("random");
    let (ok, out, err) = ladder(&fsf, &args);
    assert!(ok, "{err}");
    assert_eq!(shards(&rungs), 4);
    assert!(shards(&dir) > played);
    assert!(
        out.contains("random") && out.contains("material@16"),
        "{out}"
    );

    // Another set of rungs in the same directories is another scale: the Fairy-Stockfish rungs
    // and their games stay out of its table.
    let (ok, out, err) = ladder(
        &fsf,
        &[
            "--variant",
            "makruk",
            "--rungs",
            "material@2,material@4",
            "--games",
            "2",
            "--dir",
            d,
            "--rung-dir",
            r,
            "--quiet",
            "material@16",
        ],
    );
    assert!(ok, "{err}");
    assert!(!out.contains("fsf@"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("material@2 ") && l.contains(" +0 ")),
        "{out}"
    );
}

#[test]
fn bad_ladders_are_refused_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let fsf = fake_fsf(tmp.path());
    let d = tmp.path().join("d");
    let d = d.to_str().unwrap();
    for (args, want) in [
        (
            vec!["--variant", "makruk", "--games", "0", "--dir", d],
            "--games",
        ),
        (
            vec!["--variant", "makruk", "--rungs", "bogus", "--dir", d],
            "bogus",
        ),
        (
            vec![
                "--variant",
                "makruk",
                "--rungs",
                "random",
                "--anchor",
                "nobody",
                "--dir",
                d,
                "--rung-dir",
                d,
                "--games",
                "2",
                "material@4",
            ],
            "anchor",
        ),
    ] {
        let (ok, out, err) = ladder(&fsf, &args);
        assert!(!ok, "{args:?} succeeded: {out}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
