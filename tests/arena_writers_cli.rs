//! Matches, ladders and engine games as real processes (issue 31): several writers at once on
//! one directory or one rung cache write every game exactly once; a `random` player is seeded
//! by the game, so a resumed ladder rates as one played whole; finished directories are merged
//! into few shards; and a directory an older version filled twice is refused until `varzero
//! compact` repairs it.

mod common;
use common::{err, out, refused, vz};

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn cmd(args: &[&str]) -> Command {
    let mut c = common::varzero();
    c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

/// Starts every command at once and waits for all of them.
fn at_once(runs: &[Vec<String>]) -> Vec<Output> {
    let children: Vec<_> = runs
        .iter()
        .map(|a| {
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            cmd(&a).spawn().unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect()
}

/// Either it ran, or it was refused because another writer had the directory.
fn ran_or_was_refused(o: &Output) -> bool {
    if o.status.success() {
        return true;
    }
    refused(o, "is in use by");
    false
}

/// Every game id of `dir`'s shards (all of them, as any reader lists them), with how many
/// times it is there.
fn ids(dir: &Path) -> BTreeMap<u64, usize> {
    let (shards, skipped) = varzero_datasets::list_shards(dir).unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    let mut n = BTreeMap::new();
    for s in &shards {
        for g in varzero_datasets::read_games(&s.path).unwrap() {
            *n.entry(g.game_id).or_insert(0) += 1;
        }
    }
    n
}

fn once(n: u64) -> BTreeMap<u64, usize> {
    (0..n).map(|i| (i, 1)).collect()
}

fn shards(dir: &Path) -> usize {
    varzero_datasets::list_shards(dir).unwrap().0.len()
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn match_args(out: &Path, games: u64, seed: u64) -> Vec<String> {
    strings(&[
        "match",
        "--variant",
        "makruk",
        "material@8",
        "random",
        "--games",
        &games.to_string(),
        "--seed",
        &seed.to_string(),
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ])
}

/// Issue 31, item 1: three `match --out D` at once wrote 26 rows for 20 ids.
#[test]
fn three_matches_on_one_out_write_every_game_once() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("m");
    let runs = vec![match_args(&d, 10, 1); 3];
    let outs = at_once(&runs);
    let ran = outs.iter().filter(|o| ran_or_was_refused(o)).count();
    assert!(ran >= 1, "one of them has the directory");
    assert_eq!(ids(&d), once(10), "no game twice, none lost");
    // A finished match is merged into one shard, which a rerun reads as done.
    assert_eq!(shards(&d), 1);
    let o = vz(&match_args(&d, 10, 1)
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    assert!(o.status.success(), "{}", err(&o));
    assert!(err(&o).contains("resuming: 10 games"), "{}", err(&o));
    assert_eq!(ids(&d), once(10));
    // Extended: the new games are written after the merged shard and merged with it.
    let o = vz(&match_args(&d, 14, 1)
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(ids(&d), once(14));
    assert_eq!(shards(&d), 1);
}

fn ladder_args(rungs: &Path, dir: &Path, games: u64, conc: u64, players: &[&str]) -> Vec<String> {
    let mut a = strings(&[
        "ladder",
        "--variant",
        "makruk",
        "--rungs",
        "random,material-raw@1,material@1",
        "--games",
        &games.to_string(),
        "--concurrency",
        &conc.to_string(),
        "--quiet",
        "--rung-dir",
        rungs.to_str().unwrap(),
        "--dir",
        dir.to_str().unwrap(),
    ]);
    a.extend(strings(players));
    a
}

fn pairings(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut p: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("pairing.json").exists())
        .collect();
    p.sort();
    p
}

/// Issue 31, item 2: two ladders sharing the default rung cache collided (a vanished file; a
/// pairing with 17 rows for 10 ids). Three at once now play each rung pairing once: the others
/// wait for it and read it.
#[test]
fn three_ladders_sharing_a_rung_cache_play_each_pairing_once() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().join("rungs");
    let dirs: Vec<_> = (0..3).map(|i| t.path().join(format!("l{i}"))).collect();
    // Two rate a player (into the same player directory), one plays only the rungs.
    let runs = vec![
        ladder_args(&r, &dirs[0], 6, 1, &["material@2"]),
        ladder_args(&r, &dirs[0], 6, 2, &["material@2"]),
        ladder_args(&r, &dirs[2], 6, 1, &[]),
    ];
    for o in at_once(&runs) {
        assert!(o.status.success(), "{}", err(&o));
        assert!(!err(&o).contains("panicked"), "{}", err(&o));
    }
    let rung_pairs = pairings(&r);
    assert_eq!(rung_pairs.len(), 2, "{rung_pairs:?}");
    for p in rung_pairs.iter().chain(&pairings(&dirs[0])) {
        assert_eq!(ids(p), once(6), "{}", p.display());
        assert_eq!(shards(p), 1, "{} merged", p.display());
    }
    let rating = |d: &Path| std::fs::read_to_string(d.join("ratings.csv")).unwrap();
    let rungs_only = |text: String| {
        text.lines()
            .filter(|l| !l.starts_with("material@2"))
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert!(rating(&dirs[0]).contains("material@2"));
    // The same rung games in every table (the rated player moves the fit a little, so the
    // rung-only ladder is compared with a rung-only rerun of the first).
    let o = vz(&ladder_args(&r, &dirs[1], 6, 1, &[])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(rungs_only(rating(&dirs[1])), rungs_only(rating(&dirs[2])));
}

/// Engine games written by `selfplay --players` (a teacher's games, a study's arm): two at once
/// on one directory write every game and its positions once, merged into one shard.
#[test]
fn two_teachers_on_one_directory_write_every_game_once() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("teacher");
    let args = strings(&[
        "selfplay",
        "--variant",
        "makruk",
        "--players",
        "material-raw@1",
        "--games",
        "16",
        "--positions",
        "--quiet",
        "--out",
        d.to_str().unwrap(),
    ]);
    let outs = at_once(&[args.clone(), args.clone()]);
    assert!(outs.iter().filter(|o| ran_or_was_refused(o)).count() >= 1);
    assert_eq!(ids(&d), once(16));
    assert_eq!(shards(&d), 1);
    let (s, _) = varzero_datasets::list_shards(&d).unwrap();
    let games = varzero_datasets::read_games(&s[0].path).unwrap();
    let positions = varzero_datasets::read_positions(&s[0].path).unwrap();
    let plies: u64 = games.iter().map(|g| g.plies as u64).sum();
    assert_eq!(positions.len() as u64, plies, "each game's positions once");
    // Readers take the merged layout: analysis and the games listing.
    let o = vz(&["games", d.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o).lines().count(), 16);
    let o = vz(&["analyze", "--games", d.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", err(&o));
}

/// Issue 31, item 3: a ladder with a `random` rung, killed and resumed, rated generation 0 at
/// +190 instead of +155 (the random player's seed came from the worker slot). A ladder played
/// in two halves, with other concurrency, plays the same games and gives the same ratings.
#[test]
fn a_resumed_ladder_with_a_random_rung_plays_the_same_games() {
    let t = tempfile::tempdir().unwrap();
    let (ra, da) = (t.path().join("ra"), t.path().join("da"));
    let (rb, db) = (t.path().join("rb"), t.path().join("db"));
    let run = |a: Vec<String>| {
        let o = vz(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(o.status.success(), "{}", err(&o));
    };
    run(ladder_args(&ra, &da, 8, 1, &["material@1"]));
    run(ladder_args(&rb, &db, 4, 2, &["material@1"]));
    run(ladder_args(&rb, &db, 8, 3, &["material@1"]));
    let games = |d: &Path| {
        let o = vz(&["games", d.to_str().unwrap()]);
        assert!(o.status.success(), "{}", err(&o));
        out(&o)
    };
    let (pa, pb) = (pairings(&ra), pairings(&rb));
    assert_eq!(pa.len(), 2);
    for (x, y) in pa
        .iter()
        .zip(&pb)
        .chain(pairings(&da).iter().zip(&pairings(&db)))
    {
        assert_eq!(x.file_name(), y.file_name());
        assert_eq!(games(x), games(y), "{}", x.display());
    }
    let rating = |d: &Path| std::fs::read_to_string(d.join("ratings.csv")).unwrap();
    assert_eq!(rating(&da), rating(&db));
}

/// Issue 31: a directory that two writers of an older version filled (the same game ids with
/// other moves) is refused by every reader and writer, and `varzero compact` repairs it,
/// keeping the first copy of each game.
#[test]
fn duplicates_of_an_older_version_are_refused_until_repaired_and_compaction_keeps_the_first() {
    let t = tempfile::tempdir().unwrap();
    let (d, other) = (t.path().join("m"), t.path().join("other"));
    let run = |a: Vec<String>| {
        let o = vz(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(o.status.success(), "{}", err(&o));
    };
    run(match_args(&d, 4, 1));
    run(match_args(&other, 4, 2));
    let before = vz(&["games", d.to_str().unwrap()]);
    // What the older version left: the other match's games under the same ids, in a shard of
    // their own.
    let (s, _) = varzero_datasets::list_shards(&other).unwrap();
    let (p, g) = (
        varzero_datasets::read_positions(&s[0].path).unwrap(),
        varzero_datasets::read_games(&s[0].path).unwrap(),
    );
    varzero_datasets::write_shard(&d, 50, "match2", &p, &g).unwrap();
    let dir = d.to_str().unwrap();
    // Listed with a warning naming the repair; every other reader and writer refuses.
    let o = vz(&["games", dir]);
    assert!(
        o.status.success() && err(&o).contains("varzero repair"),
        "{}",
        err(&o)
    );
    refused(&vz(&["analyze", "--games", dir]), "twice");
    refused(
        &vz(&match_args(&d, 6, 1)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()),
        "varzero repair",
    );
    // Compaction keeps the first copy of a game too.
    let o = vz(&["compact", dir]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("4 duplicate games dropped"), "{}", out(&o));
    assert_eq!(ids(&d), once(4));
    assert_eq!(
        out(&vz(&["games", dir])),
        out(&before),
        "the first copies are kept"
    );
    run(match_args(&d, 6, 1));
    assert_eq!(ids(&d), once(6));
    // A directory that is not there is named.
    refused(
        &vz(&["compact", t.path().join("none").to_str().unwrap()]),
        "not a directory",
    );
}
