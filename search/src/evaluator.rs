//! The evaluator: given a batch of leaf positions, a prior over each one's legal moves and a
//! win/draw/loss value from its side to move's view. Positions are encoded into the batch at
//! the leaf (so the search never copies positions), then evaluated in one call.

use crate::tactics::Tactics;
use std::sync::Arc;
use varzero_rules::{Color, Move, Position, Variant};

/// One batch of leaves: `n` encodings of `input_len` floats each, and each leaf's legal moves.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    pub n: usize,
    pub input_len: usize,
    pub inputs: Vec<f32>,
    pub moves: Vec<Move>,
    /// Per leaf: its moves are `moves[start..end]`.
    pub ranges: Vec<(u32, u32)>,
    pub side_to_move: Vec<Color>,
    /// One number per move (same order as `moves`) that an evaluator without a policy head
    /// computes at the leaf for its priors (the tactical evaluator's exchange scores); 0 else.
    pub hints: Vec<f32>,
}

impl Batch {
    pub fn clear(&mut self) {
        self.n = 0;
        self.inputs.clear();
        self.moves.clear();
        self.ranges.clear();
        self.side_to_move.clear();
        self.hints.clear();
    }

    /// Adds a leaf; `encode` fills its input slice.
    pub fn push(&mut self, ev: &dyn Evaluator, pos: &Position, moves: &[Move]) -> usize {
        let (start, m0) = self.grow(ev, moves);
        ev.encode(pos, &mut self.inputs[start..]);
        self.finish(pos, m0)
    }

    /// Adds a leaf through `encode_leaf`, which may make and take back moves on `pos` (the
    /// search's own position, so nothing is cloned).
    pub fn push_leaf(&mut self, ev: &dyn Evaluator, pos: &mut Position, moves: &[Move]) -> usize {
        let (start, m0) = self.grow(ev, moves);
        ev.encode_leaf(
            pos,
            moves,
            &mut self.inputs[start..],
            &mut self.hints[m0 as usize..],
        );
        self.finish(pos, m0)
    }

    /// Adds a leaf whose input is left to [`Batch::encode_leaf_at`] (zeros until then).
    pub fn push_unencoded(&mut self, ev: &dyn Evaluator, pos: &Position, moves: &[Move]) -> usize {
        let (_, m0) = self.grow(ev, moves);
        self.finish(pos, m0)
    }

    /// Encodes leaf `i` (added by [`Batch::push_unencoded`]) at `pos`, as `push_leaf` would.
    pub fn encode_leaf_at(&mut self, i: usize, ev: &dyn Evaluator, pos: &mut Position) {
        let (m0, m1) = self.ranges[i];
        let il = self.input_len;
        let moves = &self.moves[m0 as usize..m1 as usize];
        let input = &mut self.inputs[i * il..(i + 1) * il];
        input.fill(0.0);
        ev.encode_leaf(pos, moves, input, &mut self.hints[m0 as usize..m1 as usize]);
    }

    fn grow(&mut self, ev: &dyn Evaluator, moves: &[Move]) -> (usize, u32) {
        self.input_len = ev.input_len();
        let start = self.inputs.len();
        self.inputs.resize(start + self.input_len, 0.0);
        let m0 = self.moves.len() as u32;
        self.moves.extend_from_slice(moves);
        self.hints.resize(self.moves.len(), 0.0);
        (start, m0)
    }

    fn finish(&mut self, pos: &Position, m0: u32) -> usize {
        self.ranges.push((m0, self.moves.len() as u32));
        self.side_to_move.push(pos.side_to_move());
        self.n += 1;
        self.n - 1
    }
}

/// What the evaluator returns: one prior per move of the batch (same order), one WDL per leaf.
#[derive(Clone, Debug, Default)]
pub struct Evaluation {
    pub priors: Vec<f32>,
    pub wdl: Vec<[f32; 3]>,
}

pub trait Evaluator: Send + Sync {
    /// Identifies the evaluator in datasets (`uniform`, `material`, a net's file and step).
    fn id(&self) -> String;
    /// Floats per encoded position.
    fn input_len(&self) -> usize;
    /// Encodes a leaf position into `out` (`input_len` floats, zeroed).
    fn encode(&self, pos: &Position, out: &mut [f32]);
    /// Encodes a leaf of a search, given its moves; may make and take back moves on `pos` and
    /// write one hint per move into `hints` (zeroed). The default is `encode`.
    fn encode_leaf(&self, pos: &mut Position, moves: &[Move], out: &mut [f32], hints: &mut [f32]) {
        let _ = (moves, hints);
        self.encode(pos, out)
    }
    /// Evaluates a batch: `out.priors` gets one prior per move, `out.wdl` one value per leaf.
    fn evaluate(&self, batch: &Batch, out: &mut Evaluation);
    /// A factor on `c_puct` for searches with this evaluator: a hand-written value is a
    /// rougher guess than a trained net's, and the search does better to spread its visits.
    fn exploration(&self) -> f32 {
        1.0
    }
    /// The evaluator's own priors at `pos`, from the priors its search ran on there (`priors`,
    /// in the order of `moves`, rewritten in place): the tactical mix taken back out where
    /// this evaluator adds one ([`TacticalBlend`]); by default they are its own already.
    fn own_priors(&self, pos: &mut Position, moves: &[Move], priors: &mut [f32]) {
        let _ = (pos, moves, priors);
    }
    /// Whether the value already is the tactical one (`material`): blending it with itself
    /// would only run the quiescence search twice per leaf.
    fn is_tactical(&self) -> bool {
        false
    }
}

