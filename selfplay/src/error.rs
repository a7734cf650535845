//! What can go wrong in self-play and studies, by kind.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    /// A variant file or rule overrides of a study arm.
    #[error("{0}")]
    Variant(String),
    /// A study file that cannot be read.
    #[error("{0}")]
    Study(String),
    #[error(transparent)]
    Resolve(#[from] varzero_search::ResolveError),
    #[error(transparent)]
    Data(#[from] varzero_datasets::Error),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// A worker thread panicked (a bug): the games it held are lost, finished ones kept.
    #[error("self-play panicked")]
    Panicked,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
