//! Compaction: a finished dataset's many small shards (a match, a ladder pairing or a teacher's
//! games write one shard per game, so that a killed writer loses none) merged into a few large
//! ones, and the repair of a directory that two writers of an older version filled at once.
//!
//! A merged shard is named `LAST-compactFIRST` (`00000199-compact00000000`): it stands for every
//! shard whose sequence numbers lie in `FIRST..=LAST`, and those are *superseded*: readers leave
//! them out ([`live_shards`]). So the merge is safe at every point: the merged shard is written
//! to a temporary directory and renamed in (before: only the small shards count; after: only
//! the merged one), and each superseded shard is then renamed to a temporary name (which every
//! reader skips and the next exclusive writer removes) and deleted. A crash between two steps
//! leaves a state that reads as before or as after, never a game twice or none; the next
//! compaction (or writer) removes what is superseded. Sequence numbers of new shards continue
//! after `LAST`, so a resumed match's games are never hidden by an older merged shard.

use crate::error::{Error, Result};
use crate::lock::DirLock;
use crate::records::{GameRecord, PositionRecord};
use crate::shard::{
    list_all_shards as list_shards, read_games, read_positions, write_shard, ShardInfo,
    SkippedShard,
};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A shard with its games.
pub type ShardGames = (ShardInfo, Vec<GameRecord>);

/// The tag of a merged shard, followed by the first sequence number it stands for.
pub const COMPACT_TAG: &str = "compact";
/// A merged shard holds at most this many positions (self-play's shards are of this order)...
pub const COMPACT_POSITIONS: usize = 100_000;
/// ... and at most this many games (a match's shards have no positions).
pub const COMPACT_GAMES: usize = 100_000;

/// What a compaction did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Compaction {
    /// Shards merged into new ones.
    pub merged: usize,
    /// Merged shards written.
    pub written: usize,
    /// Shards already superseded (a crash after a merge) that were removed.
    pub superseded: usize,
    /// Games dropped because an earlier shard holds the same game id: `(id, the shard dropped
    /// from)`. Only a directory written by two writers at once (an older version) has any.
    pub duplicates: Vec<(u64, PathBuf)>,
}

/// The sequence numbers a shard stands for: `FIRST..=SEQ` for a merged shard, else its own.
pub fn seq_range(s: &ShardInfo) -> (u64, u64) {
    (merged_first(s).unwrap_or(s.seq), s.seq)
}

/// The first sequence number a merged shard stands for; None for a shard of one writer.
fn merged_first(s: &ShardInfo) -> Option<u64> {
    shard_name(s)
        .split_once('-')
        .and_then(|(_, tag)| tag.strip_prefix(COMPACT_TAG))
        .filter(|d| d.len() == 8)
        .and_then(|d| d.parse::<u64>().ok())
        .filter(|&f| f <= s.seq)
}

fn is_merged(s: &ShardInfo) -> bool {
    merged_first(s).is_some()
}

fn shard_name(s: &ShardInfo) -> String {
    s.path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
}

/// Which of `shards` a merged shard stands for (by position in the slice).
pub fn superseded(shards: &[ShardInfo]) -> Vec<bool> {
    let merged: Vec<(usize, (u64, u64))> = shards
        .iter()
        .enumerate()
        .filter(|(_, s)| is_merged(s))
        .map(|(i, s)| (i, seq_range(s)))
        .collect();
    shards
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (f, l) = seq_range(s);
            let mine = is_merged(s);
            merged.iter().any(|&(j, (mf, ml))| {
                // A merged shard covers the shards inside its range; of two merged shards the
                // wider one stands for the narrower (a second compaction took the first in).
                j != i && mf <= f && l <= ml && (!mine || (ml - mf) > (l - f))
            })
        })
        .collect()
}

/// The shards of `dir` that count (those a merged shard stands for left out), oldest first, and
/// the damaged ones. Every reader of engine-game directories goes through this.
pub fn live_shards(dir: &Path) -> Result<(Vec<ShardInfo>, Vec<SkippedShard>)> {
    let (shards, skipped) = list_shards(dir)?;
    let gone = superseded(&shards);
    let live = shards
        .into_iter()
        .zip(gone)
        .filter(|(_, g)| !g)
        .map(|(s, _)| s)
        .collect();
    Ok((live, skipped))
}

/// The games of each of `dir`'s live shards, in shard order. A compaction may run meanwhile
/// (another ladder finishing a pairing this one only reads): a shard it retires between the
/// listing and the reading is read again from a fresh listing, where the merged shard that
/// replaced it already is.
pub fn read_live_games(dir: &Path) -> Result<(Vec<ShardGames>, Vec<SkippedShard>)> {
    let mut tries = 0;
    'again: loop {
        let (shards, skipped) = live_shards(dir)?;
        let mut out = Vec::with_capacity(shards.len());
        for s in shards {
            match read_games(&s.path) {
                Ok(g) => out.push((s, g)),
                Err(Error::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound && tries < 20 =>
                {
                    tries += 1;
                    continue 'again;
                }
                Err(e) => return Err(e),
            }
        }
        return Ok((out, skipped));
    }
}

