//! One writer per directory: advisory file locks on `DIR/.lock` (the writer's lock, held for its
//! whole run) and `DIR/.commit.lock` (held for the moment a shard is checked and renamed in).
//!
//! The locks are `flock`s (std's `File::lock`), so the kernel drops them when the holder dies:
//! a lock left by a killed writer is stale by construction and never blocks the next one. The
//! file names the holder (host, pid, command) so a refusal can say who has the directory. On a
//! network filesystem `flock` is only as good as the filesystem's lock support (NFSv4 and
//! Lustre with `flock` mounted honour it; docs/cluster.md).

use crate::error::{Error, Result};
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The writer's lock file inside a directory.
pub const LOCK_FILE: &str = ".lock";
/// The lock held while one shard is checked against the directory and renamed into it.
pub const COMMIT_LOCK_FILE: &str = ".commit.lock";

/// How a writer holds a directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockMode {
    /// The only writer: it may remove what others left (temporaries), and nobody else writes.
    Exclusive,
    /// One of several writers of disjoint work (self-play ranges): they exclude an exclusive
    /// writer, not each other.
    Shared,
}

/// A held lock; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct DirLock {
    _file: File,
    path: PathBuf,
}

impl DirLock {
    /// Takes `dir`'s writer lock without waiting: refused, naming the holder, when another
    /// process holds it in a conflicting mode. Creates `dir` when missing.
    pub fn acquire(dir: &Path, mode: LockMode) -> Result<DirLock> {
        let path = lock_path(dir, LOCK_FILE)?;
        let mut file = open(&path)?;
        let got = match mode {
            LockMode::Exclusive => file.try_lock(),
            LockMode::Shared => file.try_lock_shared(),
        };
        match got {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(Error::Locked {
                    dir: dir.display().to_string(),
                    holder: holder(&path),
                })
            }
            Err(TryLockError::Error(e)) => return Err(Error::io(path.display(), e)),
        }
        if mode == LockMode::Exclusive {
            // Only an exclusive holder rewrites the file: shared holders would clobber each other.
            let _ = file.set_len(0).and_then(|_| {
                file.seek(SeekFrom::Start(0))?;
                file.write_all(whoami().as_bytes())
            });
        }
        Ok(DirLock { _file: file, path })
    }

    /// [`DirLock::acquire`], but waiting while another process holds `dir` (`on_wait` is told
    /// who, once): for work that another writer may be doing right now and that is read, not
    /// redone, once it has finished (a ladder pairing in a shared rung cache).
    pub fn wait(dir: &Path, mode: LockMode, on_wait: &mut dyn FnMut(&str)) -> Result<DirLock> {
        match DirLock::acquire(dir, mode) {
            Err(Error::Locked { holder, .. }) => on_wait(&holder),
            other => return other,
        }
        let path = lock_path(dir, LOCK_FILE)?;
        let mut file = open(&path)?;
        let got = match mode {
            LockMode::Exclusive => file.lock(),
            LockMode::Shared => file.lock_shared(),
        };
        got.map_err(|e| Error::io(path.display(), e))?;
        if mode == LockMode::Exclusive {
            let _ = file.set_len(0).and_then(|_| {
                file.seek(SeekFrom::Start(0))?;
                file.write_all(whoami().as_bytes())
            });
        }
        Ok(DirLock { _file: file, path })
    }

    /// Takes `dir`'s commit lock, waiting for another writer's commit to finish (commits are
    /// short: one shard's check and rename).
    pub fn commit(dir: &Path) -> Result<DirLock> {
        let path = lock_path(dir, COMMIT_LOCK_FILE)?;
        let file = open(&path)?;
        file.lock().map_err(|e| Error::io(path.display(), e))?;
        Ok(DirLock { _file: file, path })
    }

    /// The lock file held.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn lock_path(dir: &Path, name: &str) -> Result<PathBuf> {
    fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    Ok(dir.join(name))
}

fn open(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| Error::io(path.display(), e))
}

/// What the lock file says of its holder (its first line), or a plain phrase.
fn holder(path: &Path) -> String {
    fs::read_to_string(path)
        .ok()
        .and_then(|t| t.lines().next().map(str::trim).map(String::from))
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| "another process".into())
}

/// `pid P on host H (COMMAND)`, for the lock file.
fn whoami() -> String {
    let host = fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into());
    let cmd: Vec<String> = std::env::args().take(3).collect();
    format!(
        "pid {} on host {host} ({})\n",
        std::process::id(),
        cmd.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_excludes_everyone_and_shared_excludes_only_exclusive() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("d");
        {
            let _x = DirLock::acquire(&d, LockMode::Exclusive).unwrap();
            let e = DirLock::acquire(&d, LockMode::Exclusive).unwrap_err();
            let msg = e.to_string();
            assert!(
                msg.contains("in use") && msg.contains(&format!("pid {}", std::process::id())),
                "{msg}"
            );
            assert!(DirLock::acquire(&d, LockMode::Shared).is_err());
        }
        let a = DirLock::acquire(&d, LockMode::Shared).unwrap();
        let _b = DirLock::acquire(&d, LockMode::Shared).unwrap();
        assert!(DirLock::acquire(&d, LockMode::Exclusive).is_err());
        drop(a);
        drop(_b);
        // Released on drop: the next writer gets it.
        let _x = DirLock::acquire(&d, LockMode::Exclusive).unwrap();
        let _c = DirLock::commit(&d).unwrap();
        assert!(d.join(COMMIT_LOCK_FILE).exists());
    }

    #[test]
    fn wait_returns_once_the_holder_lets_go() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("d");
        let held = DirLock::acquire(&d, LockMode::Exclusive).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let d2 = d.clone();
        let waiter = std::thread::spawn(move || {
            let mut told = Vec::new();
            let l = DirLock::wait(&d2, LockMode::Exclusive, &mut |h| {
                told.push(h.to_string());
                tx.send(()).unwrap();
            })
            .unwrap();
            (l, told)
        });
        // The waiter has been refused once (and said so) before the holder lets go.
        rx.recv().unwrap();
        drop(held);
        let (_l, told) = waiter.join().unwrap();
        assert_eq!(told.len(), 1);
        assert!(
            told[0].contains(&format!("pid {}", std::process::id())),
            "{told:?}"
        );
        assert!(DirLock::acquire(&d, LockMode::Exclusive).is_err());
    }
}
