//! Sizes checked against the machine before anything is written: every setting that decides how
//! much memory a stage holds at once (a training batch and its activations, the net and its
//! optimizer state, the window, the games and search trees in flight, a shard's buffer, the
//! queue of a generation's games) is turned into an estimate in bytes, and a stage whose total
//! is above the machine's physical memory is refused in the config's `Problems`, naming the
//! setting that weighs most. A setting that only takes time (steps, generations) is not
//! bounded here.
//!
//! The estimates are upper-ish, not exact: they only have to tell a setting that cannot fit from
//! one that can, and the refused values are the ones off by orders of magnitude (a batch of a
//! billion positions needs terabytes).

use varzero_eval_net::{Arch, Encoding};
use varzero_search::SearchConfig;
use varzero_selfplay::SelfplayConfig;
use varzero_settings::Problems;
use varzero_trainer::TrainConfig;

/// Used when /proc/meminfo cannot be read (not Linux): a laptop's worth.
const FALLBACK_MEMORY: f64 = 16.0 * GIB;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// More threads than this are refused whatever the memory: each is an OS thread with its stack
/// and its games, and no machine runs this many usefully.
pub const MAX_THREADS: usize = 4096;

/// The machine's physical memory in bytes (`MemTotal`), or [`FALLBACK_MEMORY`].
pub fn physical_memory() -> f64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map(|kb| kb * 1024.0)
        .unwrap_or(FALLBACK_MEMORY)
}

/// `bytes` for a message: `5.6 TB`, `310 MB`.
pub fn human(bytes: f64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    let mut x = bytes;
    let mut u = 0;
    while x >= 1000.0 && u + 1 < units.len() {
        x /= 1000.0;
        u += 1;
    }
    if x.is_finite() {
        format!("{x:.1} {}", units[u])
    } else {
        "more than any machine has".into()
    }
}

/// The parts of one stage's memory, each with the setting it grows with.
#[derive(Default)]
pub struct Budget {
    parts: Vec<(String, f64)>,
}

impl Budget {
    pub fn add(&mut self, key: &str, bytes: f64) {
        self.parts.push((key.to_string(), bytes));
    }

    /// A part that grows with several settings at once (a batch's activations grow with the
    /// batch and the net's size): it is charged to the one furthest above its default.
    pub fn add_product(&mut self, factors: &[(&str, f64, f64)], bytes: f64) {
        let key = factors
            .iter()
            .max_by(|a, b| (a.1 / a.2.max(1.0)).total_cmp(&(b.1 / b.2.max(1.0))))
            .map_or("?", |f| f.0);
        self.add(key, bytes);
    }

    pub fn parts(&self) -> impl Iterator<Item = (&str, &f64)> {
        self.parts.iter().map(|(k, b)| (k.as_str(), b))
    }

    pub fn total(&self) -> f64 {
        self.parts.iter().map(|(_, b)| b).sum()
    }

    /// One problem when the stage does not fit in `memory`: the heaviest setting, its value, the
    /// estimate and the machine's memory.
    pub fn check(
        &self,
        stage: &str,
        memory: f64,
        value_of: &dyn Fn(&str) -> String,
        p: &mut Problems,
    ) {
        let total = self.total();
        if total <= memory {
            return;
        }
        let mut by_key: Vec<(&str, f64)> = Vec::new();
        for (k, b) in &self.parts {
            match by_key.iter_mut().find(|(x, _)| x == k) {
                Some((_, sum)) => *sum += b,
                None => by_key.push((k, *b)),
            }
        }
        let (key, _) = by_key
            .into_iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .expect("a stage over memory has parts");
        p.0.push(format!(
            "{key}: {} needs about {} of memory in {stage}, this machine has {}",
            value_of(key),
            human(total),
            human(memory)
        ));
    }
}

/// Bytes of one training sample as a batch holds it: inputs, dense policy target and mask,
/// WDL, on the host and again as tensors.
fn sample_bytes(enc: &Encoding) -> f64 {
    2.0 * 4.0 * (enc.input_len() + 2 * enc.policy_len() + 3) as f64
}

