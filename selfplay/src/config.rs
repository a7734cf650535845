//! Search and self-play settings: defaults here, a run config's `[search]` table over them,
//! and command-line options over that.

use serde::{Deserialize, Serialize};

/// PUCT search settings (AlphaZero / lc0 / KataGo conventions).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchConfig {
    /// Playouts per full search (root visits to reach, counting reused ones).
    pub playouts: u32,
    /// Exploration constant of PUCT.
    pub c_puct: f32,
    /// First-play urgency: an unvisited child is valued at the parent's value minus this.
    pub fpu_reduction: f32,
    /// Dirichlet noise at the root of full searches in self-play: concentration and weight.
    pub dirichlet_alpha: f32,
    pub dirichlet_epsilon: f32,
    /// Move choice: visit counts to the power 1/T for the first `temperature_plies` plies of the
    /// game, then the most visited move.
    pub temperature: f32,
    pub temperature_plies: u32,
    /// Playout-cap randomisation (KataGo): this fraction of moves is searched with
    /// `cheap_playouts`, without noise, and not used as a policy target. 0 disables it.
    pub cheap_fraction: f32,
    pub cheap_playouts: u32,
    /// Keep the subtree of the chosen move for the next search.
    pub tree_reuse: bool,
    /// Leaves gathered per game per evaluator call (virtual loss keeps them apart).
    pub leaves_per_game: u32,
    /// Virtual loss added to each node on a pending path.
    pub virtual_loss: f32,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            playouts: 200,
            c_puct: 1.5,
            fpu_reduction: 0.25,
            dirichlet_alpha: 0.3,
            dirichlet_epsilon: 0.25,
            temperature: 1.0,
            temperature_plies: 20,
            cheap_fraction: 0.0,
            cheap_playouts: 50,
            tree_reuse: true,
            leaves_per_game: 4,
            virtual_loss: 1.0,
        }
    }
}

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
