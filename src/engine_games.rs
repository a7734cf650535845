//! Games between any two players (nets, the material player, UCI engines such as
//! Fairy-Stockfish) as a dataset: the data of `varzero selfplay --players` and of a rule study's
//! engine arms. Our rules core referees every game (an engine's illegal move, or a final
//! position it scores otherwise than our rules, is recorded in the games table and reported),
//! every game gets its own random opening (a deterministic engine against itself would repeat
//! the other colour's game), and the directory resumes like a match: one shard per finished
//! game, game `i` always from opening `i`, merged into few shards once every game is there.

use anyhow::{anyhow, Context, Result};
use std::path::Path;
use std::sync::Arc;
use varzero_arena::{
    self as arena, parse_player, Arena, GameWriter, MatchConfig, MatchGame, MatchState,
};
use varzero_rules::Variant;
use varzero_search::SearchConfig;

/// What to play.
#[derive(Clone, Debug)]
pub struct EngineGames {
    /// Player A and B specs (the same spec twice for one engine's self-play). A has White in
    /// even games.
    pub players: [String; 2],
    pub games: u64,
    /// Random plies from the start position of each game's opening.
    pub random_plies: u32,
    pub seed: u64,
    pub concurrency: usize,
    /// Device of `net:` players.
    pub device: String,
    /// Also write positions with the move played as policy target and the result as value
    /// target: a teacher's games as training data.
    pub positions: bool,
    /// Only the games of this range (the others are left to other writers of the directory).
    pub range: Option<std::ops::Range<u64>>,
    /// The clock of every game (players of the clock, `@clock`, need one).
    pub time_control: Option<varzero_arena::TimeControl>,
}

#[derive(Clone, Debug, Default)]
pub struct EngineGamesSummary {
    pub played: u64,
    pub already: u64,
    /// Games lost by a player's failure (illegal move, crash, timeout): index and message.
    pub failures: Vec<(u64, String)>,
    /// Final positions an engine scores otherwise than our rules.
    pub disagreements: Vec<(u64, String)>,
}

/// Plays `g` into `dir` (resuming), calling `on_game` as games finish.
pub fn play(
    v: &Arc<Variant>,
    g: &EngineGames,
    search: &SearchConfig,
    dir: &Path,
    on_game: &mut dyn FnMut(&MatchGame, &MatchState),
) -> Result<EngineGamesSummary> {
    if g.players.iter().any(|p| p.starts_with("net:")) {
        varzero_eval_net::share_threads(g.concurrency);
    }
    if g.time_control.is_none() {
        for p in &g.players {
            if varzero_arena::PlayerSpec::parse(p).is_ok_and(|s| s.needs_clock()) {
                return Err(anyhow!(
                    "player {p} plays by the clock: give the games one (a time control)"
                ));
            }
        }
    }
    let resolver = crate::nets::evaluators(&g.device);
    let pa = parse_player(&g.players[0], v, &*resolver, search).map_err(|e| anyhow!("{e}"))?;
    let pb = parse_player(&g.players[1], v, &*resolver, search).map_err(|e| anyhow!("{e}"))?;
    pa.check()
        .map_err(|e| anyhow!("player {}: {e}", pa.name()))?;
    if pb.name() != pa.name() {
        pb.check()
            .map_err(|e| anyhow!("player {}: {e}", pb.name()))?;
    }
    let games = g.range.as_ref().map_or(g.games, |r| r.end);
    let openings = if g.random_plies == 0 {
        vec![v.start_fen.clone()]
    } else {
        arena::random_openings(v, games as usize, g.random_plies, g.seed)
            .map_err(anyhow::Error::msg)?
    };
    let mut writer = GameWriter::create_in(dir, v, &pa.name(), &pb.name(), g.range.is_some())
        .map_err(anyhow::Error::msg)
        .with_context(|| dir.display().to_string())?;
    writer.positions = g.positions;
    let mut done = writer.done().to_vec();
    if let Some(r) = &g.range {
        // The games before the range are another writer's: counted as done, never played.
        let have: std::collections::HashSet<u64> = done.iter().map(|d| d.0).collect();
        done.extend(
            (0..r.start)
                .filter(|i| !have.contains(i))
                .map(|i| (i, varzero_stats::GameScore::Draw)),
        );
    }
    let arena = Arena::new(
        MatchConfig {
            variant: v.clone(),
            games,
            openings,
            concurrency: g.concurrency.max(1),
            paired: false,
            verify_endings: true,
            sprt: None,
            done: done.clone(),
            time_control: g.time_control,
        },
        pa,
        pb,
    );
    let first = g.range.as_ref().map_or(0, |r| r.start);
    let mut summary = EngineGamesSummary {
        already: done.iter().filter(|d| d.0 >= first && d.0 < games).count() as u64,
        ..Default::default()
    };
    let mut write_error = None;
    arena.run(&mut |game, st| {
        summary.played += 1;
        if let Some(f) = &game.failure {
            summary.failures.push((
                game.index,
                format!("{} ({}): {}", f.player, f.name, f.error),
            ));
        }
        for d in &game.disagreements {
            summary.disagreements.push((game.index, d.clone()));
        }
        if let Err(e) = writer.push(game) {
            write_error.get_or_insert(e.to_string());
        }
        on_game(game, st);
    });
    writer.flush().map_err(anyhow::Error::msg)?;
    if let Some(e) = write_error {
        anyhow::bail!("{}: writing games: {e}", dir.display());
    }
    compact_when_complete(writer, dir, g.games).with_context(|| dir.display().to_string())?;
    Ok(summary)
}

/// Merges the directory's one-game shards once all `games` are there. The only writer merges
/// its own; a writer of one range merges only if it is the last one out (it gets the directory
/// to itself) and the other ranges are complete too.
fn compact_when_complete(mut writer: GameWriter, dir: &Path, games: u64) -> Result<()> {
    if writer.compact().map_err(anyhow::Error::msg)?.is_some() {
        return Ok(());
    }
    drop(writer);
    let Ok(lock) = varzero_datasets::DirLock::acquire(dir, varzero_datasets::LockMode::Exclusive)
    else {
        return Ok(());
    };
    let (shards, _) = varzero_datasets::read_live_games(dir).map_err(anyhow::Error::msg)?;
    let ids: std::collections::HashSet<u64> = shards
        .iter()
        .flat_map(|(_, g)| g.iter().map(|g| g.game_id))
        .collect();
    if (0..games).all(|i| ids.contains(&i)) {
        varzero_datasets::compact(dir, &lock).map_err(anyhow::Error::msg)?;
    }
    Ok(())
}
