//! `--param KEY=VALUE`: set any key of a TOML-shaped config on the command line. The config goes
//! through its own type again afterwards, so a value of the wrong type is refused by the same
//! code that reads the file.

use anyhow::{bail, Result};
use serde::{de::DeserializeOwned, Serialize};

/// `cfg` with `key=value` settings applied. A dotted key (`train.arch.blocks`) names its table;
/// a bare key is looked up at the top level, then in each of `sections` in turn. The value is
/// read as TOML (a number, `true`, `"text"`) or else taken as a string.
pub fn apply_params<T: Serialize + DeserializeOwned>(
    cfg: &T,
    params: &[String],
    sections: &[&str],
) -> Result<T> {
    let mut table = toml::Table::try_from(cfg)?;
    for param in params {
        let Some((key, value)) = param.split_once('=') else {
            bail!("--param {param}: expected KEY=VALUE");
        };
        let key = key.trim();
        let path: Vec<&str> = if key.contains('.') {
            key.split('.').collect()
        } else if table.get(key).is_some_and(|v| !v.is_table()) {
            vec![key]
        } else {
            match sections.iter().find(|s| has(&table, &[s, key])) {
                Some(s) => vec![s, key],
                None => bail!(
                    "--param {param}: no key `{key}` in {} (known: {})",
                    where_(sections),
                    known(&table, sections)
                ),
            }
        };
        let (name, parents) = path.split_last().expect("a key has a name");
        let mut sec = &mut table;
        for (i, p) in parents.iter().enumerate() {
            match sec.get_mut(*p).and_then(|v| v.as_table_mut()) {
                Some(t) => sec = t,
                None => bail!("--param {param}: no section `{}`", parents[..=i].join(".")),
            }
        }
        if sec.get(*name).is_none_or(|v| v.is_table()) {
            let mut k: Vec<&str> = sec
                .iter()
                .filter(|(_, v)| !v.is_table())
                .map(|(k, _)| k.as_str())
                .collect();
            k.sort_unstable();
            bail!(
                "--param {param}: no key `{name}` in [{}] (known: {})",
                parents.join("."),
                k.join(", ")
            );
        }
        let value = value.trim();
        let parsed = format!("v = {value}")
            .parse::<toml::Table>()
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.to_string()));
        sec.insert(name.to_string(), parsed);
    }
    T::deserialize(toml::Value::Table(table))
        .map_err(|e| anyhow::anyhow!("--param: {}", e.message()))
}

fn has(table: &toml::Table, path: &[&str]) -> bool {
    match path {
        [] => false,
        [k] => table.get(*k).is_some_and(|v| !v.is_table()),
        [s, rest @ ..] => table
            .get(*s)
            .and_then(|v| v.as_table())
            .is_some_and(|t| has(t, rest)),
    }
}

fn where_(sections: &[&str]) -> String {
    let names: Vec<String> = sections.iter().map(|s| format!("[{s}]")).collect();
    names.join(" or ")
}

/// The sorted keys of these sections, for an error message.
fn known(table: &toml::Table, sections: &[&str]) -> String {
    let mut k: Vec<&str> = sections
        .iter()
        .filter_map(|s| table.get(*s).and_then(|t| t.as_table()))
        .flat_map(|t| {
            t.iter()
                .filter(|(_, v)| !v.is_table())
                .map(|(k, _)| k.as_str())
        })
        .collect();
    k.sort_unstable();
    k.join(", ")
}
