//! The xiangqi family (docs/rules.md#xiangqi): piece movement (soldier, elephant, horse, cannon),
//! the flying-general rule, stalemate and material draws, Ajax's extra steps, and
//! elephant-chess being xiangqi under other names.

mod common;
use common::*;
use varzero_rules::{Color, Position, Termination};

const START: &str = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";

#[test]
fn flying_general() {
    // The horse on e5 is the last piece between the generals: every horse move leaves the
    // file and is illegal; the general may step along the file or off it.
    let p = pos("xiangqi", "4k4/9/9/9/9/4N4/9/9/9/4K4 w - - 0 1");
    assert_eq!(legal(&p), sorted(&["e1d1", "e1e2", "e1f1"]));
    // A general may not step onto an open file facing the other one.
    let p = pos("xiangqi", "3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1");
    assert_eq!(legal(&p), sorted(&["e1e2", "e1f1"]));
    // A FEN with the generals facing is illegal (the side not to move is "in check").
    assert!(Position::from_fen(&variant("xiangqi"), "4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1").is_err());
}

#[test]
fn soldier_moves() {
    // (FEN, soldier square, expected moves)
    let cases: &[(&str, &str, &[&str])] = &[
        // Red: before the river forward only; across it also sideways; never backward.
        ("3k5/9/9/9/4P4/9/4P4/9/9/5K3 w - - 0 1", "e4", &["e4e5"]),
        (
            "3k5/9/9/9/4P4/9/4P4/9/9/5K3 w - - 0 1",
            "e6",
            &["e6d6", "e6e7", "e6f6"],
        ),
        ("P2k5/9/9/9/9/9/9/9/9/5K3 w - - 0 1", "a10", &["a10b10"]),
        // Black: the mirror image.
        ("3k5/9/9/4p4/9/4p4/9/9/9/5K3 b - - 0 1", "e7", &["e7e6"]),
        (
            "3k5/9/9/4p4/9/4p4/9/9/9/5K3 b - - 0 1",
            "e5",
            &["e5d5", "e5e4", "e5f5"],
        ),
    ];
    for &(fen, sq, want) in cases {
        let p = pos("xiangqi", fen);
        assert_eq!(moves_from(&p, sq), sorted(want), "{fen} {sq}");
    }
}

#[test]
fn elephant_moves() {
    let cases: &[(&str, &str, &[&str])] = &[
        // c5 -> a7/e7 would cross the river.
        (
            "3k5/9/9/9/9/2B6/9/9/9/5K3 w - - 0 1",
            "c5",
            &["c5a3", "c5e3"],
        ),
        // The eye d4 is occupied: e3 is blocked.
        ("3k5/9/9/9/9/2B6/3P5/9/9/5K3 w - - 0 1", "c5", &["c5a3"]),
        // Black's elephant on c6 cannot go to a4/e4.
        (
            "3k5/9/9/9/2b6/9/9/9/9/5K3 b - - 0 1",
            "c6",
            &["c6a8", "c6e8"],
        ),
    ];
    for &(fen, sq, want) in cases {
        let p = pos("xiangqi", fen);
        assert_eq!(moves_from(&p, sq), sorted(want), "{fen} {sq}");
    }
}

#[test]
fn horse_leg_blocking() {
    let all = [
        "e5c4", "e5c6", "e5d3", "e5d7", "e5f3", "e5f7", "e5g4", "e5g6",
    ];
    let cases: &[(&str, &[&str])] = &[
        ("3k5/9/9/9/9/4N4/9/9/9/5K3 w - - 0 1", &all),
        // Own soldier on e6 blocks the two forward jumps.
        (
            "3k5/9/9/9/4P4/4N4/9/9/9/5K3 w - - 0 1",
            &["e5c4", "e5c6", "e5d3", "e5f3", "e5g4", "e5g6"],
        ),
        // Enemy soldier on d5 blocks the two jumps to the left.
        (
            "3k5/9/9/9/9/3pN4/9/9/9/5K3 w - - 0 1",
            &["e5d3", "e5d7", "e5f3", "e5f7", "e5g4", "e5g6"],
        ),
    ];
    for &(fen, want) in cases {
        let p = pos("xiangqi", fen);
        assert_eq!(moves_from(&p, "e5"), sorted(want), "{fen}");
    }
    // A blocked horse gives no check: d8 -> e10 needs d9 empty.
    assert!(!pos("xiangqi", "4k4/3a5/3N5/9/9/9/9/9/9/5K3 b - - 0 1").in_check());
    assert!(pos("xiangqi", "4k4/9/3N5/9/9/9/9/9/9/5K3 b - - 0 1").in_check());
}

