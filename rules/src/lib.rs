//! The rules core of varzero. Variants are data: a TOML file per variant (`VariantConfig`)
//! compiles into a validated [`Variant`] whose pieces move by Betza strings and whose rule
//! options are enums. One generic engine (`Pos<B>`, over a `u64` or `u128` bitboard word)
//! generates legal moves from precomputed tables, makes and unmakes moves with incremental
//! Zobrist keys, tracks first-move rights, counting and check counts, reads and writes
//! Fairy-Stockfish-compatible FENs, and decides how a game ends. Nothing here checks a
//! variant's name: a new piece or variant is a file, not code.

pub mod betza;
pub mod bitboard;
pub mod config;
mod counting;
pub mod engine;
pub mod error;
mod fen;
pub mod geometry;
mod movegen;
pub mod moves;
mod outcome;
mod position;
pub mod tables;
pub mod variant;

pub use bitboard::Bitboard;
pub use config::VariantConfig;
pub use error::{
    toml_location, Error, ParseFenError, ParseMoveError, Problem, Result, VariantError,
};
pub use geometry::{BoardSize, ByColor, Color, Square};
pub use moves::{Move, MoveList};
pub use outcome::{GameResult, Outcome, Termination};
pub use position::{Position, Word};
pub use variant::{PieceDef, Variant};
