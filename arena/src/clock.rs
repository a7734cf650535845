//! Clocks of a match, in cutechess-cli's notation: `tc=40/60` (40 moves in 60 s, repeating),
//! `tc=10+0.1` (10 s for the game, 0.1 s added after each move), `tc=2:30+1` (minutes and
//! seconds), `tc=inf` (no clock) and `st=1` (1 s a move, no clock carried over). A player that
//! runs past its time loses the game (termination `time-forfeit`), as in cutechess; the
//! referee stays our rules core. Time is measured by the arena around each move.

use crate::error::{Error, Result};
use std::time::Duration;

/// A time control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeControl {
    /// `tc=[MOVES/]TIME[+INC]`: `base` for the game (or for each `moves` moves), `inc` after
    /// every move.
    Clock {
        moves: Option<u32>,
        base: Duration,
        inc: Duration,
    },
    /// `st=SECONDS`: a fixed time for each move.
    PerMove(Duration),
}

/// What a player sees of the clocks when it is to move (UCI's `go` parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockView {
    /// Time left on White's and Black's clocks.
    pub wtime: Duration,
    pub btime: Duration,
    pub winc: Duration,
    pub binc: Duration,
    /// Moves to the next time control, for the side to move.
    pub movestogo: Option<u32>,
    /// A fixed time for this move (`st`), instead of the clocks.
    pub movetime: Option<Duration>,
}

impl ClockView {
    /// The mover's time left and increment.
    pub fn mine(&self, white: bool) -> (Duration, Duration) {
        if white {
            (self.wtime, self.winc)
        } else {
            (self.btime, self.binc)
        }
    }

    /// The UCI `go` line's parameters (`wtime ... btime ... winc ... binc ... [movestogo N]`,
    /// or `movetime MS`).
    pub fn go_params(&self) -> String {
        if let Some(t) = self.movetime {
            return format!("movetime {}", t.as_millis());
        }
        let mut s = format!(
            "wtime {} btime {} winc {} binc {}",
            self.wtime.as_millis(),
            self.btime.as_millis(),
            self.winc.as_millis(),
            self.binc.as_millis()
        );
        if let Some(m) = self.movestogo {
            s.push_str(&format!(" movestogo {m}"));
        }
        s
    }

    /// What the mover may spend on this move at most before it loses on time.
    pub fn deadline(&self, white: bool) -> Duration {
        self.movetime.unwrap_or_else(|| self.mine(white).0)
    }
}

fn seconds(s: &str, what: &str) -> Result<Duration> {
    // `M:SS` or seconds with a fraction.
    let secs = match s.split_once(':') {
        Some((m, sec)) => m
            .parse::<u64>()
            .ok()
            .zip(sec.parse::<f64>().ok())
            .map(|(m, sec)| m as f64 * 60.0 + sec),
        None => s.parse::<f64>().ok(),
    };
    match secs {
        Some(x) if (0.0..1e7).contains(&x) => Ok(Duration::from_secs_f64(x)),
        _ => Err(Error::Spec(format!(
            "time control: {what} '{s}' is not a time in seconds (or M:SS)"
        ))),
    }
}

impl TimeControl {
    /// `tc=...` or `st=...` (the `tc=`/`st=` may be left out of `--tc`'s value); `None` for
    /// `tc=inf`.
    pub fn parse(s: &str) -> Result<Option<TimeControl>> {
        let s = s.trim();
        if let Some(st) = s.strip_prefix("st=") {
            let t = seconds(st, "st")?;
            if t.is_zero() {
                return Err(Error::Spec("time control: st must be above 0".into()));
            }
            return Ok(Some(TimeControl::PerMove(t)));
        }
        let tc = s.strip_prefix("tc=").unwrap_or(s);
        if tc == "inf" || tc == "infinite" {
            return Ok(None);
        }
        let (moves, rest) = match tc.split_once('/') {
            Some((m, r)) => (
                Some(m.parse::<u32>().ok().filter(|&m| m > 0).ok_or_else(|| {
                    Error::Spec(format!(
                        "time control '{s}': moves '{m}' must be a positive number"
                    ))
                })?),
                r,
            ),
            None => (None, tc),
        };
        let (base, inc) = match rest.split_once('+') {
            Some((b, i)) => (seconds(b, "time")?, seconds(i, "increment")?),
            None => (seconds(rest, "time")?, Duration::ZERO),
        };
        if base.is_zero() && inc.is_zero() {
            return Err(Error::Spec(format!(
                "time control '{s}': no time at all (use tc=inf for no clock)"
            )));
        }
        Ok(Some(TimeControl::Clock { moves, base, inc }))
    }
}

impl std::fmt::Display for TimeControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = |d: &Duration| {
            let x = d.as_secs_f64();
            format!("{}", (x * 1000.0).round() / 1000.0)
        };
        match self {
            TimeControl::PerMove(t) => write!(f, "st={}", s(t)),
            TimeControl::Clock { moves, base, inc } => {
                write!(f, "tc=")?;
                if let Some(m) = moves {
                    write!(f, "{m}/")?;
                }
                write!(f, "{}", s(base))?;
                if !inc.is_zero() {
                    write!(f, "+{}", s(inc))?;
                }
                Ok(())
            }
        }
    }
}

