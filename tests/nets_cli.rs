//! Issue 31 at the command line: a net holding NaN is refused by every command that loads one
//! (one line, exit 1), the dataset writer refuses non-finite targets, and an external UCI engine in the middle of a `go` does not outlive a
//! match that gets SIGTERM or SIGINT.

mod common;
use common::{err, vz};

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use varzero_datasets::{write_shard, GameRecord, PositionRecord};

/// A refusal of one line in all (no note beside the error).
fn refused(o: &Output, what: &str) {
    common::refused(o, what);
    let e = err(o);
    assert!(e.starts_with("error:"), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
}

/// A tiny makruk net with one NaN weight, saved with its sidecar.
fn nan_net(dir: &Path) -> PathBuf {
    use varzero_eval_net::tch::Device;
    let path = common::tiny_net(dir, "nan", "makruk");
    let v = varzero_rules::Variant::builtin("makruk").unwrap();
    let net = varzero_eval_net::Net::load(&path, &v, Device::Cpu).unwrap();
    varzero_eval_net::tch::no_grad(|| {
        let w = &net.vs.variables()["block0.c2.weight"];
        let _ = w.view(-1).get(3).fill_(f64::NAN);
    });
    net.save(&path).unwrap();
    path
}

/// Item 5: a NaN net is refused by match, selfplay, uci and train --init, naming the tensor.
/// Before, all four accepted it (self-play wrote NaN root values into every position).
#[test]
fn a_net_with_nan_weights_is_refused_everywhere() {
    let t = tempfile::tempdir().unwrap();
    let net = nan_net(t.path());
    let n = net.to_str().unwrap();
    let what = "tensor 'block0.c2.weight' holds NaN";
    let out = t.path().join("out");
    let o = out.to_str().unwrap();
    let player = format!("net:{n}@4");
    refused(
        &vz(&[
            "match",
            "--variant",
            "makruk",
            &player,
            "material@4",
            "--games",
            "2",
            "--quiet",
            "--out",
            o,
        ]),
        what,
    );
    refused(
        &vz(&[
            "selfplay",
            "--variant",
            "makruk",
            "--net",
            n,
            "--games",
            "2",
            "--playouts",
            "4",
            "--quiet",
            "--out",
            o,
        ]),
        what,
    );
    assert!(!out.exists(), "nothing was written");
    refused(
        &vz(&[
            "uci",
            "--variant",
            "makruk",
            "--evaluator",
            &format!("net:{n}"),
        ]),
        what,
    );
    // train --init on a real (tiny) dataset.
    let data = t.path().join("data");
    let d = data.to_str().unwrap();
    let o2 = vz(&[
        "selfplay",
        "--variant",
        "makruk",
        "--games",
        "2",
        "--playouts",
        "4",
        "--threads",
        "1",
        "--quiet",
        "--out",
        d,
    ]);
    assert!(o2.status.success(), "{}", err(&o2));
    let models = t.path().join("models");
    refused(
        &vz(&[
            "train",
            "--data",
            d,
            "--out",
            models.to_str().unwrap(),
            "--init",
            n,
            "--steps",
            "1",
            "--quiet",
        ]),
        what,
    );
}

/// A fake UCI engine: it writes its pid to `pidfile` when it gets `go`, and then never answers
/// nor reads its input again (an engine in the middle of a long search).
const FAKE_ENGINE: &str = r#"
import os, sys, time
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "uci":
        print("id name stuck\noption name UCI_Variant type combo default makruk var makruk\nuciok", flush=True)
    elif words[0] == "isready":
        print("readyok", flush=True)
    elif words[0] == "go":
        tmp = sys.argv[1] + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(os.getpid()))
        os.rename(tmp, sys.argv[1])
        while True:
            time.sleep(1)
    elif words[0] == "quit":
        break
"#;

fn alive(pid: u32) -> bool {
    // A zombie is gone too: it only waits for its new parent to reap it.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|r| !r.trim_start().starts_with('Z'))
    })
}

/// Whether process `pid` ignores SIGINT (bit 1 of SigIgn in /proc/PID/status).
fn ignores_sigint(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("SigIgn:"))
                .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        })
        .is_some_and(|m| m & 2 != 0)
}

