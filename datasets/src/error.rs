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
    /// Another writer holds the directory (`DirLock`).
    #[error(
        "{dir} is in use by {holder}: wait for it to finish or stop it (one writer per directory)"
    )]
    Locked { dir: String, holder: String },
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
    /// A variant file (`variant.toml` of a dataset directory) that the rules core rejects: its
    /// problems on one line (each names the file).
    #[error("{}", .0.lines().join("; "))]
    Variant(varzero_rules::VariantError),
    /// Piece values that cannot be fitted to a group's samples.
    #[error(transparent)]
    Fit(#[from] FitError),
    /// A CSV log (`table`) that cannot be read.
    #[error(transparent)]
    Table(#[from] crate::table::TableError),
}

/// Why piece values cannot be fitted (see `analysis::fit_piece_values`).
#[derive(Clone, Debug, PartialEq, Error)]
pub enum FitError {
    /// The variant has no non-royal piece to value.
    #[error("no non-royal piece")]
    NoPiece,
    /// Fewer positions than a fit needs.
    #[error("only {samples} positions sampled")]
    TooFewSamples { samples: usize },
    /// Newton's method diverged or met a singular system.
    #[error("the regression did not converge")]
    NotConverged,
    /// The unit piece's coefficient is not positive, so values in its units are undefined.
    #[error("the {letter} coefficient is {logit:.4} (no advantage measured): values undefined")]
    NoAdvantage { letter: char, logit: f64 },
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
