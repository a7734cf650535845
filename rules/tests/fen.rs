//! FEN reading and writing (docs/rules.md#fen): round trips, one test per `ParseFenError`
//! variant, and no panic on malformed input.

mod common;
use common::*;
use varzero_rules::{ParseFenError, Position, Variant};

#[test]
fn start_fens_round_trip() {
    for name in Variant::builtin_names() {
        let v = variant(name);
        let p = Position::start(&v);
        assert_eq!(p.fen(), v.start_fen, "{name}");
        let q = pos_in(&v, &p.fen());
        assert_eq!(q.fen(), v.start_fen, "{name}");
    }
    // Start positions of docs/rules.md#makruk, #ouk-chatrang, #oxeli and #xiangqi.
    let expected = [
        (
            "makruk",
            "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - - 0 1",
        ),
        (
            "ouk-chatrang",
            "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w DEde - 0 1",
        ),
        (
            "kar-ouk",
            "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w DEde - 1+1 0 1",
        ),
        (
            "oxeli",
            "ilexoeli/8/pppppppp/8/8/PPPPPPPP/8/ILEOXELI w - - 0 1",
        ),
        (
            "xiangqi",
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
        ),
        (
            "elephant-chess",
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
        ),
    ];
    for (name, fen) in expected {
        assert_eq!(Position::start(&variant(name)).fen(), fen, "{name}");
    }
}

#[test]
fn midgame_fens_round_trip() {
    let cases = [
        (
            "makruk",
            "r4k1s/1n2m2r/p1p2N2/7p/5N2/1P1P3m/1S6/3KMSR1 b - - 1 24",
        ),
        (
            "ouk-chatrang",
            "2r1k1n1/4ms1r/2sppppp/1p6/6P1/1PPPPP1P/3S4/1N1KMSNR b Ee - 0 13",
        ),
        (
            "kar-ouk",
            "rn1m1knr/8/p1spsppp/2p1p3/6P1/PmNPPPMP/3K4/R1S2SNR w d - 1+1 8 14",
        ),
        (
            "xiangqi",
            "3k5/3rC1r2/6n1b/p1p1p3p/6p2/9/P1P1P1P1P/B7B/9/RN1AKA1N1 b - - 0 14",
        ),
        (
            "oxeli",
            "1le1ox1i/4li2/pE1p1ppp/4E3/6P1/PPPPP2P/3LX1eI/I2O2L1 b - - 0 13",
        ),
    ];
    for (name, fen) in cases {
        assert_eq!(pos(name, fen).fen(), fen, "{name}");
    }
}