#[test]
fn cannon_needs_exactly_one_screen() {
    let cases: &[(&str, &[&str])] = &[
        // Screen a5, target a8; no capture of the screen, no quiet move past it.
        (
            "5k3/9/p8/9/9/p8/9/9/9/C2K5 w - - 0 1",
            &["a1a2", "a1a3", "a1a4", "a1a8", "a1b1", "a1c1"],
        ),
        // Screens a5 and a6: only a6 can be taken.
        (
            "5k3/9/p8/9/p8/p8/9/9/9/C2K5 w - - 0 1",
            &["a1a2", "a1a3", "a1a4", "a1a6", "a1b1", "a1c1"],
        ),
    ];
    for &(fen, want) in cases {
        let p = pos("xiangqi", fen);
        assert_eq!(moves_from(&p, "a1"), sorted(want), "{fen}");
    }
    // Cannon check: one screen checks, none or two do not.
    for (fen, check) in [
        ("4k4/9/9/9/9/4P4/9/4C4/9/3K5 b - - 0 1", true),
        ("4k4/9/9/9/9/9/9/4C4/9/3K5 b - - 0 1", false),
        ("4k4/9/9/4p4/9/4P4/9/4C4/9/3K5 b - - 0 1", false),
    ] {
        assert_eq!(pos("xiangqi", fen).in_check(), check, "{fen}");
    }
}

#[test]
fn stalemate_results() {
    // Red's general on d1: d2 held by the chariot on a2, e1 by the chariot on e9.
    let fen = "5k3/4r4/9/9/9/9/9/9/r8/3K5 w - - 0 1";
    for name in ["xiangqi", "elephant-chess", "ajax-xiangqi"] {
        // (Ajax's extra diagonal step d1e2 is held by the chariot on e9 too.)
        let mut p = pos(name, fen);
        assert!(!p.in_check());
        assert!(p.legal_moves().is_empty(), "{name}: {:?}", legal(&p));
        assert_eq!(
            p.outcome(),
            win(Color::Black, Termination::Stalemate),
            "{name}"
        );
    }
    // The rule option: stalemate=draw.
    let v = variant("xiangqi")
        .with_overrides(&["stalemate=draw".to_string()])
        .unwrap();
    let mut p = pos_in(&v, fen);
    assert_eq!(p.outcome(), draw(Termination::Stalemate));
    // Makruk: stalemate is a draw (Kh1; g1, g2 held by Kf2, h2 by the met on g3).
    let mut p = pos("makruk", "8/8/8/8/8/6m1/5k2/7K w - - 0 1");
    assert!(p.legal_moves().is_empty() && !p.in_check());
    assert_eq!(p.outcome(), draw(Termination::Stalemate));
}

#[test]
fn xiangqi_checkmate() {
    // Chariot h9 holds rank 9; the other chariot mates on the back rank.
    let mut p = pos("xiangqi", "4k4/7R1/9/9/9/9/9/9/9/3K4R w - - 0 1");
    play(&mut p, &["i1i10"]);
    assert!(p.legal_moves().is_empty());
    assert_eq!(p.outcome(), win(Color::White, Termination::Checkmate));
}