fn uniform_priors(batch: &Batch, out: &mut Evaluation) {
    out.priors.clear();
    for &(a, b) in &batch.ranges {
        let k = (b - a) as f32;
        out.priors
            .extend(std::iter::repeat_n(1.0 / k.max(1.0), (b - a) as usize));
    }
}

/// Uniform priors and a draw-leaning value: the search then runs on terminal scores alone.
pub struct UniformEvaluator;

impl Evaluator for UniformEvaluator {
    fn id(&self) -> String {
        "uniform".into()
    }
    fn input_len(&self) -> usize {
        0
    }
    fn encode(&self, _pos: &Position, _out: &mut [f32]) {}
    fn evaluate(&self, batch: &Batch, out: &mut Evaluation) {
        uniform_priors(batch, out);
        out.wdl.clear();
        out.wdl.resize(batch.n, [0.25, 0.5, 0.25]);
    }
}

/// The evaluator of a player without a net (generation 0). The value is material resolved
/// by a quiescence search, with mop-up and the count in mind ([`Tactics`]), from the side to
/// move's view, squashed to win/draw/loss; the priors are a softmax of the exchange hints, so
/// a capture that wins material is searched first and a move that hangs a piece last. With
/// `tactical` off it is the raw balance with uniform priors (`material-raw`, the old
/// generation 0, kept as a rung and for comparison).
/// The material player's logistic scale per pawn ([`MaterialEvaluator::scale`]).
pub const MATERIAL_SCALE: f32 = 0.5;

/// A quiescence value at least this far from 0 is a mate the search proved: no material
/// balance and mop-up come near it ([`crate::tactics::MATE`] is the mate's score).
const PROVEN_MATE: f32 = crate::tactics::MATE / 2.0;

pub struct MaterialEvaluator {
    pub tactics: Tactics,
    pub tactical: bool,
    /// Logistic scale per pawn of advantage.
    pub scale: f32,
    /// Priors are a softmax of the hints in pawns over this temperature.
    pub prior_temperature: f32,
    /// The factor on `c_puct` of searches with this evaluator (see
    /// [`Evaluator::exploration`]).
    pub exploration: f32,
}

impl MaterialEvaluator {
    pub fn new(v: &Arc<Variant>) -> MaterialEvaluator {
        MaterialEvaluator {
            tactics: Tactics::new(v),
            tactical: true,
            scale: MATERIAL_SCALE,
            prior_temperature: 1.0,
            exploration: 2.0,
        }
    }

    /// The raw balance with uniform priors.
    pub fn raw(v: &Arc<Variant>) -> MaterialEvaluator {
        MaterialEvaluator {
            tactical: false,
            exploration: 1.0,
            ..MaterialEvaluator::new(v)
        }
    }

    /// Material balance in pawns for the side to move.
    pub fn balance(&self, pos: &Position) -> f32 {
        self.tactics.material(pos)
    }

    /// The WDL of a balance: the expected score is logistic in the balance, and the draw share
    /// shrinks as the balance grows.
    pub fn wdl(&self, balance: f32) -> [f32; 3] {
        let s = 1.0 / (1.0 + (-self.scale * balance).exp());
        let d = 0.4 * (1.0 - (2.0 * s - 1.0).abs());
        [s - d / 2.0, d, 1.0 - s - d / 2.0]
    }
}

/// The material player's priors of one position: a softmax of its move hints (pawns) at
/// `temperature`, appended to `out`. The trainer's hint target (`train.hint_target`) uses the
/// same, so the net is taught the priors the search mixes in.
pub fn hint_priors(hints: &[f32], temperature: f32, out: &mut Vec<f32>) {
    let max = hints.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    let start = out.len();
    out.extend(
        hints
            .iter()
            .map(|&x| ((x - max) / temperature.max(1e-3)).exp()),
    );
    let sum: f32 = out[start..].iter().sum();
    for p in &mut out[start..] {
        *p /= sum.max(f32::MIN_POSITIVE);
    }
}

impl Evaluator for MaterialEvaluator {
    fn id(&self) -> String {
        if self.tactical {
            "material"
        } else {
            "material-raw"
        }
        .into()
    }
    fn input_len(&self) -> usize {
        1
    }
    fn encode(&self, pos: &Position, out: &mut [f32]) {
        out[0] = if self.tactical {
            self.tactics.static_eval(pos)
        } else {
            self.balance(pos)
        };
    }
    fn exploration(&self) -> f32 {
        self.exploration
    }
    fn is_tactical(&self) -> bool {
        self.tactical
    }
    fn encode_leaf(&self, pos: &mut Position, moves: &[Move], out: &mut [f32], hints: &mut [f32]) {
        if !self.tactical {
            return self.encode(pos, out);
        }
        out[0] = self.tactics.quiesce(pos);
        self.tactics.move_hints(pos, moves, hints);
    }
    fn evaluate(&self, batch: &Batch, out: &mut Evaluation) {
        out.priors.clear();
        for &(a, b) in &batch.ranges {
            hint_priors(
                &batch.hints[a as usize..b as usize],
                self.prior_temperature,
                &mut out.priors,
            );
        }
        out.wdl.clear();
        out.wdl
            .extend((0..batch.n).map(|i| self.wdl(batch.inputs[i])));
    }
}

