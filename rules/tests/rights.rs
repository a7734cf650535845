//! Cambodian first-move rights (docs/rules.md#first-move-rights, and Fairy-Stockfish's gates in
//! docs/rules.md#first-move-rights-fsf): the king's knight jump
//! and the neang's (met's) double step, when they may be used, when they are lost, and how
//! the FEN's rights field (Fairy-Stockfish's gates) shows them.

mod common;
use common::*;

const START: &str = "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w DEde - 0 1";

#[test]
fn start_position_offers_both_king_jumps_but_no_blocked_double_step() {
    let p = pos("ouk-chatrang", START);
    assert!(has(&p, "d1b2") && has(&p, "d1f2"));
    // e3 holds White's own pawn: the neang's double step needs an empty target.
    assert!(!has(&p, "e1e3"));
    // Makruk has no such moves.
    let p = pos(
        "makruk",
        "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - - 0 1",
    );
    assert!(!has(&p, "d1b2") && !has(&p, "d1f2"));
    // Black's jumps are the mirror image (e8 -> c7, g7); d6 holds a pawn.
    let mut p = pos("ouk-chatrang", START);
    play(&mut p, &["a3a4"]);
    assert!(has(&p, "e8c7") && has(&p, "e8g7"));
    assert!(!has(&p, "d8d6"));
}

#[test]
fn king_jump_only_to_empty_unattacked_squares() {
    // (FEN, jumps expected present, jumps expected absent)
    let cases: &[(&str, &[&str], &[&str])] = &[
        // b2 attacked by the rook on b8 (a rook standing there does not take the right).
        ("1r2k3/8/8/8/8/8/8/3KM3 w DE - 0 1", &["d1f2"], &["d1b2"]),
        // Own knight on b2; enemy rook on f2: the jump never captures.
        (
            "4k3/8/8/8/8/8/1N3r2/3KM3 w DE - 0 1",
            &[],
            &["d1b2", "d1f2"],
        ),
        // Black pawn on e3 attacks f2 (and d2) and blocks the neang's double step.
        (
            "4k3/8/8/8/8/4p3/8/3KM3 w DE - 0 1",
            &["d1b2"],
            &["d1f2", "e1e3"],
        ),
        // No right for the king in the FEN: no jump.
        ("4k3/8/8/8/8/8/8/3KM3 w E - 0 1", &[], &["d1b2", "d1f2"]),
    ];
    for &(fen, yes, no) in cases {
        let p = pos("ouk-chatrang", fen);
        for m in yes {
            assert!(
                has(&p, m),
                "{fen}: {m} should be legal; legal: {:?}",
                legal(&p)
            );
        }
        for m in no {
            assert!(!has(&p, m), "{fen}: {m} should not be legal");
        }
    }
}

#[test]
fn no_king_jump_while_in_check_and_right_survives_the_check() {
    // The knight on c3 checks d1; b2 and f2 are empty and not attacked.
    let mut p = pos("ouk-chatrang", "4k3/8/8/8/8/2n5/3P4/3KM3 w DE - 0 1");
    assert!(p.in_check());
    assert!(!has(&p, "d1b2") && !has(&p, "d1f2"));
    play(&mut p, &["d2c3"]);
    assert_eq!(
        field(&p.fen(), 2),
        "DE",
        "a knight check does not take the right"
    );
    play(&mut p, &["e8e7"]);
    assert!(has(&p, "d1b2") && has(&p, "d1f2"));

    // ouk-chatrang-pos3 (perft suite): the khon on d2 checks the king on d1.
    let p = pos(
        "ouk-chatrang",
        "r2mk2N/8/n4M2/8/p4P2/5P1P/3s2S1/3KM2R w DEde - 1 29",
    );
    assert!(p.in_check());
    assert!(!has(&p, "d1b2") && !has(&p, "d1f2"));
    assert_eq!(field(&p.fen(), 2), "DEde");

    // Ouk (docs/rules.md#ouk): not while in check either.
    let p = pos("ouk", "4k3/8/8/8/8/2n5/3P4/3KM3 w DE - 0 1");
    assert!(!has(&p, "d1b2") && !has(&p, "d1f2"));
}

