//! A player's randomness is seeded by the game, not by the worker that plays it: a match with a
//! `random` player is the same games whatever the concurrency, and a match resumed from its
//! first half plays the same second half as one played whole.

use std::collections::BTreeMap;
use std::sync::Arc;
use varzero_arena::matches::{self as arena, Arena, MatchConfig};
use varzero_arena::players::parse_player;
use varzero_rules::Variant;
use varzero_search::{BuiltinEvaluators, SearchConfig};

/// The moves of every game played (by index), with `done` counted as played before.
fn games(
    v: &Arc<Variant>,
    games: u64,
    concurrency: usize,
    done: Vec<(u64, varzero_stats::GameScore)>,
) -> BTreeMap<u64, (Vec<String>, varzero_stats::GameScore)> {
    let f = |s: &str| parse_player(s, v, &BuiltinEvaluators, &SearchConfig::default()).unwrap();
    let ar = Arena::new(
        MatchConfig {
            variant: v.clone(),
            games,
            openings: arena::random_openings(v, games.div_ceil(2) as usize, 2, 3).unwrap(),
            concurrency,
            paired: true,
            verify_endings: false,
            sprt: None,
            done,
            time_control: None,
        },
        f("random"),
        f("material-raw@1"),
    );
    let mut out = BTreeMap::new();
    ar.run(&mut |g, _| {
        out.insert(g.index, (g.moves.clone(), g.score_a));
    });
    out
}

#[test]
fn random_players_replay_the_same_games_whatever_the_workers_and_resumes() {
    let v = Variant::builtin("makruk").unwrap();
    let whole = games(&v, 12, 1, Vec::new());
    assert_eq!(whole.len(), 12);
    // Other workers play other games: each game the same.
    assert_eq!(games(&v, 12, 3, Vec::new()), whole, "concurrency 3");
    // Half, then resumed to the whole (as `match --out` resumes: the first half counts as done).
    let half = games(&v, 6, 2, Vec::new());
    let done: Vec<_> = half.iter().map(|(&i, g)| (i, g.1)).collect();
    let mut resumed = games(&v, 12, 2, done);
    assert_eq!(resumed.len(), 6, "only the second half is played again");
    resumed.extend(half);
    assert_eq!(resumed, whole, "resumed");
    // The random player's moves differ from game to game (the seed is per game, not constant).
    let first_moves: std::collections::HashSet<&String> =
        whole.values().filter_map(|g| g.0.get(2)).collect();
    assert!(first_moves.len() > 2, "{first_moves:?}");
}
