//! Writers of one directory at once (issue 31): real `varzero` processes started together in
//! every combination (selfplay and selfplay, pipeline and pipeline, overlapping self-play
//! ranges and the whole-generation pass, selfplay against a range writer). Whatever runs at
//! once, and after the refused ones are run again, every game id is there exactly once and none
//! is lost. A directory with a game twice (from an older version) is refused everywhere and
//! repaired by `varzero repair`; a run of 10^12 games holds no list of them; what a failed or
//! killed write left is removed by the next run.

mod common;
use common::{err, ok, out, refused, vz};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    common::varzero()
}

/// Starts every command at once, then waits for all of them.
fn at_once(cmds: Vec<Command>) -> Vec<Output> {
    let children: Vec<_> = cmds
        .into_iter()
        .map(|mut c| {
            c.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect()
}

/// Each command that was refused because another writer held the directory is run again, one
/// at a time, and must succeed then; the others must have succeeded. Returns how many were
/// refused.
fn rerun_refused(outs: &[Output], cmd: impl Fn(usize) -> Command) -> usize {
    let mut n = 0;
    for (i, o) in outs.iter().enumerate() {
        if o.status.success() {
            continue;
        }
        refused(o, "in use");
        n += 1;
        ok(&cmd(i).output().unwrap());
    }
    n
}

/// Game id -> copies, over the complete shards of `dir`.
fn copies(dir: &Path) -> BTreeMap<u64, usize> {
    let (shards, skipped) = varzero_datasets::list_shards(dir).unwrap();
    assert!(skipped.is_empty(), "damaged shards: {skipped:?}");
    let mut m = BTreeMap::new();
    for s in shards {
        for id in varzero_datasets::read_game_ids(&s.path).unwrap() {
            *m.entry(id).or_insert(0) += 1;
        }
    }
    m
}

/// Every game of `0..n` exactly once (none lost, none twice, none else).
fn once_each(dir: &Path, n: u64) {
    let want: BTreeMap<u64, usize> = (0..n).map(|i| (i, 1)).collect();
    assert_eq!(copies(dir), want, "{}", dir.display());
}

/// Temporaries anywhere under `dir` (what a write left before its rename).
fn temporaries(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with(".tmp-") || name.ends_with(".tmp") || name.contains(".tmp.") {
            out.push(p.clone());
        }
        if p.is_dir() {
            out.extend(temporaries(&p));
        }
    }
    out
}

fn selfplay(dir: &Path, games: u64) -> Command {
    let mut c = bin();
    c.args(["selfplay", "--variant", "makruk", "--playouts", "8"])
        .args(["--threads", "1", "--games-per-worker", "3"])
        .args(["--shard-positions", "40", "--quiet", "--games"])
        .arg(games.to_string())
        .arg("--out")
        .arg(dir);
    c
}

/// A one-generation Makruk run of `games` games, as small as a run gets.
fn tiny_config(dir: &Path, games: u64) -> PathBuf {
    let cfg = dir.join("tiny.toml");
    std::fs::write(
        &cfg,
        format!(
            r#"name = "writers"
variant = "makruk"
generations = 1
games_per_generation = {games}
match_games = 2
match_playouts = 4
[search]
playouts = 8
[selfplay]
threads = 1
games_per_worker = 3
shard_positions = 40
[train]
steps = 2
batch_size = 8
checkpoint_every = 1
[train.arch]
blocks = 1
channels = 8
"#
        ),
    )
    .unwrap();
    cfg
}

fn pipeline(cfg: &Path, run: &Path, extra: &[&str]) -> Command {
    let mut c = bin();
    c.args(["pipeline", "--quiet", "--config"])
        .arg(cfg)
        .arg("--dir")
        .arg(run)
        .args(extra);
    c
}

#[test]
fn selfplay_writers_of_one_directory_write_each_game_once() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("data");
    let outs = at_once((0..3).map(|_| selfplay(&d, 18)).collect());
    let n = rerun_refused(&outs, |_| selfplay(&d, 18));
    eprintln!("{n} of 3 writers refused");
    once_each(&d, 18);
    // The refusal names the holder.
    for o in outs.iter().filter(|o| !o.status.success()) {
        assert!(err(o).contains("pid "), "{}", err(o));
    }
}

