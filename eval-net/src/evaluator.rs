//! The network as a self-play evaluator: one forward pass per gathered batch, priors as the
//! softmax of the policy logits over each leaf's legal moves.

use crate::net::Net;
use std::sync::{Arc, Mutex};
use tch::{Device, Kind, Tensor};
use varzero_rules::Position;
use varzero_search::{Batch, Evaluation, Evaluator};

pub struct NetEvaluator {
    net: Mutex<Net>,
    id: String,
    device: Device,
    input_len: usize,
    enc: crate::encoding::Encoding,
}

impl NetEvaluator {
    pub fn new(net: Net, id: String) -> Arc<NetEvaluator> {
        let device = net.vs.device();
        let enc = net.enc.clone();
        Arc::new(NetEvaluator {
            input_len: enc.input_len(),
            enc,
            net: Mutex::new(net),
            id,
            device,
        })
    }
}

/// Below this many positions a forward runs on the calling thread alone: the work of a small
/// batch is less than waking the other OpenMP threads (which libgomp puts to sleep at once when
/// it manages more threads than cores). Measured in a self-play worker on two cores: batch 1,
/// 1,031 positions/s on one thread against 330 on two; batch 8, 2,927 against 1,391; batch 32
/// about equal; batch 128, two threads ahead.
const SMALL_BATCH: usize = 32;

thread_local! {
    /// The OpenMP thread count last set on this thread (0: never).
    static THREADS: std::cell::Cell<i32> = const { std::cell::Cell::new(0) };
}

/// Forgets this thread's count after someone else set it (`share_threads`).
pub(crate) fn forget_threads() {
    THREADS.with(|t| t.set(0));
}

impl NetEvaluator {
    fn set_threads_for(&self, n: usize) {
        if self.device != Device::Cpu {
            return;
        }
        let want = if n < SMALL_BATCH {
            1
        } else {
            crate::caller_threads()
        };
        THREADS.with(|t| {
            if t.get() != want {
                tch::set_num_threads(want);
                t.set(want);
            }
        });
    }
}

impl Evaluator for NetEvaluator {
    fn id(&self) -> String {
        self.id.clone()
    }
    fn input_len(&self) -> usize {
        self.input_len
    }
    fn encode(&self, pos: &Position, out: &mut [f32]) {
        self.enc.encode(pos, out);
    }
    fn evaluate(&self, batch: &Batch, out: &mut Evaluation) {
        self.set_threads_for(batch.n);
        let n = batch.n as i64;
        let e = &self.enc;
        let x = Tensor::from_slice(&batch.inputs[..batch.n * self.input_len])
            .view([n, e.planes as i64, e.ranks as i64, e.files as i64])
            .to_device(self.device);
        // Flat indices of every leaf's legal moves into the [N, policy_len] logits.
        let plen = e.policy_len() as i64;
        let idx: Vec<i64> = batch
            .ranges
            .iter()
            .enumerate()
            .flat_map(|(i, &(a, b))| {
                let stm = batch.side_to_move[i];
                batch.moves[a as usize..b as usize]
                    .iter()
                    .map(move |&m| i as i64 * plen + e.policy_index(m, stm) as i64)
            })
            .collect();
        let (logits, wdl) = {
            let net = self.net.lock().unwrap();
            let (p, v) = net.infer(&x);
            let idx_t = Tensor::from_slice(&idx).to_device(self.device);
            (
                p.flatten(0, -1)
                    .index_select(0, &idx_t)
                    .to_device(Device::Cpu),
                v.softmax(-1, Kind::Float).to_device(Device::Cpu),
            )
        };
        let logits: Vec<f32> = Vec::try_from(&logits).expect("f32 logits");
        let wdl: Vec<f32> = Vec::try_from(&wdl.flatten(0, -1)).expect("f32 values");
        out.priors.clear();
        for &(a, b) in &batch.ranges {
            let l = &logits[a as usize..b as usize];
            let max = l.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let start = out.priors.len();
            out.priors.extend(l.iter().map(|&x| (x - max).exp()));
            let sum: f32 = out.priors[start..].iter().sum();
            out.priors[start..]
                .iter_mut()
                .for_each(|p| *p /= sum.max(1e-30));
        }
        out.wdl.clear();
        out.wdl.extend(wdl.chunks(3).map(|c| [c[0], c[1], c[2]]));
    }
}
