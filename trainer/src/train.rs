//! The training loop: checks the config and the datasets' rules, loads the window, builds or
//! loads the net, resumes from a checkpoint, then steps (batch, losses, update, log line) with a
//! checkpoint every `checkpoint_every` steps, and writes the net and the curves at the end. Next
//! to it, the bench of its step alone, so that the two stay the same step.

use crate::checkpoint::Checkpoint;
use crate::config::TrainConfig;
use crate::data::{load_window, mix_hint_targets};
use crate::error::{at, Error, Result};
use crate::log::{read_log, write_log, StepLog};
use crate::loss::{batch_losses, OpponentTargets};
use crate::mix::BatchMix;
use crate::optim::{lr_at, Optim};
use crate::plot;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use tch::{Device, Kind, Tensor};
use varzero_datasets::Row;
use varzero_eval_net::Net;
use varzero_rules::Variant;
use varzero_settings::Problems;
use varzero_stats::Rng;

#[derive(Clone, Debug, Default)]
pub struct TrainSummary {
    pub model: PathBuf,
    pub steps_done: u64,
    pub resumed_from: Option<u64>,
    pub first: Option<StepLog>,
    pub last: Option<StepLog>,
    pub samples: usize,
    pub samples_per_s: f64,
    /// Whether samples were mirrored (asked for, and the variant is its own mirror).
    pub mirrored: bool,
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
    // One trainer per output directory: two would overwrite each other's checkpoints.
    let _lock = varzero_datasets::DirLock::acquire(out, varzero_datasets::LockMode::Exclusive)?;
    crate::checkpoint::remove_temporaries(out)?;
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
    let (mut samples, skipped) =
        load_window(variant, data_dirs, cfg.window, cfg.value_target_mix as f32)?;
    let hinted = mix_hint_targets(
        &mut samples,
        cfg.hint_target as f32,
        cfg.hint_target_temperature as f32,
        cfg.hint_target_min_gain as f32,
    );
    if hinted > 0 {
        eprintln!(
            "note: {hinted} policy targets carry the exchange hints (train.hint_target {}, temperature {}, min gain {})",
            cfg.hint_target, cfg.hint_target_temperature, cfg.hint_target_min_gain
        );
    }
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
    let mirror = cfg.mirror && variant.mirror_symmetric();
    if cfg.mirror && !mirror {
        eprintln!(
            "note: train.mirror is on, but {} is not its own mirror: no sample is mirrored",
            variant.name
        );
    }
    let mix = BatchMix::new(&samples, cfg.selfplay_share);
    if cfg.selfplay_share > 0.0 && !mix.mixed() {
        eprintln!(
            "note: train.selfplay_share is {}, but the window holds {}: every position is equally likely",
            cfg.selfplay_share,
            if data_dirs.len() < 2 {
                "one data directory"
            } else {
                "positions of only one part (generation 0, or the later ones)"
            }
        );
    }
    let checkpoint = Checkpoint::in_dir(out);
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
    let resumed_from = checkpoint.resume(&mut net, &mut opt, cfg)?;
    let start = resumed_from.unwrap_or(0);
    let log_path = out.join("train_log.csv");
    let mut logs: Vec<StepLog> = read_log(&log_path)?
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
        let idx = mix.draw(&mut rng, cfg.batch_size);
        // Drawn after the indices, so turning mirroring on leaves the batches' samples as
        // they were.
        let flips: Vec<bool> = if mirror {
            idx.iter().map(|_| rng.next_u64() & 1 == 1).collect()
        } else {
            Vec::new()
        };
        let t = Instant::now();
        let (x, pol_t, mask, wdl_t) = samples.batch(&net.enc, &idx, &flips, device);
        let opp = net
            .meta
            .arch
            .opponent_policy
            .then(|| samples.batch_opponent(&net.enc, &idx, &flips, device));
        let lr = lr_at(cfg, step);
        opt.zero_grad();
        let (loss, pl, vl, pa, va) = batch_losses(
            &net,
            &x,
            &pol_t,
            &mask,
            &wdl_t,
            true,
            cfg.value_weight,
            opp.as_ref().map(|(pol_t, mask)| OpponentTargets {
                pol_t,
                mask,
                weight: cfg.opponent_policy_weight,
            }),
        );
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
        writeln!(log_file, "{}", l.line()).map_err(at(&log_path))?;
        progress(&l);
        logs.push(l);
        done += 1;
        let s = step + 1;
        if s % cfg.checkpoint_every.max(1) == 0 || s == cfg.steps {
            check_finite(&net, s)?;
            net.meta.step = net.meta.step.max(s);
            checkpoint.save(&net, &opt, cfg, s)?;
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
        mirrored: mirror,
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
        // The opponent head's term costs its share too, with the policy pair as its targets.
        let opp = net.meta.arch.opponent_policy.then_some(OpponentTargets {
            pol_t: &pol,
            mask: &mask,
            weight: cfg.opponent_policy_weight,
        });
        let (loss, ..) = batch_losses(&net, &x, &pol, &mask, &wdl, true, cfg.value_weight, opp);
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
