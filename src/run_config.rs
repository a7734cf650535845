//! Run configurations as files and flags: TOML read with `FILE:LINE` errors, `--param
//! KEY=VALUE` over any key, the `[search]`/`[selfplay]` config of `varzero selfplay`, the
//! `[train]` table, and the variant a command plays (`--variant`, `--variant-file`, `--set`).
//! A file and a flag go through the same checks before anything is written.

use anyhow::{bail, Context, Result};
use clap::Args;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use varzero_rules::Variant;
use varzero_search::SearchConfig;
use varzero_selfplay::SelfplayConfig;
use varzero_trainer::TrainConfig;

/// Which variant: a shipped one by name, or a user's file.
#[derive(Args, Clone)]
pub struct VariantArg {
    /// A shipped variant (`varzero variant list`), or Fairy-Stockfish's name for it.
    #[arg(long, short = 'v', default_value = "makruk")]
    pub variant: String,
    /// A variant file (TOML); overrides --variant.
    #[arg(long)]
    pub variant_file: Option<PathBuf>,
    /// Rule overrides, e.g. `--set stalemate=loss` or `--set rules.face_off=none`.
    #[arg(long = "set")]
    pub sets: Vec<String>,
}

impl VariantArg {
    pub fn load(&self) -> Result<Arc<Variant>> {
        let v = match &self.variant_file {
            Some(p) => Variant::from_file(p)?,
            None => Variant::builtin(&self.variant)?,
        };
        Ok(if self.sets.is_empty() {
            v
        } else {
            v.with_overrides(&self.sets)?
        })
    }
}

/// How a command searches with our engine (`uci`, `analyse`): the evaluator, its device and
/// the search settings.
#[derive(Args)]
pub struct EngineArgs {
    /// The evaluator: `auto` (the variant's shipped net in nets/, else `material`),
    /// `net:shipped`, `net:NAME` (a shipped net), `net:FILE.safetensors`, `material` or
    /// `uniform`. Without `--config`, a shipped net searches as its card says (docs/nets.md).
    #[arg(long, default_value = "auto")]
    pub evaluator: String,
    /// Device of a `net:` evaluator: `cpu` or `cuda[:N]`.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Search settings (a run config's [search] table).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

impl EngineArgs {
    /// The evaluators by name (the evaluator checked against `v`: a net of other rules or an
    /// unknown name is refused here) and the search settings.
    pub fn load(
        &self,
        v: &Arc<Variant>,
    ) -> Result<(
        Arc<dyn varzero_search::EvaluatorResolver>,
        varzero_search::SearchConfig,
    )> {
        let mut search = load_run_config(&self.config)?.search;
        let resolver = crate::nets::evaluators(&self.device);
        if self.config.is_none() {
            if let Some(s) = self.shipped(v)? {
                search = s.card.search;
            }
        }
        if resolver
            .resolve(&self.evaluator, v)
            .map_err(anyhow::Error::msg)?
            .is_none()
        {
            anyhow::bail!(
                "unknown evaluator '{}' (known: {})",
                self.evaluator,
                resolver.known().join(", ")
            );
        }
        Ok((resolver, search))
    }

    /// The shipped net the evaluator names for `v`, if it names one (`auto` finds none where
    /// the variant has none).
    pub fn shipped(&self, v: &Arc<Variant>) -> Result<Option<crate::shipped::ShippedNet>> {
        let name = self
            .evaluator
            .strip_prefix("net:")
            .unwrap_or(&self.evaluator);
        let name = name.split('#').next().unwrap_or(name);
        if self.evaluator == "auto" {
            return Ok(crate::shipped::auto(v));
        }
        if self.evaluator.starts_with("net:") && crate::shipped::is_name(name) {
            return Ok(Some(crate::shipped::find(name, v)?));
        }
        Ok(None)
    }
}

/// The position of `--fen FEN`, or the variant's start position.
pub fn position(v: &Arc<Variant>, fen: &Option<String>) -> Result<varzero_rules::Position> {
    use varzero_rules::Position;
    match fen {
        Some(f) => Position::from_fen(v, f).with_context(|| format!("bad --fen '{f}'")),
        None => Ok(Position::start(v)),
    }
}

/// A TOML file parsed into `T`; an error names the file and line (`FILE:LINE: message`).
pub fn parse_toml<T: DeserializeOwned>(path: &std::path::Path, text: &str) -> Result<T> {
    toml::from_str(text).map_err(|e| {
        let at = varzero_rules::toml_location(&path.display().to_string(), text, &e);
        anyhow::anyhow!("{at}: {}", e.message())
    })
}

/// A run configuration file: `[search]` and `[selfplay]` tables (all keys optional).
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    #[serde(default)]
    pub search: SearchConfig,
    #[serde(default)]
    pub selfplay: SelfplayConfig,
}

