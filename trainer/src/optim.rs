//! The learning-rate schedule and the optimizer (SGD with momentum, or AdamW), whose state
//! checkpoints save and load.

use crate::config::{OptimizerKind, TrainConfig};
use tch::{nn, Tensor};
use varzero_eval_net::Net;

/// The learning rate at a step (cosine from `lr` to `lr * lr_final_fraction`).
pub fn lr_at(cfg: &TrainConfig, step: u64) -> f64 {
    let t = (step as f64 / cfg.steps.max(1) as f64).min(1.0);
    let end = cfg.lr * cfg.lr_final_fraction;
    end + 0.5 * (cfg.lr - end) * (1.0 + (std::f64::consts::PI * t).cos())
}

/// The optimizer: SGD with momentum and L2 weight decay, or AdamW. Its state (momentum, Adam's
/// moments) lives in its own variable store so that a checkpoint saves it and a resume is exact;
/// Adam's bias correction needs only the step, which the checkpoint names.
pub(crate) struct Optim {
    kind: OptimizerKind,
    /// Each trained tensor with its state tensors (SGD: momentum; AdamW: first and second
    /// moments), which are handles into `bufs`: a checkpoint load copies into them in place.
    params: Vec<(Tensor, Vec<Tensor>)>,
    pub(crate) bufs: nn::VarStore,
}

/// AdamW's epsilon (PyTorch's default).
const ADAM_EPS: f64 = 1e-8;

impl Optim {
    pub(crate) fn new(net: &Net, kind: OptimizerKind) -> Optim {
        let mut named: Vec<(String, Tensor)> = net
            .vs
            .variables()
            .into_iter()
            .filter(|(_, t)| t.requires_grad())
            .collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let bufs = nn::VarStore::new(net.vs.device());
        let root = bufs.root();
        let params = named
            .into_iter()
            .map(|(name, t)| {
                let key = name.replace('.', "_");
                let state = match kind {
                    // SGD's names are those of the first checkpoints (momentum only).
                    OptimizerKind::Sgd => vec![root.zeros_no_train(&key, &t.size())],
                    OptimizerKind::AdamW => vec![
                        root.zeros_no_train(&format!("m_{key}"), &t.size()),
                        root.zeros_no_train(&format!("v_{key}"), &t.size()),
                    ],
                };
                (t, state)
            })
            .collect();
        Optim { kind, params, bufs }
    }

    /// One update with learning rate `lr`; `step` counts from 1 (Adam's bias correction).
    pub(crate) fn step(&self, cfg: &TrainConfig, lr: f64, step: u64) {
        let (b1, b2, wd) = (cfg.momentum, cfg.beta2, cfg.weight_decay);
        tch::no_grad(|| {
            for (p, state) in &self.params {
                let g = p.grad();
                if !g.defined() {
                    continue;
                }
                let mut p = p.shallow_clone();
                match self.kind {
                    OptimizerKind::Sgd => {
                        let mut buf = state[0].shallow_clone();
                        let d = &g + &(&p * wd);
                        let _ = buf.g_mul_scalar_(b1).g_add_(&d);
                        let _ = p.g_sub_(&(&buf * lr));
                    }
                    OptimizerKind::AdamW => {
                        let (mut m, mut v) = (state[0].shallow_clone(), state[1].shallow_clone());
                        let _ = p.g_mul_scalar_(1.0 - lr * wd);
                        let _ = m.g_mul_scalar_(b1).g_add_(&(&g * (1.0 - b1)));
                        let _ = v.g_mul_scalar_(b2).g_add_(&(&g * &g * (1.0 - b2)));
                        let t = step.max(1) as i32;
                        let c1 = 1.0 - b1.powi(t);
                        let c2 = 1.0 - b2.powi(t);
                        let denom = (&v / c2).sqrt() + ADAM_EPS;
                        let _ = p.g_sub_(&(&m * (lr / c1) / denom));
                    }
                }
            }
        });
    }

    pub(crate) fn zero_grad(&self) {
        for (p, _) in &self.params {
            let mut g = p.grad();
            if g.defined() {
                let _ = g.zero_();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::batch_losses;
    use tch::nn::OptimizerConfig;
    use tch::{Device, Kind};
    use varzero_eval_net::Arch;
    use varzero_rules::Variant;

    /// Our AdamW against libtorch's own (torch::optim::AdamW) on the same net and losses.
    #[test]
    fn adamw_matches_libtorch() {
        let v = Variant::builtin("makruk").unwrap();
        let arch = Arch {
            blocks: 1,
            channels: 8,
            attacks: false,
            opponent_policy: false,
        };
        tch::manual_seed(11);
        let ours = Net::new(&v, arch, Device::Cpu);
        tch::manual_seed(11);
        let theirs = Net::new(&v, arch, Device::Cpu);
        let cfg = TrainConfig {
            optimizer: OptimizerKind::AdamW,
            momentum: 0.9,
            beta2: 0.99,
            weight_decay: 0.05,
            ..TrainConfig::default()
        };
        let lr = 0.01;
        let opt = Optim::new(&ours, cfg.optimizer);
        let mut reference = tch::nn::AdamW {
            beta1: 0.9,
            beta2: 0.99,
            wd: 0.05,
            eps: ADAM_EPS,
            amsgrad: false,
        }
        .build(&theirs.vs, lr)
        .unwrap();
        let e = &ours.enc;
        let x = Tensor::randn(
            [4, e.planes as i64, e.ranks as i64, e.files as i64],
            (Kind::Float, Device::Cpu),
        );
        let pl = e.policy_len() as i64;
        let pol = Tensor::randn([4, pl], (Kind::Float, Device::Cpu)).softmax(-1, Kind::Float);
        let mask = Tensor::zeros([4, pl], (Kind::Float, Device::Cpu));
        let wdl = Tensor::randn([4, 3], (Kind::Float, Device::Cpu)).softmax(-1, Kind::Float);
        for step in 1..=5 {
            opt.zero_grad();
            let (loss, ..) = batch_losses(&ours, &x, &pol, &mask, &wdl, true, 1.0, None);
            loss.backward();
            opt.step(&cfg, lr, step);
            reference.zero_grad();
            let (loss, ..) = batch_losses(&theirs, &x, &pol, &mask, &wdl, true, 1.0, None);
            loss.backward();
            reference.step();
        }
        tch::manual_seed(11);
        let start = Net::new(&v, arch, Device::Cpu).vs.variables();
        let (a, b) = (ours.vs.variables(), theirs.vs.variables());
        let mut moved: f64 = 0.0;
        for (k, t) in &a {
            let diff = (t - &b[k]).abs().max().double_value(&[]);
            assert!(diff < 1e-5, "{k}: differs from libtorch's AdamW by {diff}");
            moved = moved.max((t - &start[k]).abs().max().double_value(&[]));
        }
        // Five steps at lr 0.01 move a weight by about 0.05: the comparison is not vacuous.
        assert!(moved > 0.01, "the weights barely moved: {moved}");
    }
}