#[test]
fn discovered_rook_check_does_not_take_the_right() {
    // Rook d8 behind the knight d5: the knight's move discovers check on d1, but the rook
    // itself did not move, so White keeps the right (docs/rules.md#first-move-rights).
    let mut p = pos("ouk-chatrang", "3rk3/8/8/3n4/8/8/8/3KM3 b DEe - 0 1");
    play(&mut p, &["d5b4"]);
    assert!(p.in_check());
    assert_eq!(field(&p.fen(), 2), "DEe");
    assert!(!has(&p, "d1b2") && !has(&p, "d1f2"));
    // The neang blocks on d2 (and loses its own right by moving).
    play(&mut p, &["e1d2"]);
    assert_eq!(field(&p.fen(), 2), "De");
    play(&mut p, &["b4a6"]);
    assert!(!p.in_check());
    assert!(has(&p, "d1b2") && has(&p, "d1f2"));
}

#[test]
fn rights_lost_by_rook_moves_onto_the_kings_lines() {
    // (FEN, move, rights field after)
    let cases = [
        // Black rook ends on the d-file: blocked by the pawn on d2, still the right is gone.
        ("r3k3/8/8/8/8/8/3P4/3KM3 b DEe - 0 1", "a8d8", "Ee"),
        // Black rook ends on rank 1 (the neang on e1 blocks it): right gone.
        ("4k2r/8/8/8/8/8/8/3KM3 b DEe - 0 1", "h8h1", "Ee"),
        // A rook move elsewhere changes nothing.
        ("4k2r/8/8/8/8/8/8/3KM3 b DEe - 0 1", "h8h5", "DEe"),
        // Other pieces arriving on the king's file do not take the right.
        ("1n2k3/8/8/8/8/8/3P4/3KM3 b DEe - 0 1", "b8d7", "DEe"),
        // White's rook on Black's king rank: Black's king right goes, the neang's stays.
        // (The neang on d8 blocks the rook on a8.)
        ("3mk3/8/8/8/8/8/8/R2KM3 w DEde - 0 1", "a1a8", "DEd"),
        ("3mk3/8/8/8/8/8/8/R2KM3 w DEde - 0 1", "a1a7", "DEde"),
    ];
    for (fen, m, rights) in cases {
        let mut p = pos("ouk-chatrang", fen);
        play(&mut p, &[m]);
        assert_eq!(field(&p.fen(), 2), rights, "{fen} + {m}: {}", p.fen());
    }
}

#[test]
fn rights_field_follows_the_game() {
    let mut p = pos("ouk-chatrang", START);
    let steps = [
        ("d1b2", "Ede"), // the king jumped: its right is gone
        ("e8c7", "Ed"),
        ("e1d2", "d"), // the neang moved (not a double step): gone too
        ("d8e7", "-"),
    ];
    for (m, rights) in steps {
        play(&mut p, &[m]);
        assert_eq!(field(&p.fen(), 2), rights, "after {m}: {}", p.fen());
    }
    assert!(p.first_move_rights().is_empty());

    // A plain king step also ends the right; stepping back does not restore it.
    let mut p = pos("ouk-chatrang", START);
    play(&mut p, &["d1c2", "e8f7", "c2d1"]);
    assert_eq!(field(&p.fen(), 2), "Ed");
    assert!(!has(&p, "d1b2") && !has(&p, "d1f2"));
}