#[test]
fn two_pipelines_on_one_run_directory_write_each_game_once() {
    let t = tempfile::tempdir().unwrap();
    let cfg = tiny_config(t.path(), 9);
    let run = t.path().join("run");
    let outs = at_once((0..2).map(|_| pipeline(&cfg, &run, &[])).collect());
    let n = rerun_refused(&outs, |_| pipeline(&cfg, &run, &[]));
    eprintln!("{n} of 2 pipelines refused");
    once_each(&run.join("selfplay/gen-000"), 9);
    assert!(run.join("models/gen-001.safetensors").exists());

    // While a pipeline holds the run, a stage command is refused: whenever the pipeline is
    // still running after the stage command ended, the stage ran entirely inside the lock.
    let mut child = pipeline(&cfg, &run, &["--param", "generations=2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lock = run.join(".lock");
    let mine = format!("pid {} ", child.id());
    while child.try_wait().unwrap().is_none()
        && !std::fs::read_to_string(&lock).is_ok_and(|t| t.starts_with(&mine))
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let stage = pipeline(&cfg, &run, &["--stage", "report"])
        .output()
        .unwrap();
    if child.try_wait().unwrap().is_none() {
        refused(&stage, "in use");
        refused(&pipeline(&cfg, &run, &[]).output().unwrap(), "in use");
    }
    assert!(child.wait().unwrap().success());
    once_each(&run.join("selfplay/gen-001"), 9);

    // Item 8: what a failed write left (a full disk) goes with the next run's start.
    let planted = [
        run.join("logs/.stages.csv.999999.tmp"),
        run.join(".report.html.999999.tmp"),
        run.join("models/gen-001.json.tmp"),
        run.join("training/gen-001/checkpoint.tmp.safetensors"),
    ];
    for p in &planted {
        std::fs::write(p, "half").unwrap();
    }
    ok(&pipeline(&cfg, &run, &["--param", "generations=2"])
        .output()
        .unwrap());
    let left = temporaries(&run);
    assert!(left.is_empty(), "temporaries left: {left:?}");
}

#[test]
fn overlapping_range_writers_then_the_whole_pass_write_each_game_once() {
    let t = tempfile::tempdir().unwrap();
    let cfg = tiny_config(t.path(), 12);
    let run = t.path().join("run");
    ok(&pipeline(&cfg, &run, &["--stage", "open"]).output().unwrap());
    let range = |r: &str| {
        pipeline(
            &cfg,
            &run,
            &["--stage", "selfplay", "--gen", "0", "--range", r],
        )
    };
    let ranges = ["0..8", "0..8", "4..12", "2..10"];
    // Range writers share the directory: none is refused.
    for o in at_once(ranges.iter().map(|r| range(r)).collect()) {
        ok(&o);
    }
    let gen0 = run.join("selfplay/gen-000");
    once_each(&gen0, 12);
    let whole = || pipeline(&cfg, &run, &["--stage", "selfplay", "--gen", "0"]);
    let o = whole().output().unwrap();
    ok(&o);
    assert!(
        out(&o).contains("0 games (12 already there)"),
        "{}",
        out(&o)
    );
    // The whole pass and ranges at once: the pass waits for the ranges, a range started
    // while the pass holds the directory is refused.
    let more = |i: usize| match i {
        0 => whole(),
        i => range(["8..20", "10..24"][i - 1]),
    };
    let outs = at_once((0..3).map(more).collect());
    rerun_refused(&outs, more);
    once_each(&gen0, 24);
    let left = temporaries(&gen0);
    assert!(left.is_empty(), "temporaries left: {left:?}");
}

#[test]
fn selfplay_against_a_range_writer_writes_each_game_once() {
    let t = tempfile::tempdir().unwrap();
    let cfg = tiny_config(t.path(), 10);
    let run = t.path().join("run");
    ok(&pipeline(&cfg, &run, &["--stage", "open"]).output().unwrap());
    let gen0 = run.join("selfplay/gen-000");
    let cmd = |i: usize| match i {
        0 => pipeline(
            &cfg,
            &run,
            &["--stage", "selfplay", "--gen", "0", "--range", "0..10"],
        ),
        _ => selfplay(&gen0, 10),
    };
    let outs = at_once((0..2).map(cmd).collect());
    rerun_refused(&outs, cmd);
    once_each(&gen0, 10);
}

#[test]
fn a_directory_with_a_game_twice_is_refused_everywhere_until_repaired() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("data");
    ok(&selfplay(&d, 6).output().unwrap());
    let before: BTreeMap<u64, String> = varzero_datasets::list_shards(&d)
        .unwrap()
        .0
        .iter()
        .flat_map(|s| varzero_datasets::read_games(&s.path).unwrap())
        .map(|g| (g.game_id, g.moves))
        .collect();
    // What two writers of an older version left: a shard twice.
    let first = varzero_datasets::list_shards(&d).unwrap().0[0].path.clone();
    let copy = d.join("99999999-copy");
    std::fs::create_dir(&copy).unwrap();
    for f in std::fs::read_dir(&first).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), copy.join(f.file_name())).unwrap();
    }
    let net = t.path().join("net");
    let train = || {
        let mut c = bin();
        c.args([
            "train",
            "--steps",
            "2",
            "--batch-size",
            "8",
            "--blocks",
            "1",
        ])
        .args(["--channels", "8", "--quiet", "--data"])
        .arg(&d)
        .arg("--out")
        .arg(&net);
        c.output().unwrap()
    };
    let repair = format!("varzero repair {}", d.display());
    refused(&train(), &repair);
    refused(&vz(&["analyze", "--games", d.to_str().unwrap()]), &repair);
    refused(&vz(&["report", d.to_str().unwrap()]), &repair);
    refused(&selfplay(&d, 8).output().unwrap(), &repair);
    assert!(!net.join("model.safetensors").exists());
    // Listed all the same, with a warning.
    let o = vz(&["games", d.to_str().unwrap()]);
    ok(&o);
    assert!(err(&o).contains(&repair), "{}", err(&o));

    let o = vz(&["repair", d.to_str().unwrap()]);
    ok(&o);
    assert!(out(&o).contains("removed"), "{}", out(&o));
    let after: BTreeMap<u64, String> = varzero_datasets::list_shards(&d)
        .unwrap()
        .0
        .iter()
        .flat_map(|s| varzero_datasets::read_games(&s.path).unwrap())
        .map(|g| (g.game_id, g.moves))
        .collect();
    assert_eq!(after, before, "one copy of each game, none lost");
    once_each(&d, 6);
    let o = vz(&["repair", d.to_str().unwrap()]);
    assert!(out(&o).contains("nothing to repair"), "{}", out(&o));

    // Item 8 for the trainer: a checkpoint a full disk cut short goes with the next start.
    std::fs::create_dir_all(&net).unwrap();
    std::fs::write(net.join("checkpoint.tmp.safetensors"), "half").unwrap();
    ok(&train());
    assert!(net.join("model.safetensors").exists());
    assert!(temporaries(&net).is_empty(), "{:?}", temporaries(&net));
    ok(&selfplay(&d, 8).output().unwrap());
    once_each(&d, 8);

    // A run directory: the pipeline refuses it before any stage, `repair RUN` repairs it.
    let cfg = tiny_config(t.path(), 4);
    let run = t.path().join("run");
    ok(&pipeline(&cfg, &run, &["--stage", "open"]).output().unwrap());
    ok(
        &pipeline(&cfg, &run, &["--stage", "selfplay", "--gen", "0"])
            .output()
            .unwrap(),
    );
    let gen0 = run.join("selfplay/gen-000");
    let first = varzero_datasets::list_shards(&gen0).unwrap().0[0]
        .path
        .clone();
    let copy = gen0.join("99999999-copy");
    std::fs::create_dir(&copy).unwrap();
    for f in std::fs::read_dir(&first).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), copy.join(f.file_name())).unwrap();
    }
    refused(
        &pipeline(&cfg, &run, &[]).output().unwrap(),
        "varzero repair",
    );
    assert!(!run.join("models/gen-001.safetensors").exists());
    ok(&vz(&["repair", run.to_str().unwrap()]));
    once_each(&gen0, 4);
}

