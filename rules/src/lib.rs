//! The rules core of varzero. Variants are data: a TOML file per variant (`VariantConfig`)
//! compiles into a validated [`Variant`] whose pieces move by Betza strings and whose rule
//! options are enums. Nothing here checks a variant's name: a new piece or variant is a file,
//! not code.
//!
//! Layout, from file to game:
//! * `config`: variant files as written; `variant` (with `variant/`): the compiled
//!   [`Variant`] and the compiler, one file per concept (loading and `extends`, sections,
//!   regions, pieces, rules, the rules hash, the start position), reporting every problem of
//!   a file at once; `betza`: movement notation.
//! * `tables`: a variant's precomputed attack tables for one bitboard word (`bitboard`).
//! * The generic engine `Pos<B>`, over a `u64` or `u128` word: `engine` holds its state
//!   (board of `engine::Piece` codes, bitboards, undo stack) and make/unmake with incremental
//!   Zobrist keys, first-move rights and check counts; `movegen` attack detection, legal move
//!   generation and perft; `counting` the Makruk and Cambodian counting rules; `fen`
//!   Fairy-Stockfish-compatible FEN reading and writing.
//! * `position`: the public [`Position`], one type for every variant, which picks the word a
//!   board needs and dispatches to `Pos<u64>` or `Pos<u128>`; `outcome` decides how a game
//!   ends (mate, stalemate, check wins, repetition and chase, counting, material, move
//!   limit).
#![forbid(unsafe_code)]

pub mod betza;
pub mod bitboard;
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
pub mod variant_file;

pub use bitboard::Bitboard;
pub use error::{
    toml_location, Error, ParseFenError, ParseMoveError, Problem, Result, VariantError,
};
pub use geometry::{BoardSize, ByColor, Color, Square};
pub use moves::{Move, MoveList};
pub use outcome::{GameResult, Outcome, Termination};
pub use position::{Position, Word};
pub use variant::{PieceDef, Variant};
pub use variant_file::VariantConfig;
