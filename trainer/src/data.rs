//! Training samples from the datasets: the newest positions, with their policy targets turned
//! into policy indices and their legal-move masks, encoded batch by batch.

use crate::error::{other, Result};
use std::path::PathBuf;
use std::sync::Arc;
use tch::{Device, Tensor};
use varzero_datasets::SkippedShard;
use varzero_eval_net::Encoding;
use varzero_rules::{Position, Variant};
#[cfg(test)]
use varzero_search::Tactics;

/// One position with its targets, ready to encode.
#[derive(Clone, Debug)]
pub struct Sample {
    pub fen: String,
    /// (policy index, probability); empty when the search was cheap (no policy target).
    pub policy: Vec<(u32, f32)>,
    pub legal: Vec<u32>,
    pub wdl: [f32; 3],
    /// Index of the data directory the position came from (0: the first, e.g. generation 0).
    pub source: u32,
    /// The sample of the same game's next position (the opponent's reply), where the window
    /// holds it with a policy target: the opponent-policy head's target.
    pub next: Option<u32>,
}

pub struct Samples {
    pub variant: Arc<Variant>,
    pub items: Vec<Sample>,
}

impl Samples {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Inputs, dense policy targets, legal-move masks (0 or -1e9) and WDL targets of a batch.
    /// A sample whose `mirror` flag is set goes in mirrored left-right (planes, policy target and
    /// legal moves alike); `mirror` is empty or as long as `idx`.
    pub fn batch(
        &self,
        enc: &Encoding,
        idx: &[usize],
        mirror: &[bool],
        device: Device,
    ) -> (Tensor, Tensor, Tensor, Tensor) {
        let n = idx.len();
        let (il, pl) = (enc.input_len(), enc.policy_len());
        let mut x = vec![0f32; n * il];
        let mut pol = vec![0f32; n * pl];
        let mut mask = vec![-1e9f32; n * pl];
        let mut wdl = vec![0f32; n * 3];
        for (b, &i) in idx.iter().enumerate() {
            let s = &self.items[i];
            let pos = Position::from_fen(&self.variant, &s.fen).expect("validated when loaded");
            let m = mirror.get(b).copied().unwrap_or(false);
            enc.encode(&pos, &mut x[b * il..(b + 1) * il]);
            if m {
                enc.mirror_planes(&mut x[b * il..(b + 1) * il]);
            }
            let at = |k: u32| {
                b * pl
                    + if m {
                        enc.mirror_policy(k as usize)
                    } else {
                        k as usize
                    }
            };
            for &(k, p) in &s.policy {
                pol[at(k)] = p;
            }
            for &k in &s.legal {
                mask[at(k)] = 0.0;
            }
            wdl[b * 3..b * 3 + 3].copy_from_slice(&s.wdl);
        }
        let t = |v: &[f32], shape: &[i64]| Tensor::from_slice(v).view(shape).to_device(device);
        (
            t(
                &x,
                &[
                    n as i64,
                    enc.planes as i64,
                    enc.ranks as i64,
                    enc.files as i64,
                ],
            ),
            t(&pol, &[n as i64, pl as i64]),
            t(&mask, &[n as i64, pl as i64]),
            t(&wdl, &[n as i64, 3]),
        )
    }
}

impl Samples {
    /// Dense opponent-policy targets and legal-move masks of a batch (as [`Samples::batch`]'s
    /// policy pair): each sample's target is its game's next position's policy target, in that
    /// position's own view, mirrored with the sample; all zeros where there is none.
    pub fn batch_opponent(
        &self,
        enc: &Encoding,
        idx: &[usize],
        mirror: &[bool],
        device: Device,
    ) -> (Tensor, Tensor) {
        let n = idx.len();
        let pl = enc.policy_len();
        let mut pol = vec![0f32; n * pl];
        let mut mask = vec![-1e9f32; n * pl];
        for (b, &i) in idx.iter().enumerate() {
            let Some(j) = self.items[i].next else {
                continue;
            };
            let s = &self.items[j as usize];
            let m = mirror.get(b).copied().unwrap_or(false);
            let at = |k: u32| {
                b * pl
                    + if m {
                        enc.mirror_policy(k as usize)
                    } else {
                        k as usize
                    }
            };
            for &(k, p) in &s.policy {
                pol[at(k)] = p;
            }
            for &k in &s.legal {
                mask[at(k)] = 0.0;
            }
        }
        let t = |v: &[f32]| {
            Tensor::from_slice(v)
                .view([n as i64, pl as i64])
                .to_device(device)
        };
        (t(&pol), t(&mask))
    }
}

