//! Self-play: the generator that turns compute into training data (worker threads each advance
//! many games at once through the search core's batched round, and finished games become
//! Parquet shards), and rule-change studies (self-play under several rule sets, analysed side
//! by side). The search itself lives in `varzero-search`, matches and players in
//! `varzero-arena`, the UCI engine in `varzero-uci`.
#![forbid(unsafe_code)]

pub mod config;
mod error;
pub mod generator;
pub mod study;

pub use config::SelfplayConfig;
pub use error::{Error, Result};
pub use generator::{play_game, FinishedGame, Generator, Stats, Summary};