impl RunConfig {
    /// Every out-of-range setting, named (`search.playouts: at least 1 (got 0)`): the file and
    /// the flags are checked together, before anything is written.
    /// The sizes are those of self-play of `games` games of `v` (with a net of `arch`, if one
    /// plays), checked against the machine (`crate::sizes`).
    pub fn check(
        &self,
        v: &Arc<Variant>,
        games: u64,
        arch: Option<varzero_eval_net::Arch>,
    ) -> Result<()> {
        let mut p = varzero_settings::Problems::default();
        self.search.check("search", &mut p);
        self.selfplay.check("selfplay", &mut p);
        crate::sizes::check_threads("selfplay.threads", self.selfplay.threads, &mut p);
        let mut b = crate::sizes::Budget::default();
        let enc = varzero_eval_net::Encoding::new(v).with_attacks(arch.is_some_and(|a| a.attacks));
        crate::sizes::selfplay(
            &enc,
            arch,
            &self.search,
            &self.selfplay,
            crate::sizes::playouts_of(&self.search),
            ("--games", games),
            "selfplay",
            &mut b,
        );
        let table = toml::Table::try_from(self).unwrap_or_default();
        let value_of = |k: &str| {
            if k == "--games" {
                games.to_string()
            } else {
                crate::sizes::value_in(&table, k)
            }
        };
        b.check(
            "self-play",
            crate::sizes::physical_memory(),
            &value_of,
            &mut p,
        );
        if !p.is_empty() {
            bail!("{p}");
        }
        Ok(())
    }
}

/// `cfg` with `key=value` settings applied; a bare key is looked up in `[search]`, then in
/// `[selfplay]`.
pub fn apply_run_params(cfg: &RunConfig, params: &[String]) -> Result<RunConfig> {
    apply_params(cfg, params, &["search", "selfplay"])
}

pub fn load_run_config(path: &Option<PathBuf>) -> Result<RunConfig> {
    match path {
        None => Ok(RunConfig::default()),
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            parse_toml(p, &text)
        }
    }
}

/// The `[search]` table of a config file: a run config (`varzero pipeline`, checked whole, so a
/// typo anywhere is still refused) or a self-play config (`[search]` and `[selfplay]`).
pub fn search_config(path: &Option<PathBuf>) -> Result<SearchConfig> {
    let Some(p) = path else {
        return Ok(SearchConfig::default());
    };
    let text =
        std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
    let table: toml::Table = parse_toml(p, &text)?;
    let search = if table.contains_key("generations") {
        parse_toml::<crate::pipeline::PipelineConfig>(p, &text)?.search
    } else {
        parse_toml::<RunConfig>(p, &text)?.search
    };
    let mut problems = varzero_settings::Problems::default();
    search.check("search", &mut problems);
    if !problems.is_empty() {
        bail!("{}: {problems}", p.display());
    }
    Ok(search)
}

pub fn train_config(path: &Option<PathBuf>) -> Result<TrainConfig> {
    #[derive(serde::Deserialize)]
    struct File {
        #[serde(default)]
        train: TrainConfig,
    }
    Ok(match path {
        None => TrainConfig::default(),
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            let t: toml::Table = parse_toml(p, &text)?;
            let only =
                toml::Table::from_iter(t.get("train").map(|v| ("train".to_string(), v.clone())));
            only.try_into::<File>()
                .map_err(|e| anyhow::anyhow!("{}: [train]: {}", p.display(), e.message()))?
                .train
        }
    })
}

