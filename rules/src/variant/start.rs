//! The start position: the last check of a compiled variant. Its start FEN must be a legal
//! position of the variant, read by the engine itself.

use super::Variant;
use crate::error::VariantError;
use std::sync::Arc;

/// `variant` with its start FEN as positions write it, or the FEN's problem under `start_fen`.
/// The compiled start FEN is the one positions write (a file may leave out a field with a
/// default, such as Kar Ouk's check count); the config keeps the file's text, so overrides
/// re-derive it.
pub(super) fn settle(mut variant: Variant, file: &str) -> Result<Variant, VariantError> {
    match crate::Position::from_fen(&Arc::new(variant.clone()), &variant.start_fen) {
        Ok(p) => variant.start_fen = p.fen(),
        Err(e) => return Err(VariantError::single(file, "start_fen", e.to_string())),
    }
    Ok(variant)
}
