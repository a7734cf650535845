//! Hostile but realistic use of the command line (the reliability issue's probes): each test
//! reproduces one defect as a user met it and checks the fix: a clear one-line error and a
//! non-zero exit where the input is bad, and no data mixed, lost or counted twice.

mod common;
use common::{err, out, refused, vz};

use std::path::Path;
use std::process::Output;

/// `base` with `extra` after it; a flag of `extra` already in `base` replaces its value there
/// (clap refuses a flag given twice).
fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = base.to_vec();
    let mut i = 0;
    while i < extra.len() {
        let at = args.iter().position(|a| *a == extra[i]);
        match (at, extra.get(i + 1)) {
            (Some(j), Some(v)) if !matches!(extra[i], "--set" | "--param") => {
                args[j + 1] = v;
                i += 2;
            }
            _ => {
                args.push(extra[i]);
                i += 1;
            }
        }
    }
    args
}

fn selfplay(dir: &Path, variant: &str, games: u32, extra: &[&str]) -> Output {
    let d = dir.to_str().unwrap();
    let g = games.to_string();
    let args = [
        "selfplay",
        "--variant",
        variant,
        "--games",
        &g,
        "--playouts",
        "8",
        "--threads",
        "1",
        "--games-per-worker",
        "4",
        "--quiet",
        "--out",
        d,
    ];
    vz(&with(&args, extra))
}

fn games_in(dir: &Path) -> usize {
    varzero_datasets::list_shards(dir)
        .unwrap()
        .0
        .iter()
        .map(|s| s.games)
        .sum()
}

#[test]
fn datasets_of_other_rules_are_never_mixed() {
    let t = tempfile::tempdir().unwrap();
    let (mk, xq) = (t.path().join("makruk"), t.path().join("xiangqi"));
    assert!(selfplay(&mk, "makruk", 4, &[]).status.success());
    assert!(selfplay(&xq, "xiangqi", 2, &[]).status.success());
    assert!(
        mk.join("dataset.json").exists(),
        "a dataset states its rules"
    );
    // Defect 5: resuming into a directory of another variant, or of other rules.
    refused(&selfplay(&mk, "xiangqi", 6, &[]), "makruk");
    refused(
        &selfplay(&mk, "makruk", 6, &["--set", "stalemate=loss"]),
        "rules",
    );
    assert_eq!(games_in(&mk), 4, "nothing was added");
    // The same rules resume.
    assert!(selfplay(&mk, "makruk", 6, &[]).status.success());
    assert_eq!(games_in(&mk), 6);
    // Defect 4: training on two variants' data.
    let o = vz(&[
        "train",
        "--data",
        mk.to_str().unwrap(),
        xq.to_str().unwrap(),
        "--out",
        t.path().join("net").to_str().unwrap(),
        "--steps",
        "2",
        "--quiet",
    ]);
    refused(&o, "never mixed");
    // Defect 11: the same games twice in an analysis.
    let o = vz(&[
        "analyze",
        "--games",
        mk.to_str().unwrap(),
        "--games",
        mk.to_str().unwrap(),
    ]);
    refused(&o, "given twice");
    let copy = t.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    for e in std::fs::read_dir(&mk).unwrap() {
        let e = e.unwrap();
        if e.path().is_dir() {
            let to = copy.join(e.file_name());
            std::fs::create_dir(&to).unwrap();
            for f in std::fs::read_dir(e.path()).unwrap() {
                let f = f.unwrap();
                std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
            }
        }
    }
    let o = vz(&[
        "analyze",
        "--games",
        mk.to_str().unwrap(),
        "--games",
        copy.to_str().unwrap(),
    ]);
    refused(&o, "duplicate games");
}

