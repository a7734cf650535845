//! Counting (docs/rules.md#counting; Fairy-Stockfish's semantics in docs/rules.md#counting-fsf):
//! when the board's and the pieces' honour counts start, their limits, how the count runs,
//! when it draws, and how it is written in the FEN. All counts and limits are in plies, as FSF
//! keeps them: the FEN's fourth field is the limit, the fifth the count so far.

mod common;
use common::*;
use varzero_rules::{Color, Termination};

/// Pieces' honour limits by the strong side's material, in moves (docs/rules.md#counting-makruk:
/// two rooks 8; one rook 16; two khon 22; two knights 32; one khon 44; otherwise 64; Cambodian
/// one lower, docs/rules.md#counting-cambodian).
/// Each row is White's rank 1 next to the king on e1; Black has a bare king on h8 and there
/// is no count yet. After White's quiet e1e2 Black (to move) is bare, so the pieces' honour
/// count starts at twice the number of pieces on the board (kings included).
const PIECES_HONOUR: &[(&str, u16, u16, u16)] = &[
    // (white rank 1, pieces on the board, makruk limit, cambodian limit) — limits in moves
    ("RR2K3", 4, 8, 7),
    ("R3K3", 3, 16, 15),
    ("SS2K3", 4, 22, 21),
    ("NN2K3", 4, 32, 31),
    ("S3K3", 3, 44, 43),
    ("M3K3", 3, 64, 63),
    ("N3K3", 3, 64, 63),
    ("MM2K3", 4, 64, 63),
    // Mixed material: the first rule in the list that matches decides (rook before khon
    // before knight), as FSF's count_limit tests them in that order.
    ("RRN1K3", 5, 8, 7),
    ("RS2K3", 4, 16, 15),
    ("SN2K3", 4, 44, 43),
    ("NNS1K3", 5, 32, 31),
    ("SSNNK3", 6, 22, 21),
];

