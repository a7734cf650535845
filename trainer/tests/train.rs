//! The trainer fits a tiny dataset, and resumes from a checkpoint to exactly the same state.

use std::path::Path;
use tch::Device;
use varzero_datasets::{write_shard, GameRecord, PositionRecord};
use varzero_eval_net::{Arch, Net};
use varzero_rules::{Position, Variant};
use varzero_trainer::{train, OptimizerKind, TrainConfig};

/// A few Makruk positions, each with one "best" move and a result.
fn tiny_dataset(dir: &Path) {
    let v = Variant::builtin("makruk").unwrap();
    let mut pos = Position::start(&v);
    let mut rows = Vec::new();
    for ply in 0..12u32 {
        let moves = pos.legal_moves();
        let m = moves.as_slice()[(ply as usize * 7) % moves.len()];
        let w = if ply % 2 == 0 {
            [1.0, 0.0, 0.0]
        } else {
            [0.0, 0.0, 1.0]
        };
        rows.push(PositionRecord {
            game_id: 0,
            ply,
            variant: v.name.clone(),
            rules_hash: format!("{:016x}", v.rules_hash),
            fen: pos.fen(),
            policy_moves: vec![pos.uci(m)],
            policy_probs: vec![1.0],
            result_wdl: w,
            root_wdl: w,
            visits: 1,
            full_search: true,
            evaluator: "test".into(),
        });
        pos.make(m);
    }
    let game = GameRecord {
        game_id: 0,
        variant: v.name.clone(),
        rules_hash: format!("{:016x}", v.rules_hash),
        result: "1-0".into(),
        termination: "checkmate".into(),
        plies: 12,
        seed: 0,
        evaluator: "test".into(),
        search: "{}".into(),
        start_fen: v.start_fen.clone(),
        moves: String::new(),
    };
    write_shard(dir, 0, "t", &rows, &[game]).unwrap();
}

fn cfg(steps: u64) -> TrainConfig {
    TrainConfig {
        steps,
        batch_size: 12,
        window: 100,
        lr: 0.05,
        checkpoint_every: 10,
        arch: Arch {
            blocks: 1,
            channels: 16,
            attacks: false,
            opponent_policy: false,
        },
        ..TrainConfig::default()
    }
}

/// libtorch's seed is global and the test harness runs tests on parallel threads: each test
/// holds this lock so that another test's initialisation cannot draw from its seeded stream.
static TORCH_RNG: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Trains `c` on the tiny dataset in `d` (into `d/out`) and checks that it fits: the loss
/// falls below 30% of the first step's and the policy finds the best moves.
fn fits(d: &Path, c: &TrainConfig) {
    let v = Variant::builtin("makruk").unwrap();
    let s = train(
        &v,
        &[d.join("data")],
        &d.join("out"),
        None,
        c,
        Device::Cpu,
        &mut |_| {},
    )
    .unwrap();
    let (f, l) = (s.first.unwrap(), s.last.unwrap());
    assert!(l.loss < 0.3 * f.loss, "loss {} -> {}", f.loss, l.loss);
    assert!(l.policy_acc > 0.9, "policy accuracy {}", l.policy_acc);
}

#[test]
fn fits_a_tiny_dataset() {
    let _rng = TORCH_RNG.lock().unwrap_or_else(|e| e.into_inner());
    tch::set_num_threads(1);
    tch::manual_seed(3);
    let d = tempfile::tempdir().unwrap();
    tiny_dataset(&d.path().join("data"));
    fits(d.path(), &cfg(60));
    assert!(d.path().join("out/train_log.csv").exists());
    assert!(d.path().join("out/train_curves.png").exists());
}

#[test]
fn adamw_fits_a_tiny_dataset() {
    let _rng = TORCH_RNG.lock().unwrap_or_else(|e| e.into_inner());
    tch::set_num_threads(1);
    let d = tempfile::tempdir().unwrap();
    tiny_dataset(&d.path().join("data"));
    let c = TrainConfig {
        optimizer: OptimizerKind::AdamW,
        lr: 0.003,
        weight_decay: 0.01,
        ..cfg(60)
    };
    fits(d.path(), &c);
    // Resuming that run with SGD is refused, naming both optimizers.
    let e = train(
        &Variant::builtin("makruk").unwrap(),
        &[d.path().join("data")],
        &d.path().join("out"),
        None,
        &cfg(80),
        Device::Cpu,
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("AdamW") && e.contains("Sgd"), "{e}");
}

