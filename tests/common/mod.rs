//! What every CLI test does: run the binary, read its output, and tell a refusal (exit 1, one
//! `error:` line naming what is wrong, no panic) from a success. One copy for every test file.
#![allow(dead_code)] // each test file uses its own part

use std::path::Path;
use std::process::{Command, Output};

/// The binary under test. It sees no shipped nets (`auto` is the material evaluator), so the
/// tests of the search keep the evaluator they were written for; tests/shipped_cli.rs points
/// `VARZERO_NETS` at the shipped nets.
pub fn varzero() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_varzero"));
    c.env(
        "VARZERO_NETS",
        "/nonexistent/varzero-tests-see-no-shipped-nets",
    );
    c
}

pub fn vz(args: &[&str]) -> Output {
    varzero().args(args).output().unwrap()
}

/// `vz` in another working directory.
pub fn vz_in(cwd: &Path, args: &[&str]) -> Output {
    varzero().current_dir(cwd).args(args).output().unwrap()
}

pub fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

pub fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// A refusal: exit 1 (not a panic's 101 or an abort's 134), one `error:` line naming `what`.
pub fn refused(o: &Output, what: &str) {
    let e = err(o);
    assert_eq!(o.status.code(), Some(1), "exit {:?}: {e}", o.status.code());
    assert!(
        e.contains("error:") && e.contains(what),
        "expected '{what}' in: {e}"
    );
    assert_eq!(
        e.lines().filter(|l| l.contains("error:")).count(),
        1,
        "one error line: {e}"
    );
    assert!(
        !e.contains("panicked") && !e.contains("memory allocation"),
        "{e}"
    );
}

/// `varzero pipeline --quiet --config CFG --dir DIR EXTRA...`.
pub fn pipeline(cfg: &Path, dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "pipeline",
        "--quiet",
        "--config",
        cfg.to_str().unwrap(),
        "--dir",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    vz(&args)
}

/// A success; its stdout.
pub fn ok(o: &Output) -> String {
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), err(o));
    out(o)
}

/// A tiny random net (1 block of 8 channels) for `variant`, saved with its sidecar as
/// `dir/NAME.safetensors`.
pub fn tiny_net(dir: &Path, name: &str, variant: &str) -> std::path::PathBuf {
    let v = varzero_rules::Variant::builtin(variant).unwrap();
    let net = varzero_eval_net::Net::new(
        &v,
        varzero_eval_net::Arch {
            blocks: 1,
            channels: 8,
            attacks: false,
            opponent_policy: false,
        },
        varzero_eval_net::tch::Device::Cpu,
    );
    let path = dir.join(format!("{name}.safetensors"));
    net.save(&path).unwrap();
    path
}
