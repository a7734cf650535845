//! Gumbel root search (Danihelka, Guez, Schrittwieser and Silver, "Policy improvement by
//! planning with Gumbel", ICLR 2022), the root half of Gumbel MuZero; below the root the tree
//! still selects by PUCT. Without noise or temperature, the root
//!
//! 1. samples a Gumbel variable g(a) per move (self-play; zero in matches) and considers the m
//!    moves with the largest g(a) + logit(a) (Gumbel top-k: sampling without replacement);
//! 2. spends its simulations by sequential halving: in each of ceil(log2 m) phases the moves
//!    still considered get equal visits, then the better half by g + logit + σ(q̂) stays;
//! 3. plays the move with the largest g + logit + σ(q̂) among the most visited;
//! 4. trains the policy towards softmax(logit + σ(q̂)), where q̂ is the completed Q: a visited
//!    move's mean value, an unvisited one's the mixed value v_mix of the root.
//!
//! σ(q̂) = (c_visit + max_b N(b)) · c_scale · q̂ after q̂ is rescaled to [0, 1] over the root's
//! moves (mctx's `qtransform_completed_by_mix_value`; c_visit 50, c_scale 0.1 are its defaults).
//! The schedule is mctx's `get_sequence_of_considered_visits`: simulation k goes to a move
//! whose visit count equals the k-th entry, the one with the best score among them, which
//! makes the halving emerge from the visit counts alone (and lets virtual loss spread a batch
//! of simulations over the considered moves, pending visits counting as visits).
//!
//! The functions here are pure over per-move slices, so the toy-tree test checks them by hand;
//! `Tree` gathers the slices from the root and calls them.

/// The visit count simulation `k` (0-based) of a budget of `n` must go to, for `m` considered
/// moves: phases of ceil(log2 m), each giving every move still considered
/// max(1, n / (ceil(log2 m) · considered)) more visits, then halving the moves (never below 2).
/// Past the budget, the most visited moves are refined (`None`: no constraint).
pub fn considered_visit(m: usize, n: usize, k: usize) -> Option<u32> {
    if k >= n {
        return None;
    }
    if m <= 1 {
        return Some(k as u32);
    }
    let log2m = (m as f64).log2().ceil().max(1.0) as usize;
    let mut considered = m;
    let mut base = 0u32; // visits every considered move has at the start of the phase
    let mut index = 0usize; // simulations scheduled before this phase
    loop {
        let extra = (n / (log2m * considered)).max(1);
        let phase = extra * considered;
        if k < index + phase {
            return Some(base + ((k - index) / considered) as u32);
        }
        index += phase;
        base += extra as u32;
        considered = (considered / 2).max(2);
    }
}

/// What the root knows of each of its moves (all slices in the root's edge order).
#[derive(Clone, Copy, Debug)]
pub struct RootStats<'a> {
    /// The priors the net gave the moves (they sum to 1).
    pub priors: &'a [f32],
    /// Visits of each move, pending ones included (the schedule counts them).
    pub visits: &'a [u32],
    /// Mean value of each move for the root's side to move, w - l in [-1, 1]; NaN where the
    /// move has no value yet (unvisited, or only pending).
    pub q: &'a [f32],
    /// The net's own value of the root, w - l for its side to move.
    pub raw_value: f32,
}

/// Gumbel settings (a search config's `gumbel_*` keys).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GumbelParams {
    /// m, the moves considered at the root.
    pub considered: u32,
    pub c_visit: f32,
    pub c_scale: f32,
}

/// log of a prior, floored so that a zero prior stays finite.
fn logit(p: f32) -> f32 {
    p.max(1e-30).ln()
}

/// The mixed value v_mix: the raw value and the prior-weighted mean Q of the visited moves,
/// weighted 1 : sum of visits (the paper's eq. 33).
pub fn mixed_value(s: &RootStats) -> f32 {
    let (mut total, mut sum_p, mut sum_pq) = (0f32, 0f32, 0f32);
    for i in 0..s.priors.len() {
        if !s.q[i].is_nan() {
            total += s.visits[i] as f32;
            sum_p += s.priors[i].max(f32::MIN_POSITIVE);
            sum_pq += s.priors[i].max(f32::MIN_POSITIVE) * s.q[i];
        }
    }
    let weighted = if sum_p > 0.0 { sum_pq / sum_p } else { 0.0 };
    (s.raw_value + total * weighted) / (total + 1.0)
}

