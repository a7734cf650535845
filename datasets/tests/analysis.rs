#![allow(clippy::needless_range_loop)] // boards are built square by square
//! The analysis: intervals and tests against hand-computed values, the logistic regression
//! recovering planted piece values (from features, and end to end from games tables whose
//! results were drawn from planted values), the per-group summary, JSON and charts.

use std::sync::Arc;
use varzero_datasets::analysis::*;
use varzero_datasets::{write_shard, GameRecord};
use varzero_rules::{Color, Position, Variant};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn wilson_interval_and_tests() {
    // k = 30, n = 100, z = 1.959964: p = 0.3, z² = 3.841459, denominator 1.0384146,
    // centre (0.3 + 0.0192073)/1.0384146 = 0.3074017,
    // half 1.959964/1.0384146 · √(0.3·0.7/100 + 3.841459/40000) = 1.887460 · 0.0468619 = 0.0884529
    // -> [0.218949, 0.395849].
    let w = wilson(30.0, 100.0, Z95);
    assert!(close(w.value, 0.3, 1e-12));
    assert!(close(w.lower, 0.218949, 1e-6), "{w:?}");
    assert!(close(w.upper, 0.395849, 1e-6), "{w:?}");
    // A score with draws (k = 57.5 of 100): [0.477105, 0.667346].
    let s = wilson(57.5, 100.0, Z95);
    assert!(
        close(s.lower, 0.477105, 1e-6) && close(s.upper, 0.667346, 1e-6),
        "{s:?}"
    );

    // Two proportions, 30/100 against 45/100: pooled p = 0.375,
    // se0 = √(0.375·0.625·(1/100 + 1/100)) = 0.0684653, z = -0.15/0.0684653 = -2.190890,
    // p = erfc(2.190890/√2) = 0.028460. Interval of the difference with the unpooled se
    // √(0.3·0.7/100 + 0.45·0.55/100) = 0.0676387: -0.15 ± 0.1325696 = [-0.282570, -0.017430].
    let d = two_proportion_z(30.0, 100.0, 45.0, 100.0);
    assert!(close(d.z, -2.190890, 1e-5), "{d:?}");
    assert!(close(d.p_value, 0.028460, 1e-5), "{d:?}");
    assert!(close(d.lower, -0.282570, 1e-5) && close(d.upper, -0.017430, 1e-5));
    assert!(d.significant(0.05));
    // Two means: 0.55 (var 0.2, n 300) against 0.5 (var 0.15, n 200):
    // se = √(0.2/300 + 0.15/200) = 0.0376386, z = 1.328422, p = 0.184039.
    let m = two_mean_z(0.55, 0.2, 300.0, 0.5, 0.15, 200.0);
    assert!(
        close(m.z, 1.328422, 1e-5) && close(m.p_value, 0.184039, 1e-5),
        "{m:?}"
    );
    assert!(!m.significant(0.05));
    // erfc at a few points (Abramowitz-Stegun tables): erfc(0) = 1, erfc(1) = 0.1572992.
    assert!(close(erfc(0.0), 1.0, 1e-7) && close(erfc(1.0), 0.157_299_2, 1e-7));
    assert!(close(erfc(-1.0), 1.842_700_8, 1e-7));
}

