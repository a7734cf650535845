//! Every dataset directory states what it holds: `dataset.json` names the variant and the hash
//! of its rules. The writer claims a directory before its first shard and is refused when the
//! directory holds other rules; readers that combine directories (training, resume) refuse to
//! mix them. A directory written before manifests existed is read from its first game.

use crate::error::{Error, Result};
use crate::shard::{list_shards, read_games};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

/// The manifest's file name inside a dataset directory.
pub const MANIFEST: &str = "dataset.json";

/// What a dataset holds: one variant under one set of rules.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetRules {
    pub variant: String,
    /// `Variant::rules_hash`, as 16 hex digits.
    pub rules_hash: String,
}

impl DatasetRules {
    pub fn new(variant: &str, rules_hash: u64) -> DatasetRules {
        DatasetRules {
            variant: variant.to_string(),
            rules_hash: format!("{rules_hash:016x}"),
        }
    }
}

impl std::fmt::Display for DatasetRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (rules {})", self.variant, self.rules_hash)
    }
}

/// The rules of `dir`: its manifest, or (a directory from before manifests) its first game;
/// None for a directory without either.
pub fn read_rules(dir: &Path) -> Result<Option<DatasetRules>> {
    let path = dir.join(MANIFEST);
    match fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| Error::Manifest {
                path: path.display().to_string(),
                reason: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let (shards, _) = list_shards(dir)?;
            for s in &shards {
                if let Some(g) = read_games(&s.path)?.first() {
                    return Ok(Some(DatasetRules {
                        variant: g.variant.clone(),
                        rules_hash: g.rules_hash.clone(),
                    }));
                }
            }
            Ok(None)
        }
        Err(e) => Err(Error::io(path.display(), e)),
    }
}

/// Makes `dir` a dataset of `rules` for a writer: refused when it holds other rules. Writes the
/// manifest (by rename) when missing, and removes temporary shard directories that an
/// interrupted writer left (`.tmp-*`: never complete, never read).
pub fn claim(dir: &Path, rules: &DatasetRules) -> Result<()> {
    claim_shared(dir, rules)?;
    remove_temporaries(dir)
}

/// [`claim`] for a directory other writers may be using at the same time (self-play ranges
/// played by several processes): their temporary shards are left where they are.
pub fn claim_shared(dir: &Path, rules: &DatasetRules) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    match read_rules(dir)? {
        Some(have) if have != *rules => {
            return Err(Error::Mixed {
                first: dir.display().to_string(),
                first_rules: have.to_string(),
                second: "this run".into(),
                second_rules: rules.to_string(),
            })
        }
        _ => {}
    }
    let path = dir.join(MANIFEST);
    if !path.exists() {
        // One temporary per writer: two writers claiming at once each rename a whole file.
        let tmp = dir.join(format!(".{MANIFEST}.{}.tmp", std::process::id()));
        let text = serde_json::to_string_pretty(rules).expect("a manifest serialises");
        fs::write(&tmp, text + "\n").map_err(|e| Error::io(tmp.display(), e))?;
        fs::rename(&tmp, &path).map_err(|e| Error::io(path.display(), e))?;
    }
    Ok(())
}

/// Removes the `.tmp-*` shard directories and `.*.tmp` files of `dir` (what a crash or a full
/// disk left).
pub fn remove_temporaries(dir: &Path) -> Result<()> {
    let entries = fs::read_dir(dir).map_err(|e| Error::io(dir.display(), e))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let p = entry.path();
        if name.starts_with(".tmp-") && p.is_dir() {
            fs::remove_dir_all(&p).map_err(|e| Error::io(p.display(), e))?;
        } else if name.starts_with('.') && name.ends_with(".tmp") && p.is_file() {
            fs::remove_file(&p).map_err(|e| Error::io(p.display(), e))?;
        }
    }
    Ok(())
}

/// The one set of rules that all of `dirs` hold (directories without data are left out);
/// refused when two differ, naming both.
pub fn common_rules(dirs: &[PathBuf]) -> Result<Option<DatasetRules>> {
    let mut seen: Option<(&PathBuf, DatasetRules)> = None;
    for d in dirs {
        let Some(r) = read_rules(d)? else { continue };
        match &seen {
            Some((first, have)) if *have != r => {
                return Err(Error::Mixed {
                    first: first.display().to_string(),
                    first_rules: have.to_string(),
                    second: d.display().to_string(),
                    second_rules: r.to_string(),
                })
            }
            Some(_) => {}
            None => seen = Some((d, r)),
        }
    }
    Ok(seen.map(|(_, r)| r))
}

/// Writes `dir/variant.toml` (by rename), the effective definition of the variant the games
/// were played under, so an analysis can replay them (its rules hash identifies it).
pub fn write_variant_file(dir: &Path, v: &varzero_rules::Variant) -> Result<()> {
    let p = dir.join("variant.toml");
    let text = toml::to_string(&v.config).map_err(|e| Error::Manifest {
        path: p.display().to_string(),
        reason: e.to_string(),
    })?;
    let tmp = dir.join(".variant.toml.tmp");
    fs::write(
        &tmp,
        format!(
            "# The variant these games were played under (rules hash {:016x}).\n{text}",
            v.rules_hash
        ),
    )
    .map_err(|e| Error::io(tmp.display(), e))?;
    fs::rename(&tmp, &p).map_err(|e| Error::io(p.display(), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_refuses_other_rules_and_common_rules_refuses_a_mix() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        let makruk = DatasetRules::new("makruk", 1);
        claim(&a, &makruk).unwrap();
        claim(&a, &makruk).unwrap();
        fs::create_dir(a.join(".tmp-00000001-x")).unwrap();
        claim(&a, &makruk).unwrap();
        assert!(!a.join(".tmp-00000001-x").exists(), "temporaries removed");
        let e = claim(&a, &DatasetRules::new("makruk", 2)).unwrap_err();
        assert!(
            e.to_string().contains("makruk (rules 0000000000000002)"),
            "{e}"
        );
        claim(&b, &DatasetRules::new("xiangqi", 1)).unwrap();
        let e = common_rules(&[a.clone(), b.clone()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("xiangqi") && e.contains("makruk"), "{e}");
        assert_eq!(common_rules(&[a.clone(), a]).unwrap(), Some(makruk));
        assert_eq!(common_rules(&[t.path().join("none")]).unwrap(), None);
    }
}