/// Both players' clocks during a game.
#[derive(Clone, Debug)]
pub struct GameClock {
    tc: TimeControl,
    /// Time left, White's and Black's (may go below zero by the overstep: signed ms).
    left: [i64; 2],
    /// Moves each side made.
    made: [u32; 2],
}

/// What one move did to the mover's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveTime {
    /// Time the move took.
    pub used_ms: u64,
    /// The mover's clock after it (increment and a new period added), negative when it lost
    /// on time; for `st`, the time the move had left.
    pub left_ms: i64,
}

impl GameClock {
    pub fn new(tc: TimeControl) -> GameClock {
        let start = match tc {
            TimeControl::Clock { base, .. } => base.as_millis() as i64,
            TimeControl::PerMove(_) => 0,
        };
        GameClock {
            tc,
            left: [start; 2],
            made: [0; 2],
        }
    }

    /// The clocks as the side to move (`white`) sees them.
    pub fn view(&self, white: bool) -> ClockView {
        let ms = |x: i64| Duration::from_millis(x.max(0) as u64);
        match self.tc {
            TimeControl::PerMove(t) => ClockView {
                wtime: t,
                btime: t,
                winc: Duration::ZERO,
                binc: Duration::ZERO,
                movestogo: None,
                movetime: Some(t),
            },
            TimeControl::Clock { moves, inc, .. } => ClockView {
                wtime: ms(self.left[0]),
                btime: ms(self.left[1]),
                winc: inc,
                binc: inc,
                movestogo: moves.map(|m| m - self.made[usize::from(!white)] % m),
                movetime: None,
            },
        }
    }

    /// Charges the mover (`white`) `used`; `Err` with the record when its time ran out (the
    /// move is not played: the game is lost on time).
    pub fn charge(
        &mut self,
        white: bool,
        used: Duration,
    ) -> std::result::Result<MoveTime, MoveTime> {
        let side = usize::from(!white);
        let used_ms = used.as_millis() as u64;
        match self.tc {
            TimeControl::PerMove(t) => {
                let left_ms = t.as_millis() as i64 - used_ms as i64;
                let rec = MoveTime { used_ms, left_ms };
                if left_ms < 0 {
                    Err(rec)
                } else {
                    Ok(rec)
                }
            }
            TimeControl::Clock { moves, base, inc } => {
                self.left[side] -= used_ms as i64;
                if self.left[side] < 0 {
                    return Err(MoveTime {
                        used_ms,
                        left_ms: self.left[side],
                    });
                }
                self.left[side] += inc.as_millis() as i64;
                self.made[side] += 1;
                if let Some(m) = moves {
                    if self.made[side].is_multiple_of(m) {
                        self.left[side] += base.as_millis() as i64;
                    }
                }
                Ok(MoveTime {
                    used_ms,
                    left_ms: self.left[side],
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn cutechess_notation() {
        let p = |s: &str| TimeControl::parse(s).unwrap().unwrap();
        assert_eq!(
            p("tc=40/60"),
            TimeControl::Clock {
                moves: Some(40),
                base: ms(60_000),
                inc: ms(0)
            }
        );
        assert_eq!(
            p("10+0.1"),
            TimeControl::Clock {
                moves: None,
                base: ms(10_000),
                inc: ms(100)
            }
        );
        assert_eq!(
            p("tc=2:30+1"),
            TimeControl::Clock {
                moves: None,
                base: ms(150_000),
                inc: ms(1000)
            }
        );
        assert_eq!(p("st=1"), TimeControl::PerMove(ms(1000)));
        assert_eq!(TimeControl::parse("tc=inf").unwrap(), None);
        for s in ["tc=40/60", "tc=10+0.1", "st=0.5", "tc=60"] {
            assert_eq!(p(s).to_string(), s);
        }
        for bad in ["tc=0/60", "tc=x", "tc=10+y", "st=0", "tc=0", "st=-1"] {
            assert!(TimeControl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_clock_by_hand() {
        // 2 moves in 1 s, 0.1 s increment.
        let mut c = GameClock::new(TimeControl::parse("tc=2/1+0.1").unwrap().unwrap());
        let v = c.view(true);
        assert_eq!(
            (v.wtime, v.btime, v.movestogo),
            (ms(1000), ms(1000), Some(2))
        );
        assert_eq!(
            v.go_params(),
            "wtime 1000 btime 1000 winc 100 binc 100 movestogo 2"
        );
        // White spends 300: 1000 - 300 + 100 = 800.
        assert_eq!(c.charge(true, ms(300)).unwrap().left_ms, 800);
        assert_eq!(c.view(true).movestogo, Some(1));
        assert_eq!(c.view(false).movestogo, Some(2));
        // White's second move ends the period: 800 - 500 + 100 + 1000 = 1400.
        assert_eq!(c.charge(true, ms(500)).unwrap().left_ms, 1400);
        assert_eq!(c.view(true).movestogo, Some(2));
        // Black oversteps its 1000.
        let lost = c.charge(false, ms(1001)).unwrap_err();
        assert_eq!((lost.used_ms, lost.left_ms), (1001, -1));
        // st: each move alone.
        let mut s = GameClock::new(TimeControl::PerMove(ms(50)));
        assert_eq!(s.view(true).go_params(), "movetime 50");
        assert_eq!(s.charge(true, ms(50)).unwrap().left_ms, 0);
        assert!(s.charge(false, ms(51)).is_err());
    }
}
