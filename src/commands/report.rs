//! `varzero report DIR`: the run, study or dataset in `DIR` as one self-contained HTML page,
//! `DIR/report.html` (see `varzero::report`).

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use varzero_datasets::analysis::ReferenceSet;

#[derive(Args)]
pub struct ReportArgs {
    /// A pipeline run, a study's output or a dataset directory.
    pub dir: PathBuf,
    /// More reference piece values (TOML, as configs/piece-values/*.toml; the shipped sets are
    /// always compared).
    #[arg(long = "reference")]
    pub references: Vec<PathBuf>,
    /// Bootstrap resamples for piece-value intervals computed for the page.
    #[arg(long, default_value_t = 100)]
    pub bootstrap: usize,
}

pub fn run(a: ReportArgs) -> Result<()> {
    let references = a
        .references
        .iter()
        .map(|p| ReferenceSet::load(p))
        .collect::<Result<Vec<_>, _>>()?;
    let opts = varzero::report::ReportOptions {
        references,
        bootstrap: a.bootstrap,
    };
    // A game twice would count twice on the page: refused, naming the repair.
    let run = varzero::run_dir::RunDir::new(&a.dir);
    if run.selfplay_root().is_dir() {
        varzero::pipeline::check_selfplay_unique(&run)?;
    } else {
        varzero_datasets::check_unique(&a.dir)?;
    }
    let (path, charts) = varzero::report::write(&a.dir, &opts)?;
    println!("report: {} ({charts} charts)", path.display());
    Ok(())
}
