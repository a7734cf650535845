//! Training samples from the datasets: the newest positions, with their policy targets turned
//! into policy indices and their legal-move masks, encoded batch by batch.

use crate::error::{other, Result};
use std::path::PathBuf;
use std::sync::Arc;
use tch::{Device, Tensor};
use varzero_datasets::SkippedShard;
use varzero_eval_net::Encoding;
use varzero_rules::{Position, Variant};

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
