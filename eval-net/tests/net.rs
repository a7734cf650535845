//! Encoding, masking, saving and loading of the network.

use std::sync::Arc;
use tch::{Device, Tensor};
use varzero_eval_net::{Arch, Encoding, Net, NetEvaluator};
use varzero_rules::{Color, Position, Variant};
use varzero_search::{Batch, Evaluation, Evaluator};

/// The same position seen from the other side: ranks mirrored, colours and side to move swapped.
fn colour_mirror(fen: &str) -> String {
    let f: Vec<&str> = fen.split_whitespace().collect();
    let board: Vec<String> = f[0]
        .split('/')
        .rev()
        .map(|r| {
            r.chars()
                .map(|c| {
                    if c.is_ascii_uppercase() {
                        c.to_ascii_lowercase()
                    } else {
                        c.to_ascii_uppercase()
                    }
                })
                .collect()
        })
        .collect();
    let stm = if f[1] == "w" { "b" } else { "w" };
    format!("{} {} {}", board.join("/"), stm, f[2..].join(" "))
}

#[test]
fn black_sees_the_board_as_white_does() {
    let v = Variant::builtin("xiangqi").unwrap();
    let enc = Encoding::new(&v);
    let fen = "3k5/4a4/4b4/p3p4/9/2P6/9/4C4/4A4/4K4 w - - 0 1";
    let a = Position::from_fen(&v, fen).unwrap();
    let b = Position::from_fen(&v, &colour_mirror(fen)).unwrap();
    assert_eq!(b.side_to_move(), Color::Black);
    let (mut xa, mut xb) = (vec![0f32; enc.input_len()], vec![0f32; enc.input_len()]);
    enc.encode(&a, &mut xa);
    enc.encode(&b, &mut xb);
    let s = enc.squares();
    let colour_plane = 2 * v.pieces.len();
    for p in 0..enc.planes {
        let (pa, pb) = (&xa[p * s..(p + 1) * s], &xb[p * s..(p + 1) * s]);
        if p == colour_plane {
            assert!(pa.iter().all(|&x| x == 0.0) && pb.iter().all(|&x| x == 1.0));
        } else {
            assert_eq!(pa, pb, "plane {p}");
        }
    }
    // Mirrored moves get the same policy index.
    let mut ia: Vec<usize> = a
        .legal_moves()
        .iter()
        .map(|&m| enc.policy_index(m, Color::White))
        .collect();
    let mut ib: Vec<usize> = b
        .legal_moves()
        .iter()
        .map(|&m| enc.policy_index(m, Color::Black))
        .collect();
    ia.sort();
    ib.sort();
    assert_eq!(ia, ib);
    // Own pieces: the white general on e1 is on the general plane at e1.
    let king = v.royal_kind();
    assert_eq!(xa[king * s + 4], 1.0);
}

#[test]
fn policy_indices_are_distinct_and_in_range() {
    for name in ["makruk", "ouk-chatrang", "xiangqi", "oxeli"] {
        let v = Variant::builtin(name).unwrap();
        let enc = Encoding::new(&v);
        let pos = Position::start(&v);
        let idx: Vec<usize> = pos
            .legal_moves()
            .iter()
            .map(|&m| enc.policy_index(m, pos.side_to_move()))
            .collect();
        let mut d = idx.clone();
        d.sort();
        d.dedup();
        assert_eq!(d.len(), idx.len(), "{name}");
        assert!(idx.iter().all(|&i| i < enc.policy_len()));
    }
}

fn eval(ev: &dyn Evaluator, pos: &[Position]) -> Evaluation {
    let mut batch = Batch::default();
    for p in pos {
        let moves: Vec<_> = p.legal_moves().iter().copied().collect();
        batch.push(ev, p, &moves);
    }
    let mut out = Evaluation::default();
    ev.evaluate(&batch, &mut out);
    out
}

#[test]
fn priors_cover_exactly_the_legal_moves() {
    tch::manual_seed(1);
    let v = Variant::builtin("makruk").unwrap();
    let net = Net::new(
        &v,
        Arch {
            blocks: 1,
            channels: 16,
            attacks: false,
            opponent_policy: false,
        },
        Device::Cpu,
    );
    let ev = NetEvaluator::new(net, "test".into());
    let a = Position::start(&v);
    let b = Position::from_fen(&v, "8/8/8/4k3/8/8/R7/4K3 b - 32 6 1").unwrap();
    let out = eval(&*ev, &[a.clone(), b.clone()]);
    let (na, nb) = (a.legal_moves().len(), b.legal_moves().len());
    assert_eq!(out.priors.len(), na + nb);
    for (lo, hi) in [(0, na), (na, na + nb)] {
        let s: f32 = out.priors[lo..hi].iter().sum();
        assert!((s - 1.0).abs() < 1e-4);
        assert!(out.priors[lo..hi].iter().all(|&p| p > 0.0));
    }
    for w in &out.wdl {
        assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    }
}