#[test]
fn neang_double_step() {
    // The middle square does not matter: own or enemy piece on e2.
    for fen in [
        "4k3/8/8/8/8/8/4N3/3KM3 w DE - 0 1",
        "4k3/8/8/8/8/8/4n3/3KM3 w DE - 0 1",
    ] {
        let mut p = pos("ouk-chatrang", fen);
        assert!(has(&p, "e1e3"), "{fen}: {:?}", legal(&p));
        play(&mut p, &["e1e3"]);
        assert_eq!(field(&p.fen(), 2), "D", "{fen}");
        assert_eq!(
            field(&p.fen(), 0),
            if fen.contains('N') {
                "4k3/8/8/8/8/4M3/4N3/3K4"
            } else {
                "4k3/8/8/8/8/4M3/4n3/3K4"
            }
        );
    }
    // It may block a check: the rook on a3 checks the king on h3, e3 is between.
    let p = pos("ouk-chatrang", "4k3/8/8/8/8/r6K/8/4M3 w E - 0 1");
    assert!(p.in_check());
    assert!(has(&p, "e1e3"), "{:?}", legal(&p));
    assert!(!has(&p, "e1d2") && !has(&p, "e1f2"));
    // Never a capture.
    let p = pos("ouk-chatrang", "4k3/8/8/8/8/4n3/8/3KM3 w DE - 0 1");
    assert!(!has(&p, "e1e3"));
}

#[test]
fn neang_right_lost_when_captured() {
    // The knight takes the neang on e1: White keeps only the king's right.
    let mut p = pos("ouk-chatrang", "4k3/8/8/8/8/5n2/8/3KM3 b DE - 0 1");
    play(&mut p, &["f3e1"]);
    assert_eq!(field(&p.fen(), 2), "D");
}

#[test]
fn rights_fen_parsing() {
    // FSF keeps a gate only where an own piece stands (the piece type is not checked), and
    // writes White's files upper case, then Black's lower case, each in file order.
    let cases = [
        ("4k3/8/8/8/8/8/8/4K3 w DEde - 0 1", "Ee"),
        (
            "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w edED - 0 1",
            "DEde",
        ),
        ("rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - - 0 1", "-"),
    ];
    for (fen, rights) in cases {
        let p = pos("ouk-chatrang", fen);
        assert_eq!(field(&p.fen(), 2), rights, "{fen}");
    }
}

#[test]
fn ouk_first_capture_ends_all_rights() {
    let moves = ["c3c4", "d6d5", "c4d5"];
    let mut p = pos("ouk", START);
    play(&mut p, &moves[..2]);
    assert_eq!(field(&p.fen(), 2), "DEde");
    play(&mut p, &moves[2..]);
    assert_eq!(
        field(&p.fen(), 2),
        "-",
        "ouk: the first capture ends every right"
    );
    assert!(!has(&p, "e8c7") && !has(&p, "e8g7"));
    // Ouk Chatrang keeps them.
    let mut p = pos("ouk-chatrang", START);
    play(&mut p, &moves);
    assert_eq!(field(&p.fen(), 2), "DEde");
    assert!(has(&p, "e8c7") && has(&p, "e8g7"));
}

#[test]
fn unmake_restores_rights() {
    let mut p = pos("ouk-chatrang", START);
    let before = p.fen();
    for m in ["d1b2", "d1c2", "e1d2", "a3a4"] {
        play(&mut p, &[m]);
        p.unmake();
        assert_eq!(p.fen(), before, "after {m} and unmake");
    }
}

#[test]
fn pinned_neang_may_not_double_step() {
    // The rook on h1 pins the neang on e1 against the king on d1 (a rook standing there
    // does not take the king's right; the jumps to b2 and f2 stay legal).
    let p = pos("ouk-chatrang", "4k3/8/8/8/8/8/8/3KM2r w DE - 0 1");
    assert!(
        moves_from(&p, "e1").is_empty(),
        "{:?}",
        moves_from(&p, "e1")
    );
    assert!(has(&p, "d1b2") && has(&p, "d1f2"));
}

#[test]
fn rights_field_is_dash_in_variants_without_rights() {
    // docs/rules.md#fen: the rights field is `-` if there are none; makruk and xiangqi have none,
    // and FSF (gating off, castling off) skips such letters when reading.
    let cases = [
        (
            "makruk",
            "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w DEde - 0 1",
            "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - - 0 1",
        ),
        (
            "xiangqi",
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w Ee - 0 1",
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
        ),
    ];
    for (name, fen, want) in cases {
        assert_eq!(pos(name, fen).fen(), want, "{name}");
    }
}