#[test]
fn each_fen_error() {
    use ParseFenError as E;
    type Check = fn(&ParseFenError) -> bool;
    let cases: &[(&str, &str, Check)] = &[
        ("makruk", "", |e| matches!(e, E::Empty)),
        ("makruk", "   ", |e| matches!(e, E::Empty)),
        // Board: rank count, letters, rank lengths, characters.
        ("makruk", "8/8/8 w - - 0 1", |e| matches!(e, E::Board(_))),
        ("makruk", "4k3/8/8/8/8/8/8/8/4K3 w - - 0 1", |e| {
            matches!(e, E::Board(_))
        }),
        (
            "makruk",
            "rnsqksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - - 0 1",
            |e| matches!(e, E::Board(_)),
        ),
        ("makruk", "4k4/8/8/8/8/8/8/4K3 w - - 0 1", |e| {
            matches!(e, E::Board(_))
        }),
        ("makruk", "4k2/8/8/8/8/8/8/4K3 w - - 0 1", |e| {
            matches!(e, E::Board(_))
        }),
        ("makruk", "4k3/8/8/8/8/8/8/4K3R w - - 0 1", |e| {
            matches!(e, E::Board(_))
        }),
        ("makruk", "4k3/8/8/8/8/0/8/4K3 w - - 0 1", |e| {
            matches!(e, E::Board(_))
        }),
        ("makruk", "4k3/8/8/8/8/8/8/4K2? w - - 0 1", |e| {
            matches!(e, E::Board(_))
        }),
        // A letter of another variant (xiangqi's cannon) is not a makruk piece.
        ("makruk", "4k3/8/8/8/8/8/8/C3K3 w - - 0 1", |e| {
            matches!(e, E::Board(_))
        }),
        ("xiangqi", "4k4/9/9/9/9/9/9/9/4K4 w - - 0 1", |e| {
            matches!(e, E::Board(_))
        }),
        // Side to move.
        ("makruk", "4k3/8/8/8/8/8/8/4K3 x - - 0 1", |e| {
            matches!(e, E::SideToMove(_))
        }),
        ("makruk", "4k3/8/8/8/8/8/8/4K3 W - - 0 1", |e| {
            matches!(e, E::SideToMove(_))
        }),
        // Rights.
        ("ouk-chatrang", "4k3/8/8/8/8/8/8/3KM3 w D1 - 0 1", |e| {
            matches!(e, E::Rights(_))
        }),
        ("ouk-chatrang", "4k3/8/8/8/8/8/8/3KM3 w DZ - 0 1", |e| {
            matches!(e, E::Rights(_))
        }),
        ("ouk-chatrang", "4k3/8/8/8/8/8/8/3KM3 w * - 0 1", |e| {
            matches!(e, E::Rights(_))
        }),
        // Counting field: `-` or digits in counting variants, `-` or a square elsewhere.
        ("makruk", "4k3/8/8/8/8/8/8/4K3 w - e3 0 1", |e| {
            matches!(e, E::Counting(_))
        }),
        ("makruk", "4k3/8/8/8/8/8/8/4K3 w - 12a 0 1", |e| {
            matches!(e, E::Counting(_))
        }),
        ("makruk", "4k3/8/8/8/8/8/8/4K3 w - 99999 0 1", |e| {
            matches!(e, E::Counting(_))
        }),
        ("oxeli", "4o3/8/8/8/8/8/8/3O4 w - z9 0 1", |e| {
            matches!(e, E::Counting(_))
        }),
        ("xiangqi", "4k4/9/9/9/9/9/9/9/9/3K5 w - j1 0 1", |e| {
            matches!(e, E::Counting(_))
        }),
        // Check counts (kar-ouk).
        ("kar-ouk", "4k3/8/8/8/8/8/8/3KM3 w - - 1+x 0 1", |e| {
            matches!(e, E::Checks(_))
        }),
        ("kar-ouk", "4k3/8/8/8/8/8/8/3KM3 w - - 1+10 0 1", |e| {
            matches!(e, E::Checks(_))
        }),
        ("kar-ouk", "4k3/8/8/8/8/8/8/3KM3 w - - +1 0 1", |e| {
            matches!(e, E::Checks(_))
        }),
        // Clocks.
        ("makruk", "4k3/8/8/8/8/8/8/4K3 w - - x 1", |e| {
            matches!(e, E::HalfmoveClock(_))
        }),
        ("makruk", "4k3/8/8/8/8/8/8/4K3 w - - -1 1", |e| {
            matches!(e, E::HalfmoveClock(_))
        }),
        ("makruk", "4k3/8/8/8/8/8/8/4K3 w - 32 x 1", |e| {
            matches!(e, E::HalfmoveClock(_))
        }),
        // A check field where none belongs is not a half-move clock.
        ("makruk", "4k3/8/8/8/8/8/8/4K3 w - - 1+1 0 1", |e| {
            matches!(e, E::HalfmoveClock(_))
        }),
        ("makruk", "4k3/8/8/8/8/8/8/4K3 w - - 0 y", |e| {
            matches!(e, E::FullmoveNumber(_))
        }),
        ("makruk", "4k3/8/8/8/8/8/8/4K3 w - - 0 1.5", |e| {
            matches!(e, E::FullmoveNumber(_))
        }),
        // Trailing fields.
        ("makruk", "4k3/8/8/8/8/8/8/4K3 w - - 0 1 extra", |e| {
            matches!(e, E::TrailingFields(_))
        }),
        ("kar-ouk", "4k3/8/8/8/8/8/8/3KM3 w - - 1+1 0 1 1", |e| {
            matches!(e, E::TrailingFields(_))
        }),
        // Illegal positions: missing or extra king, the side not to move in check, a piece
        // outside the squares it may stand on.
        ("makruk", "8/8/8/8/8/8/8/4K3 w - - 0 1", |e| {
            matches!(e, E::Illegal(_))
        }),
        ("makruk", "4k3/8/8/8/8/8/8/8 w - - 0 1", |e| {
            matches!(e, E::Illegal(_))
        }),
        ("makruk", "4k3/8/8/8/8/8/8/3KK3 w - - 0 1", |e| {
            matches!(e, E::Illegal(_))
        }),
        ("makruk", "4k3/8/8/8/8/8/8/4RK2 w - - 0 1", |e| {
            matches!(e, E::Illegal(_))
        }),
        ("xiangqi", "4k4/9/9/9/9/9/9/9/9/K8 w - - 0 1", |e| {
            matches!(e, E::Illegal(_))
        }),
        ("xiangqi", "4k4/9/9/9/9/9/9/9/9/4K4 b - - 0 1", |e| {
            matches!(e, E::Illegal(_))
        }),
    ];
    let mut failures = Vec::new();
    for (name, fen, check) in cases {
        match Position::from_fen(&variant(name), fen) {
            Ok(p) => failures.push(format!("{name} '{fen}': accepted as {}", p.fen())),
            Err(e) if !check(&e) => failures.push(format!("{name} '{fen}': wrong error {e:?}")),
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn short_fens_take_defaults() {
    // FSF reads a FEN with missing trailing fields; so do we.
    let p = pos("makruk", "4k3/8/8/8/8/8/8/4K3 b");
    assert_eq!(p.fen(), "4k3/8/8/8/8/8/8/4K3 b - - 0 1");
    let p = pos("kar-ouk", "4k3/8/8/8/8/8/8/3KM3 w E");
    assert_eq!(p.fen(), "4k3/8/8/8/8/8/8/3KM3 w E - 1+1 0 1");
}

/// Parses, and if the FEN is accepted, uses the position: nothing may panic, and the FEN we
/// write must read back to itself.
fn exercise(v: &std::sync::Arc<Variant>, fen: &str) -> Result<(), String> {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let Ok(mut p) = Position::from_fen(v, fen) else {
            return Ok(());
        };
        let out = p.fen();
        match Position::from_fen(v, &out) {
            Ok(q) if q.fen() == out => {}
            Ok(q) => return Err(format!("'{out}' reads back as '{}'", q.fen())),
            Err(e) => return Err(format!("our own FEN '{out}' is rejected: {e}")),
        }
        let moves = p.legal_moves();
        let _ = p.outcome();
        if let Some(&m) = moves.iter().next() {
            p.make(m);
            let _ = p.fen();
            let _ = p.outcome();
            p.unmake();
        }
        let _ = p.perft(2);
        Ok(())
    }));
    match r {
        Ok(res) => res,
        Err(_) => Err("panicked".into()),
    }
}

