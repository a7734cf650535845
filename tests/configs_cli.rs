//! Configs and commands checked before anything is written (issue 31): sizes beyond the machine
//! refused naming the key, a refused config that never locks a run directory, `report` on any
//! dataset self-play or a run writes, `--param` of keys a base config omits, a run's name as one
//! path component, `train --init` with a shape of its own, `match --config` with a run config.

mod common;
use common::{err, ok, pipeline, refused, vz, vz_in};

use std::path::Path;
use std::process::Output;

/// A run config small enough to play a generation in seconds.
const TINY: &str = "name = \"tiny-c\"\nvariant = \"makruk\"\ngenerations = 1\ngames_per_generation = 2\nmatch_games = 2\nmatch_playouts = 4\n[search]\nplayouts = 8\n[selfplay]\nthreads = 1\ngames_per_worker = 2\n[train]\nsteps = 2\nbatch_size = 8\n[train.arch]\nblocks = 1\nchannels = 8\n";

fn selfplay(out: &Path, variant: &str) -> Output {
    vz(&[
        "selfplay",
        "--variant",
        variant,
        "--games",
        "2",
        "--playouts",
        "8",
        "--threads",
        "1",
        "--games-per-worker",
        "2",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ])
}

/// Item 4: every size key, far beyond the machine, is refused in the config's check with one
/// line naming it, before `DIR/config.toml` exists (before the fix, a billion-position batch
/// aborted in training after config.toml was written; threads, windows and queues were not
/// bounded at all).
#[test]
fn every_size_beyond_the_machine_is_refused_naming_its_key_before_anything_is_written() {
    let t = tempfile::tempdir().unwrap();
    let cfg = t.path().join("run.toml");
    std::fs::write(&cfg, TINY).unwrap();
    for (param, key) in [
        ("train.batch_size=1000000000", "train.batch_size"),
        ("batch_size=1000000000", "train.batch_size"),
        ("train.window=10000000000000", "train.window"),
        ("gen1_window=10000000000000", "gen1_window"),
        (
            "games_per_generation=100000000000000000",
            "games_per_generation",
        ),
        ("gen0_games=100000000000000000", "gen0_games"),
        ("search.playouts=4000000000", "search.playouts"),
        ("search.cheap_playouts=4000000000", "search.cheap_playouts"),
        ("gen0_playouts=4000000000", "gen0_playouts"),
        (
            "search.leaves_per_game=4000000000",
            "search.leaves_per_game",
        ),
        (
            "selfplay.shard_positions=10000000000000",
            "selfplay.shard_positions",
        ),
        (
            "selfplay.games_per_worker=1000000000000",
            "selfplay.games_per_worker",
        ),
        ("selfplay.threads=100000", "selfplay.threads"),
        ("train.arch.channels=1000000", "train.arch.channels"),
        ("train.arch.blocks=100000000", "train.arch.blocks"),
        ("match_games=100000000000000000", "match_games"),
        ("match_playouts=4000000000", "match_playouts"),
        ("ladder.games=100000000000000000", "ladder.games"),
    ] {
        let dir = t.path().join("run");
        let o = pipeline(&cfg, &dir, &["--param", param]);
        refused(&o, key);
        assert!(
            !dir.join("config.toml").exists(),
            "{param}: config.toml written"
        );
    }
    // The same check for a file, and for the stage the cluster's driver opens a run with.
    std::fs::write(
        &cfg,
        TINY.replace("batch_size = 8", "batch_size = 1000000000"),
    )
    .unwrap();
    let dir = t.path().join("run");
    refused(&pipeline(&cfg, &dir, &[]), "train.batch_size");
    refused(
        &pipeline(&cfg, &dir, &["--stage", "open"]),
        "train.batch_size",
    );
    assert!(!dir.join("config.toml").exists());
    // And for the flags of `selfplay` and `train`.
    let sp = t.path().join("sp");
    for (flag, value, key) in [
        ("--threads", "100000", "selfplay.threads"),
        (
            "--shard-positions",
            "10000000000000",
            "selfplay.shard_positions",
        ),
        ("--playouts", "4000000000", "search.playouts"),
        ("--games", "100000000000000000", "--games"),
    ] {
        let mut args = vec!["selfplay", "--variant", "makruk", "--quiet", "--out"];
        args.push(sp.to_str().unwrap());
        if flag != "--games" {
            args.extend(["--games", "2"]);
        }
        args.extend([flag, value]);
        refused(&vz(&args), key);
        assert!(!sp.exists(), "{flag} {value}: {} written", sp.display());
    }
    ok(&selfplay(&sp, "makruk"));
    let m = t.path().join("m");
    for (flag, value, key) in [
        ("--batch-size", "1000000000", "train.batch_size"),
        ("--window", "10000000000000", "train.window"),
        ("--channels", "1000000", "train.arch.channels"),
    ] {
        refused(
            &vz(&[
                "train",
                "--quiet",
                "--data",
                sp.to_str().unwrap(),
                "--out",
                m.to_str().unwrap(),
                flag,
                value,
            ]),
            key,
        );
        assert!(!m.exists(), "{flag} {value}: {} written", m.display());
    }
}

