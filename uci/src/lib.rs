//! Our engine as a UCI engine with Fairy-Stockfish's conventions (`protocol`): the protocol on
//! one side, the search core's `Searcher` on the other. What a GUI can rely on is in
//! docs/uci.md.
#![forbid(unsafe_code)]

pub mod protocol;

pub use protocol::{
    hash_cap_mb, info_line, info_lines, Output, UciEngine, DEFAULT_HASH_MB, MATE_TIME, MAX_MULTIPV,
};
