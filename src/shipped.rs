//! Shipped nets: the best net of each published run (and its net 1), kept in the repository's
//! `nets/` folder so that every clone plays with them. Each net `NAME.safetensors` has the net
//! format's own metadata beside it (`NAME.json`: variant, rules hash, architecture) and its
//! card (`NAME.toml`: where it came from, what it cost, how strong it was measured, and the
//! search it was rated with). Players name one without a path: `net:shipped` is the variant's
//! own (the card named after the variant), `net:NAME` any card by name, and `auto` the
//! variant's shipped net where one fits its rules, else the `material` evaluator. A card of
//! other rules (another variant, or the variant changed by a file or `--set`) is refused in
//! one line. docs/nets.md lists the cards.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use varzero_rules::Variant;
use varzero_search::SearchConfig;

/// The name that stands for the variant's own shipped net.
pub const SHIPPED: &str = "shipped";

/// A shipped net's card (`nets/NAME.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Card {
    /// The variant it plays (a shipped variant's name).
    pub variant: String,
    /// The rules hash it was trained for (`varzero variant show` prints it), 16 hex digits.
    pub rules_hash: String,
    /// The run it came from: config, recipe and generation.
    pub recipe: String,
    /// The command that makes the run again from an empty directory.
    pub command: String,
    /// Generation of the run this net is.
    pub generation: u32,
    /// Self-play, teacher and training CPU time of the run up to this net (the run's
    /// `logs/cpu.json`), in hours.
    pub cpu_hours: f64,
    /// Its rating, with the search below.
    pub rating: Rating,
    /// The search it was rated with (a run config's `[search]` keys; the others default). An
    /// engine that starts with this net and no `--config` searches with it.
    #[serde(default)]
    pub search: SearchConfig,
}

/// A rating and its 95% interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rating {
    pub elo: f64,
    pub low: f64,
    pub high: f64,
    /// The player at 0 Elo.
    pub anchor: String,
    /// The player spec that was rated (playouts and search settings).
    pub player: String,
    /// Where the rating comes from (the ladder, its games per pairing).
    pub source: String,
}

/// A shipped net found for a variant: its file and card.
#[derive(Clone, Debug)]
pub struct ShippedNet {
    pub name: String,
    pub path: PathBuf,
    pub card: Card,
}

/// Where the shipped nets are: `$VARZERO_NETS`, else the `nets/` folder of the clone this
/// binary was built from, else `nets/` in the working directory. The last is for a binary
/// whose clone is gone: the cargo target directory lives in a cache shared by every clone
/// (scripts/env.sh), so the binary there may have been built by a clone since deleted (CI's).
pub fn nets_dir() -> PathBuf {
    pick_nets_dir(
        std::env::var_os("VARZERO_NETS"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("nets"),
    )
}

fn pick_nets_dir(env: Option<std::ffi::OsString>, built: PathBuf) -> PathBuf {
    match env.filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None if built.is_dir() => built,
        None => PathBuf::from("nets"),
    }
}

/// Whether a `net:` name is a shipped net's name rather than a file: no directory, no
/// extension.
pub fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Every card in `dir`, by name.
pub fn cards(dir: &Path) -> Result<Vec<(String, Card)>> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(out);
    };
    for e in entries {
        let path = e?.path();
        if path.extension().is_some_and(|x| x == "toml") {
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            out.push((name, read_card(&path)?));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// One card, parsed; an error names the file and the field.
pub fn read_card(path: &Path) -> Result<Card> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    toml::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}: {}",
            path.display(),
            e.message().lines().next().unwrap_or_default()
        )
    })
}

/// The shipped net `name` (or [`SHIPPED`]: the variant's own) for `v`, refused when its card is
/// for other rules.
pub fn find(name: &str, v: &Variant) -> Result<ShippedNet> {
    find_in(&nets_dir(), name, v)
}

