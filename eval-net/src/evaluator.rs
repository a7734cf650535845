//! The network as a self-play evaluator: one forward pass of the folded net ([`Folded`]) per
//! gathered batch, priors as the softmax of the policy logits over each leaf's legal moves, and
//! an evaluation cache in front ([`EvalCache`]) so that a leaf seen before is not evaluated again.

use crate::cache::{self, EvalCache};
use crate::infer::{Folded, Precision};
use crate::net::Net;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tch::{Device, Kind, Tensor};
use varzero_rules::Position;
use varzero_search::{Batch, Evaluation, Evaluator};

/// How a net runs in a search: its arithmetic and the size of its evaluation cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InferenceOptions {
    pub precision: Precision,
    /// Cache slots (0: no cache).
    pub cache_entries: usize,
}

impl InferenceOptions {
    /// What a net on `device` gets unless told otherwise ([`set_inference`]): bf16 where the
    /// CPU computes in it, f32 elsewhere; the default cache.
    pub fn default_for(device: Device) -> InferenceOptions {
        let set = SET_PRECISION.load(Ordering::Relaxed);
        let precision = match set {
            1 => Precision::F32,
            2 => Precision::Bf16,
            _ => Precision::auto(device),
        };
        let cache_entries = match SET_CACHE.load(Ordering::Relaxed) {
            usize::MAX => cache::DEFAULT_ENTRIES,
            n => n,
        };
        InferenceOptions {
            precision,
            cache_entries,
        }
    }
}