#[test]
fn save_and_load_reproduce_outputs_exactly() {
    tch::manual_seed(2);
    let v = Variant::builtin("oxeli").unwrap();
    let net = Net::new(
        &v,
        Arch {
            blocks: 2,
            channels: 16,
            attacks: false,
            opponent_policy: false,
        },
        Device::Cpu,
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.safetensors");
    net.save(&path).unwrap();
    let loaded = Net::load(&path, &v, Device::Cpu).unwrap();
    assert_eq!(loaded.meta, net.meta);
    let enc = Encoding::new(&v);
    let mut x = vec![0f32; enc.input_len()];
    enc.encode(&Position::start(&v), &mut x);
    let x = Tensor::from_slice(&x).view([1, enc.planes as i64, 8, 8]);
    let (p1, v1) = net.infer(&x);
    let (p2, v2) = loaded.infer(&x);
    assert!(
        p1.equal(&p2) && v1.equal(&v2),
        "outputs differ after save/load"
    );
}

#[test]
fn a_net_for_other_rules_is_refused_with_the_difference() {
    let v = Variant::builtin("makruk").unwrap();
    let net = Net::new(
        &v,
        Arch {
            blocks: 1,
            channels: 8,
            attacks: false,
            opponent_policy: false,
        },
        Device::Cpu,
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    net.save(&path).unwrap();
    let x = Variant::builtin("xiangqi").unwrap();
    let err = Net::load(&path, &x, Device::Cpu)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        err.contains("variant 'makruk' (expected 'xiangqi')"),
        "{err}"
    );
    // Same name, changed rules: the rules hash differs.
    let changed: Arc<Variant> = v.with_overrides(&["stalemate=loss".into()]).unwrap();
    let err = Net::load(&path, &changed, Device::Cpu)
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("rules hash"), "{err}");
}

#[test]
fn a_missing_net_is_named_not_its_sidecar() {
    let v = Variant::builtin("makruk").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.safetensors");
    let err = Net::load(&path, &v, Device::Cpu)
        .err()
        .expect("refused")
        .to_string();
    assert!(err.starts_with(&path.display().to_string()), "{err}");
    assert!(!err.contains(".json"), "{err}");
}

/// A tiny saved makruk net, with its named tensors changed by `change` before saving.
fn saved_net(dir: &std::path::Path, change: impl Fn(&str, Tensor) -> Tensor) -> std::path::PathBuf {
    let v = Variant::builtin("makruk").unwrap();
    let net = Net::new(
        &v,
        Arch {
            blocks: 1,
            channels: 8,
            attacks: false,
            opponent_policy: false,
        },
        Device::Cpu,
    );
    let path = dir.join("n.safetensors");
    net.save(&path).unwrap();
    let named: Vec<(String, Tensor)> = net
        .vs
        .variables()
        .into_iter()
        .map(|(n, t)| {
            let t = change(&n, t.detach().copy());
            (n, t)
        })
        .collect();
    Tensor::write_safetensors(&named, &path).unwrap();
    path
}

fn load_error(path: &std::path::Path) -> String {
    let v = Variant::builtin("makruk").unwrap();
    Net::load(path, &v, Device::Cpu)
        .err()
        .expect("refused")
        .to_string()
}

/// A net holding NaN or an infinity is refused when it is loaded, naming the tensor (before,
/// it was accepted, and self-play wrote NaN root values into every position).
#[test]
fn non_finite_weights_are_refused_naming_the_tensor() {
    let dir = tempfile::tempdir().unwrap();
    let path = saved_net(dir.path(), |n, t| {
        if n == "block0.c1.weight" {
            let _ = t.view(-1).get(5).fill_(f64::NAN);
        }
        t
    });
    let err = load_error(&path);
    assert_eq!(
        err,
        format!("{}: tensor 'block0.c1.weight' holds NaN", path.display())
    );
    let path = saved_net(dir.path(), |n, t| {
        if n == "value_bn.running_var" {
            let _ = t.get(0).fill_(f64::INFINITY);
        }
        t
    });
    let err = load_error(&path);
    assert!(
        err.ends_with("tensor 'value_bn.running_var' holds an infinity"),
        "{err}"
    );
    // The same net, finite: it loads.
    let path = saved_net(dir.path(), |_, t| t);
    let v = Variant::builtin("makruk").unwrap();
    Net::load(&path, &v, Device::Cpu).unwrap();
}

