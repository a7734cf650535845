//! Training targets: mirror augmentation (a mirrored sample is exactly the sample of the mirrored
//! position) and the value target mixed from the result and the search value.

use std::sync::Arc;
use tch::Device;
use varzero_eval_net::Encoding;
use varzero_rules::{Position, Variant};
use varzero_trainer::{Sample, Samples};

/// The FEN with every rank of the board read right to left (the rest unchanged).
fn mirror_fen(fen: &str) -> String {
    let (board, rest) = fen.split_once(' ').unwrap();
    let ranks: Vec<String> = board
        .split('/')
        .map(|rank| {
            let mut cells = Vec::new();
            for c in rank.chars() {
                match c.to_digit(10) {
                    Some(n) => cells.extend(std::iter::repeat_n(None, n as usize)),
                    None => cells.push(Some(c)),
                }
            }
            cells.reverse();
            let mut out = String::new();
            let mut empty = 0;
            for c in cells {
                match c {
                    None => empty += 1,
                    Some(c) => {
                        if empty > 0 {
                            out.push_str(&empty.to_string());
                            empty = 0;
                        }
                        out.push(c);
                    }
                }
            }
            if empty > 0 {
                out.push_str(&empty.to_string());
            }
            out
        })
        .collect();
    format!("{} {rest}", ranks.join("/"))
}

fn tensor_vec(t: &tch::Tensor) -> Vec<f32> {
    Vec::<f32>::try_from(t.flatten(0, -1)).unwrap()
}

#[test]
fn a_mirrored_sample_is_the_sample_of_the_mirrored_position() {
    let v = Variant::builtin("xiangqi").unwrap();
    assert!(v.mirror_symmetric());
    let enc = Encoding::new(&v);
    // An opening that leaves the board lopsided, Black to move (the view mirrors the ranks too).
    let mut pos = Position::start(&v);
    for m in ["h3e3", "h10g8", "h1g3", "i10h10", "b3b7"] {
        pos.play_uci(m).unwrap();
    }
    let fen = pos.fen();
    let mirrored = Position::from_fen(&v, &mirror_fen(&fen)).unwrap();
    assert_ne!(
        fen,
        mirrored.fen(),
        "the test position must not be its own mirror"
    );
    let (stm, mstm) = (pos.side_to_move(), mirrored.side_to_move());

    // A policy target over six of the moves, with distinct probabilities.
    let moves = pos.legal_moves();
    let picked: Vec<_> = moves.as_slice().iter().copied().take(6).collect();
    let probs = [0.3f32, 0.25, 0.2, 0.12, 0.08, 0.05];
    let sample = Sample {
        fen: fen.clone(),
        policy: picked
            .iter()
            .zip(probs)
            .map(|(&m, p)| (enc.policy_index(m, stm) as u32, p))
            .collect(),
        legal: moves
            .as_slice()
            .iter()
            .map(|&m| enc.policy_index(m, stm) as u32)
            .collect(),
        wdl: [0.2, 0.5, 0.3],
        source: 0,
        next: None,
    };
    // The same target written for the mirrored position, move by move: the mirrored position's
    // legal move with both squares mirrored.
    let mirror_move = |m: varzero_rules::Move| {
        let want = (enc.mirror_square(m.from()), enc.mirror_square(m.to()));
        let found = mirrored
            .legal_moves()
            .as_slice()
            .iter()
            .copied()
            .find(|q| (q.from(), q.to()) == want);
        found.unwrap_or_else(|| panic!("{} has no mirror among the mirrored moves", pos.uci(m)))
    };
    let mlegal = mirrored.legal_moves();
    assert_eq!(mlegal.len(), moves.len());
    let expected = Sample {
        fen: mirrored.fen(),
        policy: picked
            .iter()
            .zip(probs)
            .map(|(&m, p)| (enc.policy_index(mirror_move(m), mstm) as u32, p))
            .collect(),
        legal: mlegal
            .as_slice()
            .iter()
            .map(|&m| enc.policy_index(m, mstm) as u32)
            .collect(),
        wdl: sample.wdl,
        source: 0,
        next: None,
    };
    let samples = Samples {
        variant: Arc::clone(&v),
        items: vec![sample, expected],
    };
    let (x, pol, mask, wdl) = samples.batch(&enc, &[0, 1], &[true, false], Device::Cpu);
    let (x, pol, mask, wdl) = (
        tensor_vec(&x),
        tensor_vec(&pol),
        tensor_vec(&mask),
        tensor_vec(&wdl),
    );
    let (il, pl) = (enc.input_len(), enc.policy_len());
    assert_eq!(x[..il], x[il..], "planes");
    assert_eq!(pol[..pl], pol[pl..], "policy target");
    assert_eq!(mask[..pl], mask[pl..], "legal moves");
    assert_eq!(wdl[..3], wdl[3..], "value target");
    // Not vacuous: the mirrored target differs from the unmirrored one.
    let (plain, ..) = samples.batch(&enc, &[0], &[], Device::Cpu);
    assert_ne!(tensor_vec(&plain)[..], x[..il]);
    let (_, plain_pol, ..) = samples.batch(&enc, &[0], &[false], Device::Cpu);
    assert_ne!(tensor_vec(&plain_pol)[..], pol[..pl]);
}

