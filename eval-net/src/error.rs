use std::path::Path;
use thiserror::Error;

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {reason}")]
    Meta { path: String, reason: String },
    #[error("{path}: this net does not fit: {diffs}")]
    Mismatch { path: String, diffs: String },
    /// A tensor of a net file that cannot be loaded: missing, of another shape than the
    /// sidecar's architecture makes, or holding NaN or infinities.
    #[error("{path}: tensor '{name}' {reason}")]
    Tensor {
        path: String,
        name: String,
        reason: String,
    },
    #[error("{path}: {source}")]
    Torch { path: String, source: tch::TchError },
    /// A device name that is not `cpu`, `cuda` or `cuda:N`, or CUDA where there is none.
    #[error("{0}")]
    Device(String),
}

impl Error {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.display().to_string(),
            source,
        }
    }
    pub fn torch(path: &Path, source: tch::TchError) -> Self {
        Error::Torch {
            path: path.display().to_string(),
            source,
        }
    }
}
