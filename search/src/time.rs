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
}