/// `value_target_mix`: the value target mixes the game's result with the search's value (an
/// engine's score in a teacher's games).
#[test]
fn the_value_target_mixes_result_and_search_value() {
    use varzero_datasets::{write_shard, GameRecord, PositionRecord};
    let v = Variant::builtin("makruk").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let pos = Position::start(&v);
    let m = pos.legal_moves().as_slice()[0];
    let row = PositionRecord {
        game_id: 0,
        ply: 0,
        variant: v.name.clone(),
        rules_hash: format!("{:016x}", v.rules_hash),
        fen: pos.fen(),
        policy_moves: vec![pos.uci(m)],
        policy_probs: vec![1.0],
        result_wdl: [1.0, 0.0, 0.0],
        root_wdl: [0.2, 0.8, 0.0],
        visits: 1,
        full_search: true,
        evaluator: "teacher".into(),
    };
    let game = GameRecord {
        game_id: 0,
        variant: v.name.clone(),
        rules_hash: format!("{:016x}", v.rules_hash),
        result: "1-0".into(),
        termination: "checkmate".into(),
        plies: 1,
        seed: 0,
        evaluator: "teacher".into(),
        search: "{}".into(),
        start_fen: v.start_fen.clone(),
        moves: pos.uci(m),
    };
    write_shard(dir.path(), 0, "t", &[row], &[game]).unwrap();
    let dirs = [dir.path().to_path_buf()];
    for (mix, want) in [
        (0.0, [1.0, 0.0, 0.0]),
        (0.25, [0.8, 0.2, 0.0]),
        (1.0, [0.2, 0.8, 0.0]),
    ] {
        let (s, _) = varzero_trainer::load_window(&v, &dirs, 10, mix).unwrap();
        let got = s.items[0].wdl;
        for i in 0..3 {
            assert!(
                (got[i] - want[i]).abs() < 1e-6,
                "mix {mix}: {got:?} != {want:?}"
            );
        }
    }
}

/// Each window sample knows its data directory, through the window's cut (the oldest rows
/// dropped) and the sort by game and ply (game ids repeat across directories): what the batch
/// mix's self-play share draws on.
#[test]
fn window_samples_know_their_directory() {
    use varzero_datasets::{write_shard, GameRecord, PositionRecord};
    let v = Variant::builtin("makruk").unwrap();
    let start = Position::start(&v);
    let m = start.legal_moves().as_slice()[0];
    let mut after = start.clone();
    after.make(m);
    let row = |ply: u32, pos: &Position| PositionRecord {
        game_id: 0,
        ply,
        variant: v.name.clone(),
        rules_hash: format!("{:016x}", v.rules_hash),
        fen: pos.fen(),
        policy_moves: vec![],
        policy_probs: vec![],
        result_wdl: [0.0, 1.0, 0.0],
        root_wdl: [0.0, 1.0, 0.0],
        visits: 1,
        full_search: false,
        evaluator: "t".into(),
    };
    let game = |plies: u32| GameRecord {
        game_id: 0,
        variant: v.name.clone(),
        rules_hash: format!("{:016x}", v.rules_hash),
        result: "1/2-1/2".into(),
        termination: "adjudicated".into(),
        plies,
        seed: 0,
        evaluator: "t".into(),
        search: "{}".into(),
        start_fen: v.start_fen.clone(),
        moves: String::new(),
    };
    // Generation 0: three positions (the start position); generation 1: two (after a move).
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let rows_a: Vec<_> = (0..3).map(|p| row(p, &start)).collect();
    let rows_b: Vec<_> = (0..2).map(|p| row(p, &after)).collect();
    write_shard(a.path(), 0, "t", &rows_a, &[game(3)]).unwrap();
    write_shard(b.path(), 0, "t", &rows_b, &[game(2)]).unwrap();
    let dirs = [a.path().to_path_buf(), b.path().to_path_buf()];
    // A window of 4 drops generation 0's oldest position: 2 of each are left.
    let (s, _) = varzero_trainer::load_window(&v, &dirs, 4, 0.0).unwrap();
    assert_eq!(s.len(), 4);
    for it in &s.items {
        let want = if it.fen == start.fen() { 0 } else { 1 };
        assert_eq!(it.source, want, "{}", it.fen);
    }
    assert_eq!(s.items.iter().filter(|i| i.source == 0).count(), 2);
    // A share of 1/2 then draws 2 of every 4 from generation 1.
    let mix = varzero_trainer::BatchMix::new(&s, 0.5);
    assert!(mix.mixed());
    let mut rng = varzero_stats::Rng::new(1);
    let idx = mix.draw(&mut rng, 4);
    assert_eq!(idx.iter().filter(|&&i| s.items[i].source == 1).count(), 2);
}