#[test]
fn material_draws() {
    // (variant, FEN, drawn at once)
    let cases = [
        // Only advisors and elephants: neither side can cross the river.
        ("xiangqi", "3aka3/9/4b4/9/9/9/9/4B4/9/3AKA3 w - - 0 1", true),
        ("xiangqi", "4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1", true),
        (
            "elephant-chess",
            "3aka3/9/4b4/9/9/9/9/4B4/9/3AKA3 w - - 0 1",
            true,
        ),
        // A soldier, horse, cannon or chariot can.
        (
            "xiangqi",
            "3aka3/9/4b4/9/9/9/P8/4B4/9/3AKA3 w - - 0 1",
            false,
        ),
        (
            "xiangqi",
            "3aka3/9/4b4/9/9/9/9/4B4/9/3AKAN2 w - - 0 1",
            false,
        ),
        (
            "xiangqi",
            "3aka3/9/4b4/9/9/9/9/4B4/9/3AKA1c1 w - - 0 1",
            false,
        ),
        (
            "xiangqi",
            "3aka3/9/4b4/9/9/9/9/4B4/9/R2AKA3 w - - 0 1",
            false,
        ),
        // Ouk Chatrang (docs/rules.md#insufficient-material): bare kings, or a lone met or koul
        // against a bare king.
        ("ouk-chatrang", "4k3/8/8/8/8/8/8/3K4 w - - 0 1", true),
        ("ouk-chatrang", "4k3/8/8/8/8/8/8/3KM3 w - - 0 1", true),
        ("ouk-chatrang", "4k3/8/8/8/8/8/8/3KS3 w - - 0 1", true),
        ("ouk-chatrang", "4k3/8/8/8/8/8/4s3/3K4 w - - 0 1", true),
        ("ouk-chatrang", "4k3/8/8/8/8/8/8/R2K4 w - - 0 1", false),
        ("ouk-chatrang", "4k3/8/8/8/8/8/8/3KN3 w - - 0 1", false),
        ("ouk-chatrang", "4k3/8/8/8/8/P7/8/3KM3 w - - 0 1", false),
        ("ouk-chatrang", "3mk3/8/8/8/8/8/8/3KM3 w - - 0 1", false),
    ];
    for (name, fen, drawn) in cases {
        let mut p = pos(name, fen);
        let o = p.outcome();
        if drawn {
            assert_eq!(o, draw(Termination::InsufficientMaterial), "{name} {fen}");
        } else {
            assert_eq!(o, None, "{name} {fen}");
        }
    }
}

#[test]
fn ajax_pieces_gain_quiet_steps() {
    // The chariot on e5 gets one-step diagonal moves that never capture (f6 holds a black
    // soldier); in xiangqi it has none.
    let fen = "3k5/9/9/9/5p3/4R4/9/9/9/5K3 w - - 0 1";
    let a = moves_from(&pos("ajax-xiangqi", fen), "e5");
    for m in ["e5d6", "e5d4", "e5f4"] {
        assert!(a.contains(&m.to_string()), "ajax {m}: {a:?}");
    }
    assert!(!a.contains(&"e5f6".to_string()));
    let x = moves_from(&pos("xiangqi", fen), "e5");
    assert!(!x
        .iter()
        .any(|m| ["e5d6", "e5d4", "e5f4", "e5f6"].contains(&m.as_str())));
    // The horse steps one square any way (moving only); the general also diagonally.
    let p = pos("ajax-xiangqi", "4k4/4a4/9/9/9/4N4/9/9/9/4K4 w - - 0 1");
    let h = moves_from(&p, "e5");
    for m in [
        "e5d4", "e5d5", "e5d6", "e5e4", "e5e6", "e5f4", "e5f5", "e5f6",
    ] {
        assert!(h.contains(&m.to_string()), "ajax horse {m}: {h:?}");
    }
    assert_eq!(
        moves_from(&p, "e1"),
        sorted(&["e1d1", "e1d2", "e1e2", "e1f1", "e1f2"])
    );
}

#[test]
fn elephant_chess_and_xiangqi_have_identical_move_trees() {
    let xq = variant("xiangqi");
    let ec = variant("elephant-chess");
    let mut rng = Lcg(0x5eed_1234);
    let mut checked = 0;
    while checked < 20 {
        let mut a = pos_in(&xq, START);
        let mut b = pos_in(&ec, START);
        let plies = 6 + rng.below(40);
        let mut ok = true;
        for _ in 0..plies {
            let moves = legal(&a);
            assert_eq!(moves, legal(&b), "{}", a.fen());
            if moves.is_empty() {
                ok = false;
                break;
            }
            let m = &moves[rng.below(moves.len())];
            play(&mut a, &[m]);
            play(&mut b, &[m]);
        }
        if !ok {
            continue;
        }
        assert_eq!(a.fen(), b.fen());
        let depth = if checked % 5 == 0 { 3 } else { 2 };
        assert_eq!(a.perft(depth), b.perft(depth), "{} perft {depth}", a.fen());
        assert_eq!(a.outcome(), b.outcome(), "{}", a.fen());
        checked += 1;
    }
}
