//! The reports as text (what `varzero analyze` prints) and as JSON.

use super::{GroupReport, Interval, ReferenceSet};

impl GroupReport {
    /// The JSON form: rates as numbers with `*_interval` pairs, `piece_values` as a map from
    /// FEN letter to value (`piece_value_intervals`, `piece_value_details` beside it).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::{json, Map, Value};
        let iv = |i: &Interval| json!([i.lower, i.upper]);
        let mut values = Map::new();
        let mut intervals = Map::new();
        if let Some(pv) = &self.piece_values {
            for p in &pv.values {
                values.insert(p.key.clone(), json!(p.value));
                intervals.insert(p.key.clone(), json!([p.lower, p.upper]));
            }
        }
        let terminations: Map<String, Value> = self
            .terminations
            .iter()
            .map(|t| {
                (
                    t.termination.clone(),
                    json!({
                        "games": t.games,
                        "first_wins": t.first_wins,
                        "draws": t.draws,
                        "second_wins": t.second_wins,
                    }),
                )
            })
            .collect();
        json!({
            "variant": self.variant,
            "rules_hash": self.rules_hash,
            "games": self.games,
            "first_wins": self.first_wins,
            "draws": self.draws,
            "second_wins": self.second_wins,
            "draw_rate": self.draw_rate.value,
            "draw_rate_interval": iv(&self.draw_rate),
            "decisive_rate": self.decisive_rate.value,
            "decisive_rate_interval": iv(&self.decisive_rate),
            "first_player_score": self.first_player_score.value,
            "first_player_score_interval": iv(&self.first_player_score),
            "terminations": terminations,
            "length": self.length,
            "piece_values": values,
            "piece_value_intervals": intervals,
            "piece_value_details": self.piece_values,
            "notes": self.notes,
        })
    }
}

/// A short label of a group: `variant (hash8)`.
pub fn group_label(r: &GroupReport) -> String {
    format!(
        "{} ({})",
        r.variant,
        &r.rules_hash[..r.rules_hash.len().min(8)]
    )
}

/// The reports as a text table (what `varzero analyze` prints).
pub fn format_reports(reports: &[GroupReport]) -> String {
    format_reports_with(reports, &[])
}

/// [`format_reports`] with the values of reference sets beside the fitted ones (the sets of
/// each group's variant, in the fit's unit).
pub fn format_reports_with(reports: &[GroupReport], references: &[ReferenceSet]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for r in reports {
        let _ = writeln!(s, "== {} rules {}", r.variant, r.rules_hash);
        let _ = writeln!(
            s,
            "games {}  first player W/D/L {}/{}/{}",
            r.games, r.first_wins, r.draws, r.second_wins
        );
        let _ = writeln!(s, "draw rate           {}", r.draw_rate);
        let _ = writeln!(s, "decisive rate       {}", r.decisive_rate);
        let _ = writeln!(s, "first-player score  {}", r.first_player_score);
        let _ = writeln!(s, "terminations:");
        for t in &r.terminations {
            let _ = writeln!(
                s,
                "  {:<22} {:>6}  ({:.1}%)  first W/D/L {}/{}/{}",
                t.termination,
                t.games,
                100.0 * t.games as f64 / r.games.max(1) as f64,
                t.first_wins,
                t.draws,
                t.second_wins
            );
        }
        let l = &r.length;
        let _ = writeln!(
            s,
            "length (plies): mean {:.1}  min {}  p10 {:.0}  p25 {:.0}  median {:.0}  p75 {:.0}  \
             p90 {:.0}  max {}",
            l.mean, l.min, l.p10, l.p25, l.median, l.p75, l.p90, l.max
        );
        match &r.piece_values {
            // The unit's effect is not told apart from zero: every value is a ratio to noise.
            Some(pv) if pv.reference_logit.lower.is_finite() && pv.reference_logit.lower <= 0.0 => {
                let _ = writeln!(
                    s,
                    "piece values: not measured. The unit ({}) logit's 95% interval [{:.3}, {:.3}] \
                     includes 0 on {} positions of {} games, so no value is given; more games \
                     are needed, or more decisive ones (--decisive-only)",
                    pv.reference,
                    pv.reference_logit.lower,
                    pv.reference_logit.upper,
                    pv.samples,
                    pv.games
                );
            }
            Some(pv) => {
                let refs: Vec<&ReferenceSet> = references
                    .iter()
                    .filter(|x| x.applies_to(&r.variant))
                    .collect();
                let _ = writeln!(
                    s,
                    "piece values ({} = 1, {}; {} positions of {} games; 95% bootstrap):",
                    pv.reference, pv.reference_rule, pv.samples, pv.games
                );
                // Column widths that fit `P@across-river` and its name.
                let w = pv
                    .values
                    .iter()
                    .map(|p| p.key.len())
                    .max()
                    .unwrap_or(0)
                    .max(6);
                let n = pv
                    .values
                    .iter()
                    .map(|p| p.name.len())
                    .max()
                    .unwrap_or(0)
                    .max(14);
                let mut head = format!(
                    "  {:<w$} {:<n$} {:>7}  {:<17} {:>7} {:>6}  {:>9}",
                    "piece", "name", "value", "interval", "logit", "file", "imbalanced"
                );
                for i in 0..refs.len() {
                    head.push_str(&format!(" {:>6}", format!("ref{}", i + 1)));
                }
                let _ = writeln!(s, "{head}");
                for p in &pv.values {
                    let mut line = format!(
                        "  {:<w$} {:<n$} {:>7.2}  [{:>6.2}, {:>6.2}] {:>7.3} {:>6.1}  {:>9}",
                        p.key,
                        p.name,
                        p.value,
                        p.lower,
                        p.upper,
                        p.logit,
                        p.file_value,
                        p.imbalanced_samples
                    );
                    for x in &refs {
                        match x.value_in(&p.key, &pv.reference.to_string()) {
                            Some(v) => line.push_str(&format!(" {v:>6.2}")),
                            None => line.push_str(&format!(" {:>6}", "-")),
                        }
                    }
                    let _ = writeln!(s, "{line}");
                }
                for (i, x) in refs.iter().enumerate() {
                    let _ = writeln!(
                        s,
                        "  ref{} = {} ({}), in units of {}",
                        i + 1,
                        x.name,
                        x.source,
                        pv.reference
                    );
                }
                let _ = writeln!(
                    s,
                    "  logit of having the move {:.3} [{:.3}, {:.3}], of being first {:.3} [{:.3}, {:.3}]",
                    pv.side_to_move.value,
                    pv.side_to_move.lower,
                    pv.side_to_move.upper,
                    pv.first_player.value,
                    pv.first_player.lower,
                    pv.first_player.upper
                );
                let _ = writeln!(
                    s,
                    "  unit ({}) logit {:.3} [{:.3}, {:.3}]",
                    pv.reference,
                    pv.reference_logit.value,
                    pv.reference_logit.lower,
                    pv.reference_logit.upper
                );
            }
            None => {
                let _ = writeln!(s, "piece values: none");
            }
        }
        for n in &r.notes {
            let _ = writeln!(s, "note: {n}");
        }
        s.push('\n');
    }
    s
}
