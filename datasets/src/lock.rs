//! One writer per directory: advisory file locks on `DIR/.lock` (the writer's lock, held for its
//! whole run) and `DIR/.commit.lock` (held for the moment a shard is checked and renamed in).
//!
//! The locks are `flock`s (std's `File::lock`), so the kernel drops them when the holder dies:
//! a lock left by a killed writer is stale by construction and never blocks the next one. The
//! file names the holder (host, pid, command) so a refusal can say who has the directory. On a
//! network filesystem `flock` is only as good as the filesystem's lock support (NFSv4 and
//! Lustre with `flock` mounted honour it; docs/cluster.md).

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

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
    _file: Arc<File>,
    path: PathBuf,
}

/// The writer's locks this process holds, by lock file. `flock` belongs to an open file, so a
/// second `open` of the same lock file in this process would conflict with the first: a stage
/// that locks a directory and then calls a library function that locks it again, perhaps on a
/// thread of its own (the pipeline and the generator, a command and `GameWriter`), shares the
/// one open file instead. So the lock excludes other processes, not this one's threads.
static HELD: Mutex<Option<Held>> = Mutex::new(None);

/// Lock file -> the mode it is held in and the open file that holds it.
type Held = HashMap<PathBuf, (LockMode, Weak<File>)>;

impl DirLock {
    /// Takes `dir`'s writer lock without waiting: refused, naming the holder, when another
    /// process holds it in a conflicting mode. Creates `dir` when missing. Taken again in the
    /// same process it is the same lock (an exclusive holder may take it in either mode; a
    /// shared holder is refused the exclusive mode, since `flock` cannot upgrade atomically).
    pub fn acquire(dir: &Path, mode: LockMode) -> Result<DirLock> {
        Self::take(dir, mode, false)
    }

    /// As [`DirLock::acquire`], but waits while another process holds the lock, telling
    /// `on_wait` who holds it (once): for work another writer may be doing right now (a whole
    /// generation's self-play pass waits for the range writers still at work there; a ladder
    /// pairing in a shared rung cache is read, not replayed, once its player has finished).
    pub fn wait(dir: &Path, mode: LockMode, on_wait: &mut dyn FnMut(&str)) -> Result<DirLock> {
        match Self::take(dir, mode, false) {
            Err(Error::Locked { holder, .. }) => on_wait(&holder),
            other => return other,
        }
        Self::take(dir, mode, true)
    }

    fn take(dir: &Path, mode: LockMode, wait: bool) -> Result<DirLock> {
        let path = lock_path(dir, LOCK_FILE)?;
        // The directory exists (lock_path made it) while the file may not yet: canonicalising
        // the file would key a relative path one way before its first open and another after.
        let key = fs::canonicalize(dir)
            .map(|d| d.join(LOCK_FILE))
            .unwrap_or_else(|_| path.clone());
        // The registry is only looked at here and written below, never held while blocking
        // on a lock another thread or process holds.
        let held_now = {
            let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
            let held = held.get_or_insert_with(HashMap::new);
            held.get(&key).cloned()
        };
        if let Some((have, file)) = held_now {
            if let Some(file) = file.upgrade() {
                if have == LockMode::Shared && mode == LockMode::Exclusive {
                    return Err(Error::Locked {
                        dir: dir.display().to_string(),
                        holder: format!(
                            "this process (pid {}) as a shared writer",
                            std::process::id()
                        ),
                    });
                }
                return Ok(DirLock { _file: file, path });
            }
        }
        let mut file = open(&path)?;
        let got = match (mode, wait) {
            (LockMode::Exclusive, false) => file.try_lock(),
            (LockMode::Shared, false) => file.try_lock_shared(),
            (LockMode::Exclusive, true) => file.lock().map_err(TryLockError::Error),
            (LockMode::Shared, true) => file.lock_shared().map_err(TryLockError::Error),
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
        // Shared holders write their line too (one whole line at offset 0, so the first line
        // is always one holder's), else a refusal would name a long-gone exclusive holder.
        // Written over the old line and then cut to length, so a reader never finds the file
        // empty once a holder has written it.
        let me = whoami();
        let _ = file
            .seek(SeekFrom::Start(0))
            .and_then(|_| file.write_all(me.as_bytes()))
            .and_then(|_| file.set_len(me.len() as u64));
        let file = Arc::new(file);
        HELD.lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashMap::new)
            .insert(key, (mode, Arc::downgrade(&file)));
        Ok(DirLock { _file: file, path })
    }

