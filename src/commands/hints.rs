//! `varzero nets hints`: how a net's own priors compare with the exchange hints, on the
//! positions of a dataset's games and on their siblings (one random legal move away, the
//! positions a search visits and a game does not). Self-play teaches the net on game
//! positions only, while the search's exchange priors act at every node; this measures
//! whether that is why the priors stay worth as much to a late net as to net 1
//! (docs/runs.md, stop 56).

use anyhow::{bail, Context, Result};
use std::path::Path;
use std::sync::Arc;
use varzero_rules::{Position, Variant};
use varzero_search::{
    Batch, Evaluation, Evaluator, MaterialEvaluator, SearchConfig, TacticalBlend,
};

/// What one source of priors does on one set of positions.
#[derive(Default, Clone, Copy)]
struct Tally {
    positions: usize,
    /// Positions with a move that wins at least a pawn by the hints.
    winning: usize,
    /// Of those: the source's most likely move is one of the best (within half a pawn).
    top_takes: usize,
    /// Of those: the source's mass on the best moves.
    mass_takes: f64,
    /// Over every position: the source's mass on moves a pawn or more worse than the best.
    mass_blunders: f64,
    /// Over every position: expected pawns lost against the best hint.
    regret: f64,
}

impl Tally {
    fn add(&mut self, hints: &[f32], p: &[f32]) {
        let best = hints.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        self.positions += 1;
        let mut blunder = 0.0;
        let mut regret = 0.0;
        let mut takes = 0.0;
        let mut top = 0;
        for (i, (&h, &q)) in hints.iter().zip(p).enumerate() {
            if h <= best - 1.0 {
                blunder += q as f64;
            }
            if h >= best - 0.5 {
                takes += q as f64;
            }
            regret += q as f64 * (best - h).min(20.0) as f64;
            if q > p[top] {
                top = i;
            }
        }
        self.mass_blunders += blunder;
        self.regret += regret;
        if best >= 1.0 {
            self.winning += 1;
            self.mass_takes += takes;
            self.top_takes += (hints[top] >= best - 0.5) as usize;
        }
    }

    fn row(&self, set: &str, source: &str) -> String {
        let n = self.positions.max(1) as f64;
        let w = self.winning.max(1) as f64;
        format!(
            "{set:<8} {source:<24} {:>6} {:>7.1}% {:>9.1}% {:>9.1}% {:>10.1}% {:>7.2}",
            self.positions,
            100.0 * self.winning as f64 / n,
            100.0 * self.top_takes as f64 / w,
            100.0 * self.mass_takes / w,
            100.0 * self.mass_blunders / n,
            self.regret / n
        )
    }
}

/// The priors of `ev` for each position, in batches.
fn priors(ev: &dyn Evaluator, set: &[Position]) -> Vec<(Vec<f32>, Vec<f32>)> {
    let mut out = Vec::with_capacity(set.len());
    let mut batch = Batch::default();
    let mut eval = Evaluation::default();
    for chunk in set.chunks(256) {
        batch.clear();
        let mut positions: Vec<Position> = chunk.to_vec();
        for p in &mut positions {
            let moves = p.legal_moves();
            batch.push_leaf(ev, p, moves.as_slice());
        }
        ev.evaluate(&batch, &mut eval);
        for &(a, b) in &batch.ranges {
            let (a, b) = (a as usize, b as usize);
            out.push((batch.hints[a..b].to_vec(), eval.priors[a..b].to_vec()));
        }
    }
    out
}

