//! The Gumbel root on a toy tree: four moves whose every simulation returns a known value, so
//! each move's Q is its value. The schedule, the move chosen and the policy target are checked
//! against the numbers worked out by hand in the comments.

use varzero_search::gumbel::{final_move, improved_policy, next_simulation, sigma, RootStats};
use varzero_search::GumbelParams;

const PRIORS: [f32; 4] = [0.4, 0.3, 0.2, 0.1];
/// The value each move's simulations return (w - l for the root's side to move). The best
/// move has the smallest prior, so the search must find it by its value.
const VALUES: [f32; 4] = [0.0, 0.5, -0.2, 0.9];

/// Runs `budget` simulations with no Gumbel noise; returns the moves simulated in order, the
/// final visits, the move played and the policy target.
fn search(m: u32, budget: usize, raw: f32) -> (Vec<usize>, [u32; 4], usize, Vec<f32>) {
    let p = GumbelParams {
        considered: m,
        c_visit: 50.0,
        c_scale: 0.1,
    };
    let mut visits = [0u32; 4];
    let mut q = [f32::NAN; 4];
    let mut order = Vec::new();
    let mut scratch = Vec::new();
    for done in 0..budget {
        let s = RootStats {
            priors: &PRIORS,
            visits: &visits,
            q: &q,
            raw_value: raw,
        };
        let a = next_simulation(&s, &[], &p, budget, done, &mut scratch);
        order.push(a);
        visits[a] += 1;
        q[a] = VALUES[a];
    }
    let s = RootStats {
        priors: &PRIORS,
        visits: &visits,
        q: &q,
        raw_value: raw,
    };
    let played = final_move(&s, &[], &p, &mut scratch);
    sigma(&s, &p, &mut scratch);
    (order, visits, played, improved_policy(&PRIORS, &scratch))
}

fn close(a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() < 1e-4, "{a:?} != {b:?}");
    }
}

#[test]
fn sequential_halving_finds_the_best_move_and_targets_completed_q() {
    // m = 4, n = 16: phase one gives each move 2 visits in prior order (σ is the same for
    // unvisited moves); phase two keeps the 2 best by logit + σ. After phase one (max N = 2):
    // σ = 5.2 (q + 0.2) / 1.1 = [0.945, 3.309, 0, 5.2], and logit + σ = [0.029, 2.105,
    // -1.609, 2.897]: moves 3 and 1 stay, and take turns to 6 visits each.
    let (order, visits, played, policy) = search(4, 16, 0.0);
    assert_eq!(order[..8], [0, 1, 2, 3, 3, 1, 0, 2]);
    assert_eq!(order[8..], [3, 1, 3, 1, 3, 1, 3, 1]);
    assert_eq!(visits, [2, 6, 2, 6]);
    // Played: among the most visited (1 and 3), logit + σ with σ = 5.6 (q + 0.2) / 1.1:
    // move 1: ln 0.3 + 3.564 = 2.360; move 3: ln 0.1 + 5.6 = 3.297.
    assert_eq!(played, 3);
    // Target: prior × exp(σ), normalised; every move is visited, so completed Q = Q.
    let w: Vec<f32> = (0..4)
        .map(|i| PRIORS[i] * (5.6 * (VALUES[i] + 0.2) / 1.1).exp())
        .collect();
    let sum: f32 = w.iter().sum();
    let hand: Vec<f32> = w.iter().map(|x| x / sum).collect();
    close(&policy, &hand);
    close(&policy, &[0.02844, 0.27186, 0.00514, 0.69457]);
}

#[test]
fn unvisited_moves_are_completed_with_the_mixed_value() {
    // m = 2, n = 4 with the root's raw value 0.1: moves 0 and 1 (the top 2 priors) get 2 visits
    // each (at the third simulation σ ranks move 1 first: 5.1 against 0), moves 2 and 3 none.
    let (order, visits, played, policy) = search(2, 4, 0.1);
    assert_eq!(order, [0, 1, 1, 0]);
    assert_eq!(visits, [2, 2, 0, 0]);
    assert_eq!(played, 1);
    // v_mix = (raw + N · Σ π q / Σ π) / (N + 1) over the visited moves:
    // (0.1 + 4 · (0.4 · 0 + 0.3 · 0.5) / 0.7) / 5 = 0.191429. Completed Q = [0, 0.5, v_mix,
    // v_mix], rescaled by [0, 0.5], times (50 + 2) · 0.1 = 5.2.
    let v_mix: f32 = (0.1 + 4.0 * (0.3 * 0.5) / 0.7) / 5.0;
    let completed = [0.0, 0.5, v_mix, v_mix];
    let w: Vec<f32> = (0..4)
        .map(|i| PRIORS[i] * (5.2 * completed[i] / 0.5).exp())
        .collect();
    let sum: f32 = w.iter().sum();
    let hand: Vec<f32> = w.iter().map(|x| x / sum).collect();
    close(&policy, &hand);
    close(&policy, &[0.00702, 0.95444, 0.02570, 0.01285]);
}

#[test]
fn gumbel_noise_changes_the_considered_moves() {
    // With m = 1 only the best g + logit is searched: a large Gumbel on move 2 makes it the one.
    let p = GumbelParams {
        considered: 1,
        c_visit: 50.0,
        c_scale: 0.1,
    };
    let s = RootStats {
        priors: &PRIORS,
        visits: &[0; 4],
        q: &[f32::NAN; 4],
        raw_value: 0.0,
    };
    let mut scratch = Vec::new();
    assert_eq!(next_simulation(&s, &[0.0; 4], &p, 8, 0, &mut scratch), 0);
    assert_eq!(
        next_simulation(&s, &[0.0, 0.0, 1.0, 0.0], &p, 8, 0, &mut scratch),
        2
    );
}