/// SplitMix64 for the tests' synthetic data.
struct Mix(u64);
impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A result (1, 1/2, 0) whose mean is `p`: draws take 0.6·min(p, 1-p), wins the rest of `p`.
fn draw_result(rng: &mut Mix, p: f64) -> f64 {
    let d = 0.6 * p.min(1.0 - p);
    let u = rng.uniform();
    if u < p - d / 2.0 {
        1.0
    } else if u < p + d / 2.0 {
        0.5
    } else {
        0.0
    }
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// Makruk's non-royal kinds in file order: M (met), S (khon), N (ma), R (ruea), P (bia).
const PLANTED_VALUES: [f64; 5] = [1.5, 2.5, 3.0, 5.0, 1.0];
const PAWN_LOGIT: f64 = 0.4;

#[test]
fn regression_recovers_planted_values_from_features() {
    let v = Variant::builtin("makruk").unwrap();
    let letters: Vec<char> = feature_columns(&v, true)
        .iter()
        .map(|c| v.pieces[c.kind].letter)
        .collect();
    assert_eq!(letters, vec!['M', 'S', 'N', 'R', 'P']);
    let mut rng = Mix(5);
    let (tempo, first) = (0.15, 0.1);
    let mut samples = Vec::new();
    for i in 0..30_000 {
        let mut x: Vec<f64> = (0..5).map(|_| rng.below(5) as f64 - 2.0).collect();
        x.push(1.0);
        x.push(if rng.below(2) == 0 { 1.0 } else { -1.0 });
        let z: f64 = (0..5)
            .map(|k| PAWN_LOGIT * PLANTED_VALUES[k] * x[k])
            .sum::<f64>()
            + tempo
            + first * x[6];
        let y = draw_result(&mut rng, sigmoid(z));
        samples.push(Sample { game: i / 3, x, y });
    }
    let opts = AnalysisOptions {
        bootstrap: 40,
        ..AnalysisOptions::default()
    };
    let pv = fit_piece_values(&v, &samples, &opts).unwrap();
    assert_eq!(pv.reference, 'P');
    for (p, want) in pv.values.iter().zip(PLANTED_VALUES) {
        assert!(
            close(p.value, want, 0.08 * want),
            "{}: {:.3} for {want}",
            p.letter,
            p.value
        );
        assert!(p.lower <= p.value && p.value <= p.upper, "{p:?}");
        assert!(p.upper - p.lower < 0.3 * want, "{p:?}");
    }
    assert!(
        close(pv.side_to_move.value, tempo, 0.05),
        "{:?}",
        pv.side_to_move
    );
    assert!(
        close(pv.first_player.value, first, 0.05),
        "{:?}",
        pv.first_player
    );
}

/// A random Makruk position with White to move, neither king in check, and the game not over.
fn random_position(v: &Arc<Variant>, rng: &mut Mix) -> Position {
    loop {
        let mut board = [[None::<char>; 8]; 8]; // [rank][file]
        let mut place = |c: char, ranks: std::ops::Range<usize>, rng: &mut Mix| loop {
            let r = ranks.start + rng.below((ranks.end - ranks.start) as u64) as usize;
            let f = rng.below(8) as usize;
            if board[r][f].is_none() {
                board[r][f] = Some(c);
                break;
            }
        };
        place('K', 0..8, rng);
        place('k', 0..8, rng);
        for (letter, max) in [('M', 2), ('S', 2), ('N', 2), ('R', 2), ('P', 6)] {
            for white in [true, false] {
                let n = rng.below(max + 1);
                for _ in 0..n {
                    let c = if white {
                        letter
                    } else {
                        letter.to_ascii_lowercase()
                    };
                    // Pawns outside their promotion zones (White's a6:h8, Black's a1:h3).
                    let ranks = match (letter, white) {
                        ('P', true) => 1..5,
                        ('P', false) => 3..7,
                        _ => 0..8,
                    };
                    place(c, ranks, rng);
                }
            }
        }
        let mut fen = String::new();
        for r in (0..8).rev() {
            let mut empty = 0;
            for f in 0..8 {
                match board[r][f] {
                    None => empty += 1,
                    Some(c) => {
                        if empty > 0 {
                            fen.push_str(&empty.to_string());
                            empty = 0;
                        }
                        fen.push(c);
                    }
                }
            }
            if empty > 0 {
                fen.push_str(&empty.to_string());
            }
            if r > 0 {
                fen.push('/');
            }
        }
        fen.push_str(" w - - 0 1");
        let Ok(mut pos) = Position::from_fen(v, &fen) else {
            continue;
        };
        if pos.in_check() || pos.outcome().is_some() {
            continue;
        }
        // Black must not be in check either (a position White could capture the king in).
        let mut probe = pos.clone();
        let quiet: Vec<_> = probe
            .game_moves()
            .iter()
            .copied()
            .filter(|m| probe.piece_at(m.to_sq()).is_none())
            .collect();
        if quiet.is_empty() {
            continue;
        }
        probe.make(quiet[0]);
        if probe.in_check() {
            continue;
        }
        return pos;
    }
}

/// Two quiet moves (no capture, no check given) from `pos`, or None.
fn two_quiet_moves(pos: &Position, rng: &mut Mix) -> Option<Vec<String>> {
    let mut p = pos.clone();
    let mut out = Vec::new();
    for _ in 0..2 {
        if p.in_check() || p.outcome().is_some() {
            return None;
        }
        let quiet: Vec<_> = p
            .game_moves()
            .iter()
            .copied()
            .filter(|m| p.piece_at(m.to_sq()).is_none())
            .collect();
        if quiet.is_empty() {
            return None;
        }
        let m = quiet[rng.below(quiet.len() as u64) as usize];
        out.push(p.uci(m));
        p.make(m);
    }
    (!p.in_check()).then_some(out)
}

#[test]
fn analysis_of_games_tables_recovers_planted_values() {
    let v = Variant::builtin("makruk").unwrap();
    let kinds: Vec<usize> = feature_columns(&v, true).iter().map(|c| c.kind).collect();
    let hash = format!("{:016x}", v.rules_hash);
    let mut rng = Mix(11);
    let mut games = Vec::new();
    while games.len() < 4000 {
        let pos = random_position(&v, &mut rng);
        let Some(moves) = two_quiet_moves(&pos, &mut rng) else {
            continue;
        };
        // White's expected score is logistic in the planted material balance (+0.1 for the
        // first player, who is White here).
        let z: f64 = kinds
            .iter()
            .zip(PLANTED_VALUES)
            .map(|(&k, val)| {
                PAWN_LOGIT
                    * val
                    * (pos.count(k, Color::White) as f64 - pos.count(k, Color::Black) as f64)
            })
            .sum::<f64>()
            + 0.1;
        let y = draw_result(&mut rng, sigmoid(z));
        let (result, termination) = match y {
            1.0 => ("1-0", "checkmate"),
            0.0 => ("0-1", "checkmate"),
            _ => ("1/2-1/2", "counting"),
        };
        games.push(GameRecord {
            game_id: games.len() as u64,
            variant: "makruk".into(),
            rules_hash: hash.clone(),
            result: result.into(),
            termination: termination.into(),
            plies: 2 + rng.below(100) as u32,
            seed: 0,
            evaluator: "synthetic".into(),
            search: "{}".into(),
            start_fen: pos.fen(),
            moves: moves.join(" "),
        });
    }
    let dir = tempfile::tempdir().unwrap();
    write_shard(dir.path(), 0, "a", &[], &games[..2000]).unwrap();
    write_shard(dir.path(), 1, "b", &[], &games[2000..]).unwrap();
    let (lf, skipped) = scan_game_dirs(&[dir.path().to_path_buf()]).unwrap();
    assert!(skipped.is_empty());
    let opts = AnalysisOptions {
        min_ply: 0,
        bootstrap: 30,
        ..AnalysisOptions::default()
    };
    let reports = analyze(lf.unwrap(), &VariantLookup::new(), &opts).unwrap();
    assert_eq!(reports.len(), 1);
    let r = &reports[0];
    assert_eq!(
        (r.variant.as_str(), r.rules_hash.as_str()),
        ("makruk", hash.as_str())
    );
    assert_eq!(r.games, 4000);
    assert_eq!(r.first_wins + r.draws + r.second_wins, 4000);
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    let pv = r.piece_values.as_ref().expect("piece values");
    assert_eq!(pv.samples, 8000);
    for (p, want) in pv.values.iter().zip(PLANTED_VALUES) {
        assert!(
            close(p.value, want, 0.15 * want),
            "{}: {:.3} [{:.3}, {:.3}] for {want}",
            p.letter,
            p.value,
            p.lower,
            p.upper
        );
    }
    // Being first (White) is worth the planted 0.1, having the move nothing.
    assert!(
        close(pv.first_player.value, 0.1, 0.06),
        "{:?}",
        pv.first_player
    );
    assert!(
        close(pv.side_to_move.value, 0.0, 0.06),
        "{:?}",
        pv.side_to_move
    );
    // The JSON form maps FEN letters to values.
    let j = r.to_json();
    assert_eq!(j["games"], 4000);
    assert!(j["draw_rate"].as_f64().unwrap() > 0.0);
    assert!(j["first_player_score"].as_f64().is_some());
    assert!(close(j["piece_values"]["P"].as_f64().unwrap(), 1.0, 1e-12));
    assert!(j["piece_values"]["R"].as_f64().unwrap() > 3.0);
}

fn game(id: u64, result: &str, termination: &str, plies: u32, fen: &str) -> GameRecord {
    GameRecord {
        game_id: id,
        variant: "makruk".into(),
        rules_hash: "feedfacefeedface".into(),
        result: result.into(),
        termination: termination.into(),
        plies,
        seed: 0,
        evaluator: "test".into(),
        search: "{}".into(),
        start_fen: fen.into(),
        moves: String::new(),
    }
}

#[test]
fn counts_rates_terminations_and_lengths_per_group() {
    let v = Variant::builtin("makruk").unwrap();
    let start = v.start_fen.clone();
    let black_first = "rnsmksnr/8/pppppppp/8/4P3/PPPP1PPP/8/RNSKMSNR b - - 0 1";
    let mut games = vec![
        game(0, "1-0", "checkmate", 40, &start),
        game(1, "1-0", "checkmate", 60, &start),
        game(2, "1/2-1/2", "counting", 100, &start),
        game(3, "0-1", "checkmate", 80, &start),
        // Black moved first here: a 0-1 is a first-player win.
        game(4, "0-1", "checkmate", 20, black_first),
    ];
    let mut other = game(5, "1/2-1/2", "repetition", 30, &start);
    other.rules_hash = "0123456789abcdef".into();
    games.push(other);
    let dir = tempfile::tempdir().unwrap();
    write_shard(dir.path(), 0, "t", &[], &games).unwrap();
    let (lf, _) = scan_game_dirs(&[dir.path().to_path_buf()]).unwrap();
    let reports = analyze(
        lf.unwrap(),
        &VariantLookup::new(),
        &AnalysisOptions::default(),
    )
    .unwrap();
    assert_eq!(reports.len(), 2, "one group per rules hash");
    let r = reports
        .iter()
        .find(|r| r.rules_hash == "feedfacefeedface")
        .unwrap();
    assert_eq!(r.games, 5);
    assert_eq!((r.first_wins, r.draws, r.second_wins), (3, 1, 1));
    assert!(close(r.draw_rate.value, 0.2, 1e-12));
    assert!(close(r.first_player_score.value, 3.5 / 5.0, 1e-12));
    assert!(close(r.decisive_rate.value, 0.8, 1e-12));
    let w = wilson(1.0, 5.0, Z95);
    assert_eq!((r.draw_rate.lower, r.draw_rate.upper), (w.lower, w.upper));
    let cm = r
        .terminations
        .iter()
        .find(|t| t.termination == "checkmate")
        .unwrap();
    assert_eq!((cm.games, cm.first_wins, cm.second_wins), (4, 3, 1));
    assert_eq!(
        r.terminations[0].termination, "checkmate",
        "most frequent first"
    );
    assert_eq!((r.length.min, r.length.max), (20, 100));
    assert!(close(r.length.mean, 60.0, 1e-9) && close(r.length.median, 60.0, 1e-9));
    assert_eq!(r.length.histogram.iter().map(|b| b.2).sum::<u64>(), 5);
    // The rules hash is not a known definition: replayed with the built-in makruk, noted.
    assert!(
        r.notes.iter().any(|n| n.contains("feedfacefeedface")),
        "{:?}",
        r.notes
    );
    let text = format_reports(&reports);
    assert!(text.contains("draw rate") && text.contains("checkmate"));

    // Charts: SVG and PNG files for the groups.
    let plots_dir = dir.path().join("plots");
    let files =
        plots::write_plots(&plots_dir, &reports, None, plots::PlotFormats::default()).unwrap();
    assert!(files.iter().any(|f| f.ends_with("rates.svg")));
    assert!(files.iter().any(|f| f.ends_with("rates.png")));
    for f in &files {
        assert!(std::fs::metadata(f).unwrap().len() > 100, "{}", f.display());
    }
}

#[test]
fn variant_files_are_found_by_rules_hash() {
    let v = Variant::builtin("oxeli")
        .unwrap()
        .with_overrides(&["stalemate=draw".to_string()])
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The file the match and study commands write: the merged configuration as TOML.
    std::fs::write(
        dir.path().join("variant.toml"),
        toml::to_string(&v.config).unwrap(),
    )
    .unwrap();
    let mut lookup = VariantLookup::new();
    lookup.add_dir(dir.path()).unwrap();
    let hash = format!("{:016x}", v.rules_hash);
    let (found, note) = lookup.find("oxeli", &hash);
    assert!(note.is_none(), "{note:?}");
    assert_eq!(found.unwrap().rules_hash, v.rules_hash);
    // The built-in oxeli is found by its own hash.
    let o = Variant::builtin("oxeli").unwrap();
    let (found, note) = lookup.find("oxeli", &format!("{:016x}", o.rules_hash));
    assert!(note.is_none());
    assert_eq!(found.unwrap().rules_hash, o.rules_hash);
    // Reference pieces: the promoting piece, or the lowest valued when none promotes.
    let (k, _) = reference_kind(&o).unwrap();
    assert_eq!(o.pieces[k].letter, 'P');
    let x = Variant::builtin("xiangqi").unwrap();
    let (k, rule) = reference_kind(&x).unwrap();
    assert!(rule.contains("lowest"), "{rule}");
    assert!(!x.pieces[k].royal);
}

/// A Makruk game that takes a rook at once and then shuffles kings for six plies.
fn capture_then_quiet(result: &str) -> GameRow {
    GameRow {
        variant: "makruk".into(),
        rules_hash: String::new(),
        result: result.into(),
        termination: "adjudicated".into(),
        plies: 7,
        start_fen: "4k3/8/8/3r4/8/8/8/3RK3 w - - 0 1".into(),
        moves: "d1d5 e8f7 e1e2 f7e8 e2e1 e8f7 e1e2".into(),
    }
}

#[test]
fn samples_are_stable_positions_of_the_chosen_games() {
    let v = Variant::builtin("makruk").unwrap();
    let games = [capture_then_quiet("1-0"), capture_then_quiet("1/2-1/2")];
    let count = |stable_plies: u32, decisive_only: bool| {
        let opts = AnalysisOptions {
            min_ply: 0,
            samples_per_game: 100,
            stable_plies,
            decisive_only,
            ..AnalysisOptions::default()
        };
        let (s, bad) = sample_positions(&v, &games, &opts);
        assert_eq!(bad, 0);
        s.len()
    };
    // Plies 1 to 6 of each game (ply 0's move is the capture).
    assert_eq!(count(0, false), 12);
    // At least 4 plies after the capture: plies 5 and 6.
    assert_eq!(count(4, false), 4);
    assert_eq!(count(4, true), 2, "the drawn game is left out");
}

#[test]
fn reference_sets_are_read_and_shown_in_the_fit_s_unit() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/piece-values");
    let consensus = ReferenceSet::load(&root.join("xiangqi-consensus.toml")).unwrap();
    assert!(consensus.applies_to("xiangqi") && !consensus.applies_to("makruk"));
    assert_eq!(consensus.value_in("R", "P"), Some(9.0));
    assert_eq!(consensus.value_in("c", "p"), Some(4.5));
    // A soldier across the river is a piece of its own (Lau counts it 2); the pooled label "P"
    // does not match it, nor does another region.
    assert_eq!(consensus.value_in("P@across-river", "P"), Some(2.0));
    assert_eq!(consensus.value_in("p@own-half", "P"), None);
    // Centipawns become soldiers: Fairy-Stockfish's chariot is 1328 / 235.
    let fsf = ReferenceSet::load(&root.join("xiangqi-fairy-stockfish.toml")).unwrap();
    assert!((fsf.value_in("R", "P").unwrap() - 1328.0 / 235.0).abs() < 1e-9);
    let makruk = ReferenceSet::load(&root.join("makruk-fairy-stockfish.toml")).unwrap();
    assert!(makruk.applies_to("makruk"));
    assert_eq!(makruk.value_in("K", "P"), None, "no king value");
    // A bad file is named with what is wrong.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "name='x'\nsource='y'\nvariant='xiangqi'\n[values]\nr = -1\n",
    )
    .unwrap();
    let e = ReferenceSet::load(&bad).unwrap_err().to_string();
    assert!(e.contains("bad.toml") && e.contains("values.r"), "{e}");
    for key in ["pp", "\"p@\"", "\"@river\"", "\"p river\""] {
        std::fs::write(
            &bad,
            format!("name='x'\nsource='y'\nvariant='xiangqi'\n[values]\n{key} = 1\n"),
        )
        .unwrap();
        let e = ReferenceSet::load(&bad).unwrap_err().to_string();
        assert!(
            e.contains("bad.toml") && e.contains("letter@region"),
            "{key}: {e}"
        );
    }
}

