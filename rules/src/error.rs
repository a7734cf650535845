//! Errors of the rules core: variant files, FENs and moves. Parsers get flat enums with one
//! variant per field, so a caller can tell exactly what was wrong.

use thiserror::Error;

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, Error)]
pub enum Error {
    #[error(transparent)]
    Variant(#[from] VariantError),
    #[error(transparent)]
    Fen(#[from] ParseFenError),
    #[error(transparent)]
    Move(#[from] ParseMoveError),
}

/// One problem in a variant file: the key it concerns and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub key: String,
    pub reason: String,
}

/// Every problem found in one variant file (reported all at once).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{}", self.lines().join("\n"))]
pub struct VariantError {
    pub file: String,
    pub problems: Vec<Problem>,
}

impl VariantError {
    pub fn single(
        file: impl Into<String>,
        key: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        VariantError {
            file: file.into(),
            problems: vec![Problem {
                key: key.into(),
                reason: reason.into(),
            }],
        }
    }
    /// One line per problem: `file: key: reason`.
    pub fn lines(&self) -> Vec<String> {
        self.problems
            .iter()
            .map(|p| {
                if p.key.is_empty() {
                    format!("{}: {}", self.file, p.reason)
                } else {
                    format!("{}: {}: {}", self.file, p.key, p.reason)
                }
            })
            .collect()
    }
}

/// A FEN that cannot be read, by field.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ParseFenError {
    #[error("FEN is empty")]
    Empty,
    #[error("FEN board field: {0}")]
    Board(String),
    #[error("FEN side-to-move field: expected 'w' or 'b', found '{0}'")]
    SideToMove(String),
    #[error("FEN first-move rights field: {0}")]
    Rights(String),
    #[error("FEN counting/en-passant field: {0}")]
    Counting(String),
    #[error("FEN check-count field: {0}")]
    Checks(String),
    #[error("FEN half-move clock field: '{0}' is not a number from 0 to 65535")]
    HalfmoveClock(String),
    #[error("FEN full-move number field: '{0}' is not a number from 0 to 1000000")]
    FullmoveNumber(String),
    #[error("FEN has too many fields: '{0}'")]
    TrailingFields(String),
    #[error("FEN position is not legal: {0}")]
    Illegal(String),
}

/// A move in UCI notation that cannot be read or is not legal here.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ParseMoveError {
    #[error("move '{0}': not UCI notation for this board")]
    Syntax(String),
    #[error("move '{0}': not a legal move in this position")]
    Illegal(String),
}

/// Where a TOML error is: `FILE:LINE` when the parser gives a span, else `FILE`. Every reader of
/// our TOML files (variant files, run configs, studies) reports errors this way.
pub fn toml_location(file: &str, text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(s) => format!(
            "{file}:{}",
            text[..s.start.min(text.len())].matches('\n').count() + 1
        ),
        None => file.to_string(),
    }
}
