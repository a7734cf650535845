//! The application layer of `varzero`, as a library: run configurations (files and flags, one
//! validation path), nets as evaluators and players, progress on the terminal, the run
//! directory's layout and records, CPU accounting, and the AlphaZero loop's
//! stages (self-play a generation, train a generation, rate a net), which the CLI's `pipeline`
//! command runs one by one and a cluster driver can run on other machines. The command line
//! itself is `src/main.rs` (parse and dispatch) and `src/commands/` (one file per verb).
// The one exception, allowed where it is: getrusage in `usage`.
#![deny(unsafe_code)]

pub mod engine_games;
pub mod nets;
pub mod pipeline;
pub mod progress;
pub mod report;
pub mod run_config;
pub mod run_dir;
pub mod shipped;
pub mod sizes;
#[allow(unsafe_code)] // getrusage
pub mod usage;

/// The error and its causes on one line, leaving out a cause the message above already ends
/// with (our error types print their source themselves: "path: No such file ...").
pub fn one_line(e: &anyhow::Error) -> String {
    let mut msg = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !msg.ends_with(&c) {
            msg = format!("{msg}: {c}");
        }
    }
    msg
}

/// Writes a file whole or not at all: a temporary file beside it, then a rename.
pub fn write_atomic(path: &std::path::Path, bytes: impl AsRef<[u8]>) -> anyhow::Result<()> {
    use anyhow::Context;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    // A failed write (a full disk) leaves no temporary behind.
    let done = std::fs::write(&tmp, bytes)
        .with_context(|| format!("cannot write {}", tmp.display()))
        .and_then(|()| {
            std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
        });
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// Copies a file whole or not at all (a temporary beside the target, then a rename).
pub fn copy_atomic(from: &std::path::Path, to: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context;
    let name = to
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = to.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let done = std::fs::copy(from, &tmp)
        .with_context(|| format!("cannot copy {}", from.display()))
        .and_then(|_| {
            std::fs::rename(&tmp, to).with_context(|| format!("cannot write {}", to.display()))
        });
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// Whether a file name is one of our temporaries (`.NAME.PID.tmp`, `NAME.EXT.tmp`,
/// `NAME.tmp.EXT`): what a write killed or failed before its rename left.
pub fn is_temporary(name: &str) -> bool {
    name.ends_with(".tmp") || name.contains(".tmp.")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_failed_atomic_write_leaves_no_temporary() {
        let t = tempfile::tempdir().unwrap();
        // The target is a directory that is not empty, so the rename fails after the
        // temporary was written (as a full disk fails the write itself).
        let target = t.path().join("stages.csv");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("f"), "").unwrap();
        assert!(super::write_atomic(&target, "a,b\n").is_err());
        let names: Vec<String> = std::fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        assert_eq!(names, ["stages.csv"]);
        assert!(super::is_temporary(".stages.csv.123.tmp"));
        assert!(super::is_temporary("checkpoint.tmp.safetensors"));
        assert!(!super::is_temporary(".lock") && !super::is_temporary("gen-001.json"));
    }
}
