//! The perft suite: every entry of `data/perft.txt` (reference counts from Fairy-Stockfish and,
//! for Oxeli, an independent generator; the file's comments name the source of each count, and
//! docs/rules.md#perft says what perft counts). Entries above `NODE_LIMIT` nodes are run by
//! `cargo test -- --ignored` (the deep suite, which `scripts/test` runs too).

use varzero_rules::{Position, Variant};

const NODE_LIMIT: u64 = 1_000_000;

struct Entry {
    id: String,
    variant: String,
    fen: String,
    perft: Vec<(u32, u64)>,
}

fn load(text: &str) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap().trim();
        let Some((key, rest)) = line.split_once(' ') else {
            continue;
        };
        let rest = rest.trim();
        match key {
            "id" => out.push(Entry {
                id: rest.into(),
                variant: String::new(),
                fen: String::new(),
                perft: vec![],
            }),
            "variant" => out.last_mut().unwrap().variant = rest.into(),
            "fen" => out.last_mut().unwrap().fen = rest.into(),
            "perft" => {
                let (d, n) = rest.split_once(' ').unwrap();
                out.last_mut()
                    .unwrap()
                    .perft
                    .push((d.parse().unwrap(), n.trim().parse().unwrap()));
            }
            _ => panic!("unknown line {line}"),
        }
    }
    out
}

fn run(deep: bool) {
    let entries = load(include_str!("data/perft.txt"));
    assert!(entries.len() >= 20, "suite has {} entries", entries.len());
    let mut failures = Vec::new();
    let mut checked = 0;
    for e in &entries {
        let v = Variant::builtin(&e.variant).unwrap_or_else(|err| panic!("{}: {err}", e.id));
        let mut pos =
            Position::from_fen(&v, &e.fen).unwrap_or_else(|err| panic!("{}: {err}", e.id));
        assert_eq!(pos.fen(), e.fen, "{}: FEN round trip", e.id);
        for &(depth, nodes) in &e.perft {
            if (nodes > NODE_LIMIT) != deep {
                continue;
            }
            let got = pos.perft(depth);
            checked += 1;
            if got != nodes {
                failures.push(format!(
                    "{} perft {depth}: expected {nodes}, got {got}",
                    e.id
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("{checked} perft counts match");
}

#[test]
fn perft_suite() {
    run(false);
}

#[test]
#[ignore = "deep entries (over 10^6 nodes): cargo test --release -- --ignored"]
fn perft_suite_deep() {
    run(true);
}
