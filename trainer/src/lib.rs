//! Training: reads a sliding window of the newest positions (polars, lazily), and fits the
//! policy/value net with policy cross-entropy + WDL cross-entropy + weight decay, SGD with
//! momentum (or AdamW) and a cosine learning-rate schedule. Losses and accuracies go to a CSV
//! and a PNG; checkpoints (weights, optimizer state, step) are written atomically, and a rerun
//! resumes from the last one to the same state.

mod config;
mod data;
mod error;
mod log;
mod loss;
mod plot;

pub use config::{OptimizerKind, TrainConfig};
pub use data::{load_window, Sample, Samples};
pub use error::{Error, Result};
pub use log::StepLog;
pub use loss::batch_losses;

use log::{log_line, read_log, write_log};

use error::{at, other};

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use tch::{nn, Device, Kind, Tensor};
use varzero_eval_net::Net;
use varzero_rules::Variant;
use varzero_selfplay::config::Problems;
use varzero_selfplay::Rng;

#[derive(Clone, Debug, Default)]
pub struct TrainSummary {
    pub model: PathBuf,
    pub steps_done: u64,
    pub resumed_from: Option<u64>,
    pub first: Option<StepLog>,
    pub last: Option<StepLog>,
    pub samples: usize,
    pub samples_per_s: f64,
}

/// The learning rate at a step (cosine from `lr` to `lr * lr_final_fraction`).
pub fn lr_at(cfg: &TrainConfig, step: u64) -> f64 {
    let t = (step as f64 / cfg.steps.max(1) as f64).min(1.0);
    let end = cfg.lr * cfg.lr_final_fraction;
    end + 0.5 * (cfg.lr - end) * (1.0 + (std::f64::consts::PI * t).cos())
}

/// The optimizer: SGD with momentum and L2 weight decay, or AdamW. Its state (momentum, Adam's
/// moments) lives in its own variable store so that a checkpoint saves it and a resume is exact;
/// Adam's bias correction needs only the step, which the checkpoint names.
struct Optim {
    kind: OptimizerKind,
    /// Each trained tensor with its state tensors (SGD: momentum; AdamW: first and second
    /// moments), which are handles into `bufs`: a checkpoint load copies into them in place.
    params: Vec<(Tensor, Vec<Tensor>)>,
    bufs: nn::VarStore,
}

/// AdamW's epsilon (PyTorch's default).
const ADAM_EPS: f64 = 1e-8;