#[test]
fn large_numbers_that_fit() {
    // The largest half-move clock a u16 holds, and the largest check counts (one digit).
    for (name, fen) in [
        ("makruk", "4k3/8/8/8/8/8/8/4K3 w - - 65535 1"),
        ("kar-ouk", "4k3/8/8/8/8/8/8/3KM3 w - - 9+9 0 1"),
    ] {
        assert_eq!(pos(name, fen).fen(), fen);
        exercise(&variant(name), fen).unwrap_or_else(|e| panic!("{name} '{fen}': {e}"));
    }
}

#[test]
fn huge_numbers_are_rejected_or_kept() {
    // A number that does not fit must be an error, never a panic, and an accepted full-move
    // number must be written back unchanged.
    let v = variant("makruk");
    for fen in [
        "4k3/8/8/8/8/8/8/4K3 w - - 0 4294967295",
        "4k3/8/8/8/8/8/8/4K3 b - - 0 3000000000",
        "4k3/8/8/8/8/8/8/4K3 b - - 0 2147483648",
        "4k3/8/8/8/8/8/8/99999999999 w - - 0 1",
        "4k3/8/8/8/8/8/8/4294967296K3 w - - 0 1",
    ] {
        let r = std::panic::catch_unwind(|| match Position::from_fen(&v, fen) {
            Err(_) => Ok(()),
            Ok(mut p) => {
                if p.fen() != fen {
                    return Err(format!("written back as '{}'", p.fen()));
                }
                let m = p.legal_moves().iter().next().copied().unwrap();
                p.make(m);
                let _ = p.fen();
                Ok(())
            }
        });
        match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("'{fen}': {e}"),
            Err(_) => panic!("'{fen}': panicked"),
        }
    }
}