pub fn run(
    v: &Arc<Variant>,
    games: &Path,
    nets: &[String],
    search: &SearchConfig,
    max: usize,
    seed: u64,
) -> Result<()> {
    let (shards, skipped) = varzero_datasets::list_shards(games)?;
    for s in &skipped {
        eprintln!("skipped {}: {}", s.path.display(), s.reason);
    }
    if max == 0 {
        bail!("--positions: at least 1");
    }
    let rules = format!("{:016x}", v.rules_hash);
    let mut fens = Vec::new();
    for s in &shards {
        for r in varzero_datasets::read_positions(&s.path)? {
            // The rules, not the name: a dataset under other rules (`--set`) is not these positions.
            if r.rules_hash == rules {
                fens.push(r.fen);
            }
        }
    }
    if fens.is_empty() {
        bail!(
            "{}: no positions of {} under these rules (hash {rules})",
            games.display(),
            v.name
        );
    }
    // Evenly spaced, so that every game phase is in the sample.
    let step = (fens.len() as f64 / max.max(1) as f64).max(1.0);
    let mut rng = varzero_stats::Rng::new(seed);
    let (mut on, mut off) = (Vec::new(), Vec::new());
    let mut k = 0.0;
    while (k as usize) < fens.len() && on.len() < max {
        let fen = &fens[k as usize];
        k += step;
        let mut pos =
            Position::from_fen(v, fen).with_context(|| format!("{}: {fen}", games.display()))?;
        let moves = pos.legal_moves();
        if moves.is_empty() || pos.outcome().is_some() {
            continue;
        }
        let mut sib = pos.clone();
        sib.make(moves.as_slice()[rng.below(moves.len())]);
        if !sib.legal_moves().is_empty() && sib.outcome().is_none() {
            off.push(sib);
        }
        on.push(pos);
    }
    // Every net is loaded before the table starts, so that a bad name leaves no half table.
    let resolver = varzero::nets::evaluators("cpu");
    let mut evs = Vec::new();
    for spec in nets {
        let ev = resolver
            .resolve(spec, v)
            .map_err(anyhow::Error::msg)?
            .with_context(|| format!("--net: unknown evaluator '{spec}'"))?;
        evs.push((spec, ev));
    }
    let mut cfg = search.clone();
    if cfg.tactics_priors <= 0.0 {
        cfg.tactics_priors = 0.5;
    }
    // The hints' own row at the temperature the mix uses, so that the two rows compare.
    let mut material = MaterialEvaluator::new(v);
    material.prior_temperature = cfg.tactics_prior_temperature;
    println!(
        "{} game positions and {} siblings (one random move away) from {}; hints at temperature {}, the search's mix at tactics_priors {}",
        on.len(),
        off.len(),
        games.display(),
        cfg.tactics_prior_temperature,
        cfg.tactics_priors
    );
    println!(
        "{:<8} {:<24} {:>6} {:>8} {:>10} {:>10} {:>11} {:>7}",
        "set", "priors", "n", "winning", "top takes", "mass takes", "mass blunder", "regret"
    );
    for (set_name, set) in [("game", &on), ("sibling", &off)] {
        let hints = priors(&material, set);
        let mut uniform = Tally::default();
        let mut hint = Tally::default();
        for (h, p) in &hints {
            hint.add(h, p);
            uniform.add(h, &vec![1.0 / h.len() as f32; h.len()]);
        }
        println!("{}", uniform.row(set_name, "uniform"));
        println!("{}", hint.row(set_name, "exchange hints"));
        for (spec, ev) in &evs {
            let blend = TacticalBlend::for_search(ev.clone(), v, &cfg);
            let (mut raw, mut mixed) = (Tally::default(), Tally::default());
            for ((h, _), (_, p)) in hints.iter().zip(priors(ev.as_ref(), set)) {
                raw.add(h, &p);
            }
            for ((h, _), (_, p)) in hints.iter().zip(priors(blend.as_ref(), set)) {
                mixed.add(h, &p);
            }
            let name = spec.strip_prefix("net:").unwrap_or(spec);
            println!("{}", raw.row(set_name, &format!("{name} raw")));
            println!("{}", mixed.row(set_name, &format!("{name} mixed")));
        }
    }
    println!("winning: positions where a move wins a pawn or more by the hints; top takes / mass takes: of those, the priors' first move is");
    println!("one of the best (within half a pawn), and their mass on the best; mass blunder: mass on moves a pawn or more below the best;");
    println!("regret: expected pawns below the best move's hint");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Tally;

    #[test]
    fn a_tally_counts_by_the_hints_as_worked_by_hand() {
        let mut t = Tally::default();
        // Best hint 2: the first move is within half a pawn of it (takes, 0.5), the other two
        // a pawn or more below (blunders, 0.3 + 0.2); regret 0.3 x 2 + 0.2 x 5 = 1.6.
        t.add(&[2.0, 0.0, -3.0], &[0.5, 0.3, 0.2]);
        // Nothing wins a pawn (best 0): a blunder of 0.75 and a regret of 0.75, not "winning".
        t.add(&[0.0, -1.0], &[0.25, 0.75]);
        assert_eq!((t.positions, t.winning, t.top_takes), (2, 1, 1));
        assert!((t.mass_takes - 0.5).abs() < 1e-6);
        assert!((t.mass_blunders - 1.25).abs() < 1e-6);
        assert!((t.regret - 2.35).abs() < 1e-6);
        // The most likely move is a blunder: no top take.
        let mut u = Tally::default();
        u.add(&[1.0, -1.0], &[0.4, 0.6]);
        assert_eq!((u.winning, u.top_takes), (1, 0));
    }
}