/// 0: auto, 1: f32, 2: bf16.
static SET_PRECISION: AtomicU64 = AtomicU64::new(0);
/// usize::MAX: the default.
static SET_CACHE: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Sets, for the rest of the process, the precision (`None`: auto) and cache slots (`None`:
/// the default) of evaluators made after it: the command line's `--precision` and
/// `--eval-cache`.
pub fn set_inference(precision: Option<Precision>, cache_entries: Option<usize>) {
    SET_PRECISION.store(
        match precision {
            None => 0,
            Some(Precision::F32) => 1,
            Some(Precision::Bf16) => 2,
        },
        Ordering::Relaxed,
    );
    SET_CACHE.store(cache_entries.unwrap_or(usize::MAX), Ordering::Relaxed);
}

/// Below this many positions a bf16 evaluator runs the f32 form: at batch 1 the conversions
/// cost more than bf16 saves (6x64 Xiangqi net on AMX: 689 positions/s in bf16, 1,054 in f32;
/// at batch 8, 3,972 against 1,905).
const BF16_MIN_BATCH: usize = 4;

/// Copies of the folded net: searches on several threads (a search's `threads`, a match's
/// games at once) forward at the same time, each through a copy of its own.
const REPLICAS: usize = 4;

pub struct NetEvaluator {
    /// The f32 form, and the bf16 form where the precision is bf16; [`REPLICAS`] copies.
    nets: Vec<Mutex<(Folded, Option<Folded>)>>,
    cache: Option<Mutex<EvalCache>>,
    id: String,
    device: Device,
    input_len: usize,
    enc: crate::encoding::Encoding,
    /// Leaves evaluated by a forward (cache misses and uncached), for `bench`.
    pub forwarded: AtomicU64,
}

impl NetEvaluator {
    /// The net with this process's inference options ([`InferenceOptions::default_for`]).
    pub fn new(net: Net, id: String) -> Arc<NetEvaluator> {
        let opts = InferenceOptions::default_for(net.vs.device());
        Self::with_options(net, id, opts)
    }

    pub fn with_options(net: Net, id: String, opts: InferenceOptions) -> Arc<NetEvaluator> {
        let device = net.vs.device();
        let enc = net.enc.clone();
        Arc::new(NetEvaluator {
            input_len: enc.input_len(),
            enc,
            nets: (0..REPLICAS)
                .map(|_| {
                    Mutex::new((
                        Folded::new(&net.model, Precision::F32),
                        (opts.precision == Precision::Bf16)
                            .then(|| Folded::new(&net.model, Precision::Bf16)),
                    ))
                })
                .collect(),
            cache: EvalCache::new(opts.cache_entries).map(Mutex::new),
            id,
            device,
            forwarded: AtomicU64::new(0),
        })
    }

    /// The precision of batches of 4 and more (smaller ones run in f32).
    pub fn precision(&self) -> Precision {
        let net = self.nets[0].lock().unwrap_or_else(|e| e.into_inner());
        net.1.as_ref().unwrap_or(&net.0).precision()
    }

    /// A copy of the net no other caller is using, else the first (waiting for it).
    fn replica(&self) -> std::sync::MutexGuard<'_, (Folded, Option<Folded>)> {
        for m in &self.nets {
            if let Ok(g) = m.try_lock() {
                return g;
            }
        }
        self.nets[0].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cache's hits over lookups so far (`None` without a cache).
    pub fn cache_hit_rate(&self) -> Option<f64> {
        self.cache
            .as_ref()
            .map(|c| c.lock().unwrap_or_else(|e| e.into_inner()).hit_rate())
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
        out.priors.clear();
        out.priors.resize(batch.moves.len(), 0.0);
        out.wdl.clear();
        out.wdl.resize(batch.n, [0.0; 3]);
        let il = self.input_len;
        let input = |i: usize| &batch.inputs[i * il..(i + 1) * il];
        let moves = |i: usize| {
            let (a, b) = batch.ranges[i];
            &batch.moves[a as usize..b as usize]
        };
        // Leaves the cache has are filled from it; the rest go to the net.
        let mut keys = Vec::new();
        let mut todo: Vec<usize> = Vec::with_capacity(batch.n);
        match &self.cache {
            Some(c) => {
                keys.extend(
                    (0..batch.n)
                        .map(|i| cache::key(input(i), batch.side_to_move[i] as u8, moves(i))),
                );
                let c = c.lock().unwrap_or_else(|e| e.into_inner());
                let mut p = Vec::new();
                for (i, &k) in keys.iter().enumerate() {
                    p.clear();
                    match c.get(k, &mut p) {
                        Some(w) if p.len() == moves(i).len() => {
                            let (a, b) = batch.ranges[i];
                            out.priors[a as usize..b as usize].copy_from_slice(&p);
                            out.wdl[i] = w;
                        }
                        _ => todo.push(i),
                    }
                }
            }
            None => todo.extend(0..batch.n),
        }
        if todo.is_empty() {
            return;
        }
        self.forwarded
            .fetch_add(todo.len() as u64, Ordering::Relaxed);
        self.set_threads_for(todo.len());
        let n = todo.len() as i64;
        let e = &self.enc;
        let mut xs = Vec::with_capacity(todo.len() * il);
        for &i in &todo {
            xs.extend_from_slice(input(i));
        }
        let x = Tensor::from_slice(&xs)
            .view([n, e.planes as i64, e.ranks as i64, e.files as i64])
            .to_device(self.device);
        // Flat indices of every leaf's legal moves into the [N, policy_len] logits.
        let plen = e.policy_len() as i64;
        let idx: Vec<i64> = todo
            .iter()
            .enumerate()
            .flat_map(|(j, &i)| {
                let stm = batch.side_to_move[i];
                moves(i)
                    .iter()
                    .map(move |&m| j as i64 * plen + e.policy_index(m, stm) as i64)
            })
            .collect();
        let (logits, wdl) = {
            let net = self.replica();
            let folded = match &net.1 {
                Some(bf16) if todo.len() >= BF16_MIN_BATCH => bf16,
                _ => &net.0,
            };
            let (p, v) = folded.forward(&x);
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
        let mut cache = self
            .cache
            .as_ref()
            .map(|c| c.lock().unwrap_or_else(|e| e.into_inner()));
        let mut at = 0;
        for (j, &i) in todo.iter().enumerate() {
            let (a, b) = batch.ranges[i];
            let (a, b) = (a as usize, b as usize);
            let l = &logits[at..at + (b - a)];
            at += b - a;
            let max = l.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let pr = &mut out.priors[a..b];
            for (p, &x) in pr.iter_mut().zip(l) {
                *p = (x - max).exp();
            }
            let sum: f32 = pr.iter().sum();
            pr.iter_mut().for_each(|p| *p /= sum.max(1e-30));
            out.wdl[i] = [wdl[3 * j], wdl[3 * j + 1], wdl[3 * j + 2]];
            if let Some(c) = cache.as_mut() {
                c.put(keys[i], &out.priors[a..b], out.wdl[i]);
            }
        }
    }
}
