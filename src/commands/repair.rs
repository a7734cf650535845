//! `varzero repair DIR...`: keeps one copy of each game in dataset directories (for a run
//! directory, in each generation's self-play directory). Two writers of one directory before it
//! had a lock could write a game twice; readers (train, analyze, report, a resumed selfplay or
//! pipeline) refuse such a directory and name this command.

use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};
use varzero_datasets::{DirLock, LockMode};

#[derive(Args)]
pub struct RepairArgs {
    /// Dataset directories, or run directories (their selfplay/gen-NNN directories).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
}

fn is_dataset(d: &Path) -> bool {
    d.join(varzero_datasets::MANIFEST).exists()
        || varzero_datasets::list_shards(d).is_ok_and(|(s, k)| !s.is_empty() || !k.is_empty())
}

pub fn run(a: RepairArgs) -> Result<()> {
    for d in &a.dirs {
        if !d.is_dir() {
            anyhow::bail!("{}: not a directory", d.display());
        }
        let rd = varzero::run_dir::RunDir::new(d);
        let run = rd.config().exists() && rd.selfplay_root().is_dir();
        if !run && !is_dataset(d) {
            anyhow::bail!(
                "{}: neither a dataset (shards, dataset.json) nor a run directory (config.toml, selfplay/)",
                d.display()
            );
        }
        // A run is repaired while nothing else works in it (no pipeline, no stage).
        let _lock = if run {
            Some(DirLock::acquire(d, LockMode::Exclusive)?)
        } else {
            None
        };
        let targets = if run {
            rd.check_format()?;
            rd.selfplay_generations()?
                .into_iter()
                .map(|g| rd.selfplay(g))
                .collect::<Vec<PathBuf>>()
        } else {
            vec![d.clone()]
        };
        for t in targets {
            let r = varzero_datasets::repair_duplicates(&t)?;
            if r.copies == 0 {
                println!("{}: every game once, nothing to repair", t.display());
            } else {
                println!(
                    "{}: {} extra {} removed ({} shards rewritten, {} removed)",
                    t.display(),
                    r.copies,
                    if r.copies == 1 { "copy" } else { "copies" },
                    r.rewritten,
                    r.removed
                );
            }
        }
    }
    Ok(())
}