    /// Takes `dir`'s commit lock, waiting for another writer's commit to finish (commits are
    /// short: one shard's check and rename). Never taken twice at once by one thread.
    pub fn commit(dir: &Path) -> Result<DirLock> {
        let path = lock_path(dir, COMMIT_LOCK_FILE)?;
        let file = open(&path)?;
        file.lock().map_err(|e| Error::io(path.display(), e))?;
        Ok(DirLock {
            _file: Arc::new(file),
            path,
        })
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

/// What the lock file says of its holder (its first line), or a plain phrase. A holder that
/// has just created the file takes the lock before it writes its line, so an empty file is
/// read again for a moment before giving up on naming it.
fn holder(path: &Path) -> String {
    let read = || {
        fs::read_to_string(path)
            .ok()
            .and_then(|t| t.lines().next().map(str::trim).map(String::from))
            .filter(|l| !l.is_empty())
    };
    for _ in 0..100 {
        if let Some(line) = read() {
            return line;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    read().unwrap_or_else(|| "another process".into())
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

    /// Another process's hold on `dir`'s lock: a second open of the lock file, as `flock`
    /// sees another process.
    fn other(dir: &Path, exclusive: bool) -> File {
        let f = open(&dir.join(LOCK_FILE)).unwrap();
        if exclusive {
            f.try_lock().unwrap();
        } else {
            f.try_lock_shared().unwrap();
        }
        f
    }

    /// A relative directory whose lock file does not exist yet, taken twice by this process
    /// (the pipeline, then its self-play stage): the same lock, not a conflict with itself.
    #[test]
    fn a_relative_directory_is_the_same_lock_before_and_after_its_file_exists() {
        let t = tempfile::tempdir_in(".").unwrap();
        let cwd = std::env::current_dir().unwrap();
        let abs = fs::canonicalize(t.path()).unwrap();
        let rel = abs
            .strip_prefix(fs::canonicalize(&cwd).unwrap())
            .unwrap()
            .join("gen-000");
        assert!(rel.is_relative() && !rel.join(LOCK_FILE).exists());
        let _a = DirLock::acquire(&rel, LockMode::Exclusive).unwrap();
        let _b = DirLock::acquire(&rel, LockMode::Exclusive).unwrap();
        let _c = DirLock::acquire(&abs.join("gen-000"), LockMode::Shared).unwrap();
    }

    #[test]
    fn exclusive_excludes_everyone_and_shared_excludes_only_exclusive() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("d");
        {
            let _x = DirLock::acquire(&d, LockMode::Exclusive).unwrap();
            let f = open(&d.join(LOCK_FILE)).unwrap();
            assert!(f.try_lock_shared().is_err(), "held for other processes");
            let text = fs::read_to_string(d.join(LOCK_FILE)).unwrap();
            assert!(
                text.starts_with(&format!("pid {} on host ", std::process::id())),
                "{text}"
            );
        }
        {
            let o = other(&d, true);
            let e = DirLock::acquire(&d, LockMode::Exclusive).unwrap_err();
            let msg = e.to_string();
            assert!(
                msg.contains("in use") && msg.contains(&format!("pid {}", std::process::id())),
                "{msg}"
            );
            assert!(DirLock::acquire(&d, LockMode::Shared).is_err());
            drop(o);
        }
        let o = other(&d, false);
        let a = DirLock::acquire(&d, LockMode::Shared).unwrap();
        assert!(DirLock::acquire(&d, LockMode::Shared).is_ok());
        drop(a);
        assert!(DirLock::acquire(&d, LockMode::Exclusive).is_err());
        drop(o);
        // Released on drop (or with the process): the next writer gets it.
        let _x = DirLock::acquire(&d, LockMode::Exclusive).unwrap();
        let _c = DirLock::commit(&d).unwrap();
        assert!(d.join(COMMIT_LOCK_FILE).exists());
    }

    #[test]
    fn the_same_process_takes_its_own_lock_again() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("d");
        let x = DirLock::acquire(&d, LockMode::Exclusive).unwrap();
        let again = DirLock::acquire(&d, LockMode::Exclusive).unwrap();
        let inner = DirLock::acquire(&d, LockMode::Shared).unwrap();
        drop(x);
        drop(again);
        // Still held through the inner handle, for other processes.
        let f = open(&d.join(LOCK_FILE)).unwrap();
        assert!(f.try_lock_shared().is_err());
        drop(inner);
        assert!(f.try_lock().is_ok(), "released with the last handle");
        f.unlock().unwrap();
        // A shared holder cannot become exclusive (flock would drop the lock to upgrade it).
        let s = DirLock::acquire(&d, LockMode::Shared).unwrap();
        let e = DirLock::acquire(&d, LockMode::Exclusive).unwrap_err();
        assert!(e.to_string().contains("shared writer"), "{e}");
        drop(s);
        assert!(DirLock::acquire(&d, LockMode::Exclusive).is_ok());
    }
}
