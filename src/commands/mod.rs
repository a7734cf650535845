//! One file per verb of the command line (as KataGo's `command/`): its arguments and its run
//! function. Commands do not call each other; what they share is the `varzero` library.

pub mod analyse;
pub mod analyze;
pub mod bench;
pub mod compact;
pub mod games;
pub mod hints;
pub mod ladder;
pub mod r#match;
pub mod nets;
pub mod perft;
pub mod pipeline;
pub mod play;
pub mod probe;
pub mod repair;
pub mod report;
pub mod selfplay;
pub mod study;
pub mod train;
pub mod uci;
pub mod variant;
