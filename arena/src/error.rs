//! What can go wrong in the arena before or around a match (a player that fails during a game
//! is not an error of the match: it loses that game, see `PlayerError`).

use thiserror::Error;
use varzero_search::ResolveError;

#[derive(Debug, Error)]
pub enum Error {
    /// A player spec or an engine setting that cannot be read.
    #[error("{0}")]
    Spec(String),
    /// Openings that cannot be read or generated.
    #[error("{0}")]
    Openings(String),
    /// An evaluator a player names.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// Writing or reading the games table.
    #[error(transparent)]
    Data(#[from] varzero_datasets::Error),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// `--out` holds games between other players.
    #[error("{dir} holds games of another match ({a} vs {b}): choose another --out")]
    OtherMatch { dir: String, a: String, b: String },
    /// A game id twice in one directory: two writers of an older version wrote it at once.
    #[error("{dir} holds game {id} twice ({first} and {again}): two writers at once, from an older varzero; `varzero repair {dir}` keeps the first of each")]
    Duplicates {
        dir: String,
        id: u64,
        first: String,
        again: String,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
