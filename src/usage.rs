//! CPU accounting: the process's CPU time (and its engines'), and a stage's core utilisation.
//! The one place in the binary that calls into libc (getrusage), so the rest stays safe code.

use crate::run_dir::{CpuKey, RunDir, StageRow};
use anyhow::Result;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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

/// A stage's CPU time, written to the run's ledger (`logs/cpu.json`) as the stage goes rather
/// than once at its end: a stage that is killed keeps what it spent up to the last flush. Its
/// work is kept too (finished games stay, training resumes from its checkpoint), so counting
/// only the resumed part undercounted a run (a training resumed after 300 of 500 steps once
/// recorded 47 s for 500 steps).
pub struct CpuMeter {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<Result<()>>>,
}

impl CpuMeter {
    /// How often the ledger is brought up to date: at most this much CPU per core is lost to
    /// a kill, for one small file write.
    pub const FLUSH: Duration = Duration::from_secs(30);

    /// Meters the CPU that `read` counts ([`cpu_seconds`], or [`cpu_with_children`] where a
    /// teacher's engines work for the stage) into `key` of `run`'s ledger every `every`, and
    /// at the end.
    pub fn start(run: &RunDir, key: CpuKey, read: fn() -> f64, every: Duration) -> CpuMeter {
        let (tx, rx) = mpsc::channel::<()>();
        let run = run.clone();
        let mut last = read();
        let thread = std::thread::spawn(move || loop {
            let end = !matches!(rx.recv_timeout(every), Err(mpsc::RecvTimeoutError::Timeout));
            let now = read();
            run.add_cpu(&key, now - last)?;
            last = now;
            if end {
                return Ok(());
            }
        });
        CpuMeter {
            stop: Some(tx),
            thread: Some(thread),
        }
    }

    /// Stops the meter after its last flush; an error is the ledger's.
    pub fn finish(mut self) -> Result<()> {
        self.stop_thread()
    }

    fn stop_thread(&mut self) -> Result<()> {
        drop(self.stop.take());
        match self.thread.take() {
            Some(h) => h
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("the CPU meter's thread panicked"))),
            None => Ok(()),
        }
    }
}

impl Drop for CpuMeter {
    /// A stage that fails still spent its CPU: the last flush runs on the error path too.
    fn drop(&mut self) {
        let _ = self.stop_thread();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn burn(secs: f64) {
        let t = cpu_seconds();
        let mut x = 1u64;
        while cpu_seconds() - t < secs {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            std::hint::black_box(x);
        }
    }

    #[test]
    fn the_meter_writes_the_ledger_before_the_stage_ends() {
        let t = tempfile::tempdir().unwrap();
        let r = RunDir::new(t.path());
        r.create().unwrap();
        let m = CpuMeter::start(&r, CpuKey::train(1), cpu_seconds, Duration::from_millis(20));
        burn(0.2);
        // Wait for a flush after the burn, as a kill would find the ledger.
        let mut flushed = 0.0;
        for _ in 0..200 {
            std::thread::sleep(Duration::from_millis(10));
            flushed = r.cpu_hours_to(1).unwrap() * 3600.0;
            if flushed >= 0.2 {
                break;
            }
        }
        assert!(flushed >= 0.2, "only {flushed} s in the ledger mid-stage");
        m.finish().unwrap();
        let all = r.cpu_hours_to(1).unwrap() * 3600.0;
        assert!(all >= flushed, "{all} < {flushed}");
        // Only the metered key is written.
        assert!(r.cpu_hours_to(0).unwrap() == 0.0);
    }

    #[test]
    fn a_dropped_meter_flushes_once_more() {
        let t = tempfile::tempdir().unwrap();
        let r = RunDir::new(t.path());
        r.create().unwrap();
        {
            let _m = CpuMeter::start(&r, CpuKey::selfplay(2, None), cpu_seconds, CpuMeter::FLUSH);
            burn(0.05);
        }
        let secs = r.cpu_hours_to(3).unwrap() * 3600.0;
        assert!(secs >= 0.05, "{secs}");
    }
}