#[test]
fn bad_training_settings_write_nothing() {
    let t = tempfile::tempdir().unwrap();
    let mk = t.path().join("makruk");
    assert!(selfplay(&mk, "makruk", 2, &[]).status.success());
    let net = t.path().join("net");
    let train = |extra: &[&str]| {
        let a = [
            "train",
            "--data",
            mk.to_str().unwrap(),
            "--out",
            net.to_str().unwrap(),
            "--quiet",
            "--blocks",
            "1",
            "--channels",
            "8",
        ];
        vz(&with(&a, extra))
    };
    // Defects 6 and 7: a NaN net, a zero batch, zero channels.
    refused(
        &train(&["--steps", "2", "--batch-size", "0"]),
        "train.batch_size",
    );
    refused(&train(&["--steps", "2", "--lr", "NaN"]), "train.lr");
    refused(
        &train(&["--steps", "2", "--channels", "0"]),
        "train.arch.channels",
    );
    assert!(!net.join("model.safetensors").exists(), "no net written");
    // A learning rate that blows up: stopped at the step, nothing written.
    let o = train(&["--steps", "3", "--lr", "1e30"]);
    refused(&o, "not finite");
    assert!(
        !net.join("model.safetensors").exists(),
        "no non-finite net written"
    );
    // Defect 15: fewer steps than the checkpoint holds.
    let _ = std::fs::remove_dir_all(&net);
    assert!(train(&["--steps", "4"]).status.success());
    refused(&train(&["--steps", "2"]), "past the 2 steps");
    // Defect 14: another architecture on resume, and an output that is a file.
    refused(&train(&["--steps", "6", "--blocks", "2"]), "1x8");
    let file = t.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let o = vz(&[
        "train",
        "--data",
        mk.to_str().unwrap(),
        "--out",
        file.to_str().unwrap(),
        "--steps",
        "1",
        "--quiet",
    ]);
    refused(&o, file.to_str().unwrap());
}

#[test]
fn run_configs_and_flags_are_checked_before_anything_is_written() {
    let t = tempfile::tempdir().unwrap();
    let cfg = t.path().join("run.toml");
    std::fs::write(
        &cfg,
        "name = \"x\"\nvariant = \"makruk\"\ngenerations = 1\ngames_per_generation = 0\n[search]\nplayouts = 0\n[selfplay]\nthreads = 0\n[train]\nsteps = 0\nbatch_size = 0\n",
    )
    .unwrap();
    let dir = t.path().join("run");
    let o = vz(&[
        "pipeline",
        "--quiet",
        "--config",
        cfg.to_str().unwrap(),
        "--dir",
        dir.to_str().unwrap(),
    ]);
    for key in [
        "games_per_generation",
        "search.playouts",
        "selfplay.threads",
        "train.steps",
        "train.batch_size",
    ] {
        refused(&o, key);
    }
    assert!(!dir.join("config.toml").exists(), "nothing written");
    // The same checks for flags.
    let d = t.path().join("sp");
    for (flag, value, key) in [
        ("--games-per-worker", "0", "selfplay.games_per_worker"),
        ("--shard-positions", "0", "selfplay.shard_positions"),
        ("--cheap-fraction", "5", "search.cheap_fraction"),
        ("--cheap-fraction", "NaN", "search.cheap_fraction"),
        ("--param", "c_puct=-1", "search.c_puct"),
    ] {
        refused(&selfplay(&d, "makruk", 2, &[flag, value]), key);
    }
    assert!(!d.exists() || games_in(&d) == 0);
}

#[test]
fn perft_refuses_a_depth_it_cannot_finish_and_fen_counters_say_why() {
    refused(
        &vz(&["perft", "--variant", "makruk", "--depth", "100"]),
        "at most",
    );
    let o = vz(&[
        "perft",
        "--variant",
        "makruk",
        "--depth",
        "1",
        "--fen",
        "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - - 4294967295 1",
    ]);
    refused(&o, "from 0 to 65535");
}

