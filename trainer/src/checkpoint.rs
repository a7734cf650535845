//! Checkpoints in a training run's output directory: the net's weights, the optimizer's state,
//! and a JSON that names the step and the config. A rerun resumes from them to the same state.

use crate::config::TrainConfig;
use crate::error::{at, other, Error, Result};
use crate::optim::Optim;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use varzero_eval_net::Net;

#[derive(Serialize, Deserialize)]
struct CheckpointMeta {
    step: u64,
    config: TrainConfig,
}

/// The files of the checkpoint in an output directory.
pub(crate) struct Checkpoint {
    weights: PathBuf,
    optim: PathBuf,
    meta: PathBuf,
}

impl Checkpoint {
    pub(crate) fn in_dir(out: &Path) -> Checkpoint {
        Checkpoint {
            weights: out.join("checkpoint.safetensors"),
            optim: out.join("checkpoint-optim.safetensors"),
            meta: out.join("checkpoint.json"),
        }
    }

    /// Loads the checkpoint, if there is one, into `net` and `opt` and returns its step. One
    /// past `cfg`'s steps, or of another architecture or optimizer, is refused.
    pub(crate) fn resume(
        &self,
        net: &mut Net,
        opt: &mut Optim,
        cfg: &TrainConfig,
    ) -> Result<Option<u64>> {
        if !self.meta.exists() {
            return Ok(None);
        }
        let m: CheckpointMeta =
            serde_json::from_str(&std::fs::read_to_string(&self.meta).map_err(other)?)
                .map_err(other)?;
        if m.step > cfg.steps {
            return Err(Error::Other(format!(
                "{}: the checkpoint is at step {}, past the {} steps asked for: ask for at least {} steps, or choose another output directory",
                self.meta.display(),
                m.step,
                cfg.steps,
                m.step
            )));
        }
        if m.config.arch != cfg.arch {
            return Err(Error::Other(format!(
                "{}: the checkpoint is a {}x{} net (blocks x channels), the config asks for {}x{}: resume with that architecture, or choose another output directory",
                self.meta.display(),
                m.config.arch.blocks,
                m.config.arch.channels,
                cfg.arch.blocks,
                cfg.arch.channels
            )));
        }
        if m.config.optimizer != cfg.optimizer {
            return Err(Error::Other(format!(
                "{}: the checkpoint was written with optimizer {:?}, the config asks for {:?}",
                self.meta.display(),
                m.config.optimizer,
                cfg.optimizer
            )));
        }
        net.vs
            .load(&self.weights)
            .map_err(|e| Error::Other(format!("{}: {e}", self.weights.display())))?;
        opt.bufs
            .load(&self.optim)
            .map_err(|e| Error::Other(format!("{}: {e}", self.optim.display())))?;
        Ok(Some(m.step))
    }

    pub(crate) fn save(&self, net: &Net, opt: &Optim, cfg: &TrainConfig, step: u64) -> Result<()> {
        // Weights and momentum first, the JSON (which names the step) last: a checkpoint counts
        // only once its JSON is there, and each file appears by rename.
        let tmp = self.weights.with_extension("tmp.safetensors");
        renamed(&tmp, &self.weights, || {
            net.vs
                .save(&tmp)
                .map_err(|e| Error::Other(format!("{}: {e}", tmp.display())))
        })?;
        let tmp = self.optim.with_extension("tmp.safetensors");
        renamed(&tmp, &self.optim, || {
            opt.bufs
                .save(&tmp)
                .map_err(|e| Error::Other(format!("{}: {e}", tmp.display())))
        })?;
        let tmp = self.meta.with_extension("json.tmp");
        renamed(&tmp, &self.meta, || {
            std::fs::write(
                &tmp,
                serde_json::to_string_pretty(&CheckpointMeta {
                    step,
                    config: cfg.clone(),
                })
                .unwrap(),
            )
            .map_err(at(&tmp))
        })
    }
}

/// Writes `tmp` with `write`, then renames it to `path`; a failure (a full disk) leaves no
/// temporary behind.
fn renamed(tmp: &Path, path: &Path, write: impl FnOnce() -> Result<()>) -> Result<()> {
    let done = write().and_then(|()| std::fs::rename(tmp, path).map_err(at(path)));
    if done.is_err() {
        let _ = std::fs::remove_file(tmp);
    }
    done
}

/// Removes what a save killed before its rename left in `out` (`checkpoint.tmp.safetensors`,
/// `checkpoint.json.tmp`, `model.tmp.safetensors` ...): only the directory's one trainer, at its
/// start, calls it.
pub(crate) fn remove_temporaries(out: &Path) -> Result<()> {
    for e in std::fs::read_dir(out).map_err(at(out))?.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let p = e.path();
        if (name.ends_with(".tmp") || name.contains(".tmp.")) && p.is_file() {
            std::fs::remove_file(&p).map_err(at(&p))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_save_leaves_no_temporary_and_the_next_start_removes_a_killed_ones() {
        let t = tempfile::tempdir().unwrap();
        let tmp = t.path().join("checkpoint.tmp.safetensors");
        let done = renamed(&tmp, &t.path().join("checkpoint.safetensors"), || {
            std::fs::write(&tmp, "half a net").unwrap();
            Err(Error::Other("No space left on device".into()))
        });
        assert!(done.is_err());
        assert!(!tmp.exists(), "removed on the error path");
        for f in [
            "checkpoint.tmp.safetensors",
            "checkpoint.json.tmp",
            "checkpoint.json",
        ] {
            std::fs::write(t.path().join(f), "x").unwrap();
        }
        remove_temporaries(t.path()).unwrap();
        let names: Vec<String> = std::fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        assert_eq!(names, ["checkpoint.json"]);
    }
}
