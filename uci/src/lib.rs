//! Our engine as a UCI engine with Fairy-Stockfish's conventions (`engine`): the protocol on
//! one side, the search core's `Searcher` on the other. What a GUI can rely on is in
//! docs/uci.md.

pub mod engine;

pub use engine::{hash_cap_mb, info_line, Output, UciEngine, DEFAULT_HASH_MB, MATE_TIME};