/// Game ids that appear in more than one place among `dir`'s live shards: `(id, the shard it is
/// in first, the shard it is in again)`, in shard order.
pub fn duplicate_games(dir: &Path) -> Result<Vec<(u64, PathBuf, PathBuf)>> {
    let (shards, _) = read_live_games(dir)?;
    let mut seen: HashMap<u64, PathBuf> = HashMap::new();
    let mut out = Vec::new();
    for (s, games) in &shards {
        for g in games {
            match seen.get(&g.game_id) {
                Some(first) => out.push((g.game_id, first.clone(), s.path.clone())),
                None => {
                    seen.insert(g.game_id, s.path.clone());
                }
            }
        }
    }
    Ok(out)
}

/// Removes the shards of `dir` that a merged shard stands for (what a crash in the middle of a
/// compaction left); returns how many. The caller holds `dir`'s exclusive lock.
pub fn remove_superseded(dir: &Path, _lock: &DirLock) -> Result<usize> {
    let (shards, _) = list_shards(dir)?;
    let gone = superseded(&shards);
    let mut n = 0;
    for (s, g) in shards.iter().zip(gone) {
        if g {
            retire(s)?;
            n += 1;
        }
    }
    Ok(n)
}

/// Takes a shard out of every reader's view in one rename, then deletes it (a crash in the
/// deletion leaves a `.tmp-` directory, which no reader reads and the next writer removes).
fn retire(s: &ShardInfo) -> Result<()> {
    let dir = s.path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(".tmp-retired-{}", shard_name(s)));
    let _ = fs::remove_dir_all(&tmp);
    fs::rename(&s.path, &tmp).map_err(|e| Error::io(s.path.display(), e))?;
    fs::remove_dir_all(&tmp).map_err(|e| Error::io(tmp.display(), e))
}

/// Merges the live shards of `dir` into shards of up to [`COMPACT_POSITIONS`] positions and
/// [`COMPACT_GAMES`] games, keeping the first of any game id that appears twice (an older
/// version's concurrent writers), and removes what the merged shards stand for. Damaged shards
/// are left as they are. The caller holds `dir`'s exclusive lock, so nobody writes meanwhile.
pub fn compact(dir: &Path, lock: &DirLock) -> Result<Compaction> {
    compact_with(dir, lock, COMPACT_POSITIONS, COMPACT_GAMES, &mut |_| Ok(()))
}

/// The steps of a compaction, for tests that stop it between two of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactStep {
    /// A merged shard has been renamed in; the shards it stands for are still there.
    Merged,
    /// One of those has been retired.
    Retired,
}