/// Parameters of a net of `arch` (the stem, the residual tower, the heads).
pub fn net_params(enc: &Encoding, arch: Arch) -> f64 {
    let (c, sq) = (arch.channels as f64, enc.squares() as f64);
    let stem = enc.planes as f64 * 9.0 * c;
    let tower = arch.blocks as f64 * 2.0 * 9.0 * c * c;
    let policy = c * (enc.policy_len() as f64 / sq).max(1.0);
    let value = c * 4.0 + 4.0 * sq * 64.0 + 64.0 * 3.0;
    stem + tower + policy + value
}

/// Activations of one position through the net (each layer's output, kept for the backward pass
/// when training, and its gradient).
fn activation_bytes(enc: &Encoding, arch: Arch, training: bool) -> f64 {
    let per_layer = enc.squares() as f64 * arch.channels as f64 * 4.0;
    let heads = 4.0 * 4.0 * enc.policy_len() as f64;
    if !training {
        // Inference keeps a layer's input and output, and a residual, at a time.
        return per_layer * 3.0 + heads;
    }
    // Convolution, batch norm and ReLU outputs, each with its gradient.
    per_layer * (2 * arch.blocks + 1) as f64 * 6.0 + heads
}

/// A position held in the training window: its FEN, policy target and legal moves.
const WINDOW_SAMPLE: f64 = 1024.0;
/// One playout's share of a search tree: a node, its edges (a generous branching factor),
/// doubled for the vectors' growth and the spare tree kept for reuse.
const TREE_PER_PLAYOUT: f64 = 2.0 * (48.0 + 80.0 * 12.0);
/// A buffered position record of a shard (FEN, policy moves as text, probabilities).
const RECORD: f64 = 2048.0;
/// A game waiting in a generation's queue or counted in its set of done games.
const QUEUED_GAME: f64 = 64.0;
/// An opening of a match (its FEN and the game slot it goes to).
pub const OPENING: f64 = 256.0;

/// Training's memory: the batch with its activations, the net with its gradient and the
/// optimizer's state, and the window (`window`: its key and size) when the data fills it.
pub fn training(enc: &Encoding, t: &TrainConfig, window: (&str, usize), b: &mut Budget) {
    let d = TrainConfig::default();
    let batch = t.batch_size as f64;
    let (blocks, channels) = (
        (
            "train.arch.blocks",
            t.arch.blocks as f64,
            d.arch.blocks as f64,
        ),
        (
            "train.arch.channels",
            t.arch.channels as f64,
            d.arch.channels as f64,
        ),
    );
    b.add("train.batch_size", batch * sample_bytes(enc));
    b.add_product(
        &[
            ("train.batch_size", batch, d.batch_size as f64),
            blocks,
            channels,
        ],
        batch * activation_bytes(enc, t.arch, true),
    );
    // Weights, gradients and up to two optimizer moments.
    b.add_product(&[blocks, channels], net_params(enc, t.arch) * 4.0 * 4.0);
    b.add(window.0, window.1 as f64 * WINDOW_SAMPLE);
}

/// The playouts a search may reach and the key that sets them (full or cheap searches).
pub fn playouts_of(s: &SearchConfig) -> (&'static str, u32) {
    if s.cheap_playouts > s.playouts {
        ("search.cheap_playouts", s.cheap_playouts)
    } else {
        ("search.playouts", s.playouts)
    }
}

