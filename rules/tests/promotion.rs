//! Makruk-family promotion (docs/rules.md#makruk, docs/rules.md#promotion): a pawn reaching
//! the sixth rank (Black: the third) becomes a met, and the move is written with the `m`
//! suffix.

mod common;
use common::*;
use varzero_rules::Color;

#[test]
fn white_pawn_promotes_on_rank_six_with_m_suffix() {
    for name in ["makruk", "ouk-chatrang", "ouk"] {
        let mut p = pos(name, "4k3/8/8/4P3/8/8/8/4K3 w - - 0 1");
        assert_eq!(moves_from(&p, "e5"), vec!["e5e6m".to_string()], "{name}");
        play(&mut p, &["e5e6m"]);
        let v = p.variant().clone();
        let e6 = v.size.parse_square("e6").unwrap();
        assert_eq!(
            p.piece_at(e6),
            Some((v.kind_by_letter('M').unwrap(), Color::White)),
            "{name}"
        );
        assert_eq!(field(&p.fen(), 0), "4k3/8/4M3/8/8/8/8/4K3", "{name}");
    }
    // The promotion left Black bare with no pawns: the pieces' honour count starts
    // (a met: 64 moves = 128 plies; count 2*3 = 6).
    let mut p = pos("makruk", "4k3/8/8/4P3/8/8/8/4K3 w - - 0 1");
    play(&mut p, &["e5e6m"]);
    assert_eq!(p.fen(), "4k3/8/4M3/8/8/8/8/4K3 b - 128 6 1");
}

#[test]
fn capture_promotion_and_black_promotion() {
    // docs/rules.md#promotion: Black's capture promotion g4xh3 is written g4h3m.
    let mut p = pos("makruk", "4k3/8/8/8/6p1/7P/8/4K3 b - - 0 1");
    assert_eq!(moves_from(&p, "g4"), sorted(&["g4g3m", "g4h3m"]));
    play(&mut p, &["g4h3m"]);
    // No pawn is left and White (to move) is bare: pieces' honour against a met.
    assert_eq!(p.fen(), "4k3/8/8/8/8/7m/8/4K3 w - 128 6 2");
    // White capture promotion.
    let p = pos("makruk", "4k3/8/2ss4/3P4/8/8/8/4K3 w - - 0 1");
    assert_eq!(moves_from(&p, "d5"), vec!["d5c6m".to_string()]);
}

#[test]
fn promotion_without_suffix_is_accepted_when_forced() {
    let mut a = pos("makruk", "4k3/8/8/4P3/8/8/8/4K3 w - - 0 1");
    let mut b = a.clone();
    let ma = a.play_uci("e5e6").unwrap();
    let mb = b.play_uci("e5e6m").unwrap();
    assert_eq!(ma, mb);
    assert_eq!(a.uci(ma), "e5e6m");
    // A wrong suffix is not a legal move.
    let p = pos("makruk", "4k3/8/8/4P3/8/8/8/4K3 w - - 0 1");
    assert!(p.parse_uci("e5e6r").is_err());
}

#[test]
fn no_promotion_below_rank_six() {
    let p = pos("makruk", "4k3/8/8/8/4P3/8/8/4K3 w - - 0 1");
    assert_eq!(moves_from(&p, "e4"), vec!["e4e5".to_string()]);
}