#[test]
fn pieces_honour_limits_makruk_and_cambodian() {
    let mut failures = Vec::new();
    for &(rank1, pieces, makruk, cambodian) in PIECES_HONOUR {
        let fen = format!("7k/8/8/8/8/8/8/{rank1} w - - 0 1");
        for (name, limit) in [("makruk", makruk), ("ouk-chatrang", cambodian)] {
            let mut p = pos(name, &fen);
            assert_eq!(p.counting(), (0, 0), "{name} {fen}: set() starts no count");
            play(&mut p, &["e1e2"]);
            let want = (2 * pieces, 2 * limit);
            if p.counting() != want {
                failures.push(format!(
                    "{name} {fen} e1e2: counting (ply, limit) expected {want:?}, got {:?}",
                    p.counting()
                ));
            }
            let f = p.fen();
            if field(&f, 3) != (2 * limit).to_string() || field(&f, 4) != (2 * pieces).to_string() {
                failures.push(format!("{name} {fen} e1e2: FEN {f}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn worked_example_rook_against_bare_king() {
    // docs/rules.md#counting-examples: makruk K+R vs K, Ra1a2 -> limit 16 moves = 32 plies,
    // count 2*3 = 6.
    let mut p = pos("makruk", "8/8/8/4k3/8/8/8/R3K3 w - - 0 1");
    play(&mut p, &["a1a2"]);
    assert_eq!(p.fen(), "8/8/8/4k3/8/8/R7/4K3 b - 32 6 1");
    assert_eq!(p.counting(), (6, 32));
}

#[test]
fn board_honour_starts_when_last_pawn_is_captured() {
    // White's rook takes Black's last pawn; Black (to move) has king and rook, White is not
    // bare: the board's honour, 64 moves = 128 plies, counted from 0.
    let mut p = pos("makruk", "4k2r/8/8/8/2p5/8/8/1NRK4 w - - 0 1");
    play(&mut p, &["c1c4"]);
    assert_eq!(p.fen(), "4k2r/8/8/8/2R5/8/8/1N1K4 b - 128 0 1");
    // The count goes up by one every ply.
    play(&mut p, &["h8h7"]);
    assert_eq!(p.counting(), (1, 128));
    play(&mut p, &["b1c3"]);
    assert_eq!(p.counting(), (2, 128));
    assert_eq!(p.fen(), "4k3/7r/8/8/2R5/2N5/8/3K4 b - 128 2 2");
}

#[test]
fn board_honour_starts_when_last_pawn_promotes() {
    // The last pawn becomes a met: no unpromoted pawn is left, so the board's honour starts.
    let mut p = pos("makruk", "4k2r/8/8/4P3/8/8/8/R3K3 w - - 0 1");
    play(&mut p, &["e5e6m"]);
    assert_eq!(p.fen(), "4k2r/8/4M3/8/8/8/8/R3K3 b - 128 0 1");
}

#[test]
fn makruk_no_count_while_a_pawn_is_left() {
    // K+R+P against a bare king: any pawn on the board means no makruk count
    // (docs/rules.md#counting-fsf).
    let mut p = pos("makruk", "8/8/8/4k3/8/P7/8/R3K3 w - - 0 1");
    play(&mut p, &["a1a2"]);
    assert_eq!(p.counting(), (0, 0));
    assert_eq!(p.fen(), "8/8/8/4k3/8/P7/R7/4K3 b - - 1 1");
    // Cambodian: the bare king may count only the pieces' honour, which needs no pawns.
    let mut p = pos("ouk-chatrang", "8/8/8/4k3/8/P7/8/R3K3 w - - 0 1");
    play(&mut p, &["a1a2"]);
    assert_eq!(p.counting(), (0, 0));
}

#[test]
fn cambodian_board_honour_starts_with_three_pieces_even_with_pawns() {
    // Black (to move after White's move) has king, knight and pawn: three pieces.
    let fen = "4k2n/8/p7/8/8/P7/8/R3K3 w - - 0 1";
    let mut p = pos("ouk-chatrang", fen);
    play(&mut p, &["e1e2"]);
    assert_eq!(p.counting(), (0, 126));
    assert_eq!(p.fen(), "4k2n/8/p7/8/8/P7/4K3/R7 b - 126 0 1");
    // Makruk: pawns on the board, so no count.
    let mut p = pos("makruk", fen);
    play(&mut p, &["e1e2"]);
    assert_eq!(p.counting(), (0, 0));
}

#[test]
fn cambodian_count_is_for_the_side_to_move() {
    // White has three pieces (K, R, P), Black four (K, N, N, P). After White's move Black is
    // to move with four pieces: no count. After Black's reply White is to move with three.
    let mut p = pos("ouk-chatrang", "4k1nn/8/p7/8/8/P7/8/R3K3 w - - 0 1");
    play(&mut p, &["e1e2"]);
    assert_eq!(p.counting(), (0, 0));
    play(&mut p, &["g8e7"]);
    assert_eq!(p.counting(), (0, 126));
    assert_eq!(field(&p.fen(), 3), "126");
}

#[test]
fn bare_king_capturing_the_last_pawn_counts_at_odd_ply() {
    // docs/rules.md#counting-fsf, step 3a: the mover is a bare king that took the last pawn;
    // the limit is its pieces' honour and the count 2*pieces - 1 (parity: the other side moves).
    for (name, limit) in [("makruk", 32), ("ouk-chatrang", 30)] {
        let mut p = pos(name, "8/8/8/4k3/3P4/8/8/R3K3 b - - 0 1");
        play(&mut p, &["e5d4"]);
        assert_eq!(p.counting(), (5, limit), "{name}");
        assert_eq!(
            p.fen(),
            format!("8/8/8/8/3k4/8/8/R3K3 w - {limit} 5 2"),
            "{name}"
        );
    }
}

#[test]
fn capture_leaving_a_bare_king_restarts_the_count() {
    // Board's honour running (128, ply 20); White takes Black's last piece: pieces' honour.
    let mut p = pos("makruk", "8/8/8/4k3/8/8/n7/R3K3 w - 128 20 30");
    play(&mut p, &["a1a2"]);
    assert_eq!(p.fen(), "8/8/8/4k3/8/8/R7/4K3 b - 32 6 30");
    // A capture that leaves Black more than a king keeps the running count.
    let mut p = pos("makruk", "7r/8/8/4k3/8/8/n7/R3K3 w - 128 20 30");
    play(&mut p, &["a1a2"]);
    assert_eq!(p.fen(), "7r/8/8/4k3/8/8/R7/4K3 b - 128 21 30");
}

#[test]
fn cambodian_board_count_runs_on_until_pieces_honour_can_start() {
    // Cambodian board's honour is running while pawns are on the board. White takes Black's
    // last piece: Black is bare, but with a pawn left the pieces' honour cannot start
    // (docs/rules.md#counting-fsf), so the board's count just goes on.
    let mut p = pos("ouk-chatrang", "8/8/8/4P3/8/4k3/n7/R3K3 w - 126 40 60");
    play(&mut p, &["a1a2"]);
    assert_eq!(p.fen(), "8/8/8/4P3/8/4k3/R7/4K3 b - 126 41 60");
    // The last pawn promotes with Black bare: the pieces' honour replaces the running count
    // (one rook: 15 moves = 30 plies; count 2*4 = 8).
    let mut p = pos("ouk-chatrang", "8/8/8/4P3/8/4k3/8/R3K3 w - 126 40 60");
    play(&mut p, &["e5e6m"]);
    assert_eq!(p.fen(), "8/8/4M3/8/8/4k3/8/R3K3 b - 30 8 60");
}

#[test]
fn count_draws_only_after_passing_the_limit() {
    let mut p = pos("makruk", "8/8/8/4k3/8/8/R7/4K3 b - 32 31 40");
    assert_eq!(p.outcome(), None);
    play(&mut p, &["e5e6"]);
    assert_eq!(p.counting(), (32, 32));
    assert_eq!(p.outcome(), None, "ply == limit is not yet a draw");
    play(&mut p, &["a2a3"]);
    assert_eq!(p.counting(), (33, 32));
    assert_eq!(p.outcome(), draw(Termination::Counting));

    // Cambodian limits are one move lower, with the same strict test.
    let mut p = pos("ouk-chatrang", "8/8/8/4k3/8/8/R7/4K3 b - 30 29 40");
    play(&mut p, &["e5e6"]);
    assert_eq!(p.outcome(), None);
    play(&mut p, &["a2a3"]);
    assert_eq!(p.outcome(), draw(Termination::Counting));
}

#[test]
fn checkmate_on_the_last_count_wins() {
    // Count 32 of 32; Rh1-h8 mates (Kb6 covers a7 and b7) and takes the count to 33.
    let fen = "k7/8/1K6/8/8/8/8/7R w - 32 32 50";
    let mut p = pos("makruk", fen);
    assert_eq!(p.outcome(), None);
    play(&mut p, &["h1h8"]);
    assert_eq!(p.counting(), (33, 32));
    assert_eq!(p.outcome(), win(Color::White, Termination::Checkmate));
    // Any other move: the count is passed and the game is drawn.
    let mut p = pos("makruk", fen);
    play(&mut p, &["h1h2"]);
    assert_eq!(p.outcome(), draw(Termination::Counting));
}

#[test]
fn stalemate_on_the_ply_the_count_runs_out_is_a_counting_draw() {
    // docs/rules.md#counting-draw: drawn when the count passes its limit, unless the
    // position is checkmate.
    // Mc5-b6 stalemates the bare king (a7 by the met, b7 and b8 by the king) and takes the
    // count to 33 of 32: a counting draw, whatever the stalemate rule says.
    let fen = "k7/2K5/8/2M5/8/8/8/7R w - 32 32 60";
    for stalemate in ["draw", "loss", "win"] {
        let v = variant("makruk")
            .with_overrides(&[format!("stalemate={stalemate}")])
            .unwrap();
        let mut p = pos_in(&v, fen);
        play(&mut p, &["c5b6"]);
        assert!(p.legal_moves().is_empty() && !p.in_check());
        assert_eq!(p.counting(), (33, 32));
        assert_eq!(
            p.outcome(),
            draw(Termination::Counting),
            "stalemate={stalemate}"
        );
    }
    // One count earlier the same stalemate is decided by the stalemate rule.
    let v = variant("makruk")
        .with_overrides(&["stalemate=loss".to_string()])
        .unwrap();
    let mut p = pos_in(&v, "k7/2K5/8/2M5/8/8/8/7R w - 32 31 60");
    play(&mut p, &["c5b6"]);
    assert_eq!(p.outcome(), win(Color::White, Termination::Stalemate));
}

#[test]
fn counting_fen_fields_parse_and_round_trip() {
    let cases = [
        // docs/rules.md#counting-fen example (a Cambodian board's honour count with pawns left).
        (
            "ouk-chatrang",
            "6k1/r4s2/4p3/2s4n/4S2P/8/1Kr5/8 w - 126 0 38",
            (0, 126),
        ),
        (
            "makruk",
            "6k1/r4s2/4p3/2s4n/4S2P/8/1Kr5/8 w - 126 0 38",
            (0, 126),
        ),
        ("makruk", "8/8/8/4k3/8/8/R7/4K3 b - 32 6 1", (6, 32)),
        ("makruk", "8/8/8/4k3/8/8/R7/4K3 b - - 7 1", (0, 0)),
        ("kar-ouk", "8/8/8/4k3/8/8/R7/4K3 b - 32 1+1 6 40", (6, 32)),
        ("ouk", "8/8/8/4k3/8/8/R7/4K3 w - 128 100 70", (100, 128)),
    ];
    for (name, fen, counting) in cases {
        let p = pos(name, fen);
        assert_eq!(p.counting(), counting, "{name} {fen}");
        assert_eq!(p.fen(), fen, "{name}: FEN round trip");
    }
    // Without a count, field 5 is the ordinary half-move clock.
    let p = pos("makruk", "8/8/8/4k3/8/8/R7/4K3 b - - 7 1");
    assert_eq!(p.rule50(), 7);
}