/// [`compact`] with its limits, and `after` called after each step (an error stops there, as a
/// crash would).
pub fn compact_with(
    dir: &Path,
    lock: &DirLock,
    max_positions: usize,
    max_games: usize,
    after: &mut dyn FnMut(CompactStep) -> Result<()>,
) -> Result<Compaction> {
    let mut out = Compaction {
        superseded: remove_superseded(dir, lock)?,
        ..Compaction::default()
    };
    let (shards, _) = live_shards(dir)?;
    // Which games each shard keeps: the first occurrence of every id, in shard order.
    let mut seen: HashSet<u64> = HashSet::new();
    let mut dropped: Vec<HashSet<u64>> = Vec::with_capacity(shards.len());
    for s in &shards {
        let mut d = HashSet::new();
        for g in read_games(&s.path)? {
            if !seen.insert(g.game_id) {
                d.insert(g.game_id);
                out.duplicates.push((g.game_id, s.path.clone()));
            }
        }
        dropped.push(d);
    }
    // Runs of consecutive shards; a run never splits shards of one sequence number (two
    // writers of disjoint ranges may share one), so a merged range covers whole runs only.
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    let (mut start, mut positions, mut games) = (0, 0, 0);
    for (i, s) in shards.iter().enumerate() {
        let full = positions + s.positions > max_positions || games + s.games > max_games;
        if i > start && full && shards[i - 1].seq != s.seq {
            runs.push(start..i);
            (start, positions, games) = (i, 0, 0);
        }
        positions += s.positions;
        games += s.games;
    }
    if start < shards.len() {
        runs.push(start..shards.len());
    }
    for run in runs {
        let part = &shards[run.clone()];
        let dups = dropped[run.clone()].iter().any(|d| !d.is_empty());
        if part.len() < 2 && !dups {
            continue;
        }
        let mut pos: Vec<PositionRecord> = Vec::new();
        let mut gs: Vec<GameRecord> = Vec::new();
        for (s, gone) in part.iter().zip(&dropped[run.clone()]) {
            gs.extend(
                read_games(&s.path)?
                    .into_iter()
                    .filter(|g| !gone.contains(&g.game_id)),
            );
            pos.extend(
                read_positions(&s.path)?
                    .into_iter()
                    .filter(|p| !gone.contains(&p.game_id)),
            );
        }
        let first = part.iter().map(|s| seq_range(s).0).min().unwrap_or(0);
        let last = part.iter().map(|s| s.seq).max().unwrap_or(0);
        let name = format!("{last:08}-{COMPACT_TAG}{first:08}");
        if part.iter().any(|s| shard_name(s) == name) {
            // Only a merged shard with a duplicate alone in its run: never written so.
            continue;
        }
        {
            let _commit = DirLock::commit(dir)?;
            write_shard(dir, last, &format!("{COMPACT_TAG}{first:08}"), &pos, &gs)?;
        }
        out.written += 1;
        after(CompactStep::Merged)?;
        for s in part {
            retire(s)?;
            out.merged += 1;
            after(CompactStep::Retired)?;
        }
    }
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::LockMode;

    fn game(id: u64, moves: &str) -> GameRecord {
        GameRecord {
            game_id: id,
            variant: "makruk".into(),
            rules_hash: "0000000000000001".into(),
            result: "1/2-1/2".into(),
            termination: "counting".into(),
            plies: 1,
            seed: id,
            evaluator: "a vs b".into(),
            search: "{}".into(),
            start_fen: "start".into(),
            moves: moves.into(),
        }
    }

    fn pos(id: u64, ply: u32) -> PositionRecord {
        PositionRecord {
            game_id: id,
            ply,
            variant: "makruk".into(),
            rules_hash: "0000000000000001".into(),
            fen: format!("fen {id} {ply}"),
            policy_moves: vec!["a3a4".into()],
            policy_probs: vec![1.0],
            result_wdl: [0.0, 1.0, 0.0],
            root_wdl: [0.0, 1.0, 0.0],
            visits: 1,
            full_search: true,
            evaluator: "a".into(),
        }
    }

    /// `n` one-game shards, game `i` with two positions, as a match writes them.
    fn small_shards(dir: &Path, n: u64) {
        for i in 0..n {
            write_shard(dir, i, "m1", &[pos(i, 0), pos(i, 1)], &[game(i, "a3a4")]).unwrap();
        }
    }

    /// Game ids and position keys as every reader sees them (live shards only).
    fn view(dir: &Path) -> (Vec<u64>, Vec<(u64, u32)>) {
        let (shards, skipped) = live_shards(dir).unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        let mut ids = Vec::new();
        let mut ps = Vec::new();
        for s in &shards {
            ids.extend(read_games(&s.path).unwrap().iter().map(|g| g.game_id));
            ps.extend(
                read_positions(&s.path)
                    .unwrap()
                    .iter()
                    .map(|p| (p.game_id, p.ply)),
            );
        }
        ids.sort_unstable();
        ps.sort_unstable();
        (ids, ps)
    }

    fn whole(n: u64) -> (Vec<u64>, Vec<(u64, u32)>) {
        (
            (0..n).collect(),
            (0..n).flat_map(|i| [(i, 0), (i, 1)]).collect(),
        )
    }

    #[test]
    fn compaction_merges_into_few_shards_and_keeps_every_game_once() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        small_shards(d, 25);
        let lock = DirLock::acquire(d, LockMode::Exclusive).unwrap();
        // 10 positions a shard at most: five games each.
        let c = compact_with(d, &lock, 10, 1000, &mut |_| Ok(())).unwrap();
        assert_eq!((c.merged, c.written, c.superseded), (25, 5, 0));
        assert!(c.duplicates.is_empty());
        let (shards, _) = list_shards(d).unwrap();
        assert_eq!(shards.len(), 5, "only the merged shards are left");
        assert_eq!(view(d), whole(25));
        // A resumed writer's next shard is numbered after every merged one, so no merged range
        // ever covers it; a second compaction takes it in with the last merged shard.
        let next = shards.iter().map(|s| s.seq + 1).max().unwrap();
        assert_eq!(next, 25);
        write_shard(
            d,
            next,
            "m2",
            &[pos(25, 0), pos(25, 1)],
            &[game(25, "a3a4")],
        )
        .unwrap();
        assert_eq!(view(d), whole(26));
        let c = compact_with(d, &lock, 1000, 1000, &mut |_| Ok(())).unwrap();
        assert_eq!((c.merged, c.written), (6, 1));
        assert_eq!(list_shards(d).unwrap().0.len(), 1);
        assert_eq!(view(d), whole(26));
        // Nothing left to merge: a no-op.
        let c = compact(d, &lock).unwrap();
        assert_eq!((c.merged, c.written), (0, 0));
    }

    /// A crash after every step of a compaction (simulated by stopping there) leaves a
    /// directory every reader sees whole, and the next compaction finishes the job.
    #[test]
    fn a_compaction_stopped_after_any_step_loses_and_doubles_nothing() {
        let n = 12;
        let steps = {
            let t = tempfile::tempdir().unwrap();
            small_shards(t.path(), n);
            let lock = DirLock::acquire(t.path(), LockMode::Exclusive).unwrap();
            let mut k = 0;
            compact_with(t.path(), &lock, 8, 1000, &mut |_| {
                k += 1;
                Ok(())
            })
            .unwrap();
            k
        };
        assert_eq!(steps, 3 + 12, "three merged shards, twelve retired");
        for stop in 1..=steps {
            let t = tempfile::tempdir().unwrap();
            let d = t.path();
            small_shards(d, n);
            let lock = DirLock::acquire(d, LockMode::Exclusive).unwrap();
            let mut k = 0;
            let r = compact_with(d, &lock, 8, 1000, &mut |_| {
                k += 1;
                if k == stop {
                    Err(Error::Duplicate("crash".into()))
                } else {
                    Ok(())
                }
            });
            assert!(r.is_err(), "stopped at step {stop}");
            assert_eq!(view(d), whole(n), "after step {stop}");
            // A deletion interrupted half-way: the retired shard's temporary is never read.
            fs::create_dir_all(d.join(".tmp-retired-00000003-m1")).unwrap();
            assert_eq!(view(d), whole(n), "after step {stop}, with a temporary");
            let c = compact_with(d, &lock, 8, 1000, &mut |_| Ok(())).unwrap();
            assert!(c.duplicates.is_empty(), "step {stop}: {c:?}");
            assert_eq!(view(d), whole(n), "finished after step {stop}");
            let (shards, _) = list_shards(d).unwrap();
            assert!(shards.iter().all(is_merged), "step {stop}: {shards:?}");
        }
    }

    #[test]
    fn duplicates_of_two_writers_are_found_and_compaction_keeps_the_first() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        // Two writers of an older version in one directory: both played games 0 and 1.
        write_shard(d, 0, "w1", &[pos(0, 0)], &[game(0, "a3a4")]).unwrap();
        write_shard(d, 0, "w2", &[pos(0, 0)], &[game(0, "b3b4")]).unwrap();
        write_shard(d, 1, "w2", &[pos(1, 0)], &[game(1, "c3c4")]).unwrap();
        write_shard(d, 1, "w1", &[pos(1, 0)], &[game(1, "d3d4")]).unwrap();
        write_shard(d, 2, "w1", &[pos(2, 0)], &[game(2, "e3e4")]).unwrap();
        let dups = duplicate_games(d).unwrap();
        assert_eq!(
            dups.iter().map(|d| d.0).collect::<Vec<_>>(),
            vec![0, 1],
            "{dups:?}"
        );
        let lock = DirLock::acquire(d, LockMode::Exclusive).unwrap();
        let c = compact(d, &lock).unwrap();
        assert_eq!(c.duplicates.len(), 2);
        assert!(duplicate_games(d).unwrap().is_empty());
        let (shards, _) = live_shards(d).unwrap();
        let games: Vec<(u64, String)> = shards
            .iter()
            .flat_map(|s| read_games(&s.path).unwrap())
            .map(|g| (g.game_id, g.moves))
            .collect();
        // The first shard of each sequence number in name order (w1 before w2) is kept.
        assert_eq!(
            games,
            vec![
                (0, "a3a4".to_string()),
                (1, "d3d4".to_string()),
                (2, "e3e4".to_string())
            ]
        );
        let positions: usize = shards.iter().map(|s| s.positions).sum();
        assert_eq!(positions, 3, "the dropped games' positions go with them");
    }

    #[test]
    fn superseded_follows_the_ranges_of_merged_shards() {
        let info = |name: &str| ShardInfo {
            seq: name[..8].parse().unwrap(),
            path: PathBuf::from(name),
            positions: 1,
            games: 1,
        };
        let shards = [
            info("00000003-m1"),
            info("00000004-compact00000000"),
            info("00000004-m1"),
            info("00000005-m1"),
            info("00000009-compact00000000"),
            info("00000010-m1"),
        ];
        assert_eq!(
            superseded(&shards),
            vec![true, true, true, true, false, false]
        );
        assert_eq!(seq_range(&shards[1]), (0, 4));
        assert_eq!(seq_range(&shards[0]), (3, 3));
    }
}
