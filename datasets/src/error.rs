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
