//! Training settings: a run config's `[train]` table, its defaults, and the one check that
//! both the run config and the flags of `varzero train` go through.

use serde::{Deserialize, Serialize};
use varzero_eval_net::Arch;
use varzero_settings::Problems;

/// Training settings (a run config's `[train]` table; command-line options override).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainConfig {
    pub steps: u64,
    pub batch_size: usize,
    /// Newest positions to train on.
    pub window: usize,
    pub lr: f64,
    /// The cosine schedule ends at `lr * lr_final_fraction`.
    pub lr_final_fraction: f64,
    /// `sgd` (with momentum, L2 weight decay: lc0 and KataGo's choice) or `adamw` (Adam with
    /// decoupled weight decay; it wants a smaller `lr`, e.g. 0.001, and a larger
    /// `weight_decay`, e.g. 0.01).
    pub optimizer: OptimizerKind,
    /// SGD's momentum, or AdamW's beta1.
    pub momentum: f64,
    /// AdamW's beta2.
    pub beta2: f64,
    pub weight_decay: f64,
    /// Weight of the value loss next to the policy loss.
    pub value_weight: f64,
    /// The value target: (1 - mix) * the game's result + mix * the search's value of the
    /// position (lc0's q_ratio; KataGo's short-term value targets are the same idea). The
    /// search value is our root value in self-play, the engine's own score in a teacher's games.
    pub value_target_mix: f64,
    /// Only positions from full searches carry a policy target; cheap ones train the value.
    pub seed: u64,
    pub checkpoint_every: u64,
    /// Mirror augmentation: each sample is mirrored left-right with probability 1/2, its policy
    /// target and legal moves with it. Only where the variant is its own mirror
    /// (`Variant::mirror_symmetric`: the Xiangqi family); elsewhere it is ignored, and the
    /// training summary says so.
    pub mirror: bool,
    /// Share of each batch drawn from the self-play generations (every data directory after the
    /// first); the rest comes from the first (generation 0: a teacher's games, or material
    /// self-play). 0: every window position equally likely (the window's own mix).
    pub selfplay_share: f64,
    /// The pipeline multiplies generation 0's share, `1 - selfplay_share`, by this for each
    /// generation after net 2 (1: a fixed share). `varzero train` ignores it.
    pub teacher_decay: f64,
    /// Weight of the opponent-policy loss (KataGo's 0.15), where `arch.opponent_policy` is on.
    pub opponent_policy_weight: f64,
    /// Share of every policy target given to the exchange hints' softmax (the material
    /// player's priors, as the search's `tactics_priors` mixes them): the target becomes
    /// `(1 - w) * target + w * softmax(hints / hint_target_temperature)` over the legal moves,
    /// so the net is taught what each move wins or hangs, not only which move was played.
    /// 0: off.
    pub hint_target: f64,
    /// Temperature in pawns of that softmax (the search's `tactics_prior_temperature`).
    pub hint_target_temperature: f64,
    /// Mix the hints only into positions where the best move's hint wins at least this many
    /// pawns. Elsewhere the hints are nearly level over the safe moves, and mixing them in
    /// there is label smoothing over those moves, not tactics (docs/runs.md, stop 57).
    /// 0: nearly every position.
    pub hint_target_min_gain: f64,
    pub arch: Arch,
}

impl TrainConfig {
    /// Adds every out-of-range setting to `p`: a run config's `[train]` and the flags of
    /// `varzero train` go through this same check before anything is written.
    pub fn check(&self, p: &mut Problems) {
        p.check(self.steps >= 1, "train.steps", "at least 1", self.steps);
        p.check(
            self.batch_size >= 1,
            "train.batch_size",
            "at least 1",
            self.batch_size,
        );
        p.check(self.window >= 1, "train.window", "at least 1", self.window);
        p.check(
            self.lr.is_finite() && self.lr > 0.0,
            "train.lr",
            "a positive number",
            self.lr,
        );
        p.check(
            (0.0..=1.0).contains(&self.lr_final_fraction),
            "train.lr_final_fraction",
            "between 0 and 1",
            self.lr_final_fraction,
        );
        for (k, x) in [
            ("train.momentum", self.momentum),
            ("train.beta2", self.beta2),
        ] {
            p.check((0.0..1.0).contains(&x), k, "at least 0 and below 1", x);
        }
        for (k, x) in [
            ("train.hint_target_min_gain", self.hint_target_min_gain),
            ("train.weight_decay", self.weight_decay),
            ("train.value_weight", self.value_weight),
            ("train.opponent_policy_weight", self.opponent_policy_weight),
        ] {
            p.check(x.is_finite() && x >= 0.0, k, "a number at least 0", x);
        }
        p.check(
            (0.0..=1.0).contains(&self.value_target_mix),
            "train.value_target_mix",
            "between 0 and 1",
            self.value_target_mix,
        );
        p.check(
            self.hint_target_temperature.is_finite() && self.hint_target_temperature >= 0.01,
            "train.hint_target_temperature",
            "at least 0.01",
            self.hint_target_temperature,
        );
        for (k, x) in [
            ("train.hint_target", self.hint_target),
            ("train.selfplay_share", self.selfplay_share),
            ("train.teacher_decay", self.teacher_decay),
        ] {
            p.check((0.0..=1.0).contains(&x), k, "between 0 and 1", x);
        }
        p.check(
            self.checkpoint_every >= 1,
            "train.checkpoint_every",
            "at least 1",
            self.checkpoint_every,
        );
        p.check(
            self.arch.channels >= 1,
            "train.arch.channels",
            "at least 1",
            self.arch.channels,
        );
    }
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            steps: 500,
            batch_size: 256,
            window: 200_000,
            lr: 0.02,
            lr_final_fraction: 0.1,
            optimizer: OptimizerKind::Sgd,
            momentum: 0.9,
            beta2: 0.999,
            weight_decay: 1e-4,
            value_weight: 1.0,
            value_target_mix: 0.0,
            seed: 1,
            checkpoint_every: 100,
            mirror: false,
            selfplay_share: 0.0,
            teacher_decay: 1.0,
            opponent_policy_weight: 0.15,
            hint_target: 0.0,
            hint_target_temperature: 1.0,
            hint_target_min_gain: 0.0,
            arch: Arch::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    #[default]
    Sgd,
    AdamW,
}
