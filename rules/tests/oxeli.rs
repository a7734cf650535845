//! Oxeli (docs/rules.md#oxeli) and the face-off option (docs/rules.md#face-off): no face-off
//! on any line, the O's
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
    // docs/rules.md#oxeli: White O d1 and X e1, Black O e8 and X d8.
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

/// The kings' squares (file, rank from the bottom) read from a FEN's board field.
fn kings(fen: &str, king: char) -> [(i32, i32); 2] {
    let rows = board_rows(fen);
    let mut found = [None, None];
    for (rank, row) in rows.iter().enumerate() {
        for (file, &c) in row.iter().enumerate() {
            if c == king.to_ascii_uppercase() {
                found[0] = Some((file as i32, rank as i32));
            } else if c == king {
                found[1] = Some((file as i32, rank as i32));
            }
        }
    }
    [found[0].unwrap(), found[1].unwrap()]
}

/// The FEN's board as rows of characters from the bottom rank up, '.' for an empty square.
fn board_rows(fen: &str) -> Vec<Vec<char>> {
    fen.split_whitespace()
        .next()
        .unwrap()
        .split('/')
        .rev()
        .map(|row| {
            let mut out = Vec::new();
            let mut digits = String::new();
            for c in row.chars().chain(std::iter::once('/')) {
                if c.is_ascii_digit() {
                    digits.push(c);
                    continue;
                }
                if !digits.is_empty() {
                    out.extend(std::iter::repeat_n('.', digits.parse().unwrap()));
                    digits.clear();
                }
                if c.is_ascii_alphabetic() {
                    out.push(c);
                }
            }
            out
        })
        .collect()
}

/// Whether the kings face each other on a line of `mode` with nothing between them, read
/// naively from the FEN (no bitboards, no tables): the oracle for the engine's face-off rule.
fn facing(fen: &str, king: char, mode: &str) -> bool {
    let [(f1, r1), (f2, r2)] = kings(fen, king);
    let (df, dr) = (f2 - f1, r2 - r1);
    let on_line = match mode {
        "file" => df == 0,
        "all" => df == 0 || dr == 0 || df.abs() == dr.abs(),
        _ => false,
    };
    let rows = board_rows(fen);
    let steps = df.abs().max(dr.abs());
    on_line
        && (1..steps).all(|i| {
            let f = f1 + df.signum() * i;
            let r = r1 + dr.signum() * i;
            rows[r as usize][f as usize] == '.'
        })
}

/// Over random games: the moves legal under a face-off mode are exactly the moves legal without
/// the rule whose resulting position does not have the kings facing on one of the mode's lines
/// (checked naively on the FEN). Catches a face-off move the engine wrongly allows or forbids,
/// including the last piece stepping off the line and a king stepping onto an open line.
/// (Checked to fail when the oracle leaves out the diagonals.)
#[test]
fn face_off_matches_a_naive_oracle() {
    let cases = [
        ("oxeli", 'o', "all"),
        ("oxeli", 'o', "file"),
        ("xiangqi", 'k', "file"),
    ];
    let mut rng = Lcg(0x0FAC_E0FF);
    let mut compared = 0;
    let mut removed = 0;
    for (name, king, mode) in cases {
        let strict = variant(name)
            .with_overrides(&[format!("face_off={mode}")])
            .unwrap();
        let loose = variant(name)
            .with_overrides(&["face_off=none".to_string()])
            .unwrap();
        for g in 0..24 {
            let mut p = varzero_rules::Position::start(&strict);
            for _ply in 0..200 {
                let fen = p.fen();
                let mut q = pos_in(&loose, &fen);
                let mut want = Vec::new();
                for m in legal(&q) {
                    let mv = q.parse_uci(&m).unwrap();
                    q.make(mv);
                    if facing(&q.fen(), king, mode) {
                        removed += 1;
                    } else {
                        want.push(m);
                    }
                    q.unmake();
                }
                let got = legal(&p);
                assert_eq!(got, want, "{name} face_off={mode} game {g}: {fen}");
                compared += 1;
                if got.is_empty() || p.outcome().is_some() {
                    break;
                }
                p.play_uci(&got[rng.below(got.len())]).unwrap();
            }
        }
    }
    // The oracle must have had something to say, or the test proves nothing.
    eprintln!("{compared} positions, {removed} moves removed by the face-off rule");
    assert!(
        removed > 100,
        "only {removed} moves removed by face-off in {compared} positions"
    );
}
