//! `varzero games DIR...`: the games of dataset directories as text, one per line, sorted by
//! game id: `id<TAB>result<TAB>termination<TAB>players<TAB>start FEN<TAB>moves`. For a quick
//! look, for grep, and for comparing two runs game by game.

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct GamesArgs {
    /// Dataset directories (self-play, match, study arm).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
}

pub fn run(a: GamesArgs) -> Result<()> {
    use std::io::Write;
    let mut rows = Vec::new();
    for d in &a.dirs {
        if !d.is_dir() {
            anyhow::bail!("{}: not a directory", d.display());
        }
        let (shards, skipped) = varzero_datasets::list_shards(d)?;
        for s in skipped {
            eprintln!("warning: {s}");
        }
        // Listed all the same: this is how to look at what the repair would keep.
        if let Err(e) = varzero_datasets::check_unique(d) {
            eprintln!("warning: {e}");
        }
        for s in &shards {
            rows.extend(varzero_datasets::read_games(&s.path)?);
        }
    }
    rows.sort_by(|a, b| (a.game_id, &a.moves).cmp(&(b.game_id, &b.moves)));
    let out = std::io::stdout();
    let mut out = out.lock();
    for g in rows {
        let r = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}\t{}",
            g.game_id, g.result, g.termination, g.evaluator, g.start_fen, g.moves
        );
        if r.is_err() {
            break; // a closed pipe (`| head`)
        }
    }
    Ok(())
}