/// σ(q̂) per move, written into `out`: completed Q (v_mix where unvisited), rescaled to [0, 1]
/// by the smallest and largest of the root's moves, times (c_visit + max N) · c_scale.
pub fn sigma(s: &RootStats, p: &GumbelParams, out: &mut Vec<f32>) {
    let v_mix = mixed_value(s);
    out.clear();
    out.extend((0..s.priors.len()).map(|i| if s.q[i].is_nan() { v_mix } else { s.q[i] }));
    let lo = out.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = out.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let span = (hi - lo).max(1e-8);
    let max_n = s.visits.iter().copied().max().unwrap_or(0) as f32;
    let scale = (p.c_visit + max_n) * p.c_scale;
    for x in out.iter_mut() {
        *x = scale * (*x - lo) / span;
    }
}

/// The move for the next simulation (or, with `considered` = the largest visit count, the move
/// to play): among the moves whose visits equal `considered` (any move when `None`), the
/// largest g + logit + σ. Before any visit σ is the same for every move, so the first m
/// simulations go to the m best g + logit: the Gumbel top-k.
pub fn choose(
    gumbel: &[f32],
    priors: &[f32],
    sigma: &[f32],
    visits: &[u32],
    considered: Option<u32>,
) -> usize {
    let mut best = (0, f32::NEG_INFINITY);
    for i in 0..priors.len() {
        if considered.is_some_and(|c| visits[i] != c) {
            continue;
        }
        let g = gumbel.get(i).copied().unwrap_or(0.0);
        let score = g + logit(priors[i]) + sigma[i];
        if score > best.1 {
            best = (i, score);
        }
    }
    best.0
}

/// The policy target: softmax(logit + σ(q̂)) over every move.
pub fn improved_policy(priors: &[f32], sigma: &[f32]) -> Vec<f32> {
    let z: Vec<f32> = priors
        .iter()
        .zip(sigma)
        .map(|(&p, &s)| logit(p) + s)
        .collect();
    let hi = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f32> = z.iter().map(|&x| (x - hi).exp()).collect();
    let sum: f32 = e.iter().sum();
    e.into_iter().map(|x| x / sum).collect()
}

/// The next root move of a search with `budget` simulations, `done` of them made (pending
/// ones included): [`considered_visit`] over the m moves, then [`choose`].
pub fn next_simulation(
    s: &RootStats,
    gumbel: &[f32],
    p: &GumbelParams,
    budget: usize,
    done: usize,
    scratch: &mut Vec<f32>,
) -> usize {
    let m = (p.considered as usize).min(s.priors.len()).max(1);
    let c = considered_visit(m, budget, done).or_else(|| s.visits.iter().copied().max());
    sigma(s, p, scratch);
    choose(gumbel, s.priors, scratch, s.visits, c)
}

/// The move to play at the end of a search: the best g + logit + σ among the most visited.
pub fn final_move(
    s: &RootStats,
    gumbel: &[f32],
    p: &GumbelParams,
    scratch: &mut Vec<f32>,
) -> usize {
    sigma(s, p, scratch);
    let most = s.visits.iter().copied().max();
    choose(gumbel, s.priors, scratch, s.visits, most)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mctx's schedule for m = 4, n = 16: log2 4 = 2 phases; phase one gives each of 4 moves
    /// max(1, 16 / (2 · 4)) = 2 visits (8 simulations), phase two each of 2 moves
    /// 16 / (2 · 2) = 4 visits (8 simulations).
    #[test]
    fn the_schedule_halves() {
        let seq: Vec<u32> = (0..16)
            .map(|k| considered_visit(4, 16, k).unwrap())
            .collect();
        assert_eq!(seq, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
        assert_eq!(considered_visit(4, 16, 16), None);
        // One move considered: every simulation goes to it.
        assert_eq!(considered_visit(1, 5, 3), Some(3));
        // A budget smaller than m: the first n of the top-m get one visit each.
        let seq: Vec<u32> = (0..3)
            .map(|k| considered_visit(16, 3, k).unwrap())
            .collect();
        assert_eq!(seq, [0, 0, 0]);
    }
}
