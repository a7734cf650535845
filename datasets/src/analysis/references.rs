//! Reference piece values to compare a fit with: a small TOML file per set, naming its source.
//!
//! ```toml
//! name = "Xiangqi consensus"
//! source = "where the numbers come from"
//! variant = "xiangqi"
//! [values]   # by FEN letter, in any unit: they are shown in the fit's unit
//! r = 9.0
//! p = 1.0
//! "p@across-river" = 2.0   # a piece counted apart inside a region where it moves differently
//! ```

use crate::error::{Error, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceSet {
    pub name: String,
    pub source: String,
    /// The variant the values are for (our name; a group of another variant is not compared).
    pub variant: String,
    /// Values by FEN letter (case-insensitive), or `letter@region` for a piece inside a region
    /// where it has extra moves (the fit's label for it).
    pub values: BTreeMap<String, f64>,
}

/// The sets shipped in `configs/piece-values/`, built in (the report compares with them
/// without being told where the repository is).
const SHIPPED: [(&str, &str); 3] = [
    (
        "configs/piece-values/xiangqi-consensus.toml",
        include_str!("../../../configs/piece-values/xiangqi-consensus.toml"),
    ),
    (
        "configs/piece-values/xiangqi-fairy-stockfish.toml",
        include_str!("../../../configs/piece-values/xiangqi-fairy-stockfish.toml"),
    ),
    (
        "configs/piece-values/makruk-fairy-stockfish.toml",
        include_str!("../../../configs/piece-values/makruk-fairy-stockfish.toml"),
    ),
];

impl ReferenceSet {
    /// The shipped sets.
    pub fn shipped() -> Vec<ReferenceSet> {
        SHIPPED
            .iter()
            .map(|(name, text)| Self::parse(text, name).expect("shipped sets are valid"))
            .collect()
    }

    /// Reads a set: [`Error::Manifest`] names the file and what is wrong.
    pub fn load(path: &Path) -> Result<ReferenceSet> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path.display(), e))?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses a set's text; `path` names it in errors.
    pub fn parse(text: &str, path: &str) -> Result<ReferenceSet> {
        let bad = |reason: String| Error::Manifest {
            path: path.to_string(),
            reason,
        };
        let set: ReferenceSet = toml::from_str(text).map_err(|e| bad(e.message().to_string()))?;
        for (k, v) in &set.values {
            let mut chars = k.chars();
            let letter_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
            let rest: String = chars.collect();
            let region_ok = rest.is_empty()
                || rest.strip_prefix('@').is_some_and(|r| {
                    !r.is_empty()
                        && r.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "-_+".contains(c))
                });
            if !letter_ok || !region_ok || !v.is_finite() || *v <= 0.0 {
                return Err(bad(format!(
                    "values.{k} = {v}: a key is one FEN letter (or letter@region), a value a \
                     positive number"
                )));
            }
        }
        Ok(set)
    }

    /// The value under a fit's label: a letter (any case), or `letter@region`.
    fn raw(&self, key: &str) -> Option<f64> {
        let split = |k: &str| {
            let mut c = k.chars();
            (
                c.next().map(|l| l.to_ascii_uppercase()),
                c.as_str().to_string(),
            )
        };
        let want = split(key);
        self.values
            .iter()
            .find(|(k, _)| split(k) == want)
            .map(|(_, v)| *v)
    }

    /// The value of the piece labelled `key` (a FEN letter, or `letter@region`) in units of
    /// `unit` (None when the set lacks either).
    pub fn value_in(&self, key: &str, unit: &str) -> Option<f64> {
        Some(self.raw(key)? / self.raw(unit)?)
    }

    /// Whether the set is for `variant` (our name).
    pub fn applies_to(&self, variant: &str) -> bool {
        varzero_rules::variant::canonical_name(&self.variant)
            == varzero_rules::variant::canonical_name(variant)
    }
}
