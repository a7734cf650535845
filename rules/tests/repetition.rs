//! Repetition (docs/rules.md#repetition-and-chase): makruk's threefold draw, xiangqi's
//! fourth-occurrence rule (perpetual check and chase lose, otherwise a draw), Oxeli's ban on
//! the move that would make a fourth occurrence, and perft ignoring all of it.

mod common;
use common::*;
use varzero_rules::{Color, Position, Termination};

/// Plays `cycle` `times` times, checking the outcome is `None` before the last move.
fn play_cycles(p: &mut Position, cycle: &[&str], times: usize) {
    for i in 0..times {
        for (j, m) in cycle.iter().enumerate() {
            let o = p.outcome();
            assert_eq!(
                o,
                None,
                "ended early ({o:?}) at cycle {i} move {j} in {}",
                p.fen()
            );
            play(p, &[m]);
        }
    }
}

#[test]
fn makruk_threefold_draw() {
    let cycle = ["b1d2", "b8d7", "d2b1", "d7b8"];
    let mut p = pos(
        "makruk",
        "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - - 0 1",
    );
    play_cycles(&mut p, &cycle, 1);
    assert_eq!(p.repetitions(), 1);
    assert_eq!(p.outcome(), None, "second occurrence");
    play_cycles(&mut p, &cycle, 1);
    assert_eq!(p.repetitions(), 2);
    assert_eq!(
        p.outcome(),
        draw(Termination::Repetition),
        "third occurrence"
    );
}

#[test]
fn cambodian_repetition_ignores_first_move_rights() {
    // docs/rules.md#repetition-key: the gates are not part of FSF's key, so the start placement
    // with the kings' rights gone repeats the start position.
    let mut p = pos(
        "ouk-chatrang",
        "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w DEde - 0 1",
    );
    play_cycles(&mut p, &["d1c2", "e8f7", "c2d1", "f7e8"], 2);
    assert_eq!(field(&p.fen(), 2), "Ed");
    assert_eq!(p.outcome(), draw(Termination::Repetition));
}

/// Plays `first` and then the 4-ply `cycle` three times in xiangqi; the position after the
/// first cycle's end occurs the fourth time after the third cycle. Returns the outcome after
/// the third occurrence and after the fourth.
fn xiangqi_cycles(
    name: &str,
    fen: &str,
    first: &[&str],
    cycle: &[&str],
) -> (
    Option<varzero_rules::Outcome>,
    Option<varzero_rules::Outcome>,
) {
    let mut p = pos(name, fen);
    play(&mut p, first);
    play_cycles(&mut p, cycle, 2);
    assert_eq!(p.repetitions(), 2);
    let third = p.outcome();
    play_cycles(&mut p, cycle, 1);
    assert_eq!(p.repetitions(), 3);
    (third, p.outcome())
}

/// The same case with colours swapped (board mirrored, Black moving first).
fn mirrored(
    name: &str,
    fen: &str,
    first: &[&str],
    cycle: &[&str],
) -> (
    Option<varzero_rules::Outcome>,
    Option<varzero_rules::Outcome>,
) {
    let m = |v: &[&str]| -> Vec<String> { v.iter().map(|s| mirror_uci(s, 10)).collect() };
    let f = m(first);
    let c = m(cycle);
    let f: Vec<&str> = f.iter().map(|s| s.as_str()).collect();
    let c: Vec<&str> = c.iter().map(|s| s.as_str()).collect();
    xiangqi_cycles(name, &mirror_fen(fen), &f, &c)
}

#[test]
fn xiangqi_perpetual_check_loses() {
    // Red's chariot checks from h10 and h9 while Black's general steps e10-e9-e10.
    let fen = "4k4/9/9/9/9/9/9/9/9/3K3R1 w - - 0 1";
    let first = ["h1h10"];
    let cycle = ["e10e9", "h10h9", "e9e10", "h9h10"];
    for name in ["xiangqi", "elephant-chess", "ajax-xiangqi"] {
        let (third, fourth) = xiangqi_cycles(name, fen, &first, &cycle);
        assert_eq!(
            third, None,
            "{name}: the third occurrence does not end the game"
        );
        assert_eq!(
            fourth,
            win(Color::Black, Termination::PerpetualCheck),
            "{name}"
        );
    }
    let (third, fourth) = mirrored("xiangqi", fen, &first, &cycle);
    assert_eq!(third, None);
    assert_eq!(fourth, win(Color::White, Termination::PerpetualCheck));
}

