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