/// Item 4: a run directory whose config.toml came from a config that was refused later (as an
/// older version wrote it before aborting) takes the rerun with a sane value, since no game or
/// net was finished under it; one that holds a finished game still refuses another config.
#[test]
fn a_refused_config_never_locks_the_run_directory() {
    let t = tempfile::tempdir().unwrap();
    let cfg = t.path().join("run.toml");
    std::fs::write(&cfg, TINY).unwrap();
    let dir = t.path().join("run");
    std::fs::create_dir_all(dir.join("selfplay/gen-000")).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        TINY.replace("batch_size = 8", "batch_size = 1000000000"),
    )
    .unwrap();
    let o = pipeline(&cfg, &dir, &["--stage", "open"]);
    ok(&o);
    assert!(err(&o).contains("replaced"), "{}", err(&o));
    let written = std::fs::read_to_string(dir.join("config.toml")).unwrap();
    assert!(written.contains("batch_size = 8"), "{written}");
    // A finished game under this config: another config is refused, this one resumes.
    ok(&pipeline(
        &cfg,
        &dir,
        &["--stage", "selfplay", "--gen", "0"],
    ));
    refused(
        &pipeline(&cfg, &dir, &["--stage", "open", "--param", "train.steps=3"]),
        "another config",
    );
    ok(&pipeline(&cfg, &dir, &["--stage", "open"]));
}

/// Item 7: `report` on the output of `selfplay --out D` (also one written before self-play
/// wrote a variant.toml) and on a run's `selfplay/gen-NNN` (before the fix: "no variant.toml").
#[test]
fn report_takes_any_dataset_selfplay_or_a_run_writes() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("sp");
    ok(&selfplay(&d, "makruk"));
    ok(&vz(&["report", d.to_str().unwrap(), "--bootstrap", "0"]));
    assert!(d.join("report.html").exists());
    std::fs::remove_file(d.join("variant.toml")).unwrap();
    std::fs::remove_file(d.join("report.html")).unwrap();
    ok(&vz(&["report", d.to_str().unwrap(), "--bootstrap", "0"]));
    assert!(d.join("report.html").exists());
    // Rules no shipped variant has, and no variant.toml: refused, saying so.
    let custom = t.path().join("custom");
    ok(&vz(&[
        "selfplay",
        "--variant",
        "makruk",
        "--set",
        "stalemate=loss",
        "--games",
        "2",
        "--playouts",
        "8",
        "--quiet",
        "--out",
        custom.to_str().unwrap(),
    ]));
    ok(&vz(&[
        "report",
        custom.to_str().unwrap(),
        "--bootstrap",
        "0",
    ]));
    std::fs::remove_file(custom.join("variant.toml")).unwrap();
    refused(
        &vz(&["report", custom.to_str().unwrap(), "--bootstrap", "0"]),
        "no shipped variant",
    );
    // A run's generation.
    let cfg = t.path().join("run.toml");
    std::fs::write(&cfg, TINY).unwrap();
    let dir = t.path().join("run");
    ok(&pipeline(&cfg, &dir, &["--stage", "open"]));
    ok(&pipeline(
        &cfg,
        &dir,
        &["--stage", "selfplay", "--gen", "0"],
    ));
    let gen = dir.join("selfplay/gen-000");
    ok(&vz(&["report", gen.to_str().unwrap(), "--bootstrap", "0"]));
    assert!(gen.join("report.html").exists());
}

