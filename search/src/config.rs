//! Search settings: defaults here, a run config's `[search]` table over them, and
//! command-line options over that, checked into `Problems` (varzero-settings).

use serde::{Deserialize, Serialize};
use varzero_settings::Problems;

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
    /// KataGo's forced playouts and policy-target pruning, for self-play's full searches with
    /// the PUCT root: each root move gets at least sqrt(k * prior * visits) visits, and the
    /// policy target takes back those that PUCT would not have given. k (KataGo: 2); 0: off.
    pub forced_playouts: f32,
    /// Keep the subtree of the chosen move for the next search.
    pub tree_reuse: bool,
    /// Leaves gathered per game per evaluator call (virtual loss keeps them apart).
    pub leaves_per_game: u32,
    /// Virtual loss added to each node on a pending path.
    pub virtual_loss: f32,
    /// Search threads on one tree for a player or the UCI engine (`Threads`); self-play runs
    /// its own worker threads (`[selfplay] threads`) and ignores it.
    pub threads: u32,
    /// How the root spends its playouts: `puct` (AlphaZero: PUCT, Dirichlet noise,
    /// temperature, visit-count policy targets) or `gumbel` (Gumbel top-k and sequential
    /// halving at the root, completed-Q policy targets, no noise or temperature; `gumbel.rs`).
    /// A Gumbel search starts from a fresh tree: its schedule counts this search's visits.
    pub root: RootSearch,
    /// Gumbel: the moves considered at the root (m).
    pub gumbel_considered: u32,
    /// Gumbel: σ(q) = (gumbel_c_visit + max visits) * gumbel_c_scale * q, q rescaled to [0, 1].
    pub gumbel_c_visit: f32,
    pub gumbel_c_scale: f32,
    /// Weight of the tactical value (material resolved by a quiescence search, as the
    /// `material` player's) in each leaf's value, 0 to 1; the rest is the evaluator's own, and
    /// the priors stay the evaluator's. 0 leaves the evaluator alone ([`crate::TacticalBlend`]).
    pub tactics: f32,
    /// Weight of the tactical priors (the `material` player's: a softmax of what each move wins
    /// or loses by exchange, checks and mates) in each leaf's priors, 0 to 1, mixed
    /// geometrically: prior ∝ evaluator^(1 − w) × tactical^w, so a move that hangs a piece
    /// keeps little of the prior a small net gives it. 0 leaves the priors alone.
    pub tactics_priors: f32,
    /// How the tactical priors mix with the evaluator's. `geometric`: prior ∝
    /// evaluator^(1 − w) × tactical^w, which flattens the evaluator's own preferences among
    /// moves the exchange hints rate alike (at w = 0.5, to their square roots); `product`:
    /// prior ∝ evaluator × tactical^w, which re-weights only the moves the hints tell apart
    /// (hanging a piece, winning one) and keeps the evaluator's ranking of the rest whole, so
    /// that what a better net learned stays in the search (docs/runs.md, stop 47).
    pub tactics_priors_mix: PriorMix,
    /// The logistic scale, per pawn, that turns the tactical value into win/draw/loss in the
    /// blend (`tactics`): the expected score is 1 / (1 + e^(-scale x pawns)). The material
    /// player's own value keeps 0.5.
    pub tactics_scale: f32,
    /// The temperature, in pawns, of the softmax of the exchange hints that makes the tactical
    /// priors (`tactics_priors`): below 1 a move that hangs a piece keeps less prior, above 1
    /// more. The material player's own priors keep 1.
    pub tactics_prior_temperature: f32,
    /// Plies at the start of the blend's quiescence search (`tactics`) in which quiet moves
    /// that give check are searched besides captures: 1 lets a leaf see a mate by the side to
    /// move's quiet check. 0 searches captures only.
    pub tactics_checks: u32,
    /// Where the blend's quiescence search proves a mate, the leaf's value is that result
    /// whole, not `tactics` of it: a forced mate is not a matter of opinion for the net.
    pub tactics_mates: bool,
    /// Softmax temperature of the evaluator's own priors (lc0's `PolicyTemperature`): the
    /// search uses prior^(1 / T), renormalised, before any tactical mix. 1 leaves them alone;
    /// above 1 spreads a small net's over-confident priors over more moves.
    pub policy_temperature: f32,
    /// Gumbel self-play: the priors its completed-Q policy target starts from. `search`: the
    /// priors the search ran on (the net's mixed with the tactical priors, where
    /// `tactics_priors` > 0); `net`: the net's own, with the tactical mix taken back out, so that
    /// a net trained on the targets does not learn the tactical priors that every search adds
    /// to it again (docs/runs.md measures both).
    pub gumbel_target_priors: TargetPriors,
}

/// The most plies of quiet checks in the blend's quiescence search
/// ([`SearchConfig::tactics_checks`]): each one multiplies a leaf's cost by the moves it tries.
pub const MAX_TACTICS_CHECKS: u32 = 4;

/// The least [`SearchConfig::policy_temperature`]: below it the priors are all but one-hot.
pub const MIN_POLICY_TEMPERATURE: f32 = 0.1;

/// How the tactical priors mix with the evaluator's ([`SearchConfig::tactics_priors_mix`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PriorMix {
    #[default]
    Geometric,
    Product,
}

impl PriorMix {
    /// The exponent of the evaluator's prior in the mix at tactical weight `w`.
    pub fn net_exponent(self, w: f32) -> f32 {
        match self {
            PriorMix::Geometric => 1.0 - w,
            PriorMix::Product => 1.0,
        }
    }
}

