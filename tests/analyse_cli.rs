//! `varzero analyse`: one position's best moves as a table or JSON, the moves played first,
//! and bad input refused with one line.

mod common;
use common::{ok, refused, vz};

#[test]
fn the_table_and_the_json_show_the_best_moves_best_first() {
    // Makruk: the rook takes the undefended queen (Fairy-Stockfish's FEN conventions).
    let fen = "4k3/8/8/3m4/8/8/8/3RK3 w - - 0 1";
    let table = ok(&vz(&[
        "analyse",
        "--variant",
        "makruk",
        "--fen",
        fen,
        "--playouts",
        "1500",
        "--multipv",
        "3",
    ]));
    // The rows under the header line.
    let rows: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("#  move"))
        .skip(1)
        .collect();
    assert_eq!(rows.len(), 3, "{table}");
    assert!(rows[0].split_whitespace().nth(1) == Some("d1d5"), "{table}");
    let j: serde_json::Value = serde_json::from_str(&ok(&vz(&[
        "analyse",
        "--variant",
        "makruk",
        "--fen",
        fen,
        "--playouts",
        "1500",
        "--multipv",
        "3",
        "--json",
    ])))
    .unwrap();
    assert_eq!(j["best"], "d1d5");
    let lines = j["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["move"], "d1d5");
    assert_eq!(lines[0]["pv"][0], "d1d5");
    let visits: Vec<u64> = lines
        .iter()
        .map(|l| l["visits"].as_u64().unwrap())
        .collect();
    assert!(visits.windows(2).all(|w| w[0] >= w[1]), "{visits:?}");
    let wdl: f64 = lines[0]["wdl"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .sum();
    assert!((wdl - 1.0).abs() < 1e-3);
    assert!(
        lines[0]["q"].as_f64().unwrap() > 0.3,
        "winning a queen: {j}"
    );
}

#[test]
fn moves_are_played_first_and_bad_input_is_one_line() {
    let j: serde_json::Value = serde_json::from_str(&ok(&vz(&[
        "analyse",
        "--variant",
        "xiangqi",
        "--moves",
        "h3e3",
        "h10g8",
        "--playouts",
        "200",
        "--json",
    ])))
    .unwrap();
    assert_eq!(
        j["fen"],
        // The central cannon, then Black's right horse from h10 to g8.
        "rnbakab1r/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR w - - 2 2"
    );
    refused(
        &vz(&["analyse", "--variant", "xiangqi", "--moves", "h3e3", "e3e4"]),
        "'e3e4' is not a legal move",
    );
    refused(&vz(&["analyse", "--multipv", "0"]), "--multipv");
    refused(&vz(&["analyse", "--fen", "8/8 w"]), "bad --fen");
    refused(
        &vz(&["analyse", "--evaluator", "nope"]),
        "unknown evaluator 'nope'",
    );
    // The games tables' verb, one letter away, points at this one.
    refused(&vz(&["analyze", "--fen", "8/8 w"]), "varzero analyse --fen");
}
