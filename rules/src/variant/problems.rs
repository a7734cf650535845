//! The problems found while compiling one variant file. Every part of the compiler pushes what
//! it finds here and goes on, so `varzero variant check FILE` reports all of a file's problems
//! at once instead of stopping at the first.

use crate::error::{Problem, VariantError};

/// The problems of one file, in the order they were found.
pub(super) struct Problems {
    file: String,
    list: Vec<Problem>,
}

impl Problems {
    pub(super) fn new(file: &str) -> Problems {
        Problems {
            file: file.into(),
            list: Vec::new(),
        }
    }

    /// Records a problem with `key` (a dotted path such as `pieces.rook.betza`; empty for the
    /// file as a whole).
    pub(super) fn push(&mut self, key: &str, reason: impl Into<String>) {
        self.list.push(Problem {
            key: key.into(),
            reason: reason.into(),
        });
    }

    pub(super) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Every problem found so far, as one error.
    pub(super) fn into_error(self) -> VariantError {
        VariantError {
            file: self.file,
            problems: self.list,
        }
    }

    /// `Ok` when nothing was found, else the error listing every problem.
    pub(super) fn finish(self) -> Result<(), VariantError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(self.into_error())
        }
    }
}