/// The priors of a Gumbel policy target ([`SearchConfig::gumbel_target_priors`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetPriors {
    #[default]
    Search,
    Net,
}

/// The root's selection rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RootSearch {
    #[default]
    Puct,
    Gumbel,
}

impl SearchConfig {
    pub fn gumbel(&self) -> Option<crate::gumbel::GumbelParams> {
        (self.root == RootSearch::Gumbel).then_some(crate::gumbel::GumbelParams {
            considered: self.gumbel_considered,
            c_visit: self.gumbel_c_visit,
            c_scale: self.gumbel_c_scale,
        })
    }
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
            forced_playouts: 0.0,
            tree_reuse: true,
            leaves_per_game: 4,
            virtual_loss: 1.0,
            threads: 1,
            root: RootSearch::Puct,
            gumbel_considered: 16,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 0.1,
            tactics: 0.0,
            tactics_priors: 0.0,
            tactics_priors_mix: PriorMix::Geometric,
            tactics_scale: crate::evaluator::MATERIAL_SCALE,
            tactics_prior_temperature: 1.0,
            tactics_checks: 0,
            tactics_mates: false,
            policy_temperature: 1.0,
            gumbel_target_priors: TargetPriors::Search,
        }
    }
}
impl SearchConfig {
    /// Adds every out-of-range setting to `p` (keys prefixed by `section`).
    pub fn check(&self, section: &str, p: &mut Problems) {
        let k = |name: &str| format!("{section}.{name}");
        p.check(
            self.playouts >= 1,
            &k("playouts"),
            "at least 1",
            self.playouts,
        );
        p.check(
            self.c_puct.is_finite() && self.c_puct > 0.0,
            &k("c_puct"),
            "a positive number",
            self.c_puct,
        );
        p.check(
            self.fpu_reduction.is_finite(),
            &k("fpu_reduction"),
            "a number",
            self.fpu_reduction,
        );
        p.check(
            self.dirichlet_alpha.is_finite() && self.dirichlet_alpha > 0.0,
            &k("dirichlet_alpha"),
            "a positive number",
            self.dirichlet_alpha,
        );
        for (name, x) in [
            ("dirichlet_epsilon", self.dirichlet_epsilon),
            ("cheap_fraction", self.cheap_fraction),
            ("tactics", self.tactics),
            ("tactics_priors", self.tactics_priors),
        ] {
            p.check((0.0..=1.0).contains(&x), &k(name), "between 0 and 1", x);
        }
        p.check(
            self.policy_temperature.is_finite()
                && self.policy_temperature >= MIN_POLICY_TEMPERATURE,
            &k("policy_temperature"),
            &format!("a number at least {MIN_POLICY_TEMPERATURE}"),
            self.policy_temperature,
        );
        for (name, x) in [
            ("tactics_scale", self.tactics_scale),
            ("tactics_prior_temperature", self.tactics_prior_temperature),
        ] {
            p.check(
                x.is_finite() && x >= 0.01,
                &k(name),
                "a number at least 0.01",
                x,
            );
        }
        p.check(
            self.tactics_checks <= MAX_TACTICS_CHECKS,
            &k("tactics_checks"),
            &format!("at most {MAX_TACTICS_CHECKS}"),
            self.tactics_checks,
        );
        p.check(
            self.forced_playouts.is_finite() && self.forced_playouts >= 0.0,
            &k("forced_playouts"),
            "a number at least 0",
            self.forced_playouts,
        );
        p.check(
            self.temperature.is_finite() && self.temperature >= 0.0,
            &k("temperature"),
            "a number at least 0",
            self.temperature,
        );
        p.check(
            self.cheap_playouts >= 1,
            &k("cheap_playouts"),
            "at least 1",
            self.cheap_playouts,
        );
        p.check(
            self.leaves_per_game >= 1,
            &k("leaves_per_game"),
            "at least 1",
            self.leaves_per_game,
        );
        p.check(
            self.virtual_loss.is_finite() && self.virtual_loss >= 0.0,
            &k("virtual_loss"),
            "a number at least 0",
            self.virtual_loss,
        );
        p.check(
            (1..=256).contains(&self.threads),
            &k("threads"),
            "from 1 to 256",
            self.threads,
        );
        p.check(
            self.gumbel_considered >= 1,
            &k("gumbel_considered"),
            "at least 1",
            self.gumbel_considered,
        );
        for (name, x) in [
            ("gumbel_c_visit", self.gumbel_c_visit),
            ("gumbel_c_scale", self.gumbel_c_scale),
        ] {
            p.check(
                x.is_finite() && x >= 0.0,
                &k(name),
                "a number at least 0",
                x,
            );
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_values_are_named() {
        let mut p = Problems::default();
        SearchConfig::default().check("search", &mut p);
        assert!(p.is_empty(), "{p}");
        let s = SearchConfig {
            playouts: 0,
            c_puct: -1.0,
            cheap_fraction: f32::NAN,
            tactics_priors: 1.5,
            tactics_scale: 0.0,
            tactics_checks: MAX_TACTICS_CHECKS + 1,
            ..SearchConfig::default()
        };
        s.check("search", &mut p);
        let text = p.to_string();
        for key in [
            "search.playouts",
            "search.c_puct",
            "search.cheap_fraction",
            "search.tactics_priors",
            "search.tactics_scale",
            "search.tactics_checks",
        ] {
            assert!(text.contains(key), "{key} not named: {text}");
        }
        assert_eq!(p.0.len(), 6, "{text}");
    }
}