/// Peak memory (VmHWM, in MB) of a live process.
fn peak_mb(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Runs `cmd` until its first shard is in `dir`, then reads its peak memory and kills it: a
/// list of every requested game would be allocated before the first game is played. A
/// refusal (exit 1, one line) is the other acceptable answer.
fn bounded(mut cmd: Command, dir: &Path) {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let o = child.wait_with_output().unwrap();
            assert!(!status.success(), "10^12 games cannot be done");
            refused(&o, "games");
            return;
        }
        if varzero_datasets::list_shards(dir).is_ok_and(|(s, _)| !s.is_empty()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let peak = peak_mb(child.id());
    let _ = child.kill();
    let _ = child.wait();
    let peak = peak.expect("the process was alive");
    eprintln!("peak memory {peak:.0} MB at the first shard");
    assert!(peak < 200.0, "peak memory {peak:.0} MB");
}

#[test]
fn a_trillion_games_are_never_listed_up_front() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("data");
    let mut c = bin();
    c.args(["selfplay", "--variant", "makruk", "--playouts", "1"])
        .args(["--threads", "1", "--games-per-worker", "2"])
        .args(["--shard-positions", "10", "--quiet"])
        .args(["--games", "1000000000000", "--out"])
        .arg(&d);
    bounded(c, &d);
    // The pipeline's games_per_generation likewise.
    let cfg = tiny_config(t.path(), 10_000_000_000);
    let run = t.path().join("run");
    let open = pipeline(
        &cfg,
        &run,
        &["--stage", "open", "--param", "search.playouts=1"],
    )
    .output()
    .unwrap();
    if !open.status.success() {
        refused(&open, "games_per_generation");
        return;
    }
    bounded(
        pipeline(
            &cfg,
            &run,
            &[
                "--stage",
                "selfplay",
                "--gen",
                "0",
                "--param",
                "search.playouts=1",
            ],
        ),
        &run.join("selfplay/gen-000"),
    );
}
