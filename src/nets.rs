//! Evaluators by name for players and the pipeline: `net:FILE` loads a trained net (checked
//! against the variant), `net:shipped` / `net:NAME` / `auto` one of the repository's shipped
//! nets (`shipped`), anything else goes to the built-in evaluators.

use anyhow::Result;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use varzero_rules::Variant;
use varzero_search::Evaluator;
use varzero_search::{BuiltinEvaluators, EvaluatorResolver, ResolveError};

pub struct NetResolver {
    pub device: String,
    cache: Mutex<HashMap<String, Arc<dyn Evaluator>>>,
}

impl NetResolver {
    pub fn new(device: &str) -> NetResolver {
        NetResolver {
            device: device.into(),
            cache: Mutex::default(),
        }
    }
}

impl EvaluatorResolver for NetResolver {
    fn resolve(
        &self,
        name: &str,
        variant: &Arc<Variant>,
    ) -> Result<Option<Arc<dyn Evaluator>>, ResolveError> {
        if name == "auto" {
            // The variant's shipped net where one fits its rules, else the material player.
            return match crate::shipped::auto(variant) {
                Some(s) => self.resolve(&format!("net:{}", s.path.display()), variant),
                None => BuiltinEvaluators.resolve("material", variant),
            };
        }
        let Some(file) = name.strip_prefix("net:") else {
            return BuiltinEvaluators.resolve(name, variant);
        };
        // `net:FILE#f32` or `#bf16`: this player's precision, not the process's (a match of a
        // net against itself in the two precisions).
        let (file, precision) = match file.rsplit_once('#') {
            Some((f, p)) => (
                f,
                Some(
                    varzero_eval_net::Precision::parse(p)
                        .map_err(|e| ResolveError(format!("evaluator '{name}': {e}")))?,
                ),
            ),
            None => (file, None),
        };
        // Keyed by the rules too: a net is only ever used for the variant it was checked
        // against (a UCI engine can switch variants after loading one).
        let key = format!(
            "{file}\0{}\0{:016x}\0{precision:?}",
            variant.name, variant.rules_hash
        );
        if let Some(ev) = self.cache.lock().unwrap().get(&key) {
            return Ok(Some(ev.clone()));
        }
        // `net:shipped` or `net:NAME`: a net of the repository's nets/ folder, by its card.
        let path = if crate::shipped::is_name(file) {
            crate::shipped::find(file, variant)
                .map_err(|e| ResolveError(crate::one_line(&e)))?
                .path
        } else {
            std::path::PathBuf::from(file)
        };
        let ev = net_evaluator_with(&path, variant, &self.device, precision)
            .map_err(|e| ResolveError(crate::one_line(&e)))?;
        self.cache.lock().unwrap().insert(key, ev.clone());
        Ok(Some(ev))
    }
    fn known(&self) -> Vec<String> {
        let mut k = BuiltinEvaluators.known();
        k.push("net:FILE.safetensors[#f32|#bf16]".into());
        k.push("net:shipped (the variant's shipped net), net:NAME (nets/NAME.toml)".into());
        k.push("auto (the shipped net, else material)".into());
        k
    }
}

/// The process's inference options from the command line's `--precision` and `--eval-cache`,
/// else $VARZERO_PRECISION and $VARZERO_EVAL_CACHE. The chosen values go into the environment
/// too, so that engines and workers this process starts run as it does.
pub fn set_inference(precision: Option<&str>, cache: Option<&str>) -> Result<()> {
    let env = |k: &str| std::env::var(k).ok().filter(|s| !s.is_empty());
    let (p_src, p) = match precision {
        Some(p) => ("--precision", Some(p.to_string())),
        None => ("VARZERO_PRECISION", env("VARZERO_PRECISION")),
    };
    let (c_src, c) = match cache {
        Some(c) => ("--eval-cache", Some(c.to_string())),
        None => ("VARZERO_EVAL_CACHE", env("VARZERO_EVAL_CACHE")),
    };
    let precision = match p.as_deref() {
        None | Some("auto") => None,
        Some(s) => Some(
            varzero_eval_net::Precision::parse(s).map_err(|e| anyhow::anyhow!("{p_src}: {e}"))?,
        ),
    };
    let cache = match c.as_deref() {
        None => None,
        Some(s) => Some(
            s.parse::<usize>()
                .ok()
                .filter(|&n| n <= 1 << 26)
                .ok_or_else(|| {
                    anyhow::anyhow!("{c_src}: '{s}' is not a slot count from 0 to 67108864")
                })?,
        ),
    };
    varzero_eval_net::set_inference(precision, cache);
    if let Some(p) = p {
        std::env::set_var("VARZERO_PRECISION", p);
    }
    if let Some(c) = c {
        std::env::set_var("VARZERO_EVAL_CACHE", c);
    }
    Ok(())
}

