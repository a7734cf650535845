//! Time management: how much of a clock one move may spend. One rule for the UCI engine and
//! the in-process players of a clocked match, so that both play the same way under a clock.

use std::time::Duration;

/// Milliseconds kept back from every move for the answer to reach the other side (the
/// engine's output, a GUI's or a match runner's reading of it).
pub const MOVE_OVERHEAD_MS: u64 = 20;

/// The time one move may take with `left` ms on the clock, `inc` ms added after the move,
/// and `movestogo` moves to the next time control (None: sudden death; assume 30 more
/// moves). A share of what is left plus three quarters of the increment, never more than a
/// third of what is left, less the overhead, and at least 5 ms. Smart pruning may stop the
/// search sooner ([`crate::Limits::smart_pruning`]).
pub fn move_budget(left: u64, inc: u64, movestogo: Option<u64>) -> Duration {
    let ms = (left / movestogo.unwrap_or(30).max(1))
        .saturating_add(inc / 4 * 3)
        .min(left / 3)
        .saturating_sub(MOVE_OVERHEAD_MS)
        .max(5);
    Duration::from_millis(ms)
}

/// How far past its budget an unclear move may run: twice the budget, never more than a
/// third of what is left (less the overhead), and never less than the budget.
pub fn move_cap(left: u64, inc: u64, movestogo: Option<u64>) -> Duration {
    let budget = move_budget(left, inc, movestogo);
    let cap = (left / 3).saturating_sub(MOVE_OVERHEAD_MS);
    Duration::from_millis((2 * budget.as_millis() as u64).min(cap)).max(budget)
}

/// Whether a search at its budget should go on towards its cap: the most visited move leads
/// the second by less than a fifth of its visits, so more playouts may still change it (lc0
/// and KataGo spend more time where the best move is unclear).
pub fn unclear(first: u32, second: u32) -> bool {
    second > 0 && (second as u64) * 5 > (first as u64) * 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_by_hand() {
        // 10 s + 0.1 s: 10000 / 30 + 75 = 408, less 20: 388 ms.
        assert_eq!(move_budget(10_000, 100, None), Duration::from_millis(388));
        // 40 moves in 60 s, 40 to go: 1500 - 20.
        assert_eq!(
            move_budget(60_000, 0, Some(40)),
            Duration::from_millis(1480)
        );
        // One move to go with 900 ms: a third of it, 300 - 20.
        assert_eq!(move_budget(900, 0, Some(1)), Duration::from_millis(280));
        // Almost flagged: the floor.
        assert_eq!(move_budget(30, 10, None), Duration::from_millis(5));
    }

    #[test]
    fn caps_and_unclear_moves_by_hand() {
        // 10 s + 0.1 s: twice 388 ms.
        assert_eq!(move_cap(10_000, 100, None), Duration::from_millis(776));
        // 900 ms, one move to go: the budget is a third already (280), the cap no more.
        assert_eq!(move_cap(900, 0, Some(1)), Duration::from_millis(280));
        // 100 against 85 visits is unclear, against 80 (exactly four fifths) and 50 it is not.
        assert!(unclear(100, 85));
        assert!(!unclear(100, 80) && !unclear(100, 50) && !unclear(1, 0));
    }
}
