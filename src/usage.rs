//! CPU accounting: the process's CPU time (and its engines'), and a stage's core utilisation.
//! The one place in the binary that calls into libc (getrusage), so the rest stays safe code.

use crate::run_dir::{RunDir, StageRow};
use anyhow::Result;
use std::time::Instant;

/// Process CPU time (user + system, all threads) in seconds.
pub fn cpu_seconds() -> f64 {
    rusage(libc::RUSAGE_SELF).unwrap_or(0.0)
}

/// CPU seconds of this process and of its child processes that have ended (the engines a
/// teacher or a ladder rung runs, reaped when they quit).
pub fn cpu_with_children() -> f64 {
    cpu_seconds() + rusage(libc::RUSAGE_CHILDREN).unwrap_or(0.0)
}

fn rusage(who: libc::c_int) -> Option<f64> {
    // SAFETY: getrusage writes into the struct we pass and reads nothing else.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(who, &mut u) } != 0 {
        return None;
    }
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    Some(t(u.ru_utime) + t(u.ru_stime))
}

/// A stage's core utilisation: CPU time (this process and its engines) over wall time.
/// Recorded per stage and generation in `logs/stages.csv`, so a run shows where a core idles.
pub struct Usage {
    wall: Instant,
    cpu: f64,
}

impl Usage {
    pub fn start() -> Usage {
        Usage {
            wall: Instant::now(),
            cpu: cpu_with_children(),
        }
    }

    /// Cores busy on average since the start.
    pub fn cores(&self) -> f64 {
        (cpu_with_children() - self.cpu) / self.wall.elapsed().as_secs_f64().max(1e-9)
    }

    /// Appends the stage's row to `logs/stages.csv`; returns the cores busy.
    pub fn record(&self, run: &RunDir, stage: &str, generation: u32) -> Result<f64> {
        let wall_s = self.wall.elapsed().as_secs_f64();
        let cpu_s = cpu_with_children() - self.cpu;
        let cores_busy = cpu_s / wall_s.max(1e-9);
        run.add_stage(StageRow {
            stage: stage.to_string(),
            generation,
            wall_s,
            cpu_s,
            cores_busy,
        })?;
        Ok(cores_busy)
    }
}
