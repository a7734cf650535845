//! Game-end bookkeeping (docs/rules.md#game-end): the self-play move limit
//! (docs/rules.md#move-limit) and its termination.

mod common;
use common::*;
use varzero_rules::Termination;

#[test]
fn move_limit_draws() {
    // (variant, FEN two plies before the limit, two quiet moves)
    let cases = [
        // 400 plies for 8x8 games: full move 200 with White to move is ply 398.
        (
            "makruk",
            "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - - 0 200",
            ["b1d2", "b8d7"],
        ),
        (
            "oxeli",
            "ilexoeli/8/pppppppp/8/8/PPPPPPPP/8/ILEOXELI w - - 0 200",
            ["b1d2", "b8d7"],
        ),
        // 300 for the xiangqi family: full move 150 with Red to move is ply 298.
        (
            "xiangqi",
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 150",
            ["b1c3", "b10c8"],
        ),
    ];
    for (name, fen, moves) in cases {
        let mut p = pos(name, fen);
        assert_eq!(p.outcome(), None, "{name}");
        play(&mut p, &moves[..1]);
        assert_eq!(p.outcome(), None, "{name}: one ply before the limit");
        play(&mut p, &moves[1..]);
        assert_eq!(p.outcome(), draw(Termination::MoveLimit), "{name}");
    }
}
