//! Variant files (docs/rules.md#options): every shipped file compiles and agrees with the built-in
//! copy; bad files are refused with every problem reported at once, each naming its key.

mod common;
use common::*;
use std::path::PathBuf;
use varzero_rules::{Position, Variant, VariantError};

fn variants_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../configs/variants")
}

#[test]
fn every_shipped_file_compiles() {
    let mut n = 0;
    for entry in std::fs::read_dir(variants_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let v = Variant::from_file(&path)
            .unwrap_or_else(|e| panic!("{}:\n{}", path.display(), e.lines().join("\n")));
        let mut p = Position::start(&v);
        assert_eq!(p.fen(), v.start_fen, "{}", path.display());
        assert!(p.perft(2) > 0, "{}", path.display());
        // The built-in copy of the same name has the same rules.
        if let Ok(b) = Variant::builtin(&v.name) {
            assert_eq!(b.rules_hash, v.rules_hash, "{}", path.display());
        }
        n += 1;
    }
    assert!(n >= 9, "only {n} variant files found");
}

#[test]
fn builtin_names_and_fsf_aliases() {
    for name in Variant::builtin_names() {
        let v = variant(name);
        assert_eq!(v.name, name);
    }
    for (alias, name) in [("cambodian", "ouk-chatrang"), ("karouk", "kar-ouk")] {
        assert_eq!(variant(alias).name, name);
    }
    assert!(Variant::builtin("no-such-variant").is_err());
}

/// A small valid variant the error cases start from.
const BASE: &str = r#"
name = "mini"
board = { files = 4, ranks = 4 }
start_fen = "k3/4/4/1R1K w - - 0 1"

[regions]
far = "a4:d4"

[pieces.king]
letter = "K"
betza = "K"
royal = true

[pieces.rook]
letter = "R"
betza = "R"

[pieces.pawn]
letter = "P"
betza = "fmWfcF"
promotion = { region = "far", to = ["R"] }
"#;

fn compile(text: &str) -> Result<(), VariantError> {
    Variant::from_toml_str(text, "mini.toml").map(|_| ())
}

/// `BASE` with `from` replaced by `to` (which must occur).
fn edit(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    BASE.replacen(from, to, 1)
}

