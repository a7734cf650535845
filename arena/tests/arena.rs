//! Matches: pairs of games with colours swapped, several at once, written as games tables; a
//! decided SPRT stops the match; external engines that crash, hang or answer illegal moves
//! lose their games and the match goes on.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use varzero_arena::matches::{
    self as arena, Arena, GameWriter, MatchConfig, MatchGame, MatchSummary,
};
use varzero_arena::players::{parse_player, PlayerError, PlayerFactory, PlayerSpec};
use varzero_datasets::{list_shards, read_games};
use varzero_rules::{Position, Variant};
use varzero_search::{BuiltinEvaluators, SearchConfig};
use varzero_stats::{EloModel, Sprt};

fn factory(spec: &str, v: &Arc<Variant>) -> Arc<dyn PlayerFactory> {
    parse_player(spec, v, &BuiltinEvaluators, &SearchConfig::default()).unwrap()
}

fn play(
    v: &Arc<Variant>,
    a: &str,
    b: &str,
    games: u64,
    concurrency: usize,
    sprt: Option<Sprt>,
    out: Option<&Path>,
) -> (MatchSummary, Vec<MatchGame>) {
    let openings = arena::random_openings(v, games.div_ceil(2) as usize, 4, 7).unwrap();
    let ar = Arena::new(
        MatchConfig {
            variant: v.clone(),
            games,
            openings,
            concurrency,
            paired: true,
            verify_endings: false,
            sprt,
            done: Vec::new(),
            time_control: None,
        },
        factory(a, v),
        factory(b, v),
    );
    let mut writer = out.map(|d| GameWriter::create(d, v, &ar.a.name(), &ar.b.name()).unwrap());
    let mut seen = Vec::new();
    let summary = ar.run(&mut |g, _| {
        if let Some(w) = &mut writer {
            w.push(g).unwrap();
        }
        seen.push(g.clone());
    });
    if let Some(w) = &mut writer {
        w.flush().unwrap();
    }
    (summary, seen)
}

/// Replays a game and checks its moves and result against the rules.
fn check_game(v: &Arc<Variant>, g: &MatchGame) {
    let mut pos = Position::from_fen(v, &g.start_fen).unwrap();
    for m in &g.moves {
        assert!(
            pos.outcome().is_none(),
            "game {} went on after the end",
            g.index
        );
        let mv = pos.parse_uci(m).unwrap();
        assert!(pos.game_moves().contains(mv));
        pos.make(mv);
    }
    if g.failure.is_none() {
        let o = pos.outcome().expect("a finished game");
        assert_eq!(o.result, g.result);
        assert_eq!(o.termination.name(), g.termination);
    }
}

