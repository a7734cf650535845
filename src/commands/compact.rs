//! `varzero compact DIR...`: merges a dataset directory's shards into few (matches, ladder
//! pairings and teacher games do it themselves once complete; this is for directories written
//! by an older version), and repairs one that two writers of an older version filled at once:
//! of a game id twice, the first copy (in shard order) is kept, and the command says which
//! were dropped. It takes the directory's lock, so it never runs beside a writer.

use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use varzero_datasets::{DirLock, LockMode};

#[derive(Args)]
pub struct CompactArgs {
    /// Dataset directories (match, ladder pairing, study arm, self-play).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
}

pub fn run(a: CompactArgs) -> Result<()> {
    for d in &a.dirs {
        if !d.is_dir() {
            anyhow::bail!("{}: not a directory", d.display());
        }
        let lock = DirLock::acquire(d, LockMode::Exclusive)?;
        // The only writer now: what an interrupted one left half-written goes.
        varzero_datasets::remove_temporaries(d)?;
        let before = varzero_datasets::list_shards(d)?.0.len();
        let c = varzero_datasets::compact(d, &lock).with_context(|| d.display().to_string())?;
        let after = varzero_datasets::list_shards(d)?.0.len();
        for (id, shard) in &c.duplicates {
            println!(
                "{}: game {id} dropped from {} (an earlier shard holds it)",
                d.display(),
                shard.display()
            );
        }
        println!(
            "{}: {before} shards -> {after}, {} duplicate games dropped",
            d.display(),
            c.duplicates.len()
        );
    }
    Ok(())
}