#[test]
fn a_killed_or_repeated_match_keeps_every_game_once() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("m");
    let m = |games: &str| {
        vz(&[
            "match",
            "--variant",
            "makruk",
            "material@4",
            "random",
            "--games",
            games,
            "--quiet",
            "--out",
            d.to_str().unwrap(),
        ])
    };
    let o = m("4");
    assert!(o.status.success(), "{}", err(&o));
    // Every game is in the table (a shard per game as it ends, merged into one once the match
    // is complete).
    assert_eq!(games_in(&d), 4);
    assert_eq!(varzero_datasets::list_shards(&d).unwrap().0.len(), 1);
    // The same command again plays nothing and reports the same score.
    let again = m("4");
    assert!(again.status.success(), "{}", err(&again));
    assert_eq!(games_in(&d), 4, "no game appended twice");
    assert_eq!(out(&o).lines().last(), out(&again).lines().last());
    // More games continue the match.
    assert!(m("6").status.success());
    let mut ids: Vec<u64> = varzero_datasets::list_shards(&d)
        .unwrap()
        .0
        .iter()
        .flat_map(|s| varzero_datasets::read_games(&s.path).unwrap())
        .map(|g| g.game_id)
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, vec![0, 1, 2, 3, 4, 5]);
    // Another pair of players is refused.
    let o = vz(&[
        "match",
        "--variant",
        "makruk",
        "material@8",
        "random",
        "--games",
        "2",
        "--quiet",
        "--out",
        d.to_str().unwrap(),
    ]);
    refused(&o, "another match");
}

/// Defect 2: a net loaded, then another variant chosen. The engine must not panic or hang, nor
/// use the net for rules it was not made for.
#[test]
fn uci_refuses_a_net_for_another_variant() {
    use std::io::Write;
    let t = tempfile::tempdir().unwrap();
    let mk = t.path().join("makruk");
    assert!(selfplay(&mk, "makruk", 2, &[]).status.success());
    let net = t.path().join("net");
    let o = vz(&[
        "train",
        "--data",
        mk.to_str().unwrap(),
        "--out",
        net.to_str().unwrap(),
        "--steps",
        "2",
        "--blocks",
        "1",
        "--channels",
        "8",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let model = net.join("model.safetensors");
    for other in ["xiangqi", "makruk-sutras"] {
        let mut child = common::varzero()
            .arg("uci")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let script = format!(
            "setoption name Evaluator value net:{}\nsetoption name UCI_Variant value {other}\nposition startpos\ngo nodes 20\nisready\nquit\n",
            model.display()
        );
        child
            .stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .unwrap();
        let o = child.wait_with_output().unwrap();
        let text = out(&o);
        assert!(o.status.success(), "{other}: {}", err(&o));
        assert!(
            text.contains("info string error: evaluator 'net:")
                && text.contains("reset to material"),
            "{other}: {text}"
        );
        assert!(
            text.contains("bestmove ") && !text.contains("bestmove (none)"),
            "{other}: {text}"
        );
        assert!(text.contains("readyok"), "{other}: {text}");
    }
}

/// Defect 8: kill -9 in the middle of a match loses no finished game, and the same command
/// then finishes the match with every game once.
#[test]
fn a_match_killed_mid_run_resumes() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("m");
    let args = |games: &str| -> Vec<String> {
        [
            "match",
            "--variant",
            "makruk",
            "material@16",
            "material@4",
            "--games",
            games,
            "--quiet",
            "--out",
            d.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let mut child = common::varzero()
        .args(args("30"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while games_in(&d) < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = games_in(&d);
    assert!(kept >= 2, "finished games were kept: {kept}");
    let o = vz(&args("30").iter().map(|s| s.as_str()).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        err(&o).contains(&format!("resuming: {kept} games")),
        "{}",
        err(&o)
    );
    let mut ids: Vec<u64> = varzero_datasets::list_shards(&d)
        .unwrap()
        .0
        .iter()
        .flat_map(|s| varzero_datasets::read_games(&s.path).unwrap())
        .map(|g| g.game_id)
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..30).collect::<Vec<u64>>());
    assert!(out(&o).contains("30 games"), "{}", out(&o));
}
