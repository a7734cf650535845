//! Evaluators by name for players and the pipeline: `net:FILE` loads a trained net (checked
//! against the variant), anything else goes to the built-in evaluators.

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
        let ev =
            crate::selfplay_cmd::net_evaluator(std::path::Path::new(file), variant, &self.device)
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
