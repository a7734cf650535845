//! `varzero selfplay` as a user runs it: killed mid-run it leaves only complete shards, and the
//! same command continues to N games with no game lost or duplicated; the same seed gives the
//! same games.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use varzero_datasets::{list_shards, read_games};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_varzero"))
}

fn selfplay(out: &Path, games: u64, threads: u32) -> Command {
    let mut c = bin();
    c.args([
        "selfplay",
        "--variant",
        "makruk",
        "--evaluator",
        "material",
        "--playouts",
        "40",
        "--seed",
        "11",
    ])
    .args([
        "--games",
        &games.to_string(),
        "--threads",
        &threads.to_string(),
        "--games-per-worker",
        "4",
    ])
    .args(["--shard-positions", "300", "--quiet", "--out"])
    .arg(out);
    c
}

/// game id -> moves, over all complete shards; panics on a duplicate or a damaged shard.
fn games_in(dir: &Path) -> BTreeMap<u64, String> {
    let (shards, skipped) = list_shards(dir).unwrap();
    assert!(skipped.is_empty(), "damaged shards: {skipped:?}");
    let mut out = BTreeMap::new();
    for s in shards {
        for g in read_games(&s.path).unwrap() {
            assert!(
                out.insert(g.game_id, g.moves).is_none(),
                "game {} twice",
                g.game_id
            );
        }
    }
    out
}

#[test]
fn killed_run_resumes_without_loss_or_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("data");
    let n = 60;
    let mut child = selfplay(&out, n, 2).spawn().unwrap();
    let start = Instant::now();
    // Kill as soon as the first shard is there (or give up waiting after a while).
    loop {
        let have = list_shards(&out).map(|(s, _)| s.len()).unwrap_or(0);
        if have >= 1 || start.elapsed() > Duration::from_secs(120) {
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
    let partial = games_in(&out);
    assert!(
        (partial.len() as u64) < n,
        "the run was killed before it finished"
    );
    let status = selfplay(&out, n, 2).status().unwrap();
    assert!(status.success());
    let all = games_in(&out);
    assert_eq!(
        all.keys().copied().collect::<Vec<_>>(),
        (0..n).collect::<Vec<_>>()
    );
    // Games finished before the kill are unchanged, and every game is the one an
    // uninterrupted single-threaded run with the same seed plays.
    for (id, moves) in &partial {
        assert_eq!(&all[id], moves);
    }
    let fresh = dir.path().join("fresh");
    assert!(selfplay(&fresh, n, 1).status().unwrap().success());
    assert_eq!(games_in(&fresh), all);
}

#[test]
fn same_seed_one_thread_same_games_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    assert!(selfplay(&a, 6, 1).status().unwrap().success());
    assert!(selfplay(&b, 6, 1).status().unwrap().success());
    let read = |d: &Path| {
        let (shards, _) = list_shards(d).unwrap();
        shards
            .iter()
            .map(|s| std::fs::read(s.path.join("positions.parquet")).unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(read(&a), read(&b));
}

#[test]
fn bad_input_is_a_one_line_error() {
    let out = bin()
        .args([
            "selfplay",
            "--variant",
            "nosuch",
            "--games",
            "1",
            "--out",
            "/tmp/x",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("nosuch"), "{err}");
    let out = bin()
        .args([
            "perft",
            "--variant",
            "makruk",
            "--fen",
            "8/8 w",
            "--depth",
            "1",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("board field"), "{err}");
}