/// The Xiangqi soldier moves sideways only across the river: the fit counts it there apart.
#[test]
fn a_piece_with_region_moves_is_counted_inside_and_outside_apart() {
    let v = Variant::builtin("xiangqi").unwrap();
    let cols = feature_columns(&v, true);
    let labels: Vec<String> = cols
        .iter()
        .map(|c| match &c.region {
            Some(r) => format!("{}@{r}", v.pieces[c.kind].letter),
            None => v.pieces[c.kind].letter.to_string(),
        })
        .collect();
    assert_eq!(labels, ["A", "B", "R", "N", "C", "P", "P@across-river"]);
    assert_eq!(
        feature_columns(&v, false).len(),
        6,
        "pooled: one soldier column"
    );
    // White: three soldiers at home (a4, c4, i4), two across (e6, g6); Black: four at home
    // (a7, c7, e7, i7), one across (c5). Black to move: Black's counts minus White's.
    let fen = "rnbakabnr/9/1c5c1/p1p1p3p/4P1P2/2p6/P1P5P/1C5C1/9/RNBAKABNR b - - 0 1";
    let pos = Position::from_fen(&v, fen).unwrap();
    let x = features(&pos, &cols, Color::White);
    assert_eq!(&x[..7], &[0.0, 0.0, 0.0, 0.0, 0.0, 4.0 - 3.0, 1.0 - 2.0]);
    assert_eq!(
        x[7..],
        [1.0, -1.0],
        "constant, then Black is not the first player"
    );
    let pooled = features(&pos, &feature_columns(&v, false), Color::White);
    assert_eq!(pooled[5], 5.0 - 5.0);
}

