//! The network: a residual tower with a policy head (from-square x to-square logits, plus
//! promotion choices where needed) and a win/draw/loss value head. Saved as safetensors with a
//! JSON sidecar naming the variant, its rules hash, the encoding version and the architecture.

use crate::encoding::{Encoding, ENCODING_VERSION};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tch::{nn, Device, Tensor};
use varzero_rules::Variant;

/// Architecture: residual blocks and channels, and the optional input planes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arch {
    pub blocks: usize,
    pub channels: usize,
    /// The attack planes as inputs (`Encoding::with_attacks`); absent in older sidecars.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub attacks: bool,
    /// A second policy head trained on the opponent's reply (KataGo's auxiliary opponent-policy
    /// target). Training only: inference never computes it. Absent in older sidecars.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub opponent_policy: bool,
}

impl Default for Arch {
    /// Small enough to train in minutes on two CPU cores.
    fn default() -> Self {
        Arch {
            blocks: 6,
            channels: 64,
            attacks: false,
            opponent_policy: false,
        }
    }
}

/// The JSON sidecar of a saved net.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetMeta {
    pub format: String,
    pub variant: String,
    pub rules_hash: String,
    pub encoding_version: u32,
    pub arch: Arch,
    pub planes: usize,
    pub board: [usize; 2],
    pub policy_len: usize,
    /// Training steps behind these weights.
    pub step: u64,
    /// The net these weights were trained from, if any.
    pub parent: Option<String>,
}

pub const NET_FORMAT: &str = "varzero-net/1";

pub(crate) struct Block {
    pub(crate) c1: nn::Conv2D,
    pub(crate) b1: nn::BatchNorm,
    pub(crate) c2: nn::Conv2D,
    pub(crate) b2: nn::BatchNorm,
}

/// The model's layers.
pub struct Model {
    pub(crate) conv_in: nn::Conv2D,
    pub(crate) bn_in: nn::BatchNorm,
    pub(crate) blocks: Vec<Block>,
    pub(crate) pol: nn::Conv2D,
    pub(crate) pol_opp: Option<nn::Conv2D>,
    pub(crate) val_conv: nn::Conv2D,
    pub(crate) val_bn: nn::BatchNorm,
    pub(crate) val_fc1: nn::Linear,
    pub(crate) val_fc2: nn::Linear,
    pub(crate) squares: usize,
    pub(crate) promo: usize,
}

fn conv(p: nn::Path, i: i64, o: i64, k: i64) -> nn::Conv2D {
    nn::conv2d(
        p,
        i,
        o,
        k,
        nn::ConvConfig {
            padding: k / 2,
            bias: false,
            ..Default::default()
        },
    )
}

impl Model {
    fn new(p: &nn::Path, enc: &Encoding, arch: Arch) -> Model {
        let f = arch.channels as i64;
        let s = enc.squares() as i64;
        let bn = |p: nn::Path| nn::batch_norm2d(p, f, Default::default());
        Model {
            conv_in: conv(p / "conv_in", enc.planes as i64, f, 3),
            bn_in: bn(p / "bn_in"),
            blocks: (0..arch.blocks)
                .map(|i| {
                    let b = p / format!("block{i}");
                    Block {
                        c1: conv(&b / "c1", f, f, 3),
                        b1: bn(&b / "b1"),
                        c2: conv(&b / "c2", f, f, 3),
                        b2: bn(&b / "b2"),
                    }
                })
                .collect(),
            pol: nn::conv2d(
                p / "policy",
                f,
                s * enc.promo_choices as i64,
                1,
                Default::default(),
            ),
            pol_opp: arch.opponent_policy.then(|| {
                nn::conv2d(
                    p / "policy_opponent",
                    f,
                    s * enc.promo_choices as i64,
                    1,
                    Default::default(),
                )
            }),
            val_conv: conv(p / "value_conv", f, 4, 1),
            val_bn: nn::batch_norm2d(p / "value_bn", 4, Default::default()),
            val_fc1: nn::linear(p / "value_fc1", 4 * s, 64, Default::default()),
            val_fc2: nn::linear(p / "value_fc2", 64, 3, Default::default()),
            squares: enc.squares(),
            promo: enc.promo_choices,
        }
    }