/// Mixes the exchange hints into every policy target (`train.hint_target`): each sample that
/// has one gets `(1 - weight) * target + weight * softmax(hints / temperature)` over its legal
/// moves. A teacher's one-hot target then also says what every other move wins or hangs.
/// Only positions whose best hint is at least `min_gain` pawns are mixed. Samples without a
/// policy target (cheap searches) keep none. Returns how many were mixed.
pub fn mix_hint_targets(
    samples: &mut Samples,
    weight: f32,
    temperature: f32,
    min_gain: f32,
) -> usize {
    use rayon::prelude::*;
    if weight <= 0.0 {
        return 0;
    }
    let variant = samples.variant.clone();
    let tactics = varzero_search::Tactics::new(&variant);
    samples
        .items
        .par_iter_mut()
        .map(|s| {
            if s.policy.is_empty() {
                return 0;
            }
            let mut pos = Position::from_fen(&variant, &s.fen).expect("validated when loaded");
            // `legal` holds the policy indices of these moves, in this order.
            let moves: Vec<_> = pos.legal_moves().iter().copied().collect();
            let mut hints = vec![0f32; moves.len()];
            tactics.move_hints(&mut pos, &moves, &mut hints);
            if hints.iter().cloned().fold(f32::NEG_INFINITY, f32::max) < min_gain {
                return 0;
            }
            let mut h = Vec::with_capacity(hints.len());
            varzero_search::hint_priors(&hints, temperature, &mut h);
            let mut target: Vec<(u32, f32)> = s
                .legal
                .iter()
                .zip(&h)
                .map(|(&k, &p)| (k, weight * p))
                .collect();
            for &(k, p) in &s.policy {
                match target.iter_mut().find(|(j, _)| *j == k) {
                    Some(t) => t.1 += (1.0 - weight) * p,
                    None => target.push((k, (1.0 - weight) * p)),
                }
            }
            s.policy = target;
            1
        })
        .sum()
}