/// Item 8: SIGTERM or SIGINT to a match whose `uci:` engine is in the middle of a `go` leaves
/// no engine behind. Before, the engine lived on until its search ended (here: never). The
/// bounds below are generous liveness limits, not timings.
#[test]
fn an_engine_mid_go_does_not_outlive_a_terminated_match() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("no python3: skipped");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let script = t.path().join("stuck.py");
    std::fs::write(&script, FAKE_ENGINE).unwrap();
    for signal in ["TERM", "INT"] {
        let pidfile = t.path().join(format!("engine-{signal}.pid"));
        let spec = format!(
            "uci:python3 {} {}@movetime=600000,timeout=900000",
            script.display(),
            pidfile.display()
        );
        let out = t.path().join(format!("m-{signal}"));
        let mut child = common::varzero()
            .args([
                "match",
                "--variant",
                "makruk",
                &spec,
                "material@4",
                "--games",
                "2",
            ])
            .args(["--quiet", "--out", out.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        let pid: u32 = loop {
            if let Some(p) = std::fs::read_to_string(&pidfile)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                break p;
            }
            if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
                let _ = child.kill();
                panic!("the engine never got 'go'");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(alive(pid));
        if signal == "INT" && ignores_sigint(child.id()) {
            // Started in the background by a shell without job control: SIGINT cannot end it.
            eprintln!("SIGINT is ignored here: only the kill at the end is checked");
            let _ = child.kill();
        }
        let k = Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(k.success());
        let deadline = Instant::now() + Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                panic!("SIG{signal} did not end the match");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while alive(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let orphaned = alive(pid);
        if orphaned {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
        assert!(
            !orphaned,
            "SIG{signal}: the engine (pid {pid}) outlived the match"
        );
    }
}

fn record(game: u64, ply: u32) -> PositionRecord {
    PositionRecord {
        game_id: game,
        ply,
        variant: "makruk".into(),
        rules_hash: "00ff00ff00ff00ff".into(),
        fen: format!("fen {game} {ply}"),
        policy_moves: vec!["e3e4".into(), "d1b2".into()],
        policy_probs: vec![0.75, 0.25],
        result_wdl: [1.0, 0.0, 0.0],
        root_wdl: [0.5, 0.25, 0.25],
        visits: 200,
        full_search: true,
        evaluator: "material".into(),
    }
}

fn game_record(id: u64) -> GameRecord {
    GameRecord {
        game_id: id,
        variant: "makruk".into(),
        rules_hash: "00ff00ff00ff00ff".into(),
        result: "1-0".into(),
        termination: "checkmate".into(),
        plies: 3,
        seed: 42,
        evaluator: "material".into(),
        search: "{}".into(),
        start_fen: "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - - 0 1".into(),
        moves: "e3e4 e6e5 d3d4".into(),
    }
}

/// Item 5, the writer's side: nothing non-finite is ever written. A position whose policy,
/// result or root value holds NaN or an infinity is refused, naming its game and ply, and no
/// shard appears (before, self-play with a NaN net wrote NaN root values into every position).
#[test]
fn non_finite_targets_are_never_written() {
    type Spoil = fn(&mut PositionRecord);
    let cases: [(&str, Spoil); 3] = [
        ("root_wdl", |p| p.root_wdl = [f32::NAN; 3]),
        ("policy_probs", |p| p.policy_probs[1] = f32::INFINITY),
        ("result_wdl", |p| p.result_wdl[2] = f32::NEG_INFINITY),
    ];
    for (field, spoil) in cases {
        let dir = tempfile::tempdir().unwrap();
        let mut positions: Vec<_> = (0..3).map(|p| record(7, p)).collect();
        spoil(&mut positions[1]);
        let err = write_shard(dir.path(), 0, "t", &positions, &[game_record(7)])
            .expect_err("refused")
            .to_string();
        assert!(
            err.contains(&format!("game 7 ply 1: {field} is not finite")),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
        // Nothing was written, not even a temporary directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
    // The same positions, finite, are written.
    let dir = tempfile::tempdir().unwrap();
    let positions: Vec<_> = (0..3).map(|p| record(7, p)).collect();
    write_shard(dir.path(), 0, "t", &positions, &[game_record(7)]).unwrap();
}
