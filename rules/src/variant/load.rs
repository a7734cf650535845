//! Where a variant's TOML table comes from: the files built into the binary, a user's file, and
//! the `extends` chain that merges a file over its parent. The result is one table for
//! `Variant::compile`; nothing here looks inside the sections.

use crate::error::VariantError;
use std::path::Path;

/// The variant files shipped with varzero, compiled into the binary.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "makruk",
        include_str!("../../../configs/variants/makruk.toml"),
    ),
    (
        "makruk-sutras",
        include_str!("../../../configs/variants/makruk-sutras.toml"),
    ),
    (
        "ouk-chatrang",
        include_str!("../../../configs/variants/ouk-chatrang.toml"),
    ),
    ("ouk", include_str!("../../../configs/variants/ouk.toml")),
    (
        "kar-ouk",
        include_str!("../../../configs/variants/kar-ouk.toml"),
    ),
    (
        "ouk-khmer-hill",
        include_str!("../../../configs/variants/ouk-khmer-hill.toml"),
    ),
    (
        "xiangqi",
        include_str!("../../../configs/variants/xiangqi.toml"),
    ),
    (
        "elephant-chess",
        include_str!("../../../configs/variants/elephant-chess.toml"),
    ),
    (
        "ajax-xiangqi",
        include_str!("../../../configs/variants/ajax-xiangqi.toml"),
    ),
    (
        "oxeli",
        include_str!("../../../configs/variants/oxeli.toml"),
    ),
];

/// Names under which other programs know our variants (Fairy-Stockfish's `UCI_Variant`).
pub fn canonical_name(name: &str) -> &str {
    match name {
        "cambodian" => "ouk-chatrang",
        "karouk" => "kar-ouk",
        "ajaxxiangqi" => "ajax-xiangqi",
        "elephantchess" => "elephant-chess",
        other => other,
    }
}

/// Where a file's `extends` is looked up.
pub(super) enum Origin<'a> {
    Builtin,
    File(&'a Path),
}

/// The file's TOML table; a syntax error is reported as `FILE:LINE: message`.
pub(super) fn parse_table(text: &str, file: &str) -> Result<toml::Table, VariantError> {
    text.parse().map_err(|e: toml::de::Error| {
        VariantError::single(crate::toml_location(file, text, &e), "", e.message())
    })
}

pub(super) fn load_table(
    name: &str,
    origin: &Origin,
    depth: usize,
) -> Result<toml::Table, VariantError> {
    let err = |file: &str, reason: String| VariantError::single(file, "", reason);
    if depth > 8 {
        return Err(err(name, "`extends` chain is too long (a cycle?)".into()));
    }
    let (file, text) = match origin {
        Origin::Builtin => {
            let text = BUILTIN
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, t)| t.to_string())
                .ok_or_else(|| err(name, format!("no built-in variant '{name}'")))?;
            (format!("{name}.toml"), text)
        }
        Origin::File(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| err(&p.display().to_string(), format!("cannot read: {e}")))?;
            (p.display().to_string(), text)
        }
    };
    let mut table = parse_table(&text, &file)?;
    if let Some(parent) = table.remove("extends") {
        let Some(parent) = parent.as_str() else {
            return Err(VariantError::single(
                file,
                "extends",
                "must be a variant name",
            ));
        };
        let parent_origin = match origin {
            Origin::File(p) => {
                let sibling = p.with_file_name(format!("{parent}.toml"));
                if sibling.exists() && sibling != *p {
                    Some(sibling)
                } else {
                    None
                }
            }
            Origin::Builtin => None,
        };
        let mut base = match &parent_origin {
            Some(s) => load_table(parent, &Origin::File(s), depth + 1)?,
            None => load_table(canonical_name(parent), &Origin::Builtin, depth + 1)
                .map_err(|e| VariantError::single(&file, "extends", e.lines().join("; ")))?,
        };
        inherit(&mut base, table);
        table = base;
    }
    Ok(table)
}

/// A file that `extends` another takes its keys, except `fairy_stockfish`: a derived game has
/// other rules than the one Fairy-Stockfish knows by that name, unless the file says so itself
/// (so a match against a UCI engine never announces `ouk` as `makruk`).
pub(super) fn inherit(base: &mut toml::Table, child: toml::Table) {
    if !child.contains_key("fairy_stockfish") {
        base.remove("fairy_stockfish");
    }
    merge(base, child);
}

/// Deep merge: tables merge key by key, anything else is replaced.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}