/// Item 8: `--param` of a key the base config leaves out (gen0, ladder.rungs) is taken (before
/// the fix: "no key"); an unknown key is still refused, naming it.
#[test]
fn params_take_every_key_of_the_schema_not_only_those_of_the_base_file() {
    let t = tempfile::tempdir().unwrap();
    let cfg = t.path().join("run.toml");
    std::fs::write(&cfg, TINY).unwrap();
    let dir = t.path().join("run");
    ok(&pipeline(
        &cfg,
        &dir,
        &[
            "--stage",
            "open",
            "--param",
            "gen0=material@8",
            "--param",
            "ladder.rungs=[\"material@4\", \"material@8\"]",
            "--param",
            "gen0_games=4",
            "--param",
            "ladder.playouts=8",
        ],
    ));
    let written: toml::Table =
        toml::from_str(&std::fs::read_to_string(dir.join("config.toml")).unwrap()).unwrap();
    assert_eq!(written["gen0"].as_str(), Some("material@8"));
    assert_eq!(written["gen0_games"].as_integer(), Some(4));
    assert_eq!(
        written["ladder"]["rungs"].as_array().map(|a| a.len()),
        Some(2),
        "{written:?}"
    );
    assert_eq!(written["ladder"]["playouts"].as_integer(), Some(8));
    let other = t.path().join("other");
    for (param, what) in [
        ("gen00=material@8", "no key `gen00`"),
        ("ladder.rungz=[]", "no key `rungz`"),
        ("mcts.c_puct=1", "no section `mcts`"),
        ("gen0_games=many", "gen0_games"),
        ("search=1", "search"),
    ] {
        refused(
            &pipeline(&cfg, &other, &["--stage", "open", "--param", param]),
            what,
        );
        assert!(!other.join("config.toml").exists(), "{param}");
    }
}

/// Item 8: a run's name is one path component; `../../x` would put the run outside `runs/`.
#[test]
fn a_run_name_that_leaves_runs_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("a/b");
    std::fs::create_dir_all(&work).unwrap();
    for name in ["../../x", "..", ".", "a/b", "", "x y"] {
        let cfg = work.join("run.toml");
        std::fs::write(
            &cfg,
            TINY.replace("name = \"tiny-c\"", &format!("name = \"{name}\"")),
        )
        .unwrap();
        let o = vz_in(&work, &["pipeline", "--quiet", "--config", "run.toml"]);
        refused(&o, "name");
        assert!(!work.join("runs").exists(), "{name}");
        assert!(!t.path().join("x").exists(), "{name}");
    }
}

/// Item 8: `train --init NET --blocks 2` refuses a shape other than the net's (before the fix the
/// flag was silently ignored); the net's own shape is taken.
#[test]
fn train_init_refuses_another_shape() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("sp");
    ok(&selfplay(&d, "makruk"));
    let m = t.path().join("m");
    let train = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "train",
            "--quiet",
            "--data",
            d.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--steps",
            "2",
            "--batch-size",
            "8",
        ];
        args.extend_from_slice(extra);
        vz(&args)
    };
    ok(&train(&m, &["--blocks", "1", "--channels", "8"]));
    let net = m.join("model.safetensors");
    let net = net.to_str().unwrap();
    let m2 = t.path().join("m2");
    refused(&train(&m2, &["--init", net, "--blocks", "2"]), "--blocks 2");
    refused(
        &train(&m2, &["--init", net, "--channels", "16"]),
        "--channels 16",
    );
    assert!(!m2.exists());
    ok(&train(&m2, &["--init", net, "--blocks", "1"]));
    ok(&train(&t.path().join("m3"), &["--init", net]));
}

/// Item 8: `match --config` takes a run config (its [search]), as its help says; a typo in the
/// run config is still refused.
#[test]
fn match_takes_a_run_config() {
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/runs/xiangqi-cpu.toml");
    let o = vz(&[
        "match",
        "--variant",
        "xiangqi",
        "material@2",
        "random",
        "--games",
        "2",
        "--quiet",
        "--config",
        run.to_str().unwrap(),
    ]);
    assert!(ok(&o).contains("score A"));
    let t = tempfile::tempdir().unwrap();
    let bad = t.path().join("bad.toml");
    std::fs::write(
        &bad,
        TINY.replace("generations = 1", "generations = 1\nmatch_gamez = 4"),
    )
    .unwrap();
    let o = vz(&[
        "match",
        "--variant",
        "makruk",
        "material@2",
        "random",
        "--games",
        "2",
        "--quiet",
        "--config",
        bad.to_str().unwrap(),
    ]);
    refused(&o, "match_gamez");
}

/// `ladder --config` takes a run config as `match --config` does (its [search] table), not only
/// a self-play config.
#[test]
fn ladder_takes_a_run_config() {
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/runs/makruk-zero.toml");
    let t = tempfile::tempdir().unwrap();
    let o = vz(&[
        "ladder",
        "--variant",
        "makruk",
        "--rungs",
        "random,material-raw@2",
        "--games",
        "2",
        "--quiet",
        "--dir",
        t.path().join("ladder").to_str().unwrap(),
        "--rung-dir",
        t.path().join("rungs").to_str().unwrap(),
        "--config",
        run.to_str().unwrap(),
        "material@2",
    ]);
    assert!(ok(&o).contains("material@2"), "{}", ok(&o));
}
