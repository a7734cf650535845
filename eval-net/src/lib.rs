//! The policy/value network on libtorch (tch): the input encoding, generic over the variant
//! file; the residual model with policy and WDL heads; saving and loading with a JSON sidecar
//! that must match the variant's rules; and the batched inference `Evaluator` that plugs the
//! net into self-play and matches.
#![forbid(unsafe_code)]

pub mod cache;
pub mod encoding;
mod error;
pub mod evaluator;
pub mod infer;
pub mod net;

pub use encoding::{Encoding, ENCODING_VERSION};
pub use error::{Error, Result};
pub use evaluator::{set_inference, InferenceOptions, NetEvaluator};
pub use infer::{Folded, Precision};
pub use net::{Arch, Net, NetMeta};
pub use tch;

/// Sets libtorch's intra-op threads for `callers` threads that run forwards at once: the cores
/// divided among them (at least one each). Two games each running a two-thread forward on two
/// cores made the tiny run's matches 2.2x slower than one thread each (117 s vs 54 s): the
/// threads of one forward wait for a core the other holds. An explicit OMP_NUM_THREADS wins.
///
/// A related trap: libgomp spins only ~100 times (instead of 300,000) before sleeping once it
/// manages more threads than there are cores, so a multi-threaded forward on any thread but the
/// first to use OpenMP pays a futex wake-up per parallel region. Measured on two cores at batch
/// 1: 1,026 positions/s on the main thread, 312 on a spawned one (no gap at batch 128). The
/// evaluator therefore runs small batches on one thread (`NetEvaluator`); the full cure would be
/// one thread per process doing all libtorch work.
pub fn share_threads(callers: usize) {
    if std::env::var_os("OMP_NUM_THREADS").is_some()
        || FIXED.load(std::sync::atomic::Ordering::Relaxed)
    {
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let n = (cores / callers.max(1)).max(1) as i32;
    default_threads();
    SHARED_THREADS.store(n, std::sync::atomic::Ordering::Relaxed);
    tch::set_num_threads(n);
    evaluator::forget_threads();
}

/// [`share_threads`] for the rest of the process: stages that run at once (a pipeline that
/// rates a net while the next one is made) would otherwise each set the threads for itself.
/// Later `share_threads` calls do nothing.
pub fn fix_threads(callers: usize) {
    share_threads(callers);
    FIXED.store(true, std::sync::atomic::Ordering::Relaxed);
}

static FIXED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The threads `share_threads` gave each caller (0: never called).
static SHARED_THREADS: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The libtorch threads a caller may use for a large batch: its share, or libtorch's default.
pub fn caller_threads() -> i32 {
    match SHARED_THREADS.load(std::sync::atomic::Ordering::Relaxed) {
        0 => default_threads(),
        n => n,
    }
}

/// libtorch's thread count before anyone changed it.
fn default_threads() -> i32 {
    static DEFAULT: std::sync::OnceLock<i32> = std::sync::OnceLock::new();
    *DEFAULT.get_or_init(|| tch::get_num_threads().max(1))
}

/// `cpu`, `cuda` or `cuda:N`.
pub fn parse_device(s: &str) -> Result<tch::Device> {
    match s {
        "cpu" => Ok(tch::Device::Cpu),
        "cuda" if tch::Cuda::is_available() => Ok(tch::Device::Cuda(0)),
        _ if s.starts_with("cuda:") && tch::Cuda::is_available() => s[5..]
            .parse()
            .map(tch::Device::Cuda)
            .map_err(|_| Error::Device(format!("bad device '{s}'"))),
        _ if s.starts_with("cuda") => Err(Error::Device(format!(
            "device '{s}': CUDA is not available (build with --features cuda on a GPU machine)"
        ))),
        _ => Err(Error::Device(format!(
            "unknown device '{s}' (cpu, cuda, cuda:N)"
        ))),
    }
}