/// Another evaluator (a net) whose leaf value is blended with the tactical value of
/// [`MaterialEvaluator`]: `(1 - weight) * inner + weight * material`, win/draw/loss each; and
/// whose priors may be mixed with the material player's, geometrically with `prior_weight`. A
/// net trained on a few CPU-hours misjudges positions with pieces en prise, which a quiescence
/// search over captures resolves, and puts prior on moves that hang a piece, which the
/// exchange hints see (docs/runs.md measures both); the search options `tactics` and
/// `tactics_priors` turn them on. The quiescence search and the hints run at the leaf, in the
/// search's own thread, before the batch goes to the inner evaluator.
pub struct TacticalBlend {
    inner: Arc<dyn Evaluator>,
    material: MaterialEvaluator,
    weight: f32,
    prior_weight: f32,
    /// [`crate::SearchConfig::tactics_mates`].
    mates: bool,
    mix: crate::PriorMix,
    /// [`crate::SearchConfig::policy_temperature`].
    temperature: f32,
    /// The exponent of the inner evaluator's prior in the mix (`mix` at `prior_weight`, over
    /// the temperature).
    net_exponent: f32,
    /// The inner evaluator's batches (inputs without the appended quiescence values), reused:
    /// one per caller at a time, so that searches on several threads evaluate at once.
    scratch: std::sync::Mutex<Vec<Batch>>,
}

impl TacticalBlend {
    /// `inner` itself when both weights are 0 or its value is already the tactical one.
    pub fn wrap(
        inner: Arc<dyn Evaluator>,
        variant: &Arc<Variant>,
        weight: f32,
        prior_weight: f32,
    ) -> Arc<dyn Evaluator> {
        Self::wrap_mixed(
            inner,
            variant,
            weight,
            prior_weight,
            crate::PriorMix::Geometric,
            1.0,
        )
    }

    /// [`Self::wrap`] with the priors mixed as `mix` says, the evaluator's own priors first
    /// taken to the power 1 / `policy_temperature`.
    pub fn wrap_mixed(
        inner: Arc<dyn Evaluator>,
        variant: &Arc<Variant>,
        weight: f32,
        prior_weight: f32,
        mix: crate::PriorMix,
        policy_temperature: f32,
    ) -> Arc<dyn Evaluator> {
        Self::wrap_full(
            inner,
            variant,
            weight,
            prior_weight,
            mix,
            policy_temperature,
            (MATERIAL_SCALE, 1.0),
            (0, false),
        )
    }

    /// [`Self::wrap_mixed`] with the material side's logistic scale and hint temperature
    /// (`scale`, `prior_temperature`: [`crate::SearchConfig::tactics_scale`],
    /// [`crate::SearchConfig::tactics_prior_temperature`]) and the quiescence search's plies of
    /// quiet checks and mate rule (`checks`, `mates`: [`crate::SearchConfig::tactics_checks`],
    /// [`crate::SearchConfig::tactics_mates`]) set.
    #[allow(clippy::too_many_arguments)]
    pub fn wrap_full(
        inner: Arc<dyn Evaluator>,
        variant: &Arc<Variant>,
        weight: f32,
        prior_weight: f32,
        mix: crate::PriorMix,
        policy_temperature: f32,
        (scale, prior_temperature): (f32, f32),
        (checks, mates): (u32, bool),
    ) -> Arc<dyn Evaluator> {
        let tempered =
            policy_temperature.is_finite() && policy_temperature > 0.0 && policy_temperature != 1.0;
        if (weight <= 0.0 && prior_weight <= 0.0 && !tempered) || inner.is_tactical() {
            return inner;
        }
        let prior_weight = prior_weight.clamp(0.0, 1.0);
        let temperature = if tempered { policy_temperature } else { 1.0 };
        let mut material = MaterialEvaluator::new(variant);
        if scale.is_finite() && scale > 0.0 {
            material.scale = scale;
        }
        if prior_temperature.is_finite() && prior_temperature > 0.0 {
            material.prior_temperature = prior_temperature;
        }
        material.tactics.checks = checks;
        Arc::new(TacticalBlend {
            mates,
            inner,
            material,
            weight: weight.clamp(0.0, 1.0),
            prior_weight,
            mix,
            temperature,
            net_exponent: mix.net_exponent(prior_weight) / temperature,
            scratch: Default::default(),
        })
    }

    /// The blend a search config asks for ([`SearchConfig::tactics`] and
    /// [`SearchConfig::tactics_priors`]).
    ///
    /// [`SearchConfig::tactics`]: crate::SearchConfig::tactics
    /// [`SearchConfig::tactics_priors`]: crate::SearchConfig::tactics_priors
    pub fn for_search(
        inner: Arc<dyn Evaluator>,
        variant: &Arc<Variant>,
        cfg: &crate::SearchConfig,
    ) -> Arc<dyn Evaluator> {
        Self::wrap_full(
            inner,
            variant,
            cfg.tactics,
            cfg.tactics_priors,
            cfg.tactics_priors_mix,
            cfg.policy_temperature,
            (cfg.tactics_scale, cfg.tactics_prior_temperature),
            (cfg.tactics_checks, cfg.tactics_mates),
        )
    }
}