/// A net as an evaluator, checked against the variant.
pub fn net_evaluator(
    path: &std::path::Path,
    v: &Arc<varzero_rules::Variant>,
    device: &str,
) -> Result<Arc<dyn Evaluator>> {
    net_evaluator_with(path, v, device, None)
}

/// [`net_evaluator`] in `precision` (`None`: the process's).
pub fn net_evaluator_with(
    path: &std::path::Path,
    v: &Arc<varzero_rules::Variant>,
    device: &str,
    precision: Option<varzero_eval_net::Precision>,
) -> Result<Arc<dyn Evaluator>> {
    let device = varzero_eval_net::parse_device(device).map_err(anyhow::Error::msg)?;
    let net = varzero_eval_net::Net::load(path, v, device)?;
    let id = format!(
        "net:{}@{}",
        path.file_name()
            .map(|f| f.to_string_lossy().to_string())
            .unwrap_or_default(),
        net.meta.step
    );
    let mut opts = varzero_eval_net::InferenceOptions::default_for(device);
    if let Some(p) = precision {
        opts.precision = p;
    }
    Ok(varzero_eval_net::NetEvaluator::with_options(net, id, opts))
}

/// The evaluators players and engines can name: `net:FILE` (a trained net on `device`) and
/// the built-in ones.
pub fn evaluators(device: &str) -> Arc<dyn EvaluatorResolver> {
    Arc::new(NetResolver::new(device))
}

/// The search a player of `spec` starts from (its `KEY=VALUE` pairs still override it): with
/// no search config given (`configured` false), a shipped net (`net:shipped`, `net:NAME`,
/// `auto`) searches as its card says, as in `uci` and `analyse`, so that `varzero match
/// net:shipped@400 ...` plays the player its card rates; anything else searches with `search`.
pub fn base_search(
    spec: &str,
    v: &Variant,
    search: &varzero_search::SearchConfig,
    configured: bool,
) -> varzero_search::SearchConfig {
    let card = || -> Option<varzero_search::SearchConfig> {
        let varzero_arena::PlayerSpec::Search { evaluator, .. } =
            varzero_arena::PlayerSpec::parse(spec).ok()?
        else {
            return None;
        };
        if evaluator == "auto" {
            return crate::shipped::auto(v).map(|s| s.card.search);
        }
        let name = evaluator.strip_prefix("net:")?;
        let name = name.split('#').next().unwrap_or(name);
        // A net the card does not fit is refused when the player is made, with its reason.
        crate::shipped::is_name(name)
            .then(|| crate::shipped::find(name, v).ok())
            .flatten()
            .map(|s| s.card.search)
    };
    if configured {
        return search.clone();
    }
    card().unwrap_or_else(|| search.clone())
}

/// Makes players from specs (nets on `device`, searches with `search`, or a shipped net's card
/// where `configured` is false: [`base_search`]), each checked once (an engine starts, a net
/// loads) before it plays: what the ladder and the pipeline rate with.
pub fn player_maker(
    v: &Arc<Variant>,
    search: &varzero_search::SearchConfig,
    configured: bool,
    device: &str,
) -> impl Fn(&str) -> varzero_arena::Result<Arc<dyn varzero_arena::PlayerFactory>> {
    let resolver = NetResolver::new(device);
    let (v, search) = (v.clone(), search.clone());
    move |spec: &str| {
        let search = base_search(spec, &v, &search, configured);
        let f = varzero_arena::PlayerSpec::parse(spec)?.factory(spec, &v, &resolver, &search)?;
        f.check()
            .map_err(|e| varzero_arena::Error::Spec(format!("player {spec}: {e}")))?;
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use varzero_search::SearchConfig;

    #[test]
    fn a_shipped_net_searches_as_its_card_unless_a_config_is_given() {
        // The repository's own cards (nets/*.toml): each says tactics 0.5, the default is 0.
        if std::env::var_os("VARZERO_NETS").is_some() {
            return;
        }
        let v = Variant::builtin("makruk").unwrap();
        let card = crate::shipped::find("shipped", &v).unwrap().card.search;
        let default = SearchConfig::default();
        assert_ne!(
            card.tactics, default.tactics,
            "the test needs a card unlike the default"
        );
        for spec in ["net:shipped@400", "net:makruk@clock", "auto@64,threads=2"] {
            assert_eq!(
                base_search(spec, &v, &default, false).tactics,
                card.tactics,
                "{spec}"
            );
            assert_eq!(
                base_search(spec, &v, &default, true).tactics,
                default.tactics,
                "{spec}"
            );
        }
        // Not a shipped net, or one for another variant (refused later, when the player is made).
        let xq = Variant::builtin("xiangqi").unwrap();
        for (spec, v) in [
            ("material@400", &v),
            ("random", &v),
            ("net:makruk@400", &xq),
        ] {
            assert_eq!(
                base_search(spec, v, &default, false).tactics,
                default.tactics,
                "{spec}"
            );
        }
    }
}
