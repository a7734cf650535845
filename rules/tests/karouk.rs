//! Kar Ouk (docs/rules.md#kar-ouk, docs/rules.md#check-wins): the first check wins, the FEN's
//! check-count field (`1+1`, the checks White and Black still have to give), and perft's view
//! of it.

mod common;
use common::*;
use varzero_rules::{Color, Termination};

#[test]
fn missing_check_field_defaults_to_one_each() {
    let p = pos(
        "kar-ouk",
        "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w DEde - 0 1",
    );
    assert_eq!(p.checks_remaining(), [1, 1]);
    assert_eq!(
        p.fen(),
        "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w DEde - 1+1 0 1"
    );
    // The FSF alias loads the same variant.
    let p = pos(
        "karouk",
        "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w DEde - 1+1 0 1",
    );
    assert_eq!(p.checks_remaining(), [1, 1]);
}

#[test]
fn first_check_wins() {
    // (FEN, checking move, check field after, winner)
    let cases = [
        (
            "4k3/8/8/8/8/8/8/R2K4 w - - 1+1 0 1",
            "a1a8",
            "0+1",
            Color::White,
        ),
        (
            "r3k3/8/8/8/8/8/8/3K4 b - - 1+1 0 1",
            "a8a1",
            "1+0",
            Color::Black,
        ),
        // A discovered check counts: the knight uncovers the rook on d8.
        (
            "3rk3/8/8/3n4/8/8/8/3KM3 b DEe - 1+1 0 1",
            "d5b4",
            "1+0",
            Color::Black,
        ),
    ];
    for (fen, m, checks, winner) in cases {
        let mut p = pos("kar-ouk", fen);
        assert_eq!(p.outcome(), None, "{fen}");
        play(&mut p, &[m]);
        assert!(p.in_check());
        assert_eq!(field(&p.fen(), 4), checks, "{fen} + {m}");
        assert_eq!(
            p.outcome(),
            win(winner, Termination::CheckWins),
            "{fen} + {m}"
        );
        // The game is over: no moves, and perft counts nothing below.
        assert!(p.legal_moves().is_empty(), "{fen} + {m}: {:?}", legal(&p));
        assert_eq!(p.perft(1), 0);
        assert_eq!(p.perft(2), 0);
    }
}

#[test]
fn same_check_in_ouk_chatrang_is_not_a_game_end() {
    let mut p = pos("ouk-chatrang", "4k3/8/8/8/8/8/8/R2K4 w - - 0 1");
    play(&mut p, &["a1a8"]);
    assert!(p.in_check());
    assert_eq!(p.outcome(), None);
    assert!(!p.legal_moves().is_empty());
}

#[test]
fn fen_set_in_check_with_full_counts_is_not_an_end() {
    // docs/rules.md#check-wins: a FEN with Black in check but counts 1+1 generates evasions
    // normally, as Fairy-Stockfish reads it.
    let mut p = pos("kar-ouk", "R3k3/8/8/8/8/8/8/3K4 b - - 1+1 0 1");
    assert!(p.in_check());
    assert_eq!(legal(&p), sorted(&["e8d7", "e8e7", "e8f7"]));
    assert_eq!(p.outcome(), None);
    // With 0+1 White has already given its check: Black has lost and has no moves.
    let mut p = pos("kar-ouk", "R3k3/8/8/8/8/8/8/3K4 b - - 0+1 0 1");
    assert!(p.legal_moves().is_empty());
    assert_eq!(p.outcome(), win(Color::White, Termination::CheckWins));
    assert_eq!(p.fen(), "R3k3/8/8/8/8/8/8/3K4 b - - 0+1 0 1");
}

#[test]
fn perft_counts_nothing_after_a_check() {
    // Perft 2 equals, over White's moves, 0 for a checking move and otherwise the number of
    // Black replies; the replies are counted in ouk-chatrang (same moves, no check rule).
    let fens = [
        // Ra1-a8 and Ra1-e1 check.
        "4k3/8/8/8/8/8/8/R2K4 w - - 1+1 0 1",
        // Rook, khon and knight checks for White; kings with their rights.
        "r2mk3/4p3/8/3N4/8/2S5/8/R2KM2R w DEde - 1+1 0 1",
    ];
    let cam = variant("ouk-chatrang");
    for fen in fens {
        let mut p = pos("kar-ouk", fen);
        // The same position without the check field, in ouk-chatrang.
        let cam_fen: String = fen.replace(" 1+1", "");
        let mut q = pos_in(&cam, &cam_fen);
        let mut expected = 0u64;
        let mut checks = 0;
        for m in legal(&q) {
            q.play_uci(&m).unwrap();
            if q.in_check() {
                checks += 1;
            } else {
                expected += q.legal_moves().len() as u64;
            }
            q.unmake();
        }
        assert!(
            checks > 0,
            "{fen}: the test wants a position with checking moves"
        );
        assert_eq!(p.perft(1), legal(&q).len() as u64, "{fen}");
        assert_eq!(p.perft(2), expected, "{fen}");
    }
}