#[test]
fn match_directories_named_after_players_are_analysed_together() {
    // Two matches: both number their games from 0 with seed 0, and two engines that play alike
    // give the same moves; the players, recorded in `search`, tell the games apart. The
    // directory names hold `=`, which is a name, not a hive partition.
    let tmp = tempfile::tempdir().unwrap();
    let fen = Position::start(&Variant::builtin("makruk").unwrap()).fen();
    let mut dirs = Vec::new();
    for opponent in ["fsf@nodes=1", "fsf@nodes=10"] {
        let d = tmp
            .path()
            .join(format!("{opponent}-1-b39b4b--material@400-5f28bc"));
        let mut g = game(0, "1-0", "checkmate", 40, &fen);
        g.search = format!("{{\"white\":\"{opponent}\",\"black\":\"material@400\"}}");
        write_shard(&d, 0, "m", &[], &[g]).unwrap();
        dirs.push(d);
    }
    let (lf, skipped) = scan_game_dirs(&dirs).unwrap();
    assert!(skipped.is_empty());
    let reports = analyze(
        lf.unwrap(),
        &VariantLookup::new(),
        &AnalysisOptions::default(),
    )
    .unwrap();
    assert_eq!(reports[0].games, 2);
    // The same directory twice is still refused.
    assert!(scan_game_dirs(&[dirs[0].clone(), dirs[0].clone()]).is_err());
}
