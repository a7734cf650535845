//! The net as it runs in a search: every batch norm folded into the convolution before it (one
//! op instead of two, the running statistics applied once at load), in f32 or bfloat16. The
//! trainer keeps the unfolded `Model`; this is built from it whenever an evaluator is made.
//!
//! bfloat16 is worth it only where the CPU computes in it (`avx512_bf16`, AMX): elsewhere
//! oneDNN emulates it and it is slower than f32. [`Precision::auto`] therefore reads the CPU's
//! flags, and `f32` is what every other machine (and every GPU, unless asked) gets.

use crate::net::Model;
use tch::{Device, Kind, Tensor};

/// Arithmetic of inference. Training is always f32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    F32,
    Bf16,
}

/// The batch norms' epsilon (tch's default, which `Model` uses).
const BN_EPS: f64 = 1e-5;

impl Precision {
    /// `f32`, `bf16`, or `auto` ([`Precision::auto`]).
    pub fn parse(s: &str) -> Result<Precision, String> {
        match s {
            "f32" => Ok(Precision::F32),
            "bf16" => Ok(Precision::Bf16),
            "auto" => Ok(Precision::auto(Device::Cpu)),
            _ => Err(format!("unknown precision '{s}' (auto, f32, bf16)")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Bf16 => "bf16",
        }
    }

    /// bfloat16 on a CPU with native bf16 arithmetic, f32 elsewhere (and on GPUs).
    pub fn auto(device: Device) -> Precision {
        if device == Device::Cpu && cpu_has_bf16() {
            Precision::Bf16
        } else {
            Precision::F32
        }
    }

    pub fn kind(self) -> Kind {
        match self {
            Precision::F32 => Kind::Float,
            Precision::Bf16 => Kind::BFloat16,
        }
    }
}

/// Whether this CPU computes in bfloat16 natively (`avx512_bf16` or `amx_bf16` in
/// /proc/cpuinfo). Read once; false where the file is missing.
pub fn cpu_has_bf16() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|s| cpu_flags_have_bf16(&s))
    })
}

/// The test behind [`cpu_has_bf16`], on the text of /proc/cpuinfo.
pub fn cpu_flags_have_bf16(cpuinfo: &str) -> bool {
    cpuinfo
        .lines()
        .filter(|l| l.starts_with("flags"))
        .take(1)
        .any(|l| {
            l.split_whitespace()
                .any(|f| f == "avx512_bf16" || f == "amx_bf16")
        })
}

/// A convolution (or linear layer) with its batch norm folded in: weight and bias.
struct Layer {
    w: Tensor,
    b: Tensor,
}

impl Layer {
    /// conv(x) * gamma / sqrt(var + eps) + (beta - mean * gamma / sqrt(var + eps)) is one
    /// convolution with the weight scaled per output channel and a bias.
    fn fold(conv: &tch::nn::Conv2D, bn: &tch::nn::BatchNorm, kind: Kind) -> Layer {
        let gamma = bn.ws.as_ref().expect("affine batch norm");
        let beta = bn.bs.as_ref().expect("affine batch norm");
        let scale = gamma / (&bn.running_var + BN_EPS).sqrt();
        let w = &conv.ws * scale.view([-1, 1, 1, 1]);
        let mut b = beta - &bn.running_mean * &scale;
        if let Some(cb) = &conv.bs {
            b += cb * &scale;
        }
        Layer {
            w: w.to_kind(kind).contiguous(),
            b: b.to_kind(kind).contiguous(),
        }
    }

    fn plain(w: &Tensor, b: Option<&Tensor>, kind: Kind) -> Layer {
        let b = match b {
            Some(b) => b.shallow_clone(),
            None => Tensor::zeros([w.size()[0]], (Kind::Float, w.device())),
        };
        Layer {
            w: w.to_kind(kind).contiguous(),
            b: b.to_kind(kind).contiguous(),
        }
    }

    fn conv(&self, x: &Tensor, padding: i64) -> Tensor {
        x.conv2d(
            &self.w,
            Some(&self.b),
            [1, 1],
            [padding, padding],
            [1, 1],
            1,
        )
    }

    fn linear(&self, x: &Tensor) -> Tensor {
        x.linear(&self.w, Some(&self.b))
    }
}

/// The inference form of a [`Model`].
pub struct Folded {
    conv_in: Layer,
    blocks: Vec<(Layer, Layer)>,
    pol: Layer,
    val_conv: Layer,
    fc1: Layer,
    fc2: Layer,
    squares: i64,
    promo: i64,
    precision: Precision,
}

impl Folded {
    pub fn new(model: &Model, precision: Precision) -> Folded {
        let k = precision.kind();
        tch::no_grad(|| Folded {
            conv_in: Layer::fold(&model.conv_in, &model.bn_in, k),
            blocks: model
                .blocks
                .iter()
                .map(|b| (Layer::fold(&b.c1, &b.b1, k), Layer::fold(&b.c2, &b.b2, k)))
                .collect(),
            pol: Layer::plain(&model.pol.ws, model.pol.bs.as_ref(), k),
            val_conv: Layer::fold(&model.val_conv, &model.val_bn, k),
            fc1: Layer::plain(&model.val_fc1.ws, model.val_fc1.bs.as_ref(), k),
            fc2: Layer::plain(&model.val_fc2.ws, model.val_fc2.bs.as_ref(), k),
            squares: model.squares as i64,
            promo: model.promo as i64,
            precision,
        })
    }

    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Policy logits `[N, policy_len]` and WDL logits `[N, 3]` (both f32) from f32 planes
    /// `[N, C, ranks, files]`: the same function as `Model::forward` in evaluation mode.
    pub fn forward(&self, x: &Tensor) -> (Tensor, Tensor) {
        tch::no_grad(|| {
            let x = x.to_kind(self.precision.kind());
            let mut h = self.conv_in.conv(&x, 1).relu();
            for (c1, c2) in &self.blocks {
                let r = c2.conv(&c1.conv(&h, 1).relu(), 1);
                h = (r + h).relu();
            }
            let n = x.size()[0];
            let (s, p) = (self.squares, self.promo);
            let pol = self
                .pol
                .conv(&h, 0)
                .view([n, p, s, s])
                .permute([0, 1, 3, 2])
                .reshape([n, p * s * s]);
            let v = self.val_conv.conv(&h, 0).relu().flatten(1, -1);
            let v = self.fc2.linear(&self.fc1.linear(&v).relu());
            (pol.to_kind(Kind::Float), v.to_kind(Kind::Float))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_is_read_from_the_first_flags_line() {
        let amx = "processor\t: 0\nflags\t\t: fpu avx2 avx512f amx_bf16 amx_tile\n";
        let avx = "flags\t\t: fpu avx2 avx512_bf16\n";
        let none = "flags\t\t: fpu avx2 avx512f avx512_vnni\nbugs\t\t: avx512_bf16\n";
        assert!(cpu_flags_have_bf16(amx));
        assert!(cpu_flags_have_bf16(avx));
        assert!(!cpu_flags_have_bf16(none), "only the flags line counts");
        assert!(!cpu_flags_have_bf16(""));
    }

    #[test]
    fn precision_names() {
        assert_eq!(Precision::parse("f32"), Ok(Precision::F32));
        assert_eq!(Precision::parse("bf16"), Ok(Precision::Bf16));
        assert!(Precision::parse("fp8")
            .unwrap_err()
            .contains("auto, f32, bf16"));
        assert_eq!(Precision::auto(Device::Cuda(0)), Precision::F32);
    }
}
