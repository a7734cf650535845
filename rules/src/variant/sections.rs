//! The first step of compiling a variant file: its table cut into sections (`pieces`, `rules`
//! and the top level with `board`, `regions` and `start_fen`), each deserialized on its own so
//! that one bad section does not hide the problems of the others, and the board size checked.

use super::problems::Problems;
use crate::geometry::{BoardSize, MAX_FILES, MAX_RANKS};
use crate::variant_file::{PieceConfig, RulesConfig, VariantConfig};

/// The sections of one file.
pub(super) struct Sections {
    /// The top level (everything but `pieces` and `rules`; its `pieces` is empty and its
    /// `rules` the default); `None` when it does not deserialize.
    pub(super) top: Option<VariantConfig>,
    /// The `pieces` table as written, kept for the merged configuration.
    pub(super) pieces_raw: toml::Table,
    /// The pieces that deserialize, in file order.
    pub(super) pieces: Vec<(String, PieceConfig)>,
    /// The `rules` section (the defaults when missing or bad).
    pub(super) rules: RulesConfig,
}

pub(super) fn split(mut top: toml::Table, problems: &mut Problems) -> Sections {
    let pieces_raw = match top.remove("pieces") {
        Some(toml::Value::Table(t)) => t,
        Some(_) => {
            problems.push("pieces", "must be a table of pieces");
            toml::Table::new()
        }
        None => {
            problems.push("pieces", "missing");
            toml::Table::new()
        }
    };
    let rules_raw = top.remove("rules");
    top.insert("pieces".into(), toml::Value::Table(toml::Table::new()));
    let top: Option<VariantConfig> = match top.try_into::<VariantConfig>() {
        Ok(c) => Some(c),
        Err(e) => {
            problems.push("", e.message().trim());
            None
        }
    };
    let rules: RulesConfig = match rules_raw.map(|r| r.try_into::<RulesConfig>()) {
        None => RulesConfig::default(),
        Some(Ok(r)) => r,
        Some(Err(e)) => {
            problems.push("rules", e.message().trim());
            RulesConfig::default()
        }
    };
    let mut pieces: Vec<(String, PieceConfig)> = Vec::new();
    for (name, v) in &pieces_raw {
        match v.clone().try_into::<PieceConfig>() {
            Ok(pc) => pieces.push((name.clone(), pc)),
            Err(e) => problems.push(&format!("pieces.{name}"), e.message().trim()),
        }
    }
    Sections {
        top,
        pieces_raw,
        pieces,
        rules,
    }
}

/// The board's size, or `None` (with the problems recorded) when it has no squares or more
/// than the engine supports: nothing else can be checked on such a board.
pub(super) fn board_size(top: &VariantConfig, problems: &mut Problems) -> Option<BoardSize> {
    let size = BoardSize {
        files: top.board.files,
        ranks: top.board.ranks,
    };
    let files_ok = (1..=MAX_FILES).contains(&size.files);
    let ranks_ok = (1..=MAX_RANKS).contains(&size.ranks);
    if !files_ok {
        problems.push(
            "board.files",
            format!("{} files: must be 1 to {MAX_FILES}", size.files),
        );
    }
    if !ranks_ok {
        problems.push(
            "board.ranks",
            format!("{} ranks: must be 1 to {MAX_RANKS}", size.ranks),
        );
    }
    (files_ok && ranks_ok).then_some(size)
}