#[test]
fn player_specs() {
    assert_eq!(
        PlayerSpec::parse("material@400").unwrap(),
        PlayerSpec::Search {
            evaluator: "material".into(),
            playouts: 400,
            search: vec![],
        }
    );
    // Search settings for one player.
    assert_eq!(
        PlayerSpec::parse("net:a.safetensors@64,root=gumbel,gumbel_considered=8").unwrap(),
        PlayerSpec::Search {
            evaluator: "net:a.safetensors".into(),
            playouts: 64,
            search: vec![
                ("root".into(), "gumbel".into()),
                ("gumbel_considered".into(), "8".into())
            ],
        }
    );
    for bad in [
        "material@64,root=gumbal",
        "material@64,c_pucct=2",
        "material@64,c_puct=-1",
        "material@64,tactics=1.5",
        "material@64,root",
    ] {
        let e = PlayerSpec::parse(bad).unwrap_err().to_string();
        assert!(e.contains(bad), "{e}");
    }
    // An evaluator name may hold ':' and '@' before the last '@' (net:FILE@N).
    assert_eq!(
        PlayerSpec::parse("net:runs/a@b/model.pt@800").unwrap(),
        PlayerSpec::Search {
            evaluator: "net:runs/a@b/model.pt".into(),
            playouts: 800,
            search: vec![],
        }
    );
    assert_eq!(PlayerSpec::parse("random").unwrap(), PlayerSpec::Random);
    match PlayerSpec::parse(
        "uci:'/opt/my engine/fsf' --flag@nodes=1000,timeout=5000,option.Threads=1",
    )
    .unwrap()
    {
        PlayerSpec::Uci(c) => {
            assert_eq!(c.command, vec!["/opt/my engine/fsf", "--flag"]);
            assert_eq!(c.nodes, Some(1000));
            assert_eq!(c.timeout, Some(5000));
            assert_eq!(c.options, vec![("Threads".to_string(), "1".to_string())]);
            assert_eq!(c.go_command(None), "go nodes 1000");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        PlayerSpec::parse("uci:fsf").is_err(),
        "a budget is required"
    );
    assert!(PlayerSpec::parse("material").is_err());
    assert!(PlayerSpec::parse("material@0").is_err());
    let v = Variant::builtin("makruk").unwrap();
    let err = parse_player(
        "nosuch@10",
        &v,
        &BuiltinEvaluators,
        &SearchConfig::default(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("unknown evaluator"), "{err}");
}

#[test]
fn material_search_beats_random_and_games_are_written() {
    // Kar Ouk (the first check wins): a search of a few hundred playouts sees the checks a
    // random mover walks into (with 40 it is no better than random, and in Makruk a weak
    // search rarely mates before the counting rules draw).
    let v = Variant::builtin("kar-ouk").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (summary, games) = play(&v, "material@300", "random", 8, 2, None, Some(dir.path()));
    let st = &summary.state;
    assert_eq!(st.games_done, 8);
    assert_eq!(st.penta.pairs(), 4);
    assert!(
        st.wdl.points() >= 6.0,
        "{:?} {:?}",
        st.wdl,
        games
            .iter()
            .map(|g| (g.termination.clone(), g.moves.len(), g.final_fen.clone()))
            .collect::<Vec<_>>()
    );
    assert!(st.wdl.elo().elo > 0.0);
    // Colours alternate within a pair, openings are shared by a pair.
    for g in &games {
        assert_eq!(g.a_white, g.index % 2 == 0);
        assert_eq!(g.pair, g.index / 2);
        check_game(&v, g);
    }
    for p in 0..4 {
        let fens: Vec<&String> = games
            .iter()
            .filter(|g| g.pair == p)
            .map(|g| &g.start_fen)
            .collect();
        assert_eq!(fens.len(), 2);
        assert_eq!(fens[0], fens[1]);
    }
    // The games table: every game once, in the datasets format, with a readable text copy.
    let (shards, skipped) = list_shards(dir.path()).unwrap();
    assert!(skipped.is_empty());
    let mut rows: Vec<_> = shards
        .iter()
        .flat_map(|s| read_games(&s.path).unwrap())
        .collect();
    rows.sort_by_key(|g| g.game_id);
    assert_eq!(rows.len(), 8);
    for (r, g) in rows.iter().zip({
        let mut gs = games.clone();
        gs.sort_by_key(|g| g.index);
        gs
    }) {
        assert_eq!(r.game_id, g.index);
        assert_eq!(r.moves, g.moves.join(" "));
        assert_eq!(r.result, g.result.pgn());
        assert_eq!(r.rules_hash, format!("{:016x}", v.rules_hash));
    }
    let text = std::fs::read_to_string(dir.path().join("games.txt")).unwrap();
    assert_eq!(text.matches("[game ").count(), 8);
    assert!(text.contains("start  ") && text.contains("moves  ") && text.contains("result "));
    assert!(dir.path().join("variant.toml").exists());
}

#[test]
fn a_decided_sprt_stops_the_match() {
    let v = Variant::builtin("kar-ouk").unwrap();
    let sprt = Sprt {
        elo0: 0.0,
        elo1: 200.0,
        alpha: 0.1,
        beta: 0.1,
        model: EloModel::Logistic,
    };
    let (summary, _) = play(&v, "material@300", "random", 200, 2, Some(sprt), None);
    assert!(summary.sprt_stopped, "{:?}", summary.state);
    assert!(summary.state.games_done < 200);
    assert!(summary.state.llr.unwrap() >= sprt.upper_bound());
}

fn script(dir: &Path, name: &str, on_go: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\n\
             while read -r line; do\n\
               case \"$line\" in\n\
                 uci) echo 'id name {name}'; echo 'option name UCI_Variant type combo default makruk var makruk'; echo uciok ;;\n\
                 isready) echo readyok ;;\n\
                 go*) {on_go} ;;\n\
                 quit) exit 0 ;;\n\
               esac\n\
             done\n"
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    p
}

fn failing_engine_loses_every_game(on_go: &str, extra: &str, termination: &str) {
    let v = Variant::builtin("makruk").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let s = script(dir.path(), "engine.sh", on_go);
    let spec = format!("uci:{}@nodes=10{extra}", s.display());
    let (summary, games) = play(&v, "material@20", &spec, 4, 2, None, None);
    let st = &summary.state;
    assert_eq!(st.games_done, 4, "the match goes on");
    assert_eq!(st.wdl.wins, 4, "{st:?}");
    assert_eq!(st.failures_b, 4);
    for g in &games {
        let f = g.failure.as_ref().expect("a failure");
        assert_eq!(f.player, "B");
        assert_eq!(g.termination, termination, "{:?}", f.error);
        check_game(&v, g);
        // When the engine had White it failed at once; as Black after A's first move.
        assert_eq!(g.moves.len(), if g.a_white { 1 } else { 0 });
    }
}

#[test]
fn crashing_engine_loses_and_the_match_goes_on() {
    failing_engine_loses_every_game("exit 3", "", "crash");
}

#[test]
fn hanging_engine_loses_on_time() {
    failing_engine_loses_every_game(":", ",timeout=300", "timeout");
}

#[test]
fn illegal_moves_lose() {
    failing_engine_loses_every_game("echo 'bestmove a1a1'", "", "illegal-move");
    failing_engine_loses_every_game("echo 'bestmove (none)'", "", "illegal-move");
}

#[test]
fn an_engine_that_does_not_know_the_variant_is_refused_before_the_match() {
    let v = Variant::builtin("xiangqi").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let s = script(dir.path(), "makruk-only.sh", "echo 'bestmove a1a1'");
    let f = factory(&format!("uci:{}@nodes=10", s.display()), &v);
    match f.check() {
        Err(PlayerError::Failure(m)) => assert!(m.contains("xiangqi"), "{m}"),
        other => panic!("{:?}", other.err()),
    }
    // And an engine that cannot start at all.
    let f = factory("uci:/no/such/engine@nodes=10", &v);
    assert!(f.check().is_err());
}

#[test]
fn openings_file_and_random_openings() {
    let v = Variant::builtin("makruk").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("openings.txt");
    std::fs::write(
        &p,
        format!(
            "# two openings\n{}\n\nrnsmksnr/8/pppppppp/8/4P3/PPPP1PPP/8/RNSKMSNR b - - 0 1\n",
            v.start_fen
        ),
    )
    .unwrap();
    let o = arena::read_openings(&v, &p).unwrap();
    assert_eq!(o.len(), 2);
    std::fs::write(&p, "not a fen\n").unwrap();
    assert!(arena::read_openings(&v, &p)
        .unwrap_err()
        .to_string()
        .contains(":1:"));
    let r = arena::random_openings(&v, 5, 6, 3).unwrap();
    assert_eq!(r.len(), 5);
    assert_eq!(r, arena::random_openings(&v, 5, 6, 3).unwrap(), "seeded");
    for f in &r {
        let pos = Position::from_fen(&v, f).unwrap();
        assert!(f.contains(" w "), "6 plies: White to move ({f})");
        let _ = pos;
    }
}

#[test]
fn search_player_takes_a_hanging_rook() {
    use std::sync::atomic::AtomicBool;
    use varzero_arena::players::GameView;
    let v = Variant::builtin("makruk").unwrap();
    // White's rook on a1 can take the undefended black rook on a7.
    let fen = "4k3/r7/8/8/8/8/8/R3K3 w - - 0 1";
    let pos = Position::from_fen(&v, fen).unwrap();
    let f = factory("material@40", &v);
    let mut p = f.create(0).unwrap();
    let stop = AtomicBool::new(false);
    let view = GameView {
        variant: &v,
        start_fen: fen,
        moves: &[],
        pos: &pos,
        stop: &stop,
        clock: None,
    };
    assert_eq!(p.choose(&view).unwrap(), "a1a7");
}

/// A study's referee: where a game ends without legal moves, each engine is asked how it scores
/// the final position, and a score other than our rules' is recorded with the game.
#[test]
fn the_referee_reports_an_engine_that_scores_the_final_position_otherwise() {
    let v = Variant::builtin("makruk").unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Black is mated: the rook on a5 checks along the a-file, b7 is defended by b6.
    let mated = "k7/1R6/1R6/R7/8/8/8/7K b - - 0 1";
    let agrees = script(
        dir.path(),
        "agrees.sh",
        "echo 'info depth 0 score mate 0'; echo 'bestmove (none)'",
    );
    let draws = script(
        dir.path(),
        "draws.sh",
        "echo 'info depth 0 score cp 0'; echo 'bestmove (none)'",
    );
    let run = |a: &Path, b: &Path| -> Vec<MatchGame> {
        let ar = Arena::new(
            MatchConfig {
                variant: v.clone(),
                games: 2,
                openings: vec![mated.into()],
                concurrency: 1,
                paired: false,
                verify_endings: true,
                sprt: None,
                done: Vec::new(),
                time_control: None,
            },
            factory(&format!("uci:{}@nodes=1", a.display()), &v),
            factory(&format!("uci:{}@nodes=1", b.display()), &v),
        );
        let mut seen = Vec::new();
        ar.run(&mut |g, _| seen.push(g.clone()));
        seen
    };
    let games = run(&agrees, &draws);
    assert_eq!(games.len(), 2);
    for g in &games {
        assert_eq!(g.termination, "checkmate");
        assert!(g.failure.is_none());
        assert_eq!(g.disagreements.len(), 1, "{:?}", g.disagreements);
        let d = &g.disagreements[0];
        assert!(
            d.contains("draws.sh") && d.contains("as a draw") && d.contains("our rules as a loss"),
            "{d}"
        );
    }
    assert!(run(&agrees, &agrees)
        .iter()
        .all(|g| g.disagreements.is_empty()));
}

/// Unpaired games (a deterministic engine against itself): game i from opening i.
#[test]
fn unpaired_games_each_get_their_own_opening() {
    let v = Variant::builtin("makruk").unwrap();
    let openings = arena::random_openings(&v, 4, 2, 3).unwrap();
    let ar = Arena::new(
        MatchConfig {
            variant: v.clone(),
            games: 4,
            openings: openings.clone(),
            concurrency: 2,
            paired: false,
            verify_endings: false,
            sprt: None,
            done: Vec::new(),
            time_control: None,
        },
        factory("random", &v),
        factory("random", &v),
    );
    let mut seen = Vec::new();
    ar.run(&mut |g, _| seen.push(g.clone()));
    assert_eq!(seen.len(), 4);
    for g in &seen {
        assert_eq!(g.opening as u64, g.index);
        assert_eq!(g.start_fen, openings[g.index as usize]);
        check_game(&v, g);
    }
}