    /// Policy logits `[N, policy_len]` and WDL logits `[N, 3]` from planes `[N, C, ranks, files]`.
    pub fn forward(&self, x: &Tensor, train: bool) -> (Tensor, Tensor) {
        let h = self.trunk(x, train);
        (self.policy(&self.pol, &h), self.value(&h, train))
    }

    /// As [`Model::forward`], with the opponent-policy logits (in the opponent's own view, as
    /// the next position's policy) where the architecture has that head.
    pub fn forward_train(&self, x: &Tensor, train: bool) -> (Tensor, Tensor, Option<Tensor>) {
        let h = self.trunk(x, train);
        let opp = self.pol_opp.as_ref().map(|c| self.policy(c, &h));
        (self.policy(&self.pol, &h), self.value(&h, train), opp)
    }

    fn trunk(&self, x: &Tensor, train: bool) -> Tensor {
        let mut h = x.apply(&self.conv_in).apply_t(&self.bn_in, train).relu();
        for b in &self.blocks {
            let r = h
                .apply(&b.c1)
                .apply_t(&b.b1, train)
                .relu()
                .apply(&b.c2)
                .apply_t(&b.b2, train);
            h = (r + h).relu();
        }
        h
    }

    fn policy(&self, head: &nn::Conv2D, h: &Tensor) -> Tensor {
        let n = h.size()[0];
        let s = self.squares as i64;
        let p = self.promo as i64;
        // Channel (choice, to) at pixel from -> index choice*S*S + from*S + to.
        h.apply(head)
            .view([n, p, s, s])
            .permute([0, 1, 3, 2])
            .reshape([n, p * s * s])
    }

    fn value(&self, h: &Tensor, train: bool) -> Tensor {
        let v = h
            .apply(&self.val_conv)
            .apply_t(&self.val_bn, train)
            .relu()
            .flatten(1, -1);
        v.apply(&self.val_fc1).relu().apply(&self.val_fc2)
    }
}

/// A network with its variable store, encoding and metadata.
pub struct Net {
    pub vs: nn::VarStore,
    pub model: Model,
    pub enc: Encoding,
    pub meta: NetMeta,
}

impl Net {
    /// A freshly initialised net for a variant.
    pub fn new(variant: &Arc<Variant>, arch: Arch, device: Device) -> Net {
        let enc = Encoding::new(variant).with_attacks(arch.attacks);
        let vs = nn::VarStore::new(device);
        let model = Model::new(&vs.root(), &enc, arch);
        let meta = NetMeta {
            format: NET_FORMAT.into(),
            variant: variant.name.clone(),
            rules_hash: format!("{:016x}", variant.rules_hash),
            encoding_version: ENCODING_VERSION,
            arch,
            planes: enc.planes,
            board: [enc.files, enc.ranks],
            policy_len: enc.policy_len(),
            step: 0,
            parent: None,
        };
        Net {
            vs,
            model,
            enc,
            meta,
        }
    }

    /// A copy with the same weights and metadata (its own variables).
    pub fn clone_net(&self) -> Net {
        let mut vs = nn::VarStore::new(self.vs.device());
        let model = Model::new(&vs.root(), &self.enc, self.meta.arch);
        vs.copy(&self.vs)
            .expect("the same architecture has the same variables");
        Net {
            vs,
            model,
            enc: self.enc.clone(),
            meta: self.meta.clone(),
        }
    }

    /// The sidecar path of a `.safetensors` file.
    pub fn sidecar(path: &Path) -> PathBuf {
        path.with_extension("json")
    }

    pub fn read_meta(path: &Path) -> Result<NetMeta> {
        let side = Self::sidecar(path);
        let text = std::fs::read_to_string(&side).map_err(|e| Error::io(&side, e))?;
        serde_json::from_str(&text).map_err(|e| Error::Meta {
            path: side.display().to_string(),
            reason: e.to_string(),
        })
    }

