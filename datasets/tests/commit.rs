//! Writers that share a directory: each shard is checked against the directory as it is
//! committed, so no game is there twice whatever runs at once; a directory from before that
//! (a game twice) is refused by readers and repaired, crash-safely, by `repair_duplicates`.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use varzero_datasets::*;

fn pos(game: u64, ply: u32) -> PositionRecord {
    PositionRecord {
        game_id: game,
        ply,
        variant: "makruk".into(),
        rules_hash: "00ff00ff00ff00ff".into(),
        fen: format!("fen {game} {ply}"),
        policy_moves: vec!["e3e4".into()],
        policy_probs: vec![1.0],
        result_wdl: [1.0, 0.0, 0.0],
        root_wdl: [0.5, 0.25, 0.25],
        visits: 8,
        full_search: true,
        evaluator: "material".into(),
    }
}

fn game(id: u64) -> GameRecord {
    GameRecord {
        game_id: id,
        variant: "makruk".into(),
        rules_hash: "00ff00ff00ff00ff".into(),
        result: "1-0".into(),
        termination: "checkmate".into(),
        plies: 3,
        seed: 42 + id,
        evaluator: "material".into(),
        search: "{}".into(),
        start_fen: "start".into(),
        moves: "e3e4 e6e5 d3d4".into(),
    }
}

/// Games `ids` with three positions each.
fn tables(ids: impl Iterator<Item = u64>) -> (Vec<PositionRecord>, Vec<GameRecord>) {
    let ids: Vec<u64> = ids.collect();
    let p = ids
        .iter()
        .flat_map(|&g| (0..3).map(move |k| pos(g, k)))
        .collect();
    (p, ids.iter().map(|&g| game(g)).collect())
}

/// Game id -> (copies in the games tables, positions), over every complete shard.
fn census(dir: &Path) -> BTreeMap<u64, (usize, usize)> {
    let mut out: BTreeMap<u64, (usize, usize)> = BTreeMap::new();
    for s in list_shards(dir).unwrap().0 {
        for g in read_games(&s.path).unwrap() {
            out.entry(g.game_id).or_default().0 += 1;
        }
        for p in read_positions(&s.path).unwrap() {
            out.entry(p.game_id).or_default().1 += 1;
        }
    }
    out
}

fn once_each(dir: &Path, ids: std::ops::Range<u64>) {
    let c = census(dir);
    let want: BTreeMap<u64, (usize, usize)> = ids.map(|i| (i, (1, 3))).collect();
    assert_eq!(c, want, "every game once, with its positions");
}

#[test]
fn a_game_another_writer_committed_meanwhile_is_dropped_at_commit() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let (mut a, mut b) = (Committed::default(), Committed::default());
    // Both writers look at the empty directory before either commits (as two processes
    // started at once do), then commit overlapping games.
    a.refresh(d).unwrap();
    b.refresh(d).unwrap();
    let (p, g) = tables(0..4);
    let ca = commit_shard(d, "a", &p, &g, &mut a).unwrap();
    assert_eq!((ca.games, ca.positions, ca.dropped.len()), (4, 12, 0));
    let (p, g) = tables(2..6);
    let cb = commit_shard(d, "b", &p, &g, &mut b).unwrap();
    assert_eq!(cb.dropped, vec![2, 3], "{cb:?}");
    assert_eq!((cb.games, cb.positions), (2, 6));
    assert_eq!(cb.others, vec![0, 1, 2, 3], "b learns what a wrote");
    // Everything already there: no shard at all.
    let (p, g) = tables(0..6);
    let cc = commit_shard(d, "a", &p, &g, &mut a).unwrap();
    assert!(cc.path.is_none() && cc.games == 0, "{cc:?}");
    once_each(d, 0..6);
    // Sequence numbers are the directory's, one after another, whoever writes.
    let seqs: Vec<u64> = list_shards(d).unwrap().0.iter().map(|s| s.seq).collect();
    assert_eq!(seqs, vec![0, 1]);
    let left: Vec<_> = fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporaries left: {left:?}");
    check_unique(d).unwrap();
}

#[test]
fn four_writers_at_once_write_each_game_once() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().to_path_buf();
    std::thread::scope(|s| {
        for w in 0..4u64 {
            let d = &d;
            s.spawn(move || {
                let mut c = Committed::default();
                c.refresh(d).unwrap();
                // Overlapping ranges in shards of 3 games, in different orders.
                let start = w * 5;
                let mut ids: Vec<u64> = (start..start + 12).collect();
                if w % 2 == 1 {
                    ids.reverse();
                }
                for chunk in ids.chunks(3) {
                    let (p, g) = tables(chunk.iter().copied());
                    commit_shard(d, &format!("w{w}"), &p, &g, &mut c).unwrap();
                }
            });
        }
    });
    once_each(&d, 0..27);
}

#[test]
fn duplicates_are_refused_by_readers_and_repaired_keeping_one_copy() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let (p, g) = tables(0..4);
    write_shard(d, 0, "a", &p, &g).unwrap();
    // An older version's second writer: games 2..6, and a plain copy of the first shard.
    let (p, g) = tables(2..6);
    write_shard(d, 1, "b", &p, &g).unwrap();
    write_shard(d, 2, "c", &p[..6], &g[..2]).unwrap();
    let e = check_unique(d).unwrap_err().to_string();
    assert!(
        e.contains("holds game 2 more than once") && e.contains("varzero repair"),
        "{e}"
    );
    let e = scan_positions_window(d, 100).err().unwrap().to_string();
    assert!(e.contains("varzero repair"), "training refuses it: {e}");
    assert!(scan_games(d).is_err(), "analysis refuses it");
    let r = repair_duplicates(d).unwrap();
    assert_eq!(
        r,
        Repair {
            rewritten: 1,
            removed: 1,
            copies: 4
        }
    );
    once_each(d, 0..6);
    check_unique(d).unwrap();
    assert_eq!(repair_duplicates(d).unwrap(), Repair::default());
}

#[test]
fn a_repair_killed_between_its_rename_and_the_removal_is_finished_by_the_next() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let (p, g) = tables(0..4);
    write_shard(d, 0, "a", &p, &g).unwrap();
    let (p, g) = tables(2..6);
    let old = write_shard(d, 1, "b", &p, &g).unwrap();
    // The state a kill leaves: the rewritten shard (games 4 and 5) beside the old one.
    let (p, g) = tables(4..6);
    write_shard(d, 1, "b-r", &p, &g).unwrap();
    // ... and one killed while writing it.
    fs::create_dir(d.join(".tmp-repair-00000001-b")).unwrap();
    repair_duplicates(d).unwrap();
    assert!(!old.exists());
    once_each(d, 0..6);
    assert!(!d.join(".tmp-repair-00000001-b").exists());
}