#[test]
fn resumes_from_a_checkpoint_to_the_same_state() {
    resume_is_exact(cfg(20));
}

#[test]
fn adamw_resumes_from_a_checkpoint_to_the_same_state() {
    // Adam's moments and its bias correction (which depends on the step) must both survive.
    resume_is_exact(TrainConfig {
        optimizer: OptimizerKind::AdamW,
        lr: 0.003,
        ..cfg(20)
    });
}

fn resume_is_exact(c: TrainConfig) {
    let _rng = TORCH_RNG.lock().unwrap_or_else(|e| e.into_inner());
    tch::set_num_threads(1);
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    tiny_dataset(&data);
    let v = Variant::builtin("makruk").unwrap();
    // Uninterrupted: 20 steps.
    tch::manual_seed(4);
    let a = train(
        &v,
        std::slice::from_ref(&data),
        &d.path().join("a"),
        None,
        &c,
        Device::Cpu,
        &mut |_| {},
    )
    .unwrap();
    // Interrupted after step 15 (the checkpoint is at 10), then run again.
    tch::manual_seed(4);
    let out_b = d.path().join("b");
    let interrupted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = train(
            &v,
            std::slice::from_ref(&data),
            &out_b,
            None,
            &c,
            Device::Cpu,
            &mut |l| {
                if l.step == 15 {
                    panic!("interrupt");
                }
            },
        );
    }));
    assert!(interrupted.is_err());
    tch::manual_seed(99); // The resumed run must not depend on a fresh initialisation.
    let b = train(&v, &[data], &out_b, None, &c, Device::Cpu, &mut |_| {}).unwrap();
    assert_eq!(b.resumed_from, Some(10));
    assert_eq!(b.steps_done, 10);
    let na = Net::load(&a.model, &v, Device::Cpu).unwrap();
    let nb = Net::load(&b.model, &v, Device::Cpu).unwrap();
    let (va, vb) = (na.vs.variables(), nb.vs.variables());
    assert_eq!(va.len(), vb.len());
    for (k, t) in &va {
        assert!(t.equal(&vb[k]), "{k} differs after resume");
    }
    let log = std::fs::read_to_string(out_b.join("train_log.csv")).unwrap();
    assert_eq!(log.lines().count(), 21, "one log line per step, none twice");
}

/// With the opponent-policy head, the net still fits, and the head learns each position's
/// reply: its best move is the next position's target move wherever there is one (11 of 12).
/// The sidecar records the head; loading gives the same net back.
#[test]
fn the_opponent_policy_head_learns_the_reply() {
    let _rng = TORCH_RNG.lock().unwrap_or_else(|e| e.into_inner());
    tch::set_num_threads(1);
    tch::manual_seed(3);
    let d = tempfile::tempdir().unwrap();
    tiny_dataset(&d.path().join("data"));
    let mut c = cfg(80);
    c.arch.opponent_policy = true;
    c.opponent_policy_weight = 1.0;
    fits(d.path(), &c);
    let v = Variant::builtin("makruk").unwrap();
    let net = Net::load(&d.path().join("out/model.safetensors"), &v, Device::Cpu).unwrap();
    assert!(net.meta.arch.opponent_policy);
    let (s, _) = varzero_trainer::load_window(&v, &[d.path().join("data")], 100, 0.0).unwrap();
    let idx: Vec<usize> = (0..s.len()).collect();
    let (x, ..) = s.batch(&net.enc, &idx, &[], Device::Cpu);
    let (opp_t, opp_mask) = s.batch_opponent(&net.enc, &idx, &[], Device::Cpu);
    let (_, _, opp) = tch::no_grad(|| net.model.forward_train(&x, false));
    let best = Vec::<i64>::try_from((opp.unwrap() + &opp_mask).argmax(-1, false)).unwrap();
    let want = Vec::<i64>::try_from(opp_t.argmax(-1, false)).unwrap();
    let with_next: Vec<usize> = idx
        .iter()
        .copied()
        .filter(|&i| s.items[i].next.is_some())
        .collect();
    assert_eq!(with_next.len(), 11);
    let right = with_next.iter().filter(|&&i| best[i] == want[i]).count();
    assert!(right >= 10, "the head finds {right} of 11 replies");
}
