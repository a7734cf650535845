//! Oxeli (RULES.md s.5) and the face-off option (s.9): no face-off on any line, the O's
//! queen-like "attack" along open lines, promotion to Q, stalemate loses.

mod common;
use common::*;
use varzero_rules::{Color, Termination};

fn oxeli_with(face_off: &str) -> std::sync::Arc<varzero_rules::Variant> {
    variant("oxeli")
        .with_overrides(&[format!("face_off={face_off}")])
        .unwrap_or_else(|e| panic!("face_off={face_off}: {e}"))
}

#[test]
fn face_off_modes() {
    // (FEN, move, legal under none, file, all)
    let cases = [
        // The knight leaves the a1-h8 diagonal between the O's.
        ("7o/8/8/8/3L4/8/8/O7 w - - 0 1", "d4e6", [true, true, false]),
        // The knight leaves the e-file between the O's.
        (
            "4o3/8/8/8/4L3/8/8/4O3 w - - 0 1",
            "e4f6",
            [true, false, false],
        ),
        // The knight leaves rank 1 between the O's.
        ("8/8/8/8/8/8/8/O2L3o w - - 0 1", "d1e3", [true, true, false]),
        // The O steps onto an open file / diagonal facing the other O.
        (
            "3o4/8/8/8/8/8/8/2O5 w - - 0 1",
            "c1d1",
            [true, false, false],
        ),
        ("8/8/8/7o/8/8/8/2O5 w - - 0 1", "c1d1", [true, true, false]),
        // Control: a step that meets no open line to the other O.
        ("8/8/8/8/8/5o2/8/2O5 w - - 0 1", "c1b1", [true, true, true]),
    ];
    for (fen, m, want) in cases {
        for (mode, ok) in ["none", "file", "all"].into_iter().zip(want) {
            let v = oxeli_with(mode);
            let p = pos_in(&v, fen);
            assert_eq!(has(&p, m), ok, "face_off={mode} {fen} {m}: {:?}", legal(&p));
        }
    }
    // The shipped Oxeli is face_off = all.
    let p = pos("oxeli", "7o/8/8/8/3L4/8/8/O7 w - - 0 1");
    assert!(!has(&p, "d4e6"));
}

#[test]
fn adjacent_os_are_illegal() {
    // Adjacent O's face each other with nothing between; under `none` the O still may not
    // step next to the other, as an ordinary king. (d3 and e5 share no line.)
    for mode in ["none", "file", "all"] {
        let p = pos_in(&oxeli_with(mode), "8/8/8/4o3/8/3O4/8/8 w - - 0 1");
        for m in ["d3d4", "d3e4"] {
            assert!(!has(&p, m), "face_off={mode} {m}");
        }
        assert!(has(&p, "d3c4"), "face_off={mode}");
    }
}

#[test]
fn facing_os_in_a_fen_means_check() {
    // Open diagonal between the O's with White to move: Black "is in check", so the FEN is
    // illegal under `all` and fine under `file` and `none`.
    let fen = "7o/8/8/8/8/8/8/O7 w - - 0 1";
    assert!(varzero_rules::Position::from_fen(&variant("oxeli"), fen).is_err());
    assert!(varzero_rules::Position::from_fen(&oxeli_with("file"), fen).is_ok());
    assert!(varzero_rules::Position::from_fen(&oxeli_with("none"), fen).is_ok());
    // Facing is mutual: whoever is to move, the other side "is in check".
    let fen = "7o/8/8/8/8/8/8/O7 b - - 0 1";
    assert!(varzero_rules::Position::from_fen(&variant("oxeli"), fen).is_err());
}

#[test]
fn promotion_to_q() {
    let mut p = pos("oxeli", "o7/4P3/8/8/8/8/8/4O3 w - - 0 1");
    assert_eq!(moves_from(&p, "e7"), vec!["e7e8q".to_string()]);
    play(&mut p, &["e7e8q"]);
    assert_eq!(p.fen(), "o3Q3/8/8/8/8/8/8/4O3 b - - 0 1");
    let q = p.variant().kind_by_letter('Q').unwrap();
    let sq = p.variant().size.parse_square("e8").unwrap();
    assert_eq!(p.piece_at(sq), Some((q, Color::White)));
    // The suffix may be left out when the promotion is forced.
    let mut p = pos("oxeli", "o7/4P3/8/8/8/8/8/4O3 w - - 0 1");
    play(&mut p, &["e7e8"]);
    assert_eq!(p.fen(), "o3Q3/8/8/8/8/8/8/4O3 b - - 0 1");
    // No promotion before the last rank; Black promotes on rank 1.
    let p = pos("oxeli", "o7/8/4P3/8/8/8/8/4O3 w - - 0 1");
    assert_eq!(moves_from(&p, "e6"), vec!["e6e7".to_string()]);
    let mut p = pos("oxeli", "o7/8/8/8/8/8/1p6/4O3 b - - 0 1");
    assert_eq!(moves_from(&p, "b2"), vec!["b2b1q".to_string()]);
    play(&mut p, &["b2b1q"]);
    assert_eq!(p.fen(), "o7/8/8/8/8/8/8/1q2O3 w - - 0 2");
}

#[test]
fn stalemate_loses() {
    // White's O on a1: a2, b1 and b2 are held by the rooks on h2 and b8; no check.
    let mut p = pos("oxeli", "1i6/8/8/8/2o5/8/7i/O7 w - - 0 1");
    assert!(!p.in_check());
    assert!(p.legal_moves().is_empty());
    assert_eq!(p.outcome(), win(Color::Black, Termination::Stalemate));
}

#[test]
fn start_position() {
    // RULES s.5: White O d1 and X e1, Black O e8 and X d8.
    let p = pos(
        "oxeli",
        "ilexoeli/8/pppppppp/8/8/PPPPPPPP/8/ILEOXELI w - - 0 1",
    );
    let v = p.variant().clone();
    let at = |s: &str| p.piece_at(v.size.parse_square(s).unwrap());
    assert_eq!(
        at("d1"),
        Some((v.kind_by_letter('O').unwrap(), Color::White))
    );
    assert_eq!(
        at("e8"),
        Some((v.kind_by_letter('O').unwrap(), Color::Black))
    );
    assert_eq!(
        at("e1"),
        Some((v.kind_by_letter('X').unwrap(), Color::White))
    );
    assert_eq!(
        at("d8"),
        Some((v.kind_by_letter('X').unwrap(), Color::Black))
    );
    assert_eq!(p.fen(), v.start_fen);
}