    /// Loads a net saved for `variant`; a net for other rules or another encoding is an error
    /// that says what differs.
    pub fn load(path: &Path, variant: &Arc<Variant>, device: Device) -> Result<Net> {
        // The file that was named is reported missing, not its sidecar.
        std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        let meta = Self::read_meta(path)?;
        let mut diffs = Vec::new();
        if meta.format != NET_FORMAT {
            diffs.push(format!("format {} (expected {NET_FORMAT})", meta.format));
        }
        if meta.variant != variant.name {
            diffs.push(format!(
                "variant '{}' (expected '{}')",
                meta.variant, variant.name
            ));
        }
        let rh = format!("{:016x}", variant.rules_hash);
        if meta.rules_hash != rh {
            diffs.push(format!(
                "rules hash {} (expected {rh}: the variant's rules changed)",
                meta.rules_hash
            ));
        }
        if meta.encoding_version != ENCODING_VERSION {
            diffs.push(format!(
                "encoding version {} (expected {ENCODING_VERSION})",
                meta.encoding_version
            ));
        }
        if !diffs.is_empty() {
            return Err(Error::Mismatch {
                path: path.display().to_string(),
                diffs: diffs.join(", "),
            });
        }
        // Every tensor is checked before libtorch copies it: a wrong shape would otherwise be
        // a C++ stack trace, and a NaN a net that plays and writes NaN targets.
        let tensors: std::collections::HashMap<String, Tensor> = Tensor::read_safetensors(path)
            .map_err(|e| Error::torch(path, e))?
            .into_iter()
            .collect();
        let mut net = Net::new(variant, meta.arch, device);
        let mut vars: Vec<(String, Tensor)> = net.vs.variables().into_iter().collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, var) in &vars {
            let bad = |reason: String| Error::Tensor {
                path: path.display().to_string(),
                name: name.clone(),
                reason,
            };
            let src = tensors.get(name).ok_or_else(|| bad("is missing".into()))?;
            if src.size() != var.size() {
                return Err(bad(format!(
                    "has shape {:?}, but the sidecar's architecture ({} blocks, {} channels) \
                     needs {:?}",
                    src.size(),
                    meta.arch.blocks,
                    meta.arch.channels,
                    var.size()
                )));
            }
            if !src.is_floating_point() {
                return Err(bad(format!("holds {:?}, not floats", src.kind())));
            }
            if src.isnan().any().int64_value(&[]) != 0 {
                return Err(bad("holds NaN".into()));
            }
            if src.isinf().any().int64_value(&[]) != 0 {
                return Err(bad("holds an infinity".into()));
            }
        }
        tch::no_grad(|| -> Result<()> {
            for (name, mut var) in vars {
                var.f_copy_(&tensors[&name])
                    .map_err(|e| Error::torch(path, e))?;
            }
            Ok(())
        })?;
        net.meta = meta;
        Ok(net)
    }

    /// Saves weights and sidecar atomically (temporary files, then renames; the sidecar last).
    pub fn save(&self, path: &Path) -> Result<()> {
        // tch picks the format by the extension, so the temporary name keeps `.safetensors`.
        let tmp = path.with_extension("tmp.safetensors");
        self.vs.save(&tmp).map_err(|e| Error::torch(&tmp, e))?;
        let side = Self::sidecar(path);
        let side_tmp = side.with_extension("json.tmp");
        let json = serde_json::to_string_pretty(&self.meta).expect("metadata serialises");
        std::fs::write(&side_tmp, json).map_err(|e| Error::io(&side_tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
        std::fs::rename(&side_tmp, &side).map_err(|e| Error::io(&side, e))?;
        Ok(())
    }

    /// Forward pass without gradients, in evaluation mode.
    pub fn infer(&self, x: &Tensor) -> (Tensor, Tensor) {
        tch::no_grad(|| self.model.forward(x, false))
    }

    pub fn parameters(&self) -> i64 {
        self.vs
            .trainable_variables()
            .iter()
            .map(|t| t.numel() as i64)
            .sum()
    }
}
