//! The policy/value network on libtorch (tch): the input encoding, generic over the variant
//! file; the residual model with policy and WDL heads; saving and loading with a JSON sidecar
//! that must match the variant's rules; and the batched inference `Evaluator` that plugs the
//! net into self-play and matches.

pub mod encoding;
mod error;
pub mod evaluator;
pub mod net;

pub use encoding::{Encoding, ENCODING_VERSION};
pub use error::{Error, Result};
pub use evaluator::NetEvaluator;
pub use net::{Arch, Net, NetMeta};
pub use tch;

/// `cpu`, `cuda` or `cuda:N`.
pub fn parse_device(s: &str) -> std::result::Result<tch::Device, String> {
    match s {
        "cpu" => Ok(tch::Device::Cpu),
        "cuda" if tch::Cuda::is_available() => Ok(tch::Device::Cuda(0)),
        _ if s.starts_with("cuda:") && tch::Cuda::is_available() => s[5..]
            .parse()
            .map(tch::Device::Cuda)
            .map_err(|_| format!("bad device '{s}'")),
        _ if s.starts_with("cuda") => Err(format!(
            "device '{s}': CUDA is not available (build with --features cuda on a GPU machine)"
        )),
        _ => Err(format!("unknown device '{s}' (cpu, cuda, cuda:N)")),
    }
}
