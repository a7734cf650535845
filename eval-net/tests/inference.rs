//! The inference form of the net against the trained form: batch norms folded (f32, to float
//! rounding), bfloat16 (within the tolerance docs/runs.md states), and the evaluation cache
//! (the same outputs as without it, and hits counted).

use std::sync::Arc;
use tch::{Device, Kind, Tensor};
use varzero_eval_net::{Arch, Folded, InferenceOptions, Net, NetEvaluator, Precision};
use varzero_rules::{Position, Variant};
use varzero_search::{Batch, Evaluation, Evaluator};

/// A net whose every variable is random, batch-norm statistics included (a fresh net's are 0
/// and 1, which folding would pass through untouched). Drawn from a generator of its own:
/// tests run on threads at once, and libtorch's one global generator would give each a net
/// that depends on the others.
fn random_net(v: &Arc<Variant>, arch: Arch, seed: u64) -> Net {
    let net = Net::new(v, arch, Device::Cpu);
    let mut k = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut uniform = move || {
        k = k
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (k >> 40) as f32 / (1u64 << 24) as f32
    };
    let mut vars = net.vs.variables().into_iter().collect::<Vec<_>>();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    tch::no_grad(|| {
        for (name, mut t) in vars {
            let size = t.size();
            let fan_in: i64 = size.iter().skip(1).product::<i64>().max(1);
            let bound = 1.0 / (fan_in as f32).sqrt();
            let is_bn = name.contains("bn") || name.contains(".b1.") || name.contains(".b2.");
            let vals: Vec<f32> = (0..t.numel())
                .map(|_| {
                    let r = uniform();
                    if name.ends_with("running_var") {
                        0.25 + 1.5 * r
                    } else if name.ends_with("running_mean") || name.ends_with(".bias") {
                        0.4 * (r - 0.5)
                    } else if is_bn {
                        0.6 + 0.8 * r
                    } else {
                        // Weights: uniform within 1 / sqrt(fan-in), like the initialiser;
                        // the heads' larger, so that logits span about +-10 as a trained
                        // net's do.
                        let head = if name.starts_with("policy") || name.starts_with("value_fc2") {
                            12.0
                        } else {
                            1.0
                        };
                        head * bound * (2.0 * r - 1.0)
                    }
                })
                .collect();
            t.copy_(&Tensor::from_slice(&vals).view(size.as_slice()));
        }
    });
    net
}

/// Positions from a few random games (a new one every 20 plies), deterministic.
fn positions(v: &Arc<Variant>, n: usize) -> Vec<Position> {
    let mut out = Vec::new();
    let mut pos = Position::start(v);
    let mut k = 1u64;
    while out.len() < n {
        let moves = pos.legal_moves();
        if moves.is_empty() || pos.history_len() >= 20 {
            pos = Position::start(v);
            continue;
        }
        k = k
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let m = moves.as_slice()[(k >> 33) as usize % moves.len()];
        pos.make(m);
        out.push(pos.clone());
    }
    out
}

fn planes(net: &Net, pos: &[Position]) -> Tensor {
    let e = &net.enc;
    let mut x = vec![0f32; e.input_len() * pos.len()];
    for (i, p) in pos.iter().enumerate() {
        e.encode(p, &mut x[i * e.input_len()..(i + 1) * e.input_len()]);
    }
    Tensor::from_slice(&x).view([
        pos.len() as i64,
        e.planes as i64,
        e.ranks as i64,
        e.files as i64,
    ])
}

fn opts(precision: Precision, cache_entries: usize) -> InferenceOptions {
    InferenceOptions {
        precision,
        cache_entries,
    }
}

fn max_abs_diff(a: &Tensor, b: &Tensor) -> f64 {
    (a - b).abs().max().double_value(&[])
}

#[test]
fn folded_batch_norms_give_the_trained_forward() {
    for name in ["makruk", "xiangqi"] {
        let v = Variant::builtin(name).unwrap();
        let net = random_net(
            &v,
            Arch {
                blocks: 2,
                channels: 16,
                attacks: false,
                opponent_policy: false,
            },
            3,
        );
        let x = planes(&net, &positions(&v, 24));
        let (p, w) = net.infer(&x);
        let (fp, fw) = Folded::new(&net.model, Precision::F32).forward(&x);
        let scale = p.abs().max().double_value(&[]).max(1.0);
        assert!(
            max_abs_diff(&p, &fp) < 1e-4 * scale,
            "{name} policy {}",
            max_abs_diff(&p, &fp)
        );
        assert!(max_abs_diff(&w, &fw) < 1e-4 * scale, "{name} value");
        // Folding is not the identity here: the statistics are not 0 and 1.
        let plain: f64 = net
            .vs
            .variables()
            .iter()
            .filter(|(n, _)| n.ends_with("running_mean"))
            .map(|(_, t)| t.abs().sum(Kind::Float).double_value(&[]))
            .sum();
        assert!(plain > 0.1);
    }
}