#[test]
fn xiangqi_mutual_perpetual_check_draws() {
    // Red's cannon f1 checks f10 through one screen, Black's cannon i2 checks d2 through one;
    // the horses on f2 (Red) and f4 (Black) are the screens. Each horse move uncovers the
    // check on its own king and adds or removes a screen of the other cannon, so every move
    // of both sides is a check that parries a check:
    //   f2g4 (0 screens on rank 2, 1 on the f-file: check), f4g2 (0 on the f-file, 1 on
    //   rank 2: check), g4f2 (2 on rank 2, 1 on the f-file), g2f4 (2 on the f-file, 1 on
    //   rank 2). No move attacks any other piece, so there is no chase.
    let fen = "5k3/9/9/9/9/9/5n3/9/3K1N2c/5C3 w - - 0 1";
    let cycle = ["f2g4", "f4g2", "g4f2", "g2f4"];
    let mut p = pos("xiangqi", fen);
    assert!(p.in_check());
    for m in cycle {
        play(&mut p, &[m]);
        assert!(p.in_check(), "{m} should give check: {}", p.fen());
    }
    let (third, fourth) = xiangqi_cycles("xiangqi", fen, &[], &cycle);
    assert_eq!(third, None);
    assert_eq!(fourth, draw(Termination::Repetition));
}

#[test]
fn xiangqi_chase_loses() {
    // Red's chariot attacks the unprotected black horse on every move (h4-g4 attacks g8,
    // g4-h4 attacks h10) while the horse shuttles g8-h10; the horse attacks nothing.
    let fen = "4k4/9/6n2/9/9/9/7R1/9/9/3K5 w - - 0 1";
    let cycle = ["h4g4", "g8h10", "g4h4", "h10g8"];
    let (third, fourth) = xiangqi_cycles("xiangqi", fen, &[], &cycle);
    assert_eq!(third, None);
    assert_eq!(fourth, win(Color::Black, Termination::Chase));
    let (third, fourth) = mirrored("xiangqi", fen, &[], &cycle);
    assert_eq!(third, None);
    assert_eq!(fourth, win(Color::White, Termination::Chase));
}

#[test]
fn xiangqi_attacking_a_protected_piece_is_no_chase() {
    // As above, but Black's chariot on i10 protects h10: the horse is attacked unprotected
    // only every other move, so no chase and an ordinary repetition.
    let fen = "4k3r/9/6n2/9/9/9/7R1/9/9/3K5 w - - 0 1";
    let cycle = ["h4g4", "g8h10", "g4h4", "h10g8"];
    let (third, fourth) = xiangqi_cycles("xiangqi", fen, &[], &cycle);
    assert_eq!(third, None);
    assert_eq!(fourth, draw(Termination::Repetition));
}

#[test]
fn xiangqi_protection_is_judged_after_the_capture() {
    // Protection means a recapture once the chaser has taken (the chaser gone from its square),
    // as Fairy-Stockfish's chased() decides. The black cannon on g1 "defends" g8 only through
    // the chasing chariot on g4 as its screen; after g4xg8 it cannot recapture, so the horse is
    // unprotected and Red's chariot chases it.
    let cycle = ["h4g4", "g8h10", "g4h4", "h10g8"];
    let fen = "4k4/9/6n2/9/9/9/7R1/9/3K5/r5c2 w - - 0 1";
    let (third, fourth) = xiangqi_cycles("xiangqi", fen, &[], &cycle);
    assert_eq!(third, None);
    assert_eq!(fourth, win(Color::Black, Termination::Chase));
    // A black chariot on g1, behind the chasing chariot on the g-file, recaptures on g8: the
    // horse is protected there, attacked unprotected only every other move, so no chase.
    let fen = "4k4/9/6n2/9/9/9/7R1/9/3K5/6r2 w - - 0 1";
    let (third, fourth) = xiangqi_cycles("xiangqi", fen, &[], &cycle);
    assert_eq!(third, None);
    assert_eq!(fourth, draw(Termination::Repetition));
}

#[test]
fn xiangqi_standing_attack_is_no_chase() {
    // Red's chariot on a1 attacks the unprotected horse on a10 all the time, but Red only
    // steps its general d1-d2-d1: no Red move attacks anything (docs/rules.md#repetition-xiangqi:
    // a side chases only if a piece was chased after every one of its moves; a general's move
    // never chases; FSF's chased() counts only the moved piece's and discovered attacks).
    // Black steps its general too: a plain draw.
    let fen = "n3k4/9/9/9/9/9/9/9/9/R2K5 w - - 0 1";
    let cycle = ["d1d2", "e10e9", "d2d1", "e9e10"];
    let (third, fourth) = xiangqi_cycles("xiangqi", fen, &[], &cycle);
    assert_eq!(third, None);
    assert_eq!(fourth, draw(Termination::Repetition));
}