impl Optim {
    fn new(net: &Net, kind: OptimizerKind) -> Optim {
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
    fn step(&self, cfg: &TrainConfig, lr: f64, step: u64) {
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

    fn zero_grad(&self) {
        for (p, _) in &self.params {
            let mut g = p.grad();
            if g.defined() {
                let _ = g.zero_();
            }
        }
    }
}

#[derive(Serialize, Deserialize)]
struct CheckpointMeta {
    step: u64,
    config: TrainConfig,
}

/// Trains on the newest positions of `data_dirs` (in order, the last newest) into `out`.
/// `init` starts from a saved net (its weights, not its optimizer state); a checkpoint in `out`
/// resumes an interrupted run. `progress` is called after each step.
pub fn train(
    variant: &Arc<Variant>,
    data_dirs: &[PathBuf],
    out: &Path,
    init: Option<&Path>,
    cfg: &TrainConfig,
    device: Device,
    progress: &mut dyn FnMut(&StepLog),
) -> Result<TrainSummary> {
    let mut problems = Problems::default();
    cfg.check(&mut problems);
    if !problems.is_empty() {
        return Err(Error::Config(problems.to_string()));
    }
    std::fs::create_dir_all(out).map_err(|e| {
        Error::Other(format!(
            "cannot create the output directory {}: {e}",
            out.display()
        ))
    })?;
    // Datasets of other rules are refused, never silently skipped.
    let want = varzero_datasets::DatasetRules::new(&variant.name, variant.rules_hash);
    if let Some(have) = varzero_datasets::common_rules(data_dirs)? {
        if have != want {
            return Err(Error::Other(format!(
                "the datasets hold {have}, the net is for {want}{}",
                if have.variant == want.variant {
                    ": pass the variant file (or --set overrides) they were played with"
                } else {
                    ""
                }
            )));
        }
    }
    let (samples, skipped) = load_window(variant, data_dirs, cfg.window)?;
    for s in &skipped {
        eprintln!("warning: {s}");
    }
    if samples.is_empty() {
        return Err(Error::Other(format!(
            "no positions to train on in {}",
            data_dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let ckpt = out.join("checkpoint.safetensors");
    let ckpt_optim = out.join("checkpoint-optim.safetensors");
    let ckpt_meta = out.join("checkpoint.json");
    // The seed fixes a fresh net's initialisation, so a run config reproduces its nets.
    tch::manual_seed(cfg.seed as i64);
    let mut net = match init {
        Some(p) => {
            let mut n = Net::load(p, variant, device)?;
            n.meta.parent = Some(p.display().to_string());
            n
        }
        None => Net::new(variant, cfg.arch, device),
    };
    let mut opt = Optim::new(&net, cfg.optimizer);
    let mut start = 0;
    let mut resumed_from = None;
    if ckpt_meta.exists() {
        let m: CheckpointMeta =
            serde_json::from_str(&std::fs::read_to_string(&ckpt_meta).map_err(other)?)
                .map_err(other)?;
        if m.step > cfg.steps {
            return Err(Error::Other(format!(
                "{}: the checkpoint is at step {}, past the {} steps asked for: ask for at least {} steps, or choose another output directory",
                ckpt_meta.display(),
                m.step,
                cfg.steps,
                m.step
            )));
        }
        if m.config.arch != cfg.arch {
            return Err(Error::Other(format!(
                "{}: the checkpoint is a {}x{} net (blocks x channels), the config asks for {}x{}: resume with that architecture, or choose another output directory",
                ckpt_meta.display(),
                m.config.arch.blocks,
                m.config.arch.channels,
                cfg.arch.blocks,
                cfg.arch.channels
            )));
        }
        if m.config.optimizer != cfg.optimizer {
            return Err(Error::Other(format!(
                "{}: the checkpoint was written with optimizer {:?}, the config asks for {:?}",
                ckpt_meta.display(),
                m.config.optimizer,
                cfg.optimizer
            )));
        }
        net.vs
            .load(&ckpt)
            .map_err(|e| Error::Other(format!("{}: {e}", ckpt.display())))?;
        opt.bufs
            .load(&ckpt_optim)
            .map_err(|e| Error::Other(format!("{}: {e}", ckpt_optim.display())))?;
        start = m.step;
        resumed_from = Some(m.step);
    }
    let log_path = out.join("train_log.csv");
    let mut logs: Vec<StepLog> = read_log(&log_path)
        .into_iter()
        .filter(|l| l.step <= start)
        .collect();
    write_log(&log_path, &logs)?;
    let mut log_file = std::fs::OpenOptions::new()
        .append(true)
        .open(&log_path)
        .map_err(at(&log_path))?;
    let t0 = Instant::now();
    let mut done = 0u64;
    for step in start..cfg.steps {
        let mut rng = Rng::new(Rng::derive(cfg.seed, step));
        let idx: Vec<usize> = (0..cfg.batch_size)
            .map(|_| rng.below(samples.len()))
            .collect();
        let t = Instant::now();
        let (x, pol_t, mask, wdl_t) = samples.batch(&net.enc, &idx, device);
        let lr = lr_at(cfg, step);
        opt.zero_grad();
        let (loss, pl, vl, pa, va) =
            batch_losses(&net, &x, &pol_t, &mask, &wdl_t, true, cfg.value_weight);
        let loss_value = loss.double_value(&[]);
        if !loss_value.is_finite() {
            return Err(Error::NonFinite {
                step: step + 1,
                what: "the loss",
            });
        }
        loss.backward();
        opt.step(cfg, lr, step + 1);
        let l = StepLog {
            step: step + 1,
            lr,
            loss: loss_value,
            policy_loss: pl,
            value_loss: vl,
            policy_acc: pa,
            value_acc: va,
            samples_per_s: cfg.batch_size as f64 / t.elapsed().as_secs_f64(),
        };
        writeln!(log_file, "{}", log_line(&l)).map_err(at(&log_path))?;
        progress(&l);
        logs.push(l);
        done += 1;
        let s = step + 1;
        if s % cfg.checkpoint_every.max(1) == 0 || s == cfg.steps {
            check_finite(&net, s)?;
            net.meta.step = net.meta.step.max(s);
            save_checkpoint(&net, &opt, cfg, s, &ckpt, &ckpt_optim, &ckpt_meta)?;
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    check_finite(&net, cfg.steps)?;
    net.meta.step = cfg.steps;
    let model = out.join("model.safetensors");
    net.save(&model)?;
    let png = out.join("train_curves.png");
    let tmp = out.join("train_curves.tmp.png");
    plot::curves(&logs, &tmp)
        .and_then(|()| std::fs::rename(&tmp, &png).map_err(Into::into))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Error::Other(format!("cannot draw {}: {e}", png.display()))
        })?;
    Ok(TrainSummary {
        model,
        steps_done: done,
        resumed_from,
        first: logs.first().cloned(),
        last: logs.last().cloned(),
        samples: samples.len(),
        samples_per_s: done as f64 * cfg.batch_size as f64 / secs.max(1e-9),
    })
}

/// Samples/s of the training step alone: the same forward, losses, backward and update as
/// [`train`] on one fixed random batch (no data loading), median over `steps` after a warm-up.
/// The trainer's own figure divided by this one is the data pipeline's cost.
pub fn raw_loop_samples_per_s(
    variant: &Arc<Variant>,
    cfg: &TrainConfig,
    device: Device,
    steps: usize,
) -> f64 {
    let net = Net::new(variant, cfg.arch, device);
    let opt = Optim::new(&net, cfg.optimizer);
    let e = &net.enc;
    let n = cfg.batch_size as i64;
    let pl = e.policy_len() as i64;
    let x = Tensor::randn(
        [n, e.planes as i64, e.ranks as i64, e.files as i64],
        (Kind::Float, device),
    );
    let pol = Tensor::randn([n, pl], (Kind::Float, device)).softmax(-1, Kind::Float);
    let mask = Tensor::zeros([n, pl], (Kind::Float, device));
    let wdl = Tensor::randn([n, 3], (Kind::Float, device)).softmax(-1, Kind::Float);
    let mut times = Vec::new();
    for i in 0..=steps.max(1) {
        let t = Instant::now();
        opt.zero_grad();
        let (loss, ..) = batch_losses(&net, &x, &pol, &mask, &wdl, true, cfg.value_weight);
        loss.backward();
        opt.step(cfg, cfg.lr, i as u64 + 1);
        let _ = loss.double_value(&[]);
        if i > 0 {
            times.push(t.elapsed().as_secs_f64());
        }
    }
    times.sort_by(f64::total_cmp);
    cfg.batch_size as f64 / times[times.len() / 2]
}

/// Every weight of `net` is finite: a net that is not is never written.
fn check_finite(net: &Net, step: u64) -> Result<()> {
    let finite = net
        .vs
        .variables()
        .values()
        .all(|t| t.isfinite().all().int64_value(&[]) != 0);
    if finite {
        Ok(())
    } else {
        Err(Error::NonFinite {
            step,
            what: "a weight of the net",
        })
    }
}

fn save_checkpoint(
    net: &Net,
    opt: &Optim,
    cfg: &TrainConfig,
    step: u64,
    ckpt: &Path,
    optim: &Path,
    meta: &Path,
) -> Result<()> {
    // Weights and momentum first, the JSON (which names the step) last: a checkpoint counts
    // only once its JSON is there, and each file appears by rename.
    let tmp = ckpt.with_extension("tmp.safetensors");
    net.vs
        .save(&tmp)
        .map_err(|e| Error::Other(format!("{}: {e}", tmp.display())))?;
    std::fs::rename(&tmp, ckpt).map_err(at(ckpt))?;
    let tmp = optim.with_extension("tmp.safetensors");
    opt.bufs
        .save(&tmp)
        .map_err(|e| Error::Other(format!("{}: {e}", tmp.display())))?;
    std::fs::rename(&tmp, optim).map_err(at(optim))?;
    let tmp = meta.with_extension("json.tmp");
    std::fs::write(
        &tmp,
        serde_json::to_string_pretty(&CheckpointMeta {
            step,
            config: cfg.clone(),
        })
        .unwrap(),
    )
    .map_err(at(&tmp))?;
    std::fs::rename(&tmp, meta).map_err(at(meta))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::nn::OptimizerConfig;
    use varzero_eval_net::Arch;

    /// Our AdamW against libtorch's own (torch::optim::AdamW) on the same net and losses.
    #[test]
    fn adamw_matches_libtorch() {
        let v = Variant::builtin("makruk").unwrap();
        let arch = Arch {
            blocks: 1,
            channels: 8,
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
            let (loss, ..) = batch_losses(&ours, &x, &pol, &mask, &wdl, true, 1.0);
            loss.backward();
            opt.step(&cfg, lr, step);
            reference.zero_grad();
            let (loss, ..) = batch_losses(&theirs, &x, &pol, &mask, &wdl, true, 1.0);
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