/// `cfg` with `key=value` settings applied. A dotted key (`train.arch.blocks`) names its table;
/// a bare key is looked up at the top level, then in each of `sections` in turn. The value is
/// read as TOML (a number, `true`, `"text"`) or else taken as a string. Keys are checked
/// against the config's type, not against the keys `cfg` happens to write: an optional key
/// the base file leaves out (`gen0`, `ladder.rungs`) can be set, and an unknown one is refused
/// naming it.
pub fn apply_params<T: Serialize + DeserializeOwned>(
    cfg: &T,
    params: &[String],
    sections: &[&str],
) -> Result<T> {
    let mut table = toml::Table::try_from(cfg)?;
    for param in params {
        let Some((key, parsed)) = varzero_settings::assignment(param) else {
            bail!("--param {param}: expected KEY=VALUE");
        };
        let path: Vec<&str> = if key.contains('.') {
            key.split('.').collect()
        } else if table.get(key).is_some_and(|v| !v.is_table()) {
            vec![key]
        } else if let Some(s) = sections.iter().find(|s| has(&table, &[s, key])) {
            vec![s, key]
        } else {
            // Not written by `cfg` (an optional key left out): the first place the type takes it.
            let candidates =
                std::iter::once(vec![key]).chain(sections.iter().map(|s| vec![*s, key]));
            let mut found = None;
            for c in candidates {
                // Taken, or refused for its value rather than its name.
                let fits = set(&table, &c, parsed.clone()).is_some_and(|t| {
                    T::deserialize(toml::Value::Table(t))
                        .map_or_else(|e| !e.message().starts_with("unknown field"), |_| true)
                });
                if fits {
                    found = Some(c);
                    break;
                }
            }
            match found {
                Some(c) => c,
                None => bail!(
                    "--param {param}: no key `{key}` at the top level or in {} (known: {})",
                    where_(sections),
                    known(&table, sections)
                ),
            }
        };
        let (name, parents) = path.split_last().expect("a key has a name");
        if let Some((i, _)) = parents
            .iter()
            .enumerate()
            .find(|(i, _)| lookup(&table, &parents[..=*i]).is_some_and(|v| !v.is_table()))
        {
            bail!(
                "--param {param}: `{}` is not a section",
                parents[..=i].join(".")
            );
        }
        if lookup(&table, &path).is_some_and(|v| v.is_table()) {
            bail!("--param {param}: `{key}` is a section, not a key");
        }
        let next = set(&table, &path, parsed).expect("no parent is a value");
        if let Err(e) = T::deserialize(toml::Value::Table(next.clone())) {
            let missing = (1..=parents.len()).find(|i| lookup(&table, &parents[..*i]).is_none());
            if e.message().starts_with("unknown field") {
                match missing {
                    Some(i) => bail!("--param {param}: no section `{}`", parents[..i].join(".")),
                    None if e.message().contains("expected one of") => {
                        // The type's own list: optional keys the base leaves out included.
                        let (_, list) =
                            e.message().split_once("expected one of ").expect("checked");
                        bail!(
                            "--param {param}: no key `{name}` in [{}] (known: {})",
                            parents.join("."),
                            list.replace('`', "")
                        );
                    }
                    None => {
                        let sec = if parents.is_empty() {
                            Some(&table)
                        } else {
                            lookup(&table, parents).and_then(|v| v.as_table())
                        };
                        let mut k: Vec<&str> = sec
                            .into_iter()
                            .flat_map(|t| t.iter())
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
                }
            }
            bail!("--param {param}: {}", e.message());
        }
        table = next;
    }
    T::deserialize(toml::Value::Table(table))
        .map_err(|e| anyhow::anyhow!("--param: {}", e.message()))
}

/// The value at a dotted `path` of `table`.
fn lookup<'a>(table: &'a toml::Table, path: &[&str]) -> Option<&'a toml::Value> {
    let (first, rest) = path.split_first()?;
    let v = table.get(*first)?;
    if rest.is_empty() {
        Some(v)
    } else {
        lookup(v.as_table()?, rest)
    }
}

/// `table` with `value` at `path`, the tables on the way made when missing; None when a value
/// (not a table) is on the way.
fn set(table: &toml::Table, path: &[&str], value: toml::Value) -> Option<toml::Table> {
    let mut out = table.clone();
    let mut sec = &mut out;
    let (name, parents) = path.split_last()?;
    for p in parents {
        sec = sec
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()?;
    }
    sec.insert(name.to_string(), value);
    Some(out)
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
    k.dedup();
    k.join(", ")
}

/// The clock of `--tc` (cutechess's `tc=` notation) or `--st` (seconds a move), if either.
pub fn time_control(
    tc: &Option<String>,
    st: &Option<String>,
) -> Result<Option<varzero_arena::TimeControl>> {
    Ok(match (tc, st) {
        (Some(t), _) => {
            varzero_arena::TimeControl::parse(t).map_err(|e| anyhow::anyhow!("--tc: {e}"))?
        }
        (None, Some(t)) => varzero_arena::TimeControl::parse(&format!("st={t}"))
            .map_err(|e| anyhow::anyhow!("--st: {e}"))?,
        (None, None) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(list: &[&str]) -> Result<RunConfig> {
        let v: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        apply_run_params(&RunConfig::default(), &v)
    }

    #[test]
    fn params_set_search_and_selfplay_keys() {
        let c = params(&[
            "c_puct=2.5",
            "search.tree_reuse=false",
            "noise=false",
            "selfplay.seed=9",
        ])
        .unwrap();
        assert_eq!(c.search.c_puct, 2.5);
        assert!(!c.search.tree_reuse);
        assert!(!c.selfplay.noise);
        assert_eq!(c.selfplay.seed, 9);
        // Everything else keeps its default.
        assert_eq!(c.search.playouts, SearchConfig::default().playouts);
    }

    #[test]
    fn bad_params_name_the_problem() {
        let e = params(&["c_pucct=2"]).unwrap_err().to_string();
        assert!(
            e.contains("no key `c_pucct`") && e.contains("c_puct"),
            "{e}"
        );
        let e = params(&["playouts=many"]).unwrap_err().to_string();
        assert!(e.contains("playouts") || e.contains("invalid"), "{e}");
        let e = params(&["c_puct"]).unwrap_err().to_string();
        assert!(e.contains("KEY=VALUE"), "{e}");
        let e = params(&["mcts.c_puct=1"]).unwrap_err().to_string();
        assert!(e.contains("no section `mcts`"), "{e}");
    }
}