impl Evaluator for TacticalBlend {
    fn id(&self) -> String {
        let mut id = self.inner.id();
        if self.weight > 0.0 {
            id += &format!("+tactics={}", self.weight);
            if self.material.scale != MATERIAL_SCALE {
                id += &format!("+scale={}", self.material.scale);
            }
            if self.material.tactics.checks > 0 {
                id += &format!("+checks={}", self.material.tactics.checks);
            }
            if self.mates {
                id += "+mates";
            }
        }
        if self.prior_weight > 0.0 {
            id += &format!("+tactics_priors={}", self.prior_weight);
            if self.mix == crate::PriorMix::Product {
                id += "+mix=product";
            }
            if self.material.prior_temperature != 1.0 {
                id += &format!("+hint_temperature={}", self.material.prior_temperature);
            }
        }
        if self.temperature != 1.0 {
            id += &format!("+policy_temperature={}", self.temperature);
        }
        id
    }
    fn input_len(&self) -> usize {
        self.inner.input_len() + 1
    }
    fn encode(&self, pos: &Position, out: &mut [f32]) {
        let n = self.inner.input_len();
        self.inner.encode(pos, &mut out[..n]);
        out[n] = self.material.tactics.static_eval(pos);
    }
    fn encode_leaf(&self, pos: &mut Position, moves: &[Move], out: &mut [f32], hints: &mut [f32]) {
        let n = self.inner.input_len();
        self.inner.encode_leaf(pos, moves, &mut out[..n], hints);
        if self.weight > 0.0 {
            out[n] = self.material.tactics.quiesce(pos);
        }
        if self.prior_weight > 0.0 {
            self.material.tactics.move_hints(pos, moves, hints);
        }
    }
    fn evaluate(&self, batch: &Batch, out: &mut Evaluation) {
        let n = self.inner.input_len();
        let stride = n + 1;
        let mut sub = self
            .scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default();
        sub.n = batch.n;
        sub.input_len = n;
        sub.inputs.clear();
        for leaf in batch.inputs.chunks_exact(stride).take(batch.n) {
            sub.inputs.extend_from_slice(&leaf[..n]);
        }
        sub.moves.clone_from(&batch.moves);
        sub.ranges.clone_from(&batch.ranges);
        sub.side_to_move.clone_from(&batch.side_to_move);
        sub.hints.clone_from(&batch.hints);
        self.inner.evaluate(&sub, out);
        self.scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(sub);
        let w = self.weight;
        if w > 0.0 {
            for (i, v) in out.wdl.iter_mut().enumerate() {
                let q = batch.inputs[i * stride + n];
                if self.mates && q.abs() >= PROVEN_MATE {
                    *v = if q > 0.0 {
                        [1.0, 0.0, 0.0]
                    } else {
                        [0.0, 0.0, 1.0]
                    };
                    continue;
                }
                let t = self.material.wdl(q);
                for k in 0..3 {
                    v[k] = (1.0 - w) * v[k] + w * t[k];
                }
            }
        }
        let pw = self.prior_weight;
        if pw > 0.0 || self.net_exponent != 1.0 {
            // The mix needs no priors of the material player's own: their log is the hints'.
            for &(a, b) in &batch.ranges {
                let (a, b) = (a as usize, b as usize);
                let h = &batch.hints[a..b];
                // Only a temperature: no hints were gathered, and no tactical factor.
                let log_t = (pw > 0.0).then(|| self.log_tactical(h));
                let mixed = &mut out.priors[a..b];
                let mut sum = 0.0;
                for (p, &x) in mixed.iter_mut().zip(h) {
                    // The floor keeps a move the net gives no prior reachable by the mix.
                    let t = log_t.as_ref().map_or(1.0, |l| (pw * l(x)).exp());
                    *p = p.max(Self::NET_FLOOR).powf(self.net_exponent) * t;
                    sum += *p;
                }
                for p in mixed.iter_mut() {
                    *p /= sum.max(f32::MIN_POSITIVE);
                }
            }
        }
    }
    fn own_priors(&self, pos: &mut Position, moves: &[Move], priors: &mut [f32]) {
        let pw = self.prior_weight;
        let a = self.net_exponent;
        // At exponent 0 (geometric, weight 1) nothing of the net is left to take back out.
        if (pw > 0.0 || a != 1.0) && a > 0.0 && !priors.is_empty() && priors.len() == moves.len() {
            let mut h = vec![0.0; moves.len()];
            if pw > 0.0 {
                self.material.tactics.move_hints(pos, moves, &mut h);
            }
            let log_t = self.log_tactical(&h);
            // mixed ∝ net^a × tactical^w, so log net = (log mixed - w log tactical) / a up to a
            // constant; exact but for the net's floor.
            for (p, &x) in priors.iter_mut().zip(&h) {
                *p = (p.max(f32::MIN_POSITIVE).ln() - pw * log_t(x)) / a;
            }
            let max = priors.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0.0;
            for p in priors.iter_mut() {
                *p = (*p - max).exp();
                sum += *p;
            }
            for p in priors.iter_mut() {
                *p /= sum.max(f32::MIN_POSITIVE);
            }
        }
        self.inner.own_priors(pos, moves, priors);
    }
    fn exploration(&self) -> f32 {
        self.inner.exploration()
    }
}