#[test]
fn count_at_the_top_of_its_range_still_draws() {
    // The FEN is accepted (65535 fits the field); one more ply is past the limit of 32.
    let mut p = pos("makruk", "8/8/8/4k3/8/8/R7/4K3 b - 32 65535 1");
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        play(&mut p, &["e5e6"]);
        p.outcome()
    }));
    assert_eq!(r.ok().flatten(), draw(varzero_rules::Termination::Counting));
}

#[test]
fn mutated_fens_never_panic() {
    let seeds = [
        (
            "makruk",
            "r4k1s/1n2m2r/p1p2N2/7p/5N2/1P1P3m/1S6/3KMSR1 b - - 1 24",
        ),
        (
            "ouk-chatrang",
            "r2mk2r/8/p3n2M/2s4p/pP2S1s1/N3P3/8/R2KM2R b DEde - 1 28",
        ),
        (
            "kar-ouk",
            "r2mk3/7r/p7/P2pNsS1/4P2p/1P1P3P/1SK5/R3M2R w Ede - 1+1 1 22",
        ),
        ("makruk", "8/8/8/4k3/8/8/R7/4K3 b - 32 6 1"),
        (
            "xiangqi",
            "2bakabn1/9/9/p3p3p/2C3p2/4r1r2/P5P1P/4K3B/R8/5A1NR w - - 0 15",
        ),
        (
            "oxeli",
            "1lexo1l1/2i4P/pppppp1p/8/8/PPPPP1PP/3X1e2/ILEO2LI w - - 0 6",
        ),
        (
            "ouk-khmer-hill",
            &Position::start(&variant("ouk-khmer-hill")).fen(),
        ),
    ];
    let alphabet: Vec<char> = "pnbrqkmsoxeliacPNBRQKMSOXELIAC0123456789/ -+wbDEde"
        .chars()
        .collect();
    let mut rng = Lcg(2024);
    let mut failures = Vec::new();
    let mut accepted = 0;
    for (name, fen) in seeds {
        let v = variant(name);
        for _ in 0..1500 {
            let mut chars: Vec<char> = fen.chars().collect();
            for _ in 0..1 + rng.below(3) {
                let i = rng.below(chars.len().max(1));
                match rng.below(4) {
                    0 if !chars.is_empty() => {
                        chars.remove(i);
                    }
                    1 => chars.insert(i, alphabet[rng.below(alphabet.len())]),
                    _ if !chars.is_empty() => chars[i] = alphabet[rng.below(alphabet.len())],
                    _ => {}
                }
            }
            let s: String = chars.into_iter().collect();
            if Position::from_fen(&v, &s).is_ok() {
                accepted += 1;
            }
            if let Err(e) = exercise(&v, &s) {
                failures.push(format!("{name} '{s}': {e}"));
            }
        }
    }
    assert!(accepted > 100, "the mutations should leave some FENs valid");
    failures.truncate(20);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
