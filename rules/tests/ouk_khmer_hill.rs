//! Ouk-Khmer (Hill's version), docs/rules.md#ouk-khmer-hill: the reconstruction's pieces move
//! as the rules describe them.

mod common;
use common::*;

// Black horses surround e5; White's king on a1, Black's on i9.
const SURROUNDED: &str = "8k/9/9/3nnn3/3n{}n3/3nnn3/9/9/K8 w - - 0 1";

#[test]
fn start_position() {
    // White: Boat Horse Elephant Official King Official Elephant Horse Boat; fish on rank 3.
    let p = pos(
        "ouk-khmer-hill",
        "rneokoenr/9/fffffffff/9/9/9/FFFFFFFFF/9/RNEOKOENR w - - 0 1",
    );
    assert_eq!(p.fen(), variant("ouk-khmer-hill").start_fen);
}

#[test]
fn elephant_captures_forward_and_sideways_only() {
    // Moves one step any way; captures forward, diagonally forward or sideways (mKcfKcsW).
    let p = pos("ouk-khmer-hill", &SURROUNDED.replace("{}", "E"));
    assert_eq!(
        moves_from(&p, "e5"),
        sorted(&["e5d5", "e5f5", "e5d6", "e5e6", "e5f6"])
    );
    let p = pos("ouk-khmer-hill", "8k/9/9/9/4E4/9/9/9/K8 w - - 0 1");
    assert_eq!(moves_from(&p, "e5").len(), 8);
}

#[test]
fn official_moves_diagonally_captures_diagonally_forward() {
    let p = pos("ouk-khmer-hill", &SURROUNDED.replace("{}", "O"));
    assert_eq!(moves_from(&p, "e5"), sorted(&["e5d6", "e5f6"]));
    let p = pos("ouk-khmer-hill", "8k/9/9/9/4O4/9/9/9/K8 w - - 0 1");
    assert_eq!(
        moves_from(&p, "e5"),
        sorted(&["e5d4", "e5d6", "e5f4", "e5f6"])
    );
}

#[test]
fn fish_moves_forward_and_promotes_across_the_centre() {
    // Rank 6 is across the centre line of the 9x9 board: the fish becomes a king-mover.
    let p = pos("ouk-khmer-hill", "8k/9/9/9/4F4/4F4/9/9/K8 w - - 0 1");
    assert_eq!(
        moves_from(&p, "e4"),
        Vec::<String>::new(),
        "blocked by its own fish"
    );
    let mut p = pos("ouk-khmer-hill", "8k/9/9/9/4F4/9/9/9/K8 w - - 0 1");
    let uci = moves_from(&p, "e5");
    assert_eq!(uci.len(), 1);
    play(&mut p, &[&uci[0]]);
    assert_eq!(
        moves_from(&p, "e6"),
        Vec::<String>::new(),
        "White moved; Black to move"
    );
    play(&mut p, &["i9h9"]);
    assert_eq!(
        moves_from(&p, "e6").len(),
        8,
        "the promoted fish moves as a king"
    );
    // It captures straight forward, never diagonally.
    let p = pos("ouk-khmer-hill", &SURROUNDED.replace("{}", "F"));
    let m = moves_from(&p, "e5");
    assert_eq!(m.len(), 1);
    assert!(m[0].starts_with("e5e6"));
    // Black's fish promotes on rank 4.
    let p = pos("ouk-khmer-hill", "8k/9/9/9/4f4/9/9/9/K8 b - - 0 1");
    let m = moves_from(&p, "e5");
    assert_eq!(m.len(), 1);
    assert!(m[0].starts_with("e5e4") && m[0].len() == 5, "{m:?}");
}