/// Priors and W/D/L of an evaluator on each position alone and in one batch.
fn evaluate(ev: &dyn Evaluator, pos: &[Position]) -> Evaluation {
    let mut batch = Batch::default();
    for p in pos {
        batch.push(ev, p, p.legal_moves().as_slice());
    }
    let mut out = Evaluation::default();
    ev.evaluate(&batch, &mut out);
    out
}

/// The stated tolerance of bfloat16 inference against f32 (docs/runs.md): every policy logit
/// within 0.05 + 2% of the largest logit's size, no prior and no win, draw or loss probability
/// more than 0.03 away, and the priors on average within 0.002. Measured here: logits within
/// 0.07 of f32 where they span -8 to +7, priors within 0.009, values within 0.007.
#[test]
fn bf16_agrees_with_f32_within_the_stated_tolerance() {
    for name in ["makruk", "xiangqi", "oxeli"] {
        let v = Variant::builtin(name).unwrap();
        let net = random_net(
            &v,
            Arch {
                blocks: 4,
                channels: 32,
                attacks: false,
                opponent_policy: false,
            },
            5,
        );
        let pos = positions(&v, 64);
        let x = planes(&net, &pos);
        let (l32, _) = Folded::new(&net.model, Precision::F32).forward(&x);
        let (l16, _) = Folded::new(&net.model, Precision::Bf16).forward(&x);
        let largest = l32.abs().max().double_value(&[]);
        let worst_logit = (&l16 - &l32).abs().max().double_value(&[]);
        let excess = worst_logit - (0.02 * largest + 0.05);
        let f32 =
            NetEvaluator::with_options(net.clone_net(), "f32".into(), opts(Precision::F32, 0));
        let bf16 =
            NetEvaluator::with_options(net.clone_net(), "bf16".into(), opts(Precision::Bf16, 0));
        assert_eq!(bf16.precision(), Precision::Bf16);
        let (a, b) = (evaluate(&*f32, &pos), evaluate(&*bf16, &pos));
        let diffs = || a.priors.iter().zip(&b.priors).map(|(x, y)| (x - y).abs());
        let worst_prior = diffs().fold(0f32, f32::max);
        let mean_prior = diffs().sum::<f32>() / a.priors.len() as f32;
        let worst_wdl = a
            .wdl
            .iter()
            .zip(&b.wdl)
            .flat_map(|(x, y)| (0..3).map(move |k| (x[k] - y[k]).abs()))
            .fold(0f32, f32::max);
        eprintln!(
            "{name}: bf16 against f32: logits from {:.1} to {:.1}, worst logit {worst_logit:.4}; \
             priors worst {worst_prior:.4} mean {mean_prior:.5}; wdl worst {worst_wdl:.4}",
            l32.min().double_value(&[]),
            l32.max().double_value(&[]),
        );
        assert!(
            excess <= 0.0,
            "{name}: a logit {excess} beyond the tolerance"
        );
        assert!(worst_prior < 0.03, "{name}: a prior {worst_prior} away");
        assert!(
            mean_prior < 0.002,
            "{name}: priors {mean_prior} away on average"
        );
        assert!(worst_wdl < 0.03, "{name}: a value {worst_wdl} away");
        // And it is bf16: not bit-equal to f32.
        assert!(worst_logit > 0.0);
    }
}

#[test]
fn the_cache_returns_what_the_net_computed_and_counts_hits() {
    let v = Variant::builtin("xiangqi").unwrap();
    let net = random_net(
        &v,
        Arch {
            blocks: 1,
            channels: 8,
            attacks: false,
            opponent_policy: false,
        },
        7,
    );
    let pos = positions(&v, 12);
    let plain =
        NetEvaluator::with_options(net.clone_net(), "plain".into(), opts(Precision::F32, 0));
    let cached = NetEvaluator::with_options(net, "cached".into(), opts(Precision::F32, 1024));
    assert_eq!(plain.cache_hit_rate(), None);
    let want = evaluate(&*plain, &pos);
    // First the even positions (all misses), then all twelve: the even ones are hits, the odd
    // ones go to the net in a batch of six, and every output is the uncached one.
    let even: Vec<Position> = pos.iter().step_by(2).cloned().collect();
    evaluate(&*cached, &even);
    assert_eq!(cached.cache_hit_rate(), Some(0.0));
    let got = evaluate(&*cached, &pos);
    assert_eq!(cached.cache_hit_rate(), Some(6.0 / 18.0));
    assert_eq!(
        cached.forwarded.load(std::sync::atomic::Ordering::Relaxed),
        12
    );
    for (i, (g, w)) in got.wdl.iter().zip(&want.wdl).enumerate() {
        for k in 0..3 {
            assert!((g[k] - w[k]).abs() < 1e-5, "leaf {i}: {g:?} against {w:?}");
        }
    }
    for (g, w) in got.priors.iter().zip(&want.priors) {
        assert!((g - w).abs() < 1e-5);
    }
    // All twelve again: no forward at all.
    evaluate(&*cached, &pos);
    assert_eq!(
        cached.forwarded.load(std::sync::atomic::Ordering::Relaxed),
        12
    );
}
