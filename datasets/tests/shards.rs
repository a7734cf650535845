//! Shards: round trip, the pinned schema, the sliding window, and damaged shards.

use std::fs;
use varzero_datasets::polars::prelude::*;
use varzero_datasets::*;

fn pos(game: u64, ply: u32) -> PositionRecord {
    PositionRecord {
        game_id: game,
        ply,
        variant: "makruk".into(),
        rules_hash: "00ff00ff00ff00ff".into(),
        fen: format!("fen {game} {ply}"),
        policy_moves: vec!["e3e4".into(), "d1b2".into()],
        policy_probs: vec![0.75, 0.25],
        result_wdl: [1.0, 0.0, 0.0],
        root_wdl: [0.5, 0.25, 0.25],
        visits: 200 + ply,
        full_search: ply.is_multiple_of(2),
        evaluator: "material".into(),
    }
}

fn game(id: u64) -> GameRecord {
    GameRecord {
        game_id: id,
        variant: "makruk".into(),
        rules_hash: "00ff00ff00ff00ff".into(),
        result: "1-0".into(),
        termination: "checkmate".into(),
        plies: 3,
        seed: 42 + id,
        evaluator: "material".into(),
        search: "{\"playouts\":200}".into(),
        start_fen: "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - - 0 1".into(),
        moves: "e3e4 e6e5 d3d4".into(),
    }
}

#[test]
fn round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let positions: Vec<_> = (0..3).map(|p| pos(7, p)).collect();
    let games = vec![game(7)];
    let shard = write_shard(dir.path(), 0, "t", &positions, &games).unwrap();
    assert_eq!(read_positions(&shard).unwrap(), positions);
    assert_eq!(read_games(&shard).unwrap(), games);
    // No temporary directory is left behind.
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1);
}

#[test]
fn schema_is_pinned() {
    // Changing a column or its type must bump POSITIONS_SCHEMA / GAMES_SCHEMA and this test.
    assert_eq!(POSITIONS_SCHEMA, "positions/1");
    assert_eq!(GAMES_SCHEMA, "games/1");
    let dir = tempfile::tempdir().unwrap();
    let shard = write_shard(dir.path(), 0, "t", &[pos(1, 0)], &[game(1)]).unwrap();
    let (lf, _) = scan_positions_window(dir.path(), 10).unwrap();
    let schema = lf.unwrap().collect_schema().unwrap();
    let got: Vec<String> = schema.iter().map(|(n, t)| format!("{n}: {t}")).collect();
    assert_eq!(
        got,
        [
            "game_id: u64",
            "ply: u32",
            "variant: str",
            "rules_hash: str",
            "fen: str",
            "policy_moves: list[str]",
            "policy_probs: list[f32]",
            "result_w: f32",
            "result_d: f32",
            "result_l: f32",
            "root_w: f32",
            "root_d: f32",
            "root_l: f32",
            "visits: u32",
            "full_search: bool",
            "evaluator: str",
        ]
    );
    let gdf = ParquetReader::new(fs::File::open(shard.join("games.parquet")).unwrap())
        .finish()
        .unwrap();
    let got: Vec<String> = gdf
        .schema()
        .iter()
        .map(|(n, t)| format!("{n}: {t}"))
        .collect();
    assert_eq!(
        got,
        [
            "game_id: u64",
            "variant: str",
            "rules_hash: str",
            "result: str",
            "termination: str",
            "plies: u32",
            "seed: u64",
            "evaluator: str",
            "search: str",
            "start_fen: str",
            "moves: str",
        ]
    );
}

#[test]
fn window_takes_the_newest_positions() {
    let dir = tempfile::tempdir().unwrap();
    for s in 0..3u64 {
        let positions: Vec<_> = (0..4).map(|p| pos(s, p)).collect();
        write_shard(dir.path(), s, "t", &positions, &[game(s)]).unwrap();
    }
    let (lf, skipped) = scan_positions_window(dir.path(), 6).unwrap();
    assert!(skipped.is_empty());
    let df = lf.unwrap().collect().unwrap();
    assert_eq!(df.height(), 6);
    let ids: Vec<u64> = df
        .column("game_id")
        .unwrap()
        .u64()
        .unwrap()
        .into_no_null_iter()
        .collect();
    // The last two positions of shard 1, then all of shard 2.
    assert_eq!(ids, [1, 1, 2, 2, 2, 2]);
    let plies: Vec<u32> = df
        .column("ply")
        .unwrap()
        .u32()
        .unwrap()
        .into_no_null_iter()
        .collect();
    assert_eq!(plies, [2, 3, 0, 1, 2, 3]);
}

#[test]
fn damaged_shards_are_reported_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    write_shard(dir.path(), 0, "good", &[pos(0, 0)], &[game(0)]).unwrap();
    let bad = write_shard(dir.path(), 1, "bad", &[pos(1, 0)], &[game(1)]).unwrap();
    // Truncate one file of the second shard.
    let p = bad.join("positions.parquet");
    let bytes = fs::read(&p).unwrap();
    fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
    // And a stray non-Parquet file as a third.
    let junk = dir.path().join("00000002-junk");
    fs::create_dir(&junk).unwrap();
    fs::write(junk.join("positions.parquet"), b"not parquet").unwrap();
    fs::write(junk.join("games.parquet"), b"not parquet").unwrap();
    // An unfinished temporary shard is ignored silently.
    fs::create_dir(dir.path().join(".tmp-00000003-x")).unwrap();
    let (shards, skipped) = list_shards(dir.path()).unwrap();
    assert_eq!(shards.len(), 1);
    assert_eq!(skipped.len(), 2);
    assert!(
        skipped
            .iter()
            .any(|s| s.path.ends_with("00000001-bad/positions.parquet")),
        "{skipped:?}"
    );
    assert!(skipped
        .iter()
        .any(|s| s.to_string().contains("00000002-junk")));
    let (lf, _) = scan_positions_window(dir.path(), 100).unwrap();
    assert_eq!(lf.unwrap().collect().unwrap().height(), 1);
}
