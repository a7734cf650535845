//! Self-play run settings: defaults here, a run config's `[selfplay]` table over them, and
//! command-line options over that.

use serde::{Deserialize, Serialize};
use varzero_settings::Problems;

/// Self-play run settings.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SelfplayConfig {
    /// Worker threads, each advancing `games_per_worker` games at once.
    pub threads: usize,
    pub games_per_worker: usize,
    /// Positions per shard before it is written.
    pub shard_positions: usize,
    pub seed: u64,
    /// Add root noise (off for evaluation matches).
    pub noise: bool,
}

impl Default for SelfplayConfig {
    fn default() -> Self {
        SelfplayConfig {
            threads: 1,
            games_per_worker: 32,
            shard_positions: 4096,
            seed: 1,
            noise: true,
        }
    }
}
impl SelfplayConfig {
    /// Adds every out-of-range setting to `p` (keys prefixed by `section`).
    pub fn check(&self, section: &str, p: &mut Problems) {
        let k = |name: &str| format!("{section}.{name}");
        p.check(self.threads >= 1, &k("threads"), "at least 1", self.threads);
        p.check(
            self.games_per_worker >= 1,
            &k("games_per_worker"),
            "at least 1",
            self.games_per_worker,
        );
        p.check(
            self.shard_positions >= 1,
            &k("shard_positions"),
            "at least 1",
            self.shard_positions,
        );
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_values_are_named() {
        let mut p = Problems::default();
        SelfplayConfig::default().check("selfplay", &mut p);
        assert!(p.is_empty(), "{p}");
        let sp = SelfplayConfig {
            threads: 0,
            games_per_worker: 0,
            shard_positions: 0,
            ..SelfplayConfig::default()
        };
        sp.check("selfplay", &mut p);
        let text = p.to_string();
        for key in [
            "selfplay.threads",
            "selfplay.games_per_worker",
            "selfplay.shard_positions",
        ] {
            assert!(text.contains(key), "{key} not named: {text}");
        }
        assert_eq!(p.0.len(), 3, "{text}");
    }
}
