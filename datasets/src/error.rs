use thiserror::Error;

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Polars {
        path: String,
        source: polars::error::PolarsError,
    },
    /// The same game twice in what is analysed.
    #[error("duplicate games: {0}")]
    Duplicate(String),
    #[error("{path}: {reason}")]
    Manifest { path: String, reason: String },
    /// Two datasets (or a dataset and a writer) of different variants or rules.
    #[error("{first} holds {first_rules} but {second} holds {second_rules}: datasets of different rules are never mixed")]
    Mixed {
        first: String,
        first_rules: String,
        second: String,
        second_rules: String,
    },
    #[error("{path}: schema '{found}', expected '{expected}'")]
    Schema {
        path: String,
        found: String,
        expected: String,
    },
}

impl Error {
    pub fn io(path: impl std::fmt::Display, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_string(),
            source,
        }
    }
    pub fn polars(path: impl std::fmt::Display, source: polars::error::PolarsError) -> Self {
        Error::Polars {
            path: path.to_string(),
            source,
        }
    }
}
