//! The application layer of `varzero`, as a library: run configurations (files and flags, one
//! validation path), nets as evaluators, rating players on the ladder, progress on the terminal, and the AlphaZero loop's
//! stages (self-play a generation, train a generation, rate a net), which the CLI's `pipeline`
//! command runs one by one and a cluster driver can run on other machines. The command line
//! itself is `src/main.rs` (parse and dispatch) and `src/commands/` (one file per verb).

pub mod config;
pub mod engine_games;
pub mod ladder;
pub mod nets;
pub mod pipeline;
pub mod progress;
pub mod report;
pub mod sizes;

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
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}