#[test]
fn xiangqi_chase_by_a_soldier_does_not_count() {
    // A crossed soldier follows the unprotected cannon (d6-e6 attacks e7, e6-d6 attacks d7):
    // a chase by a soldier does not count, so this is an ordinary repetition.
    let fen = "3k5/9/9/4c4/3P5/9/9/9/9/5K3 w - - 0 1";
    let cycle = ["d6e6", "e7d7", "e6d6", "d7e7"];
    let (third, fourth) = xiangqi_cycles("xiangqi", fen, &[], &cycle);
    assert_eq!(third, None);
    assert_eq!(fourth, draw(Termination::Repetition));
}

#[test]
fn xiangqi_ordinary_repetition_draws_on_fourth_occurrence() {
    let fen = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";
    let cycle = ["b1c3", "b10c8", "c3b1", "c8b10"];
    let (third, fourth) = xiangqi_cycles("xiangqi", fen, &[], &cycle);
    assert_eq!(third, None);
    assert_eq!(fourth, draw(Termination::Repetition));
}

#[test]
fn oxeli_fourth_occurrence_move_is_forbidden() {
    let start = "ilexoeli/8/pppppppp/8/8/PPPPPPPP/8/ILEOXELI w - - 0 1";
    let mut p = pos("oxeli", start);
    let cycle = ["b1d2", "b8d7", "d2b1", "d7b8"];
    play_cycles(&mut p, &cycle, 2); // the start position has now occurred three times
    play(&mut p, &cycle[..3]);
    // d7b8 would make the start position's fourth occurrence.
    assert!(has(&p, "d7b8"), "perft legality keeps it");
    assert!(!game(&mut p).contains(&"d7b8".to_string()));
    assert_eq!(game(&mut p).len() + 1, legal(&p).len());
    assert_eq!(
        p.perft(1),
        legal(&p).len() as u64,
        "perft ignores repetition"
    );
    assert_eq!(p.outcome(), None);
    // One cycle earlier the same move (third occurrence) was allowed.
    let mut q = pos("oxeli", start);
    play_cycles(&mut q, &cycle, 1);
    play(&mut q, &cycle[..3]);
    assert!(game(&mut q).contains(&"d7b8".to_string()));
}

#[test]
fn oxeli_player_left_without_moves_by_the_ban_loses() {
    // Black's O shuttles a8-b8, its only moves (the rook on h7 holds rank 7, the knight on
    // d6 holds c8); White's O shuttles e1-f1. The start position occurs at plies 0, 4, 8;
    // at ply 11 Black's only move b8a8 would make its fourth occurrence.
    let mut p = pos("oxeli", "o7/7I/3L4/8/8/8/8/4O3 w - - 0 1");
    let cycle = ["e1f1", "a8b8", "f1e1", "b8a8"];
    play_cycles(&mut p, &cycle, 2);
    play(&mut p, &cycle[..3]);
    assert_eq!(legal(&p), vec!["b8a8".to_string()]);
    assert!(game(&mut p).is_empty());
    assert_eq!(p.perft(1), 1);
    assert_eq!(p.outcome(), win(Color::White, Termination::Repetition));
}

#[test]
fn oxeli_in_check_with_only_banned_evasions_loses_by_repetition() {
    // White's rook checks from a3 and b3 in turn; Black's O evades a8-b8-a8. At ply 11 Black is
    // in check and its one evasion, b8a8, would make a fourth occurrence: a loss by the
    // repetition ban, not a checkmate (an evasion exists).
    let mut p = pos("oxeli", "o1L5/8/3L4/8/8/1I6/8/2I3O1 w - - 0 1");
    let cycle = ["b3a3", "a8b8", "a3b3", "b8a8"];
    play_cycles(&mut p, &cycle, 2);
    play(&mut p, &cycle[..3]);
    assert!(p.in_check());
    assert_eq!(legal(&p), vec!["b8a8".to_string()]);
    assert!(game(&mut p).is_empty());
    assert_eq!(p.outcome(), win(Color::White, Termination::Repetition));
}

#[test]
fn perft_ignores_repetition_in_makruk_too() {
    // After a threefold repetition the position still has all its moves for perft.
    let mut p = pos(
        "makruk",
        "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - - 0 1",
    );
    let n = p.perft(2);
    play_cycles(&mut p, &["b1d2", "b8d7", "d2b1", "d7b8"], 2);
    assert!(p.outcome().is_some());
    assert_eq!(p.perft(2), n);
}