/// The opponent-policy target (`[train.arch] opponent_policy`): each position's is its game's
/// next position's policy target, in that position's own view. Here a game of three plies in
/// one directory (the last searched cheaply: no target) and a game with the same id in another:
/// ply 0 gets ply 1's target and legal moves, move for move; ply 1 gets none (its next has no
/// target), nor does the last position, nor the other directory's game (ids repeat there).
#[test]
fn the_opponent_target_is_the_next_positions_policy_target() {
    use varzero_datasets::{write_shard, GameRecord, PositionRecord};
    let v = Variant::builtin("xiangqi").unwrap();
    let p0 = Position::start(&v);
    let m0 = p0.legal_moves().as_slice()[0];
    let mut p1 = p0.clone();
    p1.make(m0);
    let reply = p1.legal_moves().as_slice().to_vec();
    let mut p2 = p1.clone();
    p2.make(reply[0]);
    let row = |ply: u32, pos: &Position, policy: Vec<(String, f32)>| PositionRecord {
        game_id: 5,
        ply,
        variant: v.name.clone(),
        rules_hash: format!("{:016x}", v.rules_hash),
        fen: pos.fen(),
        full_search: !policy.is_empty(),
        policy_moves: policy.iter().map(|(m, _)| m.clone()).collect(),
        policy_probs: policy.iter().map(|&(_, p)| p).collect(),
        result_wdl: [0.0, 1.0, 0.0],
        root_wdl: [0.0, 1.0, 0.0],
        visits: 1,
        evaluator: "t".into(),
    };
    let game = |plies: u32| GameRecord {
        game_id: 5,
        variant: v.name.clone(),
        rules_hash: format!("{:016x}", v.rules_hash),
        result: "1/2-1/2".into(),
        termination: "adjudicated".into(),
        plies,
        seed: 0,
        evaluator: "t".into(),
        search: "{}".into(),
        start_fen: v.start_fen.clone(),
        moves: String::new(),
    };
    let target1 = vec![(p1.uci(reply[0]), 0.75), (p1.uci(reply[1]), 0.25)];
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let rows_a = vec![
        row(0, &p0, vec![(p0.uci(m0), 1.0)]),
        row(1, &p1, target1),
        row(2, &p2, vec![]),
    ];
    write_shard(a.path(), 0, "t", &rows_a, &[game(3)]).unwrap();
    // The other directory's game 5 has a ply 1 too; it must not become anyone's next.
    write_shard(
        b.path(),
        0,
        "t",
        &[row(1, &p1, vec![(p1.uci(reply[2]), 1.0)])],
        &[game(2)],
    )
    .unwrap();
    let dirs = [a.path().to_path_buf(), b.path().to_path_buf()];
    let (s, _) = varzero_trainer::load_window(&v, &dirs, 10, 0.0).unwrap();
    let find = |fen: &str, source: u32| {
        s.items
            .iter()
            .position(|i| i.fen == fen && i.source == source)
            .unwrap()
    };
    let (i0, i1, i2, j1) = (
        find(&p0.fen(), 0),
        find(&p1.fen(), 0),
        find(&p2.fen(), 0),
        find(&p1.fen(), 1),
    );
    assert_eq!(s.items[i0].next, Some(i1 as u32));
    assert_eq!(s.items[i1].next, None);
    assert_eq!(s.items[i2].next, None);
    assert_eq!(s.items[j1].next, None);

    // In a batch: row 0's opponent target is ply 1's own policy target and mask, also mirrored
    // (the Xiangqi start is its own mirror); row 1 (no next) is all zeros and all masked.
    let enc = Encoding::new(&v);
    for flip in [false, true] {
        let (opp, opp_mask) = s.batch_opponent(&enc, &[i0, i1], &[flip, false], Device::Cpu);
        let (_, pol1, mask1, _) = s.batch(&enc, &[i1], &[flip], Device::Cpu);
        let (opp, opp_mask) = (tensor_vec(&opp), tensor_vec(&opp_mask));
        let pl = enc.policy_len();
        assert_eq!(opp[..pl], tensor_vec(&pol1)[..], "flip {flip}");
        assert_eq!(opp_mask[..pl], tensor_vec(&mask1)[..], "flip {flip}");
        let want: f32 = 0.75;
        assert!(opp[..pl].contains(&want));
        assert!(opp[pl..].iter().all(|&x| x == 0.0));
        assert!(opp_mask[pl..].iter().all(|&x| x == -1e9));
    }
}