/// A tensor of the right size but the wrong shape is refused on one line naming it and both
/// shapes (before: a 31-line libtorch stack trace); so is a missing one.
#[test]
fn wrong_shapes_are_refused_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = saved_net(dir.path(), |n, t| {
        if n == "conv_in.weight" {
            let s = t.size();
            t.reshape([s[1], s[0], s[2], s[3]])
        } else {
            t
        }
    });
    let err = load_error(&path);
    assert!(!err.contains('\n'), "{err}");
    let planes = Encoding::new(&Variant::builtin("makruk").unwrap()).planes;
    assert!(
        err.contains(&format!(
            "tensor 'conv_in.weight' has shape [{planes}, 8, 3, 3]"
        )) && err.contains(&format!("needs [8, {planes}, 3, 3]")),
        "{err}"
    );
    let path = saved_net(dir.path(), |n, t| {
        if n == "value_fc2.bias" {
            Tensor::zeros([1], (tch::Kind::Float, Device::Cpu))
        } else {
            t
        }
    });
    let err = load_error(&path);
    assert!(
        err.contains("tensor 'value_fc2.bias' has shape [1]"),
        "{err}"
    );
}

/// The attack planes of a hand-made Makruk position, worked out square by square.
#[test]
fn attack_planes_mark_attacks_and_hanging_pieces() {
    let v = Variant::builtin("makruk").unwrap();
    let enc = Encoding::new(&v).with_attacks(true);
    assert_eq!(enc.planes, Encoding::new(&v).planes + 4);
    // White: king d2, rook e4, knight c3. Black: king a8, rook c8, pawn d5, knight h4.
    // - The rook e4 is attacked by the pawn d5 (lower value): it hangs, although the knight
    //   c3 defends it.
    // - The knight c3 is attacked by the rook c8 (higher value) and defended by the king d2:
    //   it does not hang.
    // - The knight h4 (rook e4 along the fourth rank) and the pawn d5 (knight c3) are attacked
    //   and not defended: both hang. The kings never hang.
    let pos = Position::from_fen(&v, "k1r5/8/8/3p4/4R2n/2N5/3K4/8 w - - 0 1").unwrap();
    let mut x = vec![0f32; enc.input_len()];
    enc.encode(&pos, &mut x);
    let s = enc.squares();
    let first = enc.planes - 4;
    let sq = |name: &str| {
        let b = name.as_bytes();
        (b[1] - b'1') as usize * 8 + (b[0] - b'a') as usize
    };
    let on = |plane: usize| -> Vec<usize> {
        (0..s)
            .filter(|&i| x[(first + plane) * s + i] == 1.0)
            .collect()
    };
    let set = |names: &[&str]| -> Vec<usize> {
        let mut v: Vec<usize> = names.iter().map(|n| sq(n)).collect();
        v.sort();
        v
    };
    assert_eq!(on(2), set(&["e4"]), "own pieces that hang");
    assert_eq!(on(3), set(&["d5", "h4"]), "opponent pieces that hang");
    let own = on(0);
    for n in ["d5", "h4", "e8", "a4", "d4", "c1", "e1", "b5"] {
        assert!(own.contains(&sq(n)), "own attacks {n}");
    }
    for n in ["a8", "c8", "f5", "h5"] {
        assert!(!own.contains(&sq(n)), "own attacks not {n}");
    }
    let theirs = on(1);
    for n in ["e4", "c4", "c3", "b8", "g6", "f3"] {
        assert!(theirs.contains(&sq(n)), "their attacks {n}");
    }
    for n in ["e5", "c2", "d4"] {
        assert!(!theirs.contains(&sq(n)), "their attacks not {n}");
    }
    // Without the option the base planes are the same and nothing follows them.
    let base = Encoding::new(&v);
    let mut y = vec![0f32; base.input_len()];
    base.encode(&pos, &mut y);
    assert_eq!(&x[..base.input_len()], &y[..]);
}