/// The newest `n` positions of `dirs` for `variant` (positions of other rules are skipped),
/// their value target `(1 - mix) * result + mix * search value`.
pub fn load_window(
    variant: &Arc<Variant>,
    dirs: &[PathBuf],
    n: usize,
    mix: f32,
) -> Result<(Samples, Vec<SkippedShard>)> {
    let (lf, per_dir, skipped) = varzero_datasets::scan_positions_window_sources(dirs, n)?;
    let enc = Encoding::new(variant);
    let mut items = Vec::new();
    let rules_hash = format!("{:016x}", variant.rules_hash);
    if let Some(lf) = lf {
        let df = lf.collect().map_err(other)?;
        let records = varzero_datasets::positions_from_frame(&df).map_err(other)?;
        let sources = per_dir
            .iter()
            .enumerate()
            .flat_map(|(i, &rows)| std::iter::repeat_n(i as u32, rows));
        if per_dir.iter().sum::<usize>() != records.len() {
            return Err(other(format!(
                "the window's shards list {} positions but hold {}",
                per_dir.iter().sum::<usize>(),
                records.len()
            )));
        }
        let mut records: Vec<_> = records.into_iter().zip(sources).collect();
        // Workers finish games in any order, so shards hold them in any order; sorting makes
        // the samples (and so a seeded training run) depend only on the games. The sort is
        // stable: equal keys from different directories keep the directories' order.
        records.sort_by_key(|(r, _)| (r.game_id, r.ply));
        // Game ids repeat across directories, so a game is (directory, game id).
        let mut keys: Vec<(u32, u64, u32)> = Vec::new();
        for (r, source) in records {
            if r.rules_hash != rules_hash {
                continue;
            }
            let Ok(pos) = Position::from_fen(variant, &r.fen) else {
                continue;
            };
            let stm = pos.side_to_move();
            let legal: Vec<u32> = pos
                .legal_moves()
                .iter()
                .map(|&m| enc.policy_index(m, stm) as u32)
                .collect();
            let policy = if r.full_search {
                r.policy_moves
                    .iter()
                    .zip(&r.policy_probs)
                    .filter_map(|(m, &p)| {
                        pos.parse_uci(m)
                            .ok()
                            .map(|m| (enc.policy_index(m, stm) as u32, p))
                    })
                    .collect()
            } else {
                Vec::new()
            };
            items.push(Sample {
                fen: r.fen,
                policy,
                legal,
                wdl: std::array::from_fn(|i| (1.0 - mix) * r.result_wdl[i] + mix * r.root_wdl[i]),
                source,
                next: None,
            });
            keys.push((source, r.game_id, r.ply));
        }
        let at: std::collections::HashMap<(u32, u64, u32), usize> =
            keys.iter().enumerate().map(|(i, &k)| (k, i)).collect();
        for (i, &(source, game, ply)) in keys.iter().enumerate() {
            if let Some(&j) = at.get(&(source, game, ply + 1)) {
                if !items[j].policy.is_empty() {
                    items[i].next = Some(j as u32);
                }
            }
        }
    }
    Ok((
        Samples {
            variant: variant.clone(),
            items,
        },
        skipped,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_target_mixes_the_hints_softmax_into_the_played_move() {
        // Makruk, White to move: the rook on d1 can take the black rook on d5 (+5), which
        // nothing defends; the black knight on e6 keeps Black above the mop-up's 3 pawns, so
        // the capture's hint is the rook alone. The teacher played a3a4 (one-hot), a quiet move
        // to a square no black piece attacks (hint 0).
        let v = Variant::builtin("makruk").unwrap();
        let fen = "4k3/8/4n2p/3r4/8/P7/8/3RK3 w - - 0 1";
        let pos = Position::from_fen(&v, fen).unwrap();
        let enc = Encoding::new(&v);
        let stm = pos.side_to_move();
        let moves: Vec<_> = pos.legal_moves().iter().copied().collect();
        let idx = |u: &str| enc.policy_index(pos.parse_uci(u).unwrap(), stm) as u32;
        let legal: Vec<u32> = moves
            .iter()
            .map(|&m| enc.policy_index(m, stm) as u32)
            .collect();
        let mut samples = Samples {
            variant: v.clone(),
            items: vec![
                Sample {
                    fen: fen.into(),
                    policy: vec![(idx("a3a4"), 1.0)],
                    legal: legal.clone(),
                    wdl: [0.0, 1.0, 0.0],
                    source: 0,
                    next: None,
                },
                Sample {
                    fen: fen.into(),
                    policy: Vec::new(),
                    legal,
                    wdl: [0.0, 1.0, 0.0],
                    source: 0,
                    next: None,
                },
            ],
        };
        let t = Tactics::new(&v);
        let mut p = pos.clone();
        let mut hints = vec![0f32; moves.len()];
        t.move_hints(&mut p, &moves, &mut hints);
        // The target by hand, from the hints: weight 0.25 of e^(h - 5) / z on every move, and
        // 0.75 more on the played one.
        let at = |u: &str| hints[moves.iter().position(|&m| pos.uci(m) == u).unwrap()];
        assert_eq!(at("d1d5"), 5.0);
        assert_eq!(at("a3a4"), 0.0);
        let z: f32 = hints.iter().map(|&h| (h - 5.0).exp()).sum();
        // A floor above the best hint (5) leaves the target alone.
        let before = samples.items[0].policy.clone();
        assert_eq!(mix_hint_targets(&mut samples, 0.25, 1.0, 5.5), 0);
        assert_eq!(samples.items[0].policy, before);
        assert_eq!(mix_hint_targets(&mut samples, 0.25, 1.0, 5.0), 1);
        let got = |u: &str| {
            samples.items[0]
                .policy
                .iter()
                .find(|(k, _)| *k == idx(u))
                .unwrap()
                .1
        };
        let close = |a: f32, b: f32| (a - b).abs() < 1e-6;
        assert!(close(got("d1d5"), 0.25 / z), "{}", got("d1d5"));
        assert!(close(got("a3a4"), 0.75 + 0.25 * (-5f32).exp() / z));
        let total: f32 = samples.items[0].policy.iter().map(|x| x.1).sum();
        assert!(close(total, 1.0), "{total}");
        assert_eq!(samples.items[0].policy.len(), moves.len());
        assert!(samples.items[1].policy.is_empty(), "no target stays none");
        // Weight 0 leaves the targets alone.
        let before = samples.items[0].policy.clone();
        assert_eq!(mix_hint_targets(&mut samples, 0.0, 1.0, 0.0), 0);
        assert_eq!(samples.items[0].policy, before);
    }
}