#[test]
fn base_file_is_valid() {
    compile(BASE).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn single_problems_name_their_key() {
    // (description, file text, a key the problem must name (prefix), a word in the reason
    // or key)
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "unknown top-level key",
            edit("name = \"mini\"", "name = \"mini\"\ncolour = \"red\""),
            "",
            "colour",
        ),
        (
            "unknown piece key",
            edit("betza = \"R\"", "betza = \"R\"\nspeed = 3"),
            "pieces.rook",
            "speed",
        ),
        (
            "unknown rules key",
            format!("{BASE}\n[rules]\nstalemat = \"draw\"\n"),
            "rules",
            "stalemat",
        ),
        (
            "bad rule value",
            format!("{BASE}\n[rules]\nstalemate = \"maybe\"\n"),
            "rules",
            "maybe",
        ),
        (
            "bad Betza",
            edit("betza = \"R\"", "betza = \"R?q\""),
            "pieces.rook.betza",
            "R?q",
        ),
        (
            "letter used twice",
            edit("letter = \"R\"", "letter = \"K\""),
            "pieces.",
            "letter",
        ),
        (
            "letter not a letter",
            edit("letter = \"R\"", "letter = \"rook\""),
            "pieces.rook.letter",
            "letter",
        ),
        (
            "start FEN not fitting the board",
            edit(
                "start_fen = \"k3/4/4/1R1K w - - 0 1\"",
                "start_fen = \"k4/4/4/1R1K w - - 0 1\"",
            ),
            "start_fen",
            "start_fen",
        ),
        (
            "unknown region (stand)",
            edit("betza = \"R\"", "betza = \"R\"\nstand = \"nowhere\""),
            "pieces.rook.stand",
            "nowhere",
        ),
        (
            "unknown region (promotion)",
            edit("region = \"far\"", "region = \"nowhere\""),
            "pieces.pawn.promotion",
            "nowhere",
        ),
        (
            "bad region square",
            edit("far = \"a4:d4\"", "far = \"a4:z9\""),
            "regions.far",
            "z9",
        ),
        (
            "promotion to a missing piece",
            edit("to = [\"R\"]", "to = [\"Q\"]"),
            "pieces.pawn.promotion",
            "Q",
        ),
        (
            "no royal piece",
            edit("royal = true", "royal = false"),
            "pieces",
            "royal",
        ),
        (
            "two royal pieces",
            edit("betza = \"R\"", "betza = \"R\"\nroyal = true"),
            "pieces",
            "royal",
        ),
        (
            "board too large",
            edit("files = 4", "files = 13"),
            "board.files",
            "files",
        ),
        ("not TOML", "name = \"mini\"\nboard = {".to_string(), "", ""),
    ];
    let mut failures = Vec::new();
    for (what, text, key, word) in &cases {
        match compile(text) {
            Ok(()) => failures.push(format!("{what}: accepted")),
            Err(e) => {
                assert!(e.file.starts_with("mini.toml"), "{}", e.file);
                let ok = e.problems.iter().any(|p| {
                    p.key.starts_with(key) && (p.reason.contains(word) || p.key.contains(word))
                });
                if !ok {
                    failures.push(format!("{what}: {:?}", e.problems));
                }
                // Every line names the file.
                assert!(
                    e.lines().iter().all(|l| l.starts_with("mini.toml")),
                    "{what}"
                );
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn several_problems_are_reported_at_once() {
    // A bad Betza string, an unknown region, a letter used twice and a promotion to a missing
    // piece, in different pieces: all four are reported.
    let text = BASE
        .replacen("betza = \"R\"", "betza = \"R?q\"\nstand = \"nowhere\"", 1)
        .replacen("letter = \"P\"", "letter = \"K\"", 1)
        .replacen("to = [\"R\"]", "to = [\"Q\"]", 1);
    let e = compile(&text).expect_err("four problems");
    assert!(e.problems.len() >= 4, "{:?}", e.problems);
    for key in [
        "pieces.rook.betza",
        "pieces.rook.stand",
        "pieces.pawn.letter",
        "pieces.pawn.promotion.to",
    ] {
        assert!(
            e.problems.iter().any(|p| p.key == key),
            "missing {key}: {:?}",
            e.problems
        );
    }
    assert_eq!(e.lines().len(), e.problems.len());
}

#[test]
fn overrides() {
    let v = variant("xiangqi");
    assert!(v
        .with_overrides(&["face_off=diagonal".to_string()])
        .is_err());
    assert!(v.with_overrides(&["no_equals_sign".to_string()]).is_err());
    let w = v
        .with_overrides(&["rules.move_limit=100".to_string()])
        .unwrap();
    assert_eq!(w.rules.move_limit, 100);
    assert_ne!(
        w.rules_hash, v.rules_hash,
        "a changed rule changes the hash"
    );
    let same = v.with_overrides(&[]).unwrap();
    assert_eq!(same.rules_hash, v.rules_hash);
}

#[test]
fn extends_a_builtin() {
    // A file that extends makruk and changes one rule.
    let v = Variant::from_toml_str(
        "name = \"makruk-stalemate-loss\"\nextends = \"makruk\"\n[rules]\nstalemate = \"loss\"\n",
        "derived.toml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut p = pos_in(&v, "8/8/8/8/8/6m1/5k2/7K w - - 0 1");
    assert_eq!(
        p.outcome(),
        win(
            varzero_rules::Color::Black,
            varzero_rules::Termination::Stalemate
        )
    );
    assert_eq!(v.start_fen, variant("makruk").start_fen);
}

#[test]
fn a_toml_syntax_error_names_its_line() {
    // The bad token opens line 3 (a span at column 0 once reported the line before).
    let e = compile("name = \"mini\"\n\nbogus\n").expect_err("not TOML");
    assert!(e.lines()[0].starts_with("mini.toml:3:"), "{:?}", e.lines());
    let e = compile("name = \"mini\"\nx = [1,\n").expect_err("not TOML");
    assert!(e.lines()[0].starts_with("mini.toml:"), "{:?}", e.lines());
}

#[test]
fn fairy_stockfish_name_is_not_inherited() {
    // `ouk` and `makruk-sutras` extend makruk with other rules: Fairy-Stockfish's `makruk` is
    // not their name. A file that names itself keeps it.
    assert_eq!(variant("makruk").fairy_stockfish.as_deref(), Some("makruk"));
    assert_eq!(variant("ouk").fairy_stockfish, None);
    assert_eq!(variant("makruk-sutras").fairy_stockfish, None);
    assert_eq!(
        variant("kar-ouk").fairy_stockfish.as_deref(),
        Some("karouk")
    );
    let v = Variant::from_toml_str(
        "name = \"mine\"\nextends = \"xiangqi\"\n[rules]\nstalemate = \"draw\"\n",
        "mine.toml",
    )
    .unwrap();
    assert_eq!(v.fairy_stockfish, None);
}

#[test]
fn kar_ouk_check_count_follows_the_rule_option() {
    let start = |sets: &[&str]| {
        let v = variant("kar-ouk")
            .with_overrides(&sets.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .unwrap_or_else(|e| panic!("{sets:?}: {e}"));
        varzero_rules::Position::start(&v).fen()
    };
    assert_eq!(
        start(&[]),
        "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w DEde - 1+1 0 1"
    );
    // Switching check-wins off gives Ouk Chatrang's FEN; three checks to win, `3+3`.
    assert_eq!(
        start(&["rules.checks_to_win=0"]),
        "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w DEde - 0 1"
    );
    assert_eq!(
        start(&["rules.checks_to_win=3"]),
        "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w DEde - 3+3 0 1"
    );
}