/// Seen from Black, the attack planes are White's seen from White.
#[test]
fn attack_planes_turn_with_the_side_to_move() {
    let v = Variant::builtin("xiangqi").unwrap();
    let enc = Encoding::new(&v).with_attacks(true);
    let fen = "3k5/4a4/4b4/p3p4/9/2P6/9/4C4/4A4/4K4 w - - 0 1";
    let a = Position::from_fen(&v, fen).unwrap();
    let b = Position::from_fen(&v, &colour_mirror(fen)).unwrap();
    let (mut xa, mut xb) = (vec![0f32; enc.input_len()], vec![0f32; enc.input_len()]);
    enc.encode(&a, &mut xa);
    enc.encode(&b, &mut xb);
    let s = enc.squares();
    let first = enc.planes - 4;
    assert_eq!(&xa[first * s..], &xb[first * s..]);
    assert!(xa[first * s..(first + 2) * s].contains(&1.0));
}

/// A net with attack planes saves `attacks` in its sidecar and loads with it; a sidecar without
/// the field (every earlier net) loads without them.
#[test]
fn attack_planes_travel_in_the_sidecar() {
    let v = Variant::builtin("makruk").unwrap();
    let dir = std::env::temp_dir().join(format!("vz-attacks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let arch = Arch {
        blocks: 1,
        channels: 8,
        attacks: true,
        opponent_policy: false,
    };
    let net = Net::new(&v, arch, Device::Cpu);
    let path = dir.join("a.safetensors");
    net.save(&path).unwrap();
    let meta = std::fs::read_to_string(path.with_extension("json")).unwrap();
    assert!(meta.contains("\"attacks\":true") || meta.contains("\"attacks\": true"));
    let back = Net::load(&path, &v, Device::Cpu).unwrap();
    assert!(back.enc.attacks && back.meta.arch.attacks);
    assert_eq!(back.enc.planes, 26);
    let plain = Net::new(
        &v,
        Arch {
            attacks: false,
            opponent_policy: false,
            ..arch
        },
        Device::Cpu,
    );
    let p2 = dir.join("b.safetensors");
    plain.save(&p2).unwrap();
    assert!(!std::fs::read_to_string(p2.with_extension("json"))
        .unwrap()
        .contains("attacks"));
    assert!(!Net::load(&p2, &v, Device::Cpu).unwrap().enc.attacks);
    std::fs::remove_dir_all(&dir).ok();
}

/// A net with the opponent-policy head saves it (weights and sidecar field) and loads it back
/// with the same head outputs; inference gives the policy and value of the training forward
/// without computing the head; a sidecar without the field (a shipped net) loads without it.
#[test]
fn the_opponent_policy_head_travels_and_leaves_inference_alone() {
    let v = Variant::builtin("xiangqi").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let arch = Arch {
        blocks: 1,
        channels: 8,
        attacks: false,
        opponent_policy: true,
    };
    tch::manual_seed(11);
    let net = Net::new(&v, arch, Device::Cpu);
    let path = dir.path().join("o.safetensors");
    net.save(&path).unwrap();
    let meta = std::fs::read_to_string(path.with_extension("json")).unwrap();
    assert!(meta.contains("opponent_policy"));
    let back = Net::load(&path, &v, Device::Cpu).unwrap();
    assert!(back.meta.arch.opponent_policy);
    let pos = Position::start(&v);
    let mut x = vec![0f32; back.enc.input_len()];
    back.enc.encode(&pos, &mut x);
    let x = Tensor::from_slice(&x).view([
        1,
        back.enc.planes as i64,
        back.enc.ranks as i64,
        back.enc.files as i64,
    ]);
    let (_, _, o1) = tch::no_grad(|| net.model.forward_train(&x, false));
    let (p2, v2, o2) = tch::no_grad(|| back.model.forward_train(&x, false));
    assert!(o1.unwrap().allclose(&o2.unwrap(), 1e-6, 1e-6, false));
    let (p3, v3) = back.infer(&x);
    assert!(p2.allclose(&p3, 1e-6, 1e-6, false) && v2.allclose(&v3, 1e-6, 1e-6, false));
    let plain = Net::load(
        &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../nets/xiangqi-net1.safetensors"),
        &v,
        Device::Cpu,
    )
    .unwrap();
    assert!(!plain.meta.arch.opponent_policy && plain.model.forward_train(&x, false).2.is_none());
}