/// [`find`] in `dir`.
pub fn find_in(dir: &Path, name: &str, v: &Variant) -> Result<ShippedNet> {
    let wanted = if name == SHIPPED {
        v.name.as_str()
    } else {
        name
    };
    let card_path = dir.join(format!("{wanted}.toml"));
    if !card_path.exists() {
        let names: Vec<String> = cards(dir)?.into_iter().map(|(n, _)| n).collect();
        if name == SHIPPED {
            bail!(
                "no shipped net for {} in {} (shipped: {})",
                v.name,
                dir.display(),
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            );
        }
        bail!(
            "no shipped net '{name}' in {} (shipped: {})",
            dir.display(),
            if names.is_empty() {
                "none".into()
            } else {
                names.join(", ")
            }
        );
    }
    let card = read_card(&card_path)?;
    if card.variant != v.name {
        bail!(
            "shipped net '{wanted}' plays {}, not {}",
            card.variant,
            v.name
        );
    }
    let hash = format!("{:016x}", v.rules_hash);
    if card.rules_hash != hash {
        bail!(
            "shipped net '{wanted}' was trained for {}'s rules {}, and these rules hash to {hash} (a variant file or --set changed them): it is refused",
            card.variant,
            card.rules_hash
        );
    }
    Ok(ShippedNet {
        name: wanted.to_string(),
        path: dir.join(format!("{wanted}.safetensors")),
        card,
    })
}

/// The variant's own shipped net where there is one and it fits `v`'s rules.
pub fn auto(v: &Variant) -> Option<ShippedNet> {
    let dir = nets_dir();
    dir.join(format!("{}.toml", v.name))
        .exists()
        .then(|| find_in(&dir, SHIPPED, v).ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(v: &Variant, hash: u64) -> String {
        format!(
            "variant = \"{}\"\nrules_hash = \"{hash:016x}\"\nrecipe = \"r\"\ncommand = \"c\"\ngeneration = 3\ncpu_hours = 1.5\n\
             [rating]\nelo = 100.0\nlow = 50.0\nhigh = 150.0\nanchor = \"fsf@nodes=1\"\nplayer = \"net:shipped@400\"\nsource = \"ladder\"\n\
             [search]\ntactics = 0.5\n",
            v.name
        )
    }

    #[test]
    fn the_nets_folder_falls_back_to_the_working_directory_when_the_clone_is_gone() {
        let t = tempfile::tempdir().unwrap();
        let built = t.path().join("nets");
        let gone = t.path().join("deleted-clone/nets");
        // $VARZERO_NETS wins; an empty one counts as unset.
        assert_eq!(
            pick_nets_dir(Some("/elsewhere".into()), built.clone()),
            PathBuf::from("/elsewhere")
        );
        assert_eq!(
            pick_nets_dir(Some("".into()), gone.clone()),
            PathBuf::from("nets")
        );
        assert_eq!(pick_nets_dir(None, gone), PathBuf::from("nets"));
        std::fs::create_dir(&built).unwrap();
        assert_eq!(pick_nets_dir(None, built.clone()), built);
    }

    #[test]
    fn a_card_fits_its_rules_only() {
        let t = tempfile::tempdir().unwrap();
        let mk = Variant::builtin("makruk").unwrap();
        let xq = Variant::builtin("xiangqi").unwrap();
        std::fs::write(t.path().join("makruk.toml"), card(&mk, mk.rules_hash)).unwrap();
        let s = find_in(t.path(), SHIPPED, &mk).unwrap();
        assert_eq!(s.path, t.path().join("makruk.safetensors"));
        assert_eq!(s.card.search.tactics, 0.5);
        assert_eq!(s.card.search.playouts, SearchConfig::default().playouts);
        let e = find_in(t.path(), "makruk", &xq).unwrap_err().to_string();
        assert_eq!(e, "shipped net 'makruk' plays makruk, not xiangqi");
        let e = find_in(t.path(), SHIPPED, &xq).unwrap_err().to_string();
        assert!(e.starts_with("no shipped net for xiangqi in "), "{e}");
        assert!(e.ends_with("(shipped: makruk)"), "{e}");
        std::fs::write(t.path().join("makruk.toml"), card(&mk, 7)).unwrap();
        let e = find_in(t.path(), SHIPPED, &mk).unwrap_err().to_string();
        assert!(
            e.contains("0000000000000007") && e.contains("refused"),
            "{e}"
        );
        // An unknown field is named with its file.
        std::fs::write(t.path().join("bad.toml"), "variant = 1\n").unwrap();
        let e = read_card(&t.path().join("bad.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad.toml"), "{e}");
    }

    #[test]
    fn names_are_not_paths() {
        assert!(is_name("makruk") && is_name("makruk-net1") && is_name(SHIPPED));
        assert!(!is_name("nets/makruk.safetensors") && !is_name("m.safetensors") && !is_name(""));
    }
}