impl TacticalBlend {
    /// The least prior of the net in the mix.
    const NET_FLOOR: f32 = 1e-6;

    /// The log of the material player's prior of each move from its hint: a softmax of the
    /// hints, so its logarithm is the scaled hint less the log of the softmax's sum (floored,
    /// so that a move the hints give nothing stays reachable by the mix).
    fn log_tactical(&self, hints: &[f32]) -> impl Fn(f32) -> f32 {
        let temp = self.material.prior_temperature.max(1e-3);
        let max = hints.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let log_sum = hints
            .iter()
            .map(|&x| ((x - max) / temp).exp())
            .sum::<f32>()
            .ln();
        move |x| ((x - max) / temp - log_sum).max(1e-12f32.ln())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn material_value_is_from_side_to_move() {
        let v = Variant::builtin("makruk").unwrap();
        let ev = MaterialEvaluator::new(&v);
        // White is a rook up; Black to move sees a deficit.
        let pos = Position::from_fen(&v, "4k3/8/8/8/8/8/8/R3K3 b - - 0 1").unwrap();
        assert_eq!(ev.balance(&pos), -5.0);
        let w = ev.wdl(-5.0);
        assert!(w[2] > w[0]);
        assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn blend_keeps_priors_and_mixes_values() {
        let v = Variant::builtin("makruk").unwrap();
        // White to move can take an undefended rook: the raw balance is even, the quiescence
        // value a rook up; the uniform evaluator's value is 1/4, 1/2, 1/4.
        let mut pos = Position::from_fen(&v, "4k3/8/8/8/8/8/r7/R3K3 w - - 0 1").unwrap();
        let blend = TacticalBlend::wrap(Arc::new(UniformEvaluator), &v, 0.5, 0.0);
        assert_eq!(blend.id(), "uniform+tactics=0.5");
        let moves = pos.legal_moves();
        let mut batch = Batch::default();
        batch.push_leaf(&*blend, &mut pos, moves.as_slice());
        batch.push_leaf(&*blend, &mut pos, moves.as_slice());
        let mut out = Evaluation::default();
        blend.evaluate(&batch, &mut out);
        let k = moves.len() as f32;
        assert!(out.priors.iter().all(|&p| (p - 1.0 / k).abs() < 1e-6));
        let m = MaterialEvaluator::new(&v);
        let q = m.tactics.quiesce(&mut pos);
        assert!(q > 4.0, "quiescence should see the rook: {q}");
        let t = m.wdl(q);
        for wdl in &out.wdl {
            for i in 0..3 {
                let want = 0.5 * [0.25, 0.5, 0.25][i] + 0.5 * t[i];
                assert!((wdl[i] - want).abs() < 1e-6, "{wdl:?}");
            }
        }
        // Weight 0 is the inner evaluator itself.
        assert_eq!(
            TacticalBlend::wrap(Arc::new(UniformEvaluator), &v, 0.0, 0.0).id(),
            "uniform"
        );
        // The material player is not blended with itself.
        let m: Arc<dyn Evaluator> = Arc::new(MaterialEvaluator::new(&v));
        assert_eq!(TacticalBlend::wrap(m, &v, 0.5, 0.5).id(), "material");
    }

    /// Priors rising with the move's index (k + 1, normalised), so the mix's exponent on the
    /// inner priors shows; a flat value.
    struct Skewed;

    impl Evaluator for Skewed {
        fn id(&self) -> String {
            "skewed".into()
        }
        fn input_len(&self) -> usize {
            0
        }
        fn encode(&self, _pos: &Position, _out: &mut [f32]) {}
        fn evaluate(&self, batch: &Batch, out: &mut Evaluation) {
            out.priors.clear();
            for &(a, b) in &batch.ranges {
                let n = (b - a) as f32;
                out.priors
                    .extend((0..b - a).map(|k| (k as f32 + 1.0) / (n * (n + 1.0) / 2.0)));
            }
            out.wdl.clear();
            out.wdl.resize(batch.n, [0.25, 0.5, 0.25]);
        }
    }

    /// The hand-made case of the prior-mix tests: White to move can take an undefended rook
    /// (a1a2), and the hints rank it first. Returns the position, its moves, the hints, the
    /// material player's priors by hand (a softmax of the hints, temperature 1) and Skewed's
    /// priors by hand ((k + 1) / (n (n + 1) / 2)).
    fn hand_made_case(
        v: &Arc<Variant>,
    ) -> (
        Position,
        varzero_rules::MoveList,
        Vec<f32>,
        Vec<f64>,
        Vec<f64>,
    ) {
        let mut pos = Position::from_fen(v, "4k3/8/8/8/8/8/r7/R3K3 w - - 0 1").unwrap();
        let moves = pos.legal_moves();
        let m = MaterialEvaluator::new(v);
        let mut hints = vec![0.0; moves.len()];
        m.tactics.move_hints(&mut pos, moves.as_slice(), &mut hints);
        let e: Vec<f64> = hints.iter().map(|&h| (h as f64).exp()).collect();
        let tactical: Vec<f64> = e.iter().map(|x| x / e.iter().sum::<f64>()).collect();
        let n = moves.len() as f64;
        let inner: Vec<f64> = (0..moves.len())
            .map(|k| (k as f64 + 1.0) / (n * (n + 1.0) / 2.0))
            .collect();
        (pos, moves, hints, tactical, inner)
    }

    #[test]
    fn prior_blend_is_geometric_and_keeps_values() {
        let v = Variant::builtin("makruk").unwrap();
        let (mut pos, moves, _, tactical, inner) = hand_made_case(&v);
        let take = moves.iter().position(|&mv| pos.uci(mv) == "a1a2").unwrap();
        for w in [1.0f32, 0.5] {
            let blend = TacticalBlend::wrap(Arc::new(Skewed), &v, 0.0, w);
            assert_eq!(blend.id(), format!("skewed+tactics_priors={w}"));
            let mut batch = Batch::default();
            batch.push_leaf(&*blend, &mut pos, moves.as_slice());
            let mut out = Evaluation::default();
            blend.evaluate(&batch, &mut out);
            // inner^(1 - w) * tactical^w, normalised.
            let w = w as f64;
            let raw: Vec<f64> = inner
                .iter()
                .zip(&tactical)
                .map(|(p, t)| p.powf(1.0 - w) * t.powf(w))
                .collect();
            let sum: f64 = raw.iter().sum();
            for (i, (&p, &r)) in out.priors.iter().zip(&raw).enumerate() {
                assert!(
                    (p as f64 - r / sum).abs() < 1e-5,
                    "w {w}, move {i}: {p} against {}",
                    r / sum
                );
            }
            let best = out.priors.iter().cloned().fold(0.0, f32::max);
            assert_eq!(out.priors[take], best, "taking the rook leads the priors");
            // The value is the inner evaluator's: `tactics` is 0.
            assert_eq!(out.wdl, vec![[0.25, 0.5, 0.25]]);
        }
    }

    #[test]
    fn the_search_sets_the_material_scale_and_the_hint_temperature() {
        let v = Variant::builtin("makruk").unwrap();
        // The logistic by hand at scale 0.25, 4 pawns up: s = 1 / (1 + e^-1) = 0.731059,
        // draw 0.4 (1 - |2s - 1|) = 0.215153, win s - d / 2, loss 1 - s - d / 2.
        let m = MaterialEvaluator {
            scale: 0.25,
            ..MaterialEvaluator::new(&v)
        };
        for (got, want) in m.wdl(4.0).iter().zip([0.623482, 0.215153, 0.161364]) {
            assert!((got - want).abs() < 1e-5, "{got} against {want}");
        }
        let (mut pos, moves, hints, _, _) = hand_made_case(&v);
        let cfg = crate::SearchConfig {
            tactics: 1.0,
            tactics_priors: 1.0,
            tactics_scale: 0.25,
            tactics_prior_temperature: 0.5,
            ..crate::SearchConfig::default()
        };
        let blend = TacticalBlend::for_search(Arc::new(Skewed), &v, &cfg);
        assert_eq!(
            blend.id(),
            "skewed+tactics=1+scale=0.25+tactics_priors=1+hint_temperature=0.5"
        );
        let mut batch = Batch::default();
        batch.push_leaf(&*blend, &mut pos, moves.as_slice());
        let mut out = Evaluation::default();
        blend.evaluate(&batch, &mut out);
        // At weight 1 the priors are the hints' softmax at temperature 0.5 alone, by hand.
        let e: Vec<f64> = hints.iter().map(|&h| (h as f64 / 0.5).exp()).collect();
        let sum: f64 = e.iter().sum();
        for (i, (&p, x)) in out.priors.iter().zip(&e).enumerate() {
            assert!((p as f64 - x / sum).abs() < 1e-5, "move {i}: {p}");
        }
        // And the value is the quiescence value through the logistic at scale 0.25.
        let q = MaterialEvaluator::new(&v).tactics.quiesce(&mut pos);
        // At a level balance every scale gives the same value: the case must not be level.
        assert!(q.abs() >= 1.0, "quiescence value {q}");
        let want = m.wdl(q);
        for (got, want) in out.wdl[0].iter().zip(want) {
            assert!((got - want).abs() < 1e-6, "{:?}", out.wdl[0]);
        }
        // The defaults leave the id and the material player's settings as they were.
        let plain = TacticalBlend::for_search(
            Arc::new(Skewed),
            &v,
            &crate::SearchConfig {
                tactics: 1.0,
                tactics_priors: 1.0,
                ..crate::SearchConfig::default()
            },
        );
        assert_eq!(plain.id(), "skewed+tactics=1+tactics_priors=1");
    }

    #[test]
    fn a_mate_the_quiescence_search_proves_takes_the_leaf_value_whole() {
        let v = Variant::builtin("makruk").unwrap();
        // Ra8 mates (the white king on g6 takes g7 and h7): only a search of quiet checks
        // sees it. Skewed's own value is [0.25, 0.5, 0.25].
        let mut pos = Position::from_fen(&v, "7k/8/6K1/8/8/8/8/R7 w - - 0 1").unwrap();
        let moves = pos.legal_moves();
        let leaf = |cfg: crate::SearchConfig, pos: &mut Position| {
            let blend = TacticalBlend::for_search(Arc::new(Skewed), &v, &cfg);
            let mut batch = Batch::default();
            batch.push_leaf(&*blend, pos, moves.as_slice());
            let mut out = Evaluation::default();
            blend.evaluate(&batch, &mut out);
            (blend.id(), out.wdl[0])
        };
        let half = crate::SearchConfig {
            tactics: 0.5,
            ..crate::SearchConfig::default()
        };
        // Checks and the mate rule: a win, whole.
        let (id, wdl) = leaf(
            crate::SearchConfig {
                tactics_checks: 1,
                tactics_mates: true,
                ..half.clone()
            },
            &mut pos,
        );
        assert_eq!(id, "skewed+tactics=0.5+checks=1+mates");
        assert_eq!(wdl, [1.0, 0.0, 0.0]);
        // Checks without the rule: half of Skewed's value and half of a win, by hand
        // (the material player's logistic at 200 pawns is 1 to f32 precision).
        let (_, wdl) = leaf(
            crate::SearchConfig {
                tactics_checks: 1,
                ..half.clone()
            },
            &mut pos,
        );
        for (got, want) in wdl.iter().zip([0.625, 0.25, 0.125]) {
            assert!((got - want).abs() < 1e-6, "{wdl:?}");
        }
        // The rule without checks: the capture-only search sees no mate, so the value is the
        // plain blend of its quiescence value (a rook up, with the mop-up), not a win.
        let (id, wdl) = leaf(
            crate::SearchConfig {
                tactics_mates: true,
                ..half.clone()
            },
            &mut pos,
        );
        assert_eq!(id, "skewed+tactics=0.5+mates");
        let m = MaterialEvaluator::new(&v);
        let q = m.tactics.quiesce(&mut pos);
        assert!((5.0..20.0).contains(&q), "quiescence value {q}");
        let t = m.wdl(q);
        for k in 0..3 {
            let want = 0.5 * [0.25, 0.5, 0.25][k] + 0.5 * t[k];
            assert!((wdl[k] - want).abs() < 1e-6, "{wdl:?}");
        }
        // A proven loss (the quiescence value a mate against the side to move, written into
        // the leaf's input by hand) is a loss whole.
        let blend = TacticalBlend::for_search(
            Arc::new(Skewed),
            &v,
            &crate::SearchConfig {
                tactics_mates: true,
                ..half
            },
        );
        let mut batch = Batch::default();
        batch.push_leaf(&*blend, &mut pos, moves.as_slice());
        *batch.inputs.last_mut().unwrap() = -crate::tactics::MATE;
        let mut out = Evaluation::default();
        blend.evaluate(&batch, &mut out);
        assert_eq!(out.wdl[0], [0.0, 0.0, 1.0]);
    }

    #[test]
    fn product_mix_keeps_the_inner_ranking_of_moves_the_hints_rate_alike() {
        let v = Variant::builtin("makruk").unwrap();
        let (mut pos, moves, hints, tactical, inner) = hand_made_case(&v);
        let w = 0.5f64;
        let blend = TacticalBlend::wrap_mixed(
            Arc::new(Skewed),
            &v,
            0.0,
            w as f32,
            crate::PriorMix::Product,
            1.0,
        );
        assert_eq!(blend.id(), "skewed+tactics_priors=0.5+mix=product");
        let mut batch = Batch::default();
        batch.push_leaf(&*blend, &mut pos, moves.as_slice());
        let mut out = Evaluation::default();
        blend.evaluate(&batch, &mut out);
        // inner × tactical^w, normalised: the inner prior keeps its exponent 1.
        let raw: Vec<f64> = inner
            .iter()
            .zip(&tactical)
            .map(|(p, t)| p * t.powf(w))
            .collect();
        let sum: f64 = raw.iter().sum();
        for (i, (&p, &r)) in out.priors.iter().zip(&raw).enumerate() {
            assert!(
                (p as f64 - r / sum).abs() < 1e-5,
                "move {i}: {p} against {}",
                r / sum
            );
        }
        // Two moves the hints rate alike keep the inner ratio (geometric: its square root).
        let alike: Vec<usize> = (0..moves.len()).filter(|&i| hints[i] == hints[0]).collect();
        let (i, j) = (alike[0], *alike.last().unwrap());
        assert!(i != j, "the position has quiet moves the hints rate alike");
        let ratio = out.priors[j] as f64 / out.priors[i] as f64;
        assert!((ratio - inner[j] / inner[i]).abs() < 1e-3, "{ratio}");
        // The net's own priors come back out of the product too.
        let mut p = out.priors.clone();
        blend.own_priors(&mut pos, moves.as_slice(), &mut p);
        for (k, (a, b)) in p.iter().zip(&inner).enumerate() {
            assert!((*a as f64 - b).abs() < 1e-5, "move {k}: {a} against {b}");
        }
        // A weight of 1 leaves the net in the product, so its priors still come back.
        let full = TacticalBlend::wrap_mixed(
            Arc::new(Skewed),
            &v,
            0.0,
            1.0,
            crate::PriorMix::Product,
            1.0,
        );
        let mut batch = Batch::default();
        batch.push_leaf(&*full, &mut pos, moves.as_slice());
        full.evaluate(&batch, &mut out);
        let mut p = out.priors.clone();
        full.own_priors(&mut pos, moves.as_slice(), &mut p);
        for (k, (a, b)) in p.iter().zip(&inner).enumerate() {
            assert!(
                (*a as f64 - b).abs() < 1e-4,
                "w 1, move {k}: {a} against {b}"
            );
        }
    }

    #[test]
    fn policy_temperature_takes_the_inner_priors_to_one_over_t() {
        let v = Variant::builtin("makruk").unwrap();
        let (mut pos, moves, _, _, inner) = hand_made_case(&v);
        // No blend at all, only the temperature: the evaluator is still wrapped.
        let t = TacticalBlend::wrap_mixed(
            Arc::new(Skewed),
            &v,
            0.0,
            0.0,
            crate::PriorMix::Geometric,
            2.0,
        );
        assert_eq!(t.id(), "skewed+policy_temperature=2");
        let mut batch = Batch::default();
        batch.push_leaf(&*t, &mut pos, moves.as_slice());
        let mut out = Evaluation::default();
        t.evaluate(&batch, &mut out);
        // sqrt(k + 1) / sum of sqrt(j + 1), by hand.
        let sum: f64 = inner.iter().map(|p| p.sqrt()).sum();
        for (i, (&p, q)) in out.priors.iter().zip(&inner).enumerate() {
            assert!((p as f64 - q.sqrt() / sum).abs() < 1e-6, "move {i}: {p}");
        }
        assert_eq!(out.wdl, vec![[0.25, 0.5, 0.25]], "the value is left alone");
        let mut p = out.priors.clone();
        t.own_priors(&mut pos, moves.as_slice(), &mut p);
        for (i, (&a, b)) in p.iter().zip(&inner).enumerate() {
            assert!(
                (a as f64 - b).abs() < 1e-5,
                "own, move {i}: {a} against {b}"
            );
        }
        // Temperature 1 and no blend: the evaluator itself.
        let plain = TacticalBlend::wrap_mixed(
            Arc::new(Skewed),
            &v,
            0.0,
            0.0,
            crate::PriorMix::Geometric,
            1.0,
        );
        assert_eq!(plain.id(), "skewed");
    }

    #[test]
    fn own_priors_take_the_tactical_mix_back_out() {
        let v = Variant::builtin("makruk").unwrap();
        let mut pos = Position::from_fen(&v, "4k3/8/8/8/8/8/r7/R3K3 w - - 0 1").unwrap();
        let moves = pos.legal_moves();
        let n = moves.len() as f32;
        // Skewed's priors, by hand: (k + 1) / (n (n + 1) / 2).
        let inner: Vec<f32> = (0..moves.len())
            .map(|k| (k as f32 + 1.0) / (n * (n + 1.0) / 2.0))
            .collect();
        for w in [0.25f32, 0.5, 0.75] {
            let blend = TacticalBlend::wrap(Arc::new(Skewed), &v, 0.5, w);
            let mut batch = Batch::default();
            batch.push_leaf(&*blend, &mut pos, moves.as_slice());
            let mut out = Evaluation::default();
            blend.evaluate(&batch, &mut out);
            let mut p = out.priors.clone();
            assert!(
                p.iter().zip(&inner).any(|(a, b)| (a - b).abs() > 1e-2),
                "w {w}: the mix changed nothing to take out"
            );
            blend.own_priors(&mut pos, moves.as_slice(), &mut p);
            for (i, (a, b)) in p.iter().zip(&inner).enumerate() {
                assert!((a - b).abs() < 1e-5, "w {w}, move {i}: {a} against {b}");
            }
        }
        // Without a prior mix (and for a plain evaluator) the priors are the evaluator's own.
        let mut p = inner.clone();
        TacticalBlend::wrap(Arc::new(Skewed), &v, 0.5, 0.0).own_priors(
            &mut pos,
            moves.as_slice(),
            &mut p,
        );
        assert_eq!(p, inner);
    }
}

/// Finds an evaluator by name for a variant; `Ok(None)` when the name is not its kind.
pub trait EvaluatorResolver: Send + Sync {
    fn resolve(
        &self,
        name: &str,
        variant: &Arc<Variant>,
    ) -> Result<Option<Arc<dyn Evaluator>>, ResolveError>;
    /// Names it knows, for messages.
    fn known(&self) -> Vec<String>;
}

/// `material`, `material-raw` and `uniform`.
#[derive(Clone, Copy, Debug, Default)]
pub struct BuiltinEvaluators;

impl EvaluatorResolver for BuiltinEvaluators {
    fn resolve(
        &self,
        name: &str,
        variant: &Arc<Variant>,
    ) -> Result<Option<Arc<dyn Evaluator>>, ResolveError> {
        Ok(match name {
            "material" => Some(Arc::new(MaterialEvaluator::new(variant))),
            "material-raw" => Some(Arc::new(MaterialEvaluator::raw(variant))),
            "uniform" => Some(Arc::new(UniformEvaluator)),
            _ => None,
        })
    }
    fn known(&self) -> Vec<String> {
        vec!["material".into(), "material-raw".into(), "uniform".into()]
    }
}

/// Why an evaluator named by a player, an engine option or a config could not be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ResolveError(pub String);
