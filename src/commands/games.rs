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
        let (shards, skipped) = varzero_datasets::read_live_games(d)?;
        for s in skipped {
            eprintln!("warning: {s}");
        }
        let mut seen = std::collections::HashMap::new();
        for (s, games) in shards {
            for g in &games {
                if let Some(first) = seen.insert(g.game_id, s.path.clone()) {
                    anyhow::bail!(
                        "{} holds game {} twice ({} and {}): two writers at once, from an older \
                         varzero; `varzero compact {}` keeps the first of each",
                        d.display(),
                        g.game_id,
                        first.display(),
                        s.path.display(),
                        d.display()
                    );
                }
            }
            rows.extend(games);
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