/// Self-play's memory: the games in flight with their trees (of up to `playouts`, its key and
/// number), the evaluator's batch of leaves, a shard's buffer, the queue of the generation's
/// `games`.
#[allow(clippy::too_many_arguments)] // each is one setting's key and value
pub fn selfplay(
    enc: &Encoding,
    arch: Option<Arch>,
    s: &SearchConfig,
    sp: &SelfplayConfig,
    playouts: (&str, u32),
    games: (&str, u64),
    section: &str,
    b: &mut Budget,
) {
    let (ds, dsp) = (SearchConfig::default(), SelfplayConfig::default());
    let threads = sp.threads as f64;
    let in_flight = threads * sp.games_per_worker as f64;
    let key = |k: &str| format!("{section}.{k}");
    let (kt, kg) = (key("threads"), key("games_per_worker"));
    let t = (kt.as_str(), threads, dsp.threads as f64);
    let g = (
        kg.as_str(),
        sp.games_per_worker as f64,
        dsp.games_per_worker as f64,
    );
    let p = (playouts.0, playouts.1 as f64, ds.playouts as f64);
    b.add_product(
        &[t, g, p],
        in_flight * (playouts.1 as f64 * TREE_PER_PLAYOUT + 4096.0),
    );
    b.add(&kt, threads * 2.0 * 1024.0 * 1024.0);
    let per_leaf = 4.0 * (enc.input_len() + enc.policy_len()) as f64
        + arch.map_or(0.0, |a| activation_bytes(enc, a, false));
    let l = (
        "search.leaves_per_game",
        s.leaves_per_game as f64,
        ds.leaves_per_game as f64,
    );
    b.add_product(&[t, g, l], in_flight * s.leaves_per_game as f64 * per_leaf);
    b.add(&key("shard_positions"), sp.shard_positions as f64 * RECORD);
    b.add(games.0, games.1 as f64 * QUEUED_GAME);
}

/// A match's memory: its openings and, per game at once, two players' trees.
pub fn matches(
    games: u64,
    playouts: u32,
    concurrency: usize,
    key_games: &str,
    key_playouts: &str,
    b: &mut Budget,
) {
    b.add(key_games, games as f64 / 2.0 * OPENING);
    b.add(
        key_playouts,
        concurrency as f64 * 2.0 * playouts as f64 * TREE_PER_PLAYOUT,
    );
}

/// The value of a dotted `key` in `table`, for a message.
pub fn value_in(table: &toml::Table, key: &str) -> String {
    let mut v: Option<&toml::Value> = None;
    let mut t = Some(table);
    for k in key.split('.') {
        v = t.and_then(|t| t.get(k));
        t = v.and_then(|v| v.as_table());
    }
    v.map(|v| v.to_string()).unwrap_or_else(|| "?".into())
}

/// `threads` at most [`MAX_THREADS`].
pub fn check_threads(key: &str, threads: usize, p: &mut Problems) {
    p.check(
        threads <= MAX_THREADS,
        key,
        &format!("at most {MAX_THREADS}"),
        threads,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The defaults, and the shipped CPU configs' sizes (16 threads at most), fit in 2 GB with
    /// room to spare: the check refuses what cannot fit, not a small machine's sane run.
    #[test]
    fn sane_settings_fit_and_absurd_ones_do_not() {
        let v = varzero_rules::Variant::builtin("xiangqi").unwrap();
        let enc = Encoding::new(&v);
        let t = TrainConfig::default();
        let mut b = Budget::default();
        training(&enc, &t, ("train.window", t.window), &mut b);
        assert!(b.total() < 2e9, "training {}", human(b.total()));
        let sp = SelfplayConfig {
            threads: 16,
            ..SelfplayConfig::default()
        };
        let s = SearchConfig {
            playouts: 800,
            ..SearchConfig::default()
        };
        let mut b = Budget::default();
        selfplay(
            &enc,
            Some(t.arch),
            &s,
            &sp,
            playouts_of(&s),
            ("games", 100_000),
            "selfplay",
            &mut b,
        );
        assert!(b.total() < 2e9, "self-play {}", human(b.total()));
        let mut p = Problems::default();
        b.check("self-play", 2e9, &|_| "x".into(), &mut p);
        assert!(p.is_empty(), "{p}");
        let big = TrainConfig {
            batch_size: 1_000_000_000,
            ..t
        };
        let mut b = Budget::default();
        training(&enc, &big, ("train.window", big.window), &mut b);
        b.check(
            "training",
            physical_memory(),
            &|_| "1000000000".into(),
            &mut p,
        );
        assert!(
            p.to_string()
                .starts_with("train.batch_size: 1000000000 needs about"),
            "{p}"
        );
    }
}
