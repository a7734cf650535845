//! The application layer of `varzero`, as a library: run configurations (files and flags, one
//! validation path), nets as evaluators, rating players on the ladder, progress on the terminal, and the AlphaZero loop's
//! stages (self-play a generation, train a generation, rate a net), which the CLI's `pipeline`
//! command runs one by one and a cluster driver can run on other machines. The command line
//! itself is `src/main.rs` (parse and dispatch) and `src/commands/` (one file per verb).

pub mod config;
pub mod ladder;
pub mod nets;
pub mod pipeline;
pub mod progress;

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
