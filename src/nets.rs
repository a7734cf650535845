//! Evaluators by name for players and the pipeline: `net:FILE` loads a trained net (checked
//! against the variant), anything else goes to the built-in evaluators.

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
        let Some(file) = name.strip_prefix("net:") else {
            return BuiltinEvaluators.resolve(name, variant);
        };
        // Keyed by the rules too: a net is only ever used for the variant it was checked
        // against (a UCI engine can switch variants after loading one).
        let key = format!("{file}\0{}\0{:016x}", variant.name, variant.rules_hash);
        if let Some(ev) = self.cache.lock().unwrap().get(&key) {
            return Ok(Some(ev.clone()));
        }
        let ev = net_evaluator(std::path::Path::new(file), variant, &self.device)
            .map_err(|e| ResolveError(crate::one_line(&e)))?;
        self.cache.lock().unwrap().insert(key, ev.clone());
        Ok(Some(ev))
    }
    fn known(&self) -> Vec<String> {
        let mut k = BuiltinEvaluators.known();
        k.push("net:FILE.safetensors".into());
        k
    }
}

/// A net as an evaluator, checked against the variant.
pub fn net_evaluator(
    path: &std::path::Path,
    v: &Arc<varzero_rules::Variant>,
    device: &str,
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
    Ok(varzero_eval_net::NetEvaluator::new(net, id))
}

/// The evaluators players and engines can name: `net:FILE` (a trained net on `device`) and
/// the built-in ones.
pub fn evaluators(device: &str) -> Arc<dyn EvaluatorResolver> {
    Arc::new(NetResolver::new(device))
}

/// Makes players from specs (nets on `device`, searches with `search`), each checked once
/// (an engine starts, a net loads) before it plays: what the ladder and the pipeline rate with.
pub fn player_maker(
    v: &Arc<Variant>,
    search: &varzero_search::SearchConfig,
    device: &str,
) -> impl Fn(&str) -> varzero_arena::Result<Arc<dyn varzero_arena::PlayerFactory>> {
    let resolver = NetResolver::new(device);
    let (v, search) = (v.clone(), search.clone());
    move |spec: &str| {
        let f = varzero_arena::PlayerSpec::parse(spec)?.factory(spec, &v, &resolver, &search)?;
        f.check()
            .map_err(|e| varzero_arena::Error::Spec(format!("player {spec}: {e}")))?;
        Ok(f)
    }
}
