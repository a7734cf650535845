//! The trainer's error type and its `Result`.

use std::path::Path;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    #[error(transparent)]
    Net(#[from] varzero_eval_net::Error),
    #[error(transparent)]
    Data(#[from] varzero_datasets::Error),
    /// Settings out of range, each named (`train.lr: a positive number (got NaN)`).
    #[error("{0}")]
    Config(String),
    /// The loss or the weights stopped being finite; nothing was written for that step.
    #[error("step {step}: {what} is not finite (NaN or infinite); no net or checkpoint was written for it (try a lower lr)")]
    NonFinite { step: u64, what: &'static str },
    #[error("{0}")]
    Other(String),
}

pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn other(e: impl std::fmt::Display) -> Error {
    Error::Other(e.to_string())
}

/// An error about a file: its path, then the cause.
pub(crate) fn at(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::Other(format!("{}: {e}", path.display()))
}
