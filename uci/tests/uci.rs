//! UCI sessions with our engine, in process: the handshake with Fairy-Stockfish's variant
//! names, positions and searches under each kind of limit, `stop` and `isready` while thinking,
//! variant files through `VariantPath`, and bad commands answered by `info string` lines.

use std::io::{BufReader, Read, Write};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use varzero_rules::{GameResult, Position, Variant};
use varzero_search::SearchConfig;
use varzero_search::{BuiltinEvaluators, Evaluator, EvaluatorResolver, ResolveError};
use varzero_uci::{Output, UciEngine};

/// Input fed line by line from the test.
struct ChanInput {
    rx: Receiver<String>,
    buf: Vec<u8>,
    pos: usize,
}

impl Read for ChanInput {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.buf.len() {
            match self.rx.recv() {
                Ok(line) => {
                    self.buf = format!("{line}\n").into_bytes();
                    self.pos = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[derive(Clone, Default)]
struct SharedOut(Arc<Mutex<Vec<u8>>>);

impl Write for SharedOut {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Session {
    tx: Option<Sender<String>>,
    out: SharedOut,
    seen: usize,
    handle: Option<JoinHandle<()>>,
}

impl Session {
    fn new() -> Session {
        Session::with_resolver(Arc::new(BuiltinEvaluators))
    }

    fn with_resolver(resolver: Arc<dyn EvaluatorResolver>) -> Session {
        let (tx, rx) = mpsc::channel();
        let out = SharedOut::default();
        let o: Output = Arc::new(Mutex::new(Box::new(out.clone())));
        let handle = std::thread::spawn(move || {
            let mut e = UciEngine::new(
                o,
                resolver,
                Variant::builtin("makruk").unwrap(),
                "material",
                SearchConfig::default(),
            );
            e.run(BufReader::new(ChanInput {
                rx,
                buf: Vec::new(),
                pos: 0,
            }));
        });
        Session {
            tx: Some(tx),
            out,
            seen: 0,
            handle: Some(handle),
        }
    }

    /// The XBoard handshake, then a new game of `variant`.
    fn xboard_game(&mut self, variant: &str) {
        self.send("xboard");
        self.send("protover 2");
        self.expect_prefix("feature done=1");
        self.send("new");
        self.send(&format!("variant {variant}"));
    }

    fn send(&self, line: &str) {
        self.tx.as_ref().unwrap().send(line.to_string()).unwrap();
    }

    fn lines(&self) -> Vec<String> {
        String::from_utf8(self.out.0.lock().unwrap().clone())
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    }

    /// Waits for a new line matching `pred`; returns it (lines before it are consumed).
    fn expect(&mut self, what: &str, pred: impl Fn(&str) -> bool, secs: u64) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let lines = self.lines();
            for (i, l) in lines.iter().enumerate().skip(self.seen) {
                if pred(l) {
                    self.seen = i + 1;
                    return l.clone();
                }
            }
            if Instant::now() > deadline {
                panic!("no {what}; output:\n{}", lines.join("\n"));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn expect_prefix(&mut self, prefix: &str) -> String {
        let p = prefix.to_string();
        self.expect(prefix, move |l| l.starts_with(&p), 30)
    }

    /// New lines since the last expectation.
    fn new_lines(&self) -> Vec<String> {
        self.lines()[self.seen..].to_vec()
    }

    fn quit(mut self) {
        self.send("quit");
        self.handle.take().unwrap().join().unwrap();
    }
}

fn bestmove_is_legal(variant: &str, fen: Option<&str>, moves: &[&str], line: &str) -> String {
    let v = Variant::builtin(variant).unwrap();
    let mut pos = match fen {
        Some(f) => Position::from_fen(&v, f).unwrap(),
        None => Position::start(&v),
    };
    for m in moves {
        pos.play_uci(m).unwrap();
    }
    let best = line.split_whitespace().nth(1).expect("a move").to_string();
    let m = pos
        .parse_uci(&best)
        .unwrap_or_else(|e| panic!("{line}: {e}"));
    assert!(pos.game_moves().contains(m), "{line}: not a game move");
    best
}

#[test]
fn handshake_lists_fairy_stockfish_variant_names() {
    let mut s = Session::new();
    s.send("uci");
    let id = s.expect_prefix("id name");
    assert!(id.contains("varzero"));
    let opt = s.expect_prefix("option name UCI_Variant");
    for v in [
        "makruk",
        "cambodian",
        "karouk",
        "xiangqi",
        "oxeli",
        "ouk-chatrang",
    ] {
        assert!(opt.contains(&format!(" var {v}")), "{opt}");
    }
    s.expect_prefix("option name VariantPath");
    s.expect_prefix("uciok");
    s.send("isready");
    s.expect_prefix("readyok");
    s.quit();
}

#[test]
fn searches_under_each_limit() {
    let mut s = Session::new();
    s.send("ucinewgame");
    s.send("position startpos moves e3e4 e6e5");
    s.send("go nodes 300");
    let best = s.expect_prefix("bestmove");
    bestmove_is_legal("makruk", None, &["e3e4", "e6e5"], &best);
    // The info line before it: depth, nodes, nps, score, pv.
    let infos: Vec<String> = s
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("info depth"))
        .collect();
    let last = infos.last().expect("an info line");
    for key in [
        " seldepth ",
        " nodes ",
        " nps ",
        " time ",
        " score cp ",
        " pv ",
    ] {
        assert!(last.contains(key), "{last}");
    }
    let nodes: u64 = last
        .split_whitespace()
        .skip_while(|t| *t != "nodes")
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(nodes >= 300, "{last}");

    // movetime: answers in about that time.
    s.send("position startpos");
    let t = Instant::now();
    s.send("go movetime 300");
    let best = s.expect_prefix("bestmove");
    assert!(t.elapsed() < Duration::from_secs(5));
    bestmove_is_legal("makruk", None, &[], &best);

    // Clock times (Black to move: btime counts).
    s.send("position startpos moves a3a4");
    s.send("go wtime 2000 btime 2000 winc 10 binc 10");
    let best = s.expect_prefix("bestmove");
    bestmove_is_legal("makruk", None, &["a3a4"], &best);

    // WDL when asked for.
    s.send("setoption name UCI_ShowWDL value true");
    s.send("position startpos");
    s.send("go nodes 50");
    s.expect(
        "an info line with wdl",
        |l| l.starts_with("info") && l.contains(" wdl "),
        30,
    );
    s.expect_prefix("bestmove");
    s.quit();
}

#[test]
fn infinite_search_answers_isready_and_stops_on_stop() {
    let mut s = Session::new();
    s.send("position startpos");
    s.send("go infinite");
    std::thread::sleep(Duration::from_millis(300));
    s.send("isready");
    s.expect_prefix("readyok");
    assert!(
        !s.new_lines().iter().any(|l| l.starts_with("bestmove")),
        "no bestmove before stop"
    );
    // A command that would change the position is refused while searching.
    s.send("position startpos moves e3e4");
    s.expect(
        "an error for position while searching",
        |l| l.starts_with("info string error") && l.contains("while searching"),
        10,
    );
    s.send("stop");
    let best = s.expect_prefix("bestmove");
    bestmove_is_legal("makruk", None, &[], &best);
    s.quit();
}

#[test]
fn stop_at_once_still_answers_a_legal_move() {
    let mut s = Session::new();
    s.send("position startpos moves e3e4");
    s.send("go infinite");
    s.send("stop");
    let best = s.expect_prefix("bestmove");
    bestmove_is_legal("makruk", None, &["e3e4"], &best);
    s.quit();
}

#[test]
fn variants_by_fairy_stockfish_names_and_files() {
    let mut s = Session::new();
    // Cambodian (ouk-chatrang) by Fairy-Stockfish's name.
    s.send("setoption name UCI_Variant value cambodian");
    s.send("position startpos");
    s.send("d");
    let fen = s.expect_prefix("info string Fen:");
    let ouk = Variant::builtin("ouk-chatrang").unwrap();
    assert!(fen.ends_with(&ouk.start_fen), "{fen}");
    s.send("go nodes 100");
    let best = s.expect_prefix("bestmove");
    bestmove_is_legal("ouk-chatrang", None, &[], &best);

    s.send("setoption name UCI_Variant value xiangqi");
    s.send("position startpos moves h3e3");
    s.send("go nodes 200");
    let best = s.expect_prefix("bestmove");
    bestmove_is_legal("xiangqi", None, &["h3e3"], &best);

    s.send("setoption name UCI_Variant value karouk");
    s.send("position startpos");
    s.send("go nodes 50");
    let best = s.expect_prefix("bestmove");
    bestmove_is_legal("kar-ouk", None, &[], &best);

    // A variant file: Makruk where stalemate loses, loaded by VariantPath, chosen by name.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("makruk-stalemate-loses.toml");
    std::fs::write(
        &file,
        "extends = \"makruk\"\nname = \"makruk-stalemate-loses\"\n[rules]\nstalemate = \"loss\"\n",
    )
    .unwrap();
    s.send(&format!(
        "setoption name VariantPath value {}",
        file.display()
    ));
    s.expect_prefix("info string loaded variant makruk-stalemate-loses");
    s.send("setoption name UCI_Variant value makruk-stalemate-loses");
    s.send("uci");
    let opt = s.expect_prefix("option name UCI_Variant");
    assert!(opt.contains("var makruk-stalemate-loses"), "{opt}");
    s.send("position startpos moves e3e4");
    s.send("go nodes 50");
    let best = s.expect_prefix("bestmove");
    bestmove_is_legal("makruk", None, &["e3e4"], &best);
    s.quit();
}

#[test]
fn mate_in_one_and_finished_games() {
    let mut s = Session::new();
    // Makruk: Ra8 mates the black king boxed in on h8 by its own pawns.
    let fen = "7k/6pp/8/8/8/8/8/R3K3 w - - 0 1";
    s.send(&format!("position fen {fen}"));
    s.send("go nodes 400");
    let best = s.expect_prefix("bestmove");
    assert_eq!(best, "bestmove a1a8");
    let info = s
        .lines()
        .into_iter()
        .rev()
        .find(|l| l.starts_with("info depth"))
        .unwrap();
    assert!(info.contains("score mate 1"), "{info}");
    // After the mate there is no move.
    s.send(&format!("position fen {fen} moves a1a8"));
    s.send("go nodes 10");
    s.expect_prefix("bestmove (none)");
    s.quit();
}

#[test]
fn bad_commands_get_info_string_errors_and_change_nothing() {
    let mut s = Session::new();
    // Refused positions: each says why (what they leave is tested below).
    let bad_positions: &[(&str, &str)] = &[
        ("position fen not/a/fen w - - 0 1", "bad FEN"),
        ("position startpos moves e3e5", "move 'e3e5'"),
        ("position startpos moves zz", "move 'zz'"),
        ("position sideways", "expected 'position startpos|fen"),
    ];
    for (cmd, msg) in bad_positions {
        s.send(cmd);
        let line = s.expect(
            &format!("an error for '{cmd}'"),
            |l| l.starts_with("info string error:"),
            10,
        );
        assert!(line.contains(msg), "'{cmd}' gave '{line}'");
    }
    let bad: &[(&str, &str)] = &[
        ("foo bar", "unknown command"),
        (
            "setoption name UCI_Variant value chess",
            "unknown variant 'chess'",
        ),
        ("setoption name Hash value 0", "Hash '0'"),
        ("setoption name Hashes value 16", "unknown option 'Hashes'"),
        (
            "setoption name Evaluator value nonsense",
            "unknown evaluator",
        ),
        (
            "setoption name VariantPath value /no/such/file.toml",
            "VariantPath",
        ),
        ("setoption name CPuct value -1", "CPuct"),
        ("setoption name Tactics value 2", "Tactics '2'"),
        (
            "setoption name TacticsPriors value -1",
            "TacticsPriors '-1'",
        ),
        (
            "setoption name PolicyTemperature value 0",
            "PolicyTemperature '0'",
        ),
        ("setoption UCI_Variant", "expected 'setoption name"),
        ("setoption name CPuct value inf", "CPuct 'inf'"),
        ("setoption name Hash value -3", "Hash '-3'"),
        ("setoption name Hash value lots", "Hash 'lots'"),
        (
            "setoption name UCI_ShowWDL value maybe",
            "UCI_ShowWDL 'maybe'",
        ),
    ];
    s.send("position startpos moves e3e4");
    for (cmd, msg) in bad {
        s.send(cmd);
        let line = s.expect(
            &format!("an error for '{cmd}'"),
            |l| l.starts_with("info string error:"),
            10,
        );
        assert!(line.contains(msg), "'{cmd}' gave '{line}'");
    }
    // Still alive, and still at the position before the bad commands (makruk after e3e4).
    s.send("isready");
    s.expect_prefix("readyok");
    s.send("d");
    let fen = s.expect_prefix("info string Fen:");
    assert!(fen.contains(" b "), "{fen}");
    // The net-free evaluator blended with the tactical value still searches to a legal move.
    s.send("setoption name Tactics value 0.5");
    s.send("go nodes 30");
    let best = s.expect_prefix("bestmove");
    bestmove_is_legal("makruk", None, &["e3e4"], &best);
    // And with its priors mixed with the tactical ones.
    s.send("setoption name TacticsPriors value 0.5");
    s.send("go nodes 30");
    let best = s.expect_prefix("bestmove");
    bestmove_is_legal("makruk", None, &["e3e4"], &best);
    // Empty lines are ignored; no output is a crash.
    s.send("");
    s.send("isready");
    s.expect_prefix("readyok");
    s.quit();
}

/// An illegal move in `position ... moves` keeps the position before it (Fairy-Stockfish's
/// way), so the answer is a move for the side really to move; a bad FEN leaves no position, and
/// `go` refuses instead of searching a stale one.
#[test]
fn refused_positions_leave_no_stale_position() {
    let mut s = Session::new();
    s.send("position startpos moves a3a4 zzzz");
    let e = s.expect_prefix("info string error:");
    assert!(e.contains("'zzzz'") && e.contains("black to move"), "{e}");
    s.send("go nodes 20");
    let best = s.expect_prefix("bestmove");
    bestmove_is_legal("makruk", None, &["a3a4"], &best);
    s.send("position startpos moves e3e4");
    s.send("position fen 8/8/8/8/8/8/8/8 w - - 0 1");
    s.expect_prefix("info string error:");
    s.send("go nodes 20");
    let e = s.expect_prefix("info string error:");
    assert!(e.contains("no position"), "{e}");
    s.expect_prefix("bestmove (none)");
    s.send("position startpos");
    s.send("go nodes 20");
    let best = s.expect_prefix("bestmove");
    bestmove_is_legal("makruk", None, &[], &best);
    s.quit();
}

/// `go infinite` stops growing its tree at the Hash size and waits for `stop`.
#[test]
fn infinite_search_is_bounded_by_hash() {
    let mut s = Session::new();
    s.send("setoption name Hash value 1");
    s.send("position startpos");
    s.send("go infinite");
    std::thread::sleep(Duration::from_millis(1500));
    s.send("stop");
    s.expect_prefix("bestmove");
    let nodes: u64 = s
        .lines()
        .iter()
        .filter(|l| l.starts_with("info depth"))
        .filter_map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            t.iter()
                .position(|&w| w == "nodes")
                .map(|i| t[i + 1].parse().unwrap())
        })
        .max()
        .unwrap();
    // 1 MiB holds a few thousand nodes with their edges; unbounded, 1.5 s is ~10^5.
    assert!(nodes < 20_000, "{nodes} nodes in a 1 MiB tree");
    s.quit();
}

/// A match client's view: whole games through `position startpos moves ...` every move, the
/// engine playing both sides, far past our 400-ply limit, through repetitions and counts that
/// run out. Every answer is a legal move while one exists; `(none)` only without one.
#[test]
fn scripted_client_plays_whole_games_past_every_end_of_ours() {
    for (variant, plies) in [("makruk", 460), ("ouk-chatrang", 200), ("xiangqi", 200)] {
        let mut s = Session::new();
        s.send(&format!("setoption name UCI_Variant value {variant}"));
        s.send("ucinewgame");
        let v = Variant::builtin(variant).unwrap();
        let mut pos = Position::start(&v);
        let mut moves: Vec<String> = Vec::new();
        let mut ended_by_our_rules = 0;
        for _ in 0..plies {
            s.send(&format!("position startpos moves {}", moves.join(" ")));
            s.send("go nodes 24");
            let line = s.expect_prefix("bestmove");
            let legal = pos.legal_moves();
            if legal.is_empty() {
                assert_eq!(line, "bestmove (none)", "{variant} after {moves:?}");
                break;
            }
            if pos.outcome().is_some() {
                ended_by_our_rules += 1;
            }
            let best = line.split_whitespace().nth(1).unwrap().to_string();
            let m = pos
                .parse_uci(&best)
                .unwrap_or_else(|e| panic!("{variant} ply {}: {line}: {e}", moves.len()));
            assert!(
                legal.contains(m),
                "{variant} ply {}: {line} is illegal",
                moves.len()
            );
            pos.make(m);
            moves.push(best);
        }
        if variant == "makruk" && !pos.legal_moves().is_empty() {
            assert!(
                moves.len() > 400,
                "the engine played on past ply 400: {}",
                moves.len()
            );
            assert!(
                ended_by_our_rules > 0,
                "the game went on past an end of our rules"
            );
        }
        s.quit();
    }
}

/// Proved mates are reported as `score mate N` from the side to move's view: positive when it
/// mates, negative when it is mated.
#[test]
fn proved_mates_are_scored_in_moves() {
    let mut s = Session::new();
    let last_info = |s: &Session| {
        s.lines()
            .into_iter()
            .rev()
            .find(|l| l.starts_with("info depth"))
            .unwrap()
    };
    // Black's only move is Kg8, then Ra8 mates: mated in 1.
    s.send("position fen 7k/8/6K1/8/8/8/8/R7 b - - 0 1");
    s.send("go nodes 2000");
    assert_eq!(s.expect_prefix("bestmove"), "bestmove h8g8");
    let info = last_info(&s);
    assert!(info.contains("score mate -1"), "{info}");
    // White mates in 2: Kg6 leaves Black only Kg8, then Ra8.
    s.send("position fen 7k/8/8/6K1/8/8/8/R7 w - - 0 1");
    s.send("go nodes 20000");
    let best = s.expect_prefix("bestmove");
    let info = last_info(&s);
    assert!(info.contains("score mate 2"), "{best}: {info}");
    s.quit();
}

/// A variant file with several problems is reported on one `info string` line: a GUI reading
/// the protocol never sees a line that is not UCI.
#[test]
fn a_bad_variant_file_is_one_protocol_line() {
    let mut s = Session::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(
        &file,
        "name = \"bad\"\nextends = \"makruk\"\nboard = \"0x0\"\n[rules]\nstalemate = \"sometimes\"\n",
    )
    .unwrap();
    s.send(&format!(
        "setoption name VariantPath value {}",
        file.display()
    ));
    s.send("isready");
    s.expect_prefix("readyok");
    let lines = s.lines();
    assert!(lines.iter().any(|l| l.contains("VariantPath")), "{lines:?}");
    for l in &lines {
        assert!(
            l.starts_with("info string ") || l == "readyok",
            "not a protocol line: '{l}'"
        );
    }
    s.quit();
}

/// Every `go` ends in `bestmove` (a GUI waits for it): bad, missing, negative, huge and
/// repeated numbers of every parameter, unknown words, `mate`, `searchmoves`. A bad argument
/// is also reported on an `info string error:` line. Before, `go nodes abc` and
/// `go searchmoves` answered only the error, and `go nodes 99999999999999999999` or
/// `go movetime 18446744073709551615` nothing at all until `stop`.
#[test]
fn every_go_ends_in_bestmove() {
    let mut s = Session::new();
    // Huge limits end when the tree is full: a small one fills in well under a second.
    s.send("setoption name Hash value 4");
    let huge = "99999999999999999999";
    let cases: Vec<(String, bool)> = [
        ("go nodes abc", true),
        ("go nodes", true),
        ("go nodes -5", true),
        (&*format!("go nodes {huge}"), true),
        ("go nodes 18446744073709551615", false),
        ("go movetime 18446744073709551615", false),
        (&*format!("go movetime {huge}"), true),
        ("go movetime -1", true),
        ("go movetime 1.5", true),
        ("go depth abc", true),
        ("go depth -1", true),
        (&*format!("go depth {huge}"), true),
        ("go depth 4000000000", false),
        ("go wtime abc btime abc", true),
        ("go wtime -100 btime -100 winc -5 binc -5", true),
        (
            &*format!("go wtime {huge} btime {huge} winc {huge} binc {huge} movestogo {huge}"),
            true,
        ),
        ("go wtime 1000 btime 1000 movestogo 0", false),
        ("go wtime 1000 btime 1000 movestogo -1", true),
        ("go wtime btime winc binc movestogo", true),
        ("go nodes 20 nodes 40 nodes 30", false),
        ("go movetime 100 movetime 50", false),
        ("go mate 1", false),
        ("go mate abc", true),
        ("go mate -3", true),
        (&*format!("go mate {huge}"), true),
        ("go foo", true),
        ("go nodes 30 foo 7 bar", true),
        ("go searchmoves", true),
        ("go searchmoves zz9 e9e9", true),
        ("go searchmoves a3a4", false),
        ("go nodes 30 searchmoves a3a4 h3h4 movetime 5000", false),
        ("go ponder nodes 20", false),
        ("go infinite nodes 10 stop-me", true),
    ]
    .iter()
    .map(|(c, b)| (c.to_string(), *b))
    .collect();
    for (cmd, bad) in &cases {
        s.send("position startpos");
        s.send(cmd);
        if *bad {
            let e = s.expect(
                &format!("an error for '{cmd}'"),
                |l| l.starts_with("info string error:"),
                30,
            );
            assert!(!e.is_empty());
        }
        if cmd.contains("infinite") {
            s.send("stop");
        }
        let best = s.expect(
            &format!("a bestmove for '{cmd}'"),
            |l| l.starts_with("bestmove"),
            120,
        );
        bestmove_is_legal("makruk", None, &[], &best);
        assert!(
            !s.new_lines().iter().any(|l| l.contains("while searching")),
            "{cmd}: the search went on after its bestmove"
        );
    }
    // A `go` without a position still answers.
    s.send("position fen nonsense");
    s.send("go nodes abc");
    s.expect_prefix("bestmove (none)");
    s.quit();
}

/// `searchmoves` restricts the root: the answer is a listed move, even where another mates at
/// once; illegal moves are reported and ignored, and with none legal every move is searched.
#[test]
fn searchmoves_restrict_the_answer() {
    let mut s = Session::new();
    s.send("position startpos");
    s.send("go nodes 300 searchmoves a3a4 h3h4");
    let best = s.expect_prefix("bestmove");
    assert!(best == "bestmove a3a4" || best == "bestmove h3h4", "{best}");
    // Ra8 mates; the search is held to the king's moves.
    let fen = "7k/6pp/8/8/8/8/8/R3K3 w - - 0 1";
    s.send(&format!("position fen {fen}"));
    s.send("go nodes 400 searchmoves e1d1 e1f1");
    let best = s.expect_prefix("bestmove");
    assert!(best == "bestmove e1d1" || best == "bestmove e1f1", "{best}");
    // The same tree, unrestricted again: the mate.
    s.send(&format!("position fen {fen}"));
    s.send("go nodes 400");
    assert_eq!(s.expect_prefix("bestmove"), "bestmove a1a8");
    // An illegal move is reported; the legal one is searched.
    s.send(&format!("position fen {fen}"));
    s.send("go nodes 100 searchmoves a1a9 e1e2");
    let e = s.expect_prefix("info string error:");
    assert!(e.contains("'a1a9'"), "{e}");
    assert_eq!(s.expect_prefix("bestmove"), "bestmove e1e2");
    // None legal: all moves are searched.
    s.send(&format!("position fen {fen}"));
    s.send("go nodes 400 searchmoves h8h7");
    s.expect(
        "an error naming no legal move",
        |l| l.starts_with("info string error:") && l.contains("no legal move"),
        30,
    );
    assert_eq!(s.expect_prefix("bestmove"), "bestmove a1a8");
    s.quit();
}

/// `go mate N` searches until the solver proves the mate (or for `MATE_TIME` at most) and
/// answers the mating move with `score mate N`.
#[test]
fn go_mate_finds_the_mate_and_always_answers() {
    let mut s = Session::new();
    // White mates in 2: Kg6 leaves Black only Kg8, then Ra8.
    s.send("position fen 7k/8/8/6K1/8/8/8/R7 w - - 0 1");
    s.send("go mate 2");
    let best = s.expect("a bestmove", |l| l.starts_with("bestmove"), 60);
    let info = s
        .lines()
        .into_iter()
        .rev()
        .find(|l| l.starts_with("info depth"))
        .unwrap();
    assert!(info.contains("score mate 2"), "{best}: {info}");
    // No mate to find: the answer comes after MATE_TIME at most.
    s.send("position startpos");
    s.send("go mate 3");
    let secs = varzero_uci::MATE_TIME.as_secs() * 6 + 30;
    let best = s.expect("a bestmove", |l| l.starts_with("bestmove"), secs);
    bestmove_is_legal("makruk", None, &[], &best);
    s.quit();
}

/// `Hash` is capped at half the physical memory: a larger value is clamped and said so (before,
/// `Hash 1048576` let `go infinite` grow until the machine ran out), and `uci` shows the cap.
#[test]
fn hash_is_capped_at_half_the_memory() {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let cap = varzero_uci::hash_cap_mb(meminfo.as_deref());
    let mut s = Session::new();
    s.send("uci");
    let opt = s.expect_prefix("option name Hash");
    assert!(opt.ends_with(&format!(" max {cap}")), "{opt}");
    for value in ["1048576", "99999999999999999999999"] {
        s.send(&format!("setoption name Hash value {value}"));
        let l = s.expect_prefix("info string Hash");
        assert!(l.contains(&format!("Hash is {cap} MiB")), "{l}");
    }
    // Within the cap: silently taken.
    s.send("setoption name Hash value 1");
    s.send("isready");
    s.expect_prefix("readyok");
    assert!(
        !s.new_lines().iter().any(|l| l.starts_with("info")),
        "{:?}",
        s.new_lines()
    );
    s.quit();
    // The cap's arithmetic: half of MemTotal, a fixed cap where it cannot be read.
    assert_eq!(
        varzero_uci::hash_cap_mb(Some("MemTotal:       16384000 kB\nMemFree: 1 kB\n")),
        8000
    );
    assert_eq!(varzero_uci::hash_cap_mb(None), 4096);
    assert_eq!(varzero_uci::hash_cap_mb(Some("garbage")), 4096);
}

/// `MultiPV 3`: each report is three `info ... multipv K` lines, best first, each with its
/// score, `wdl` (with UCI_ShowWDL) and a line that starts with a legal move; `bestmove` is line
/// 1's move. Back at 1, the plain form without `multipv`.
#[test]
fn multipv_three_reports_three_lines_best_first() {
    let mut s = Session::new();
    s.send("uci");
    let opt = s.expect_prefix("option name MultiPV");
    assert!(opt.contains("type spin default 1 min 1"), "{opt}");
    s.send("setoption name MultiPV value 3");
    s.send("setoption name UCI_ShowWDL value true");
    s.send("position startpos");
    s.send("go nodes 600");
    let best = s.expect_prefix("bestmove");
    let all = s.lines();
    let at = all.iter().rposition(|l| l.starts_with("bestmove")).unwrap();
    let last: Vec<&String> = all[at - 3..at].iter().collect();
    let v = Variant::builtin("makruk").unwrap();
    let mut pos = Position::start(&v);
    let mut firsts = Vec::new();
    for (k, l) in last.iter().enumerate() {
        let w: Vec<&str> = l.split_whitespace().collect();
        let at = |key: &str| {
            w.iter()
                .position(|x| *x == key)
                .unwrap_or_else(|| panic!("{key} in {l}"))
        };
        assert_eq!(w[at("multipv") + 1], (k + 1).to_string(), "{l}");
        assert!(
            w[at("score") + 1] == "cp" || w[at("score") + 1] == "mate",
            "{l}"
        );
        let wdl: i32 = w[at("wdl") + 1..at("wdl") + 4]
            .iter()
            .map(|x| x.parse::<i32>().unwrap())
            .sum();
        assert_eq!(wdl, 1000, "{l}");
        let mv = w[at("pv") + 1];
        assert!(pos.game_moves().contains(pos.parse_uci(mv).unwrap()), "{l}");
        firsts.push(mv.to_string());
    }
    firsts.dedup();
    assert_eq!(firsts.len(), 3, "three different moves: {last:?}");
    assert_eq!(best, format!("bestmove {}", firsts[0]));
    s.send("setoption name MultiPV value 0");
    s.expect_prefix("info string error: MultiPV '0'");
    s.send("setoption name MultiPV value 1");
    s.send("go nodes 200");
    s.expect_prefix("bestmove");
    assert!(
        !s.lines()
            .iter()
            .skip(at + 1)
            .any(|l| l.contains(" multipv ")),
        "MultiPV 1 keeps the plain info line"
    );
    s.quit();
}

/// Under a clock, a position with a single legal move is answered after the first batch, not
/// after the clock's share of a minute (smart pruning); a `nodes` search is never cut short.
#[test]
fn a_single_legal_move_under_a_clock_is_answered_at_once() {
    let mut s = Session::new();
    // Black's king on a8 in check from the rook on a1, the 7th rank held by the rook on h7:
    // a8-b8 is the single legal move.
    let fen = "k7/7R/8/8/8/8/8/R3K3 b - - 0 1";
    let v = Variant::builtin("makruk").unwrap();
    let p = Position::from_fen(&v, fen).unwrap();
    assert_eq!(p.legal_moves().len(), 1, "the test's position has one move");
    s.send(&format!("position fen {fen}"));
    s.send("go wtime 600000 btime 600000");
    let best = s.expect("bestmove", |l| l.starts_with("bestmove"), 60);
    assert_eq!(
        best,
        format!(
            "bestmove {}",
            p.uci(p.legal_moves().iter().next().copied().unwrap())
        )
    );
    let info = s
        .lines()
        .into_iter()
        .rfind(|l| l.starts_with("info depth"))
        .unwrap();
    let nodes: u64 = info
        .split_whitespace()
        .skip_while(|w| *w != "nodes")
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    // 600 s / 30 moves is 20 s of search: at thousands of playouts a second, far more.
    assert!(
        nodes < 2000,
        "searched {nodes} playouts for a forced move: {info}"
    );
    s.send("position startpos");
    s.send("go nodes 500");
    s.expect_prefix("bestmove");
    let info = s
        .lines()
        .into_iter()
        .rfind(|l| l.starts_with("info depth"))
        .unwrap();
    assert!(info.contains("nodes 500 "), "{info}");
    s.quit();
}

/// UCCI, the protocol of Xiangqi GUIs: `ucci` ... `ucciok`, moves with ranks from 0, a banned
/// move never played however often the best move is banned, `go time` in seconds, `bye`.
#[test]
fn ucci_banmoves_are_never_played() {
    let mut s = Session::new();
    s.send("ucci");
    s.expect_prefix("option usemillisec");
    s.expect_prefix("ucciok");
    let v = Variant::builtin("xiangqi").unwrap();
    // Ours from UCCI: the same files, ranks one higher (a0 is our a1).
    let ours = |m: &str| -> String {
        let (a, b) = m.split_at(2);
        let up = |sq: &str| format!("{}{}", &sq[..1], sq[1..].parse::<u32>().unwrap() + 1);
        format!("{}{}", up(a), up(b))
    };
    let mut banned: Vec<String> = Vec::new();
    for _ in 0..4 {
        s.send("position startpos moves h2e2");
        if !banned.is_empty() {
            s.send(&format!("banmoves {}", banned.join(" ")));
        }
        s.send("go nodes 300");
        let best = s.expect_prefix("bestmove");
        let m = best.split_whitespace().nth(1).unwrap().to_string();
        assert!(!banned.contains(&m), "played the banned {m}: {banned:?}");
        // Legal for Black after the central cannon (h2e2 is our h3e3), in UCCI's ranks.
        let mut p = Position::start(&v);
        p.play_uci("h3e3").unwrap();
        let mv = p
            .parse_uci(&ours(&m))
            .unwrap_or_else(|e| panic!("{best}: {e}"));
        assert!(p.legal_moves().contains(mv), "{best}");
        banned.push(m);
    }
    // A FEN with Red to move as `r`, and a clock in seconds.
    s.send("position fen rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR r - - 0 1");
    s.send("go time 3 increment 0 opptime 3");
    let best = s.expect_prefix("bestmove");
    let mut p = Position::start(&v);
    let m = best.split_whitespace().nth(1).unwrap();
    assert!(p.play_uci(&ours(m)).is_ok(), "{best}");
    s.send("quit");
    s.expect_prefix("bye");
    s.handle.take().unwrap().join().unwrap();
}

/// `Threads`: listed with its range, set, and a search on two threads answers a legal move
/// after its playouts; a bad value is an `info string error:` and changes nothing.
#[test]
fn threads_option_searches_on_two_threads() {
    let mut s = Session::new();
    s.send("uci");
    let opt = s.expect_prefix("option name Threads");
    assert!(opt.contains("type spin default 1 min 1 max 256"), "{opt}");
    s.send("setoption name Threads value 2");
    s.send("setoption name Threads value 0");
    s.expect_prefix("info string error: Threads '0'");
    s.send("position fen 4k3/8/8/3m4/8/8/8/3RK3 w - - 0 1");
    s.send("go nodes 400");
    assert_eq!(s.expect_prefix("bestmove"), "bestmove d1d5");
}

/// Our notation (ranks from 1) of a move in XBoard's ranks from 0 (boards of ten ranks).
fn from_zero(m: &str) -> String {
    let (a, b) = m.split_at(2);
    let up = |sq: &str| format!("{}{}", &sq[..1], sq[1..].parse::<u32>().unwrap() + 1);
    format!("{}{}", up(a), up(b))
}

/// XBoard/CECP: the handshake, a GUI's moves answered by legal moves under `level`, `time`
/// and `otim`, thinking output after `post`, `ping` answered after the move, an illegal move
/// refused, Xiangqi's ranks from 0, `force` with `setboard` and `go`, and `undo`.
#[test]
fn xboard_client_plays_and_is_answered() {
    let mut s = Session::new();
    s.send("xboard");
    s.send("protover 2");
    let f = s.expect_prefix("feature myname");
    for word in [
        "ping=1",
        "setboard=1",
        "usermove=1",
        "makruk",
        "xiangqi",
        "cambodian",
    ] {
        assert!(f.contains(word), "{word} missing: {f}");
    }
    s.expect_prefix("feature done=1");
    s.send("new");
    s.send("variant makruk");
    s.send("level 40 0:05 0");
    s.send("post");
    s.send("time 500");
    s.send("otim 500");
    s.send("usermove e3e4");
    let mv = s.expect_prefix("move ");
    let black = mv.split_whitespace().nth(1).unwrap().to_string();
    bestmove_is_legal("makruk", None, &["e3e4"], &format!("bestmove {black}"));
    // Thinking output: ply score time nodes pv.
    let thinking: Vec<String> = s
        .lines()
        .into_iter()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<u32>().is_ok())
        })
        .collect();
    assert!(!thinking.is_empty(), "no thinking output: {:?}", s.lines());
    for l in &thinking {
        let w: Vec<&str> = l.split_whitespace().collect();
        assert!(
            w.len() >= 4 && w[1..4].iter().all(|x| x.parse::<i64>().is_ok()),
            "{l}"
        );
    }
    // The GUI's next move is on the game after ours; a move that is not legal is refused.
    s.send("usermove e4e6");
    s.expect_prefix("Illegal move: e4e6");
    s.send("time 480");
    s.send("usermove a3a4");
    s.send("ping 7");
    let mv2 = s.expect_prefix("move ");
    s.expect_prefix("pong 7");
    let second = mv2.split_whitespace().nth(1).unwrap().to_string();
    bestmove_is_legal(
        "makruk",
        None,
        &["e3e4", &black, "a3a4"],
        &format!("bestmove {second}"),
    );
    // Xiangqi counts ranks from 0: the central cannon is h2e2.
    s.send("new");
    s.send("variant xiangqi");
    s.send("st 0.2");
    s.send("usermove h2e2");
    let mv = s.expect_prefix("move ");
    let m = mv.split_whitespace().nth(1).unwrap();
    bestmove_is_legal(
        "xiangqi",
        None,
        &["h3e3"],
        &format!("bestmove {}", from_zero(m)),
    );
    // force, setboard, go: the engine plays the side to move of the position set.
    s.send("force");
    s.send("new");
    s.send("variant makruk");
    s.send("force");
    let fen = "4k3/8/8/8/8/8/3r4/4K3 w - - 0 1";
    s.send(&format!("setboard {fen}"));
    s.send("st 0.1");
    s.send("go");
    let mv = s.expect_prefix("move ");
    bestmove_is_legal(
        "makruk",
        Some(fen),
        &[],
        &format!("bestmove {}", mv.split_whitespace().nth(1).unwrap()),
    );
    // undo takes the engine's move back: the same side is to move again.
    s.send("force");
    s.send("undo");
    s.send("go");
    let again = s.expect_prefix("move ");
    bestmove_is_legal(
        "makruk",
        Some(fen),
        &[],
        &format!("bestmove {}", again.split_whitespace().nth(1).unwrap()),
    );
    s.send("foo");
    s.expect_prefix("Error (unknown command): foo");
    s.quit();
}

/// XBoard forfeits an engine whose win or draw claim its own rules do not see (`-testClaims`), and
/// it sees only mate and stalemate at once: past our repetition draw the engine plays on, and it
/// claims where it has no move.
#[test]
fn xboard_claims_only_where_there_is_no_move() {
    let mut s = Session::new();
    s.xboard_game("makruk");
    s.send("force");
    let fen = "4k3/8/8/8/8/8/8/R3K3 w - - 0 1";
    s.send(&format!("setboard {fen}"));
    let v = Variant::builtin("makruk").unwrap();
    let mut pos = Position::from_fen(&v, fen).unwrap();
    for m in [
        "a1a2", "e8d8", "a2a1", "d8e8", "a1a2", "e8d8", "a2a1", "d8e8",
    ] {
        s.send(&format!("usermove {m}"));
        pos.play_uci(m).unwrap();
    }
    let o = pos
        .outcome()
        .expect("the third occurrence ends the game by our rules");
    assert_eq!(o.result, GameResult::Draw, "{o}");
    s.send("st 0.1");
    s.send("go");
    let mv = s.expect_prefix("move ");
    let ours = mv.split_whitespace().nth(1).unwrap();
    let m = pos.parse_uci(ours).unwrap();
    assert!(pos.legal_moves().contains(m), "{ours}");
    // Mate on the board: the result instead of a move.
    s.send("force");
    s.send("setboard R3k3/8/4K3/8/8/8/8/8 b - - 0 1");
    s.send("go");
    s.expect_prefix("1-0 {White wins: checkmate}");
    s.send("ping 2");
    s.expect_prefix("pong 2");
    s.quit();
}

/// A whole XBoard game under a clock, the client playing the first legal move each turn: every
/// answer is legal and comes in time, and the engine names the result at the end.
#[test]
fn xboard_client_plays_a_whole_game_under_a_clock() {
    let mut s = Session::new();
    s.xboard_game("makruk");
    s.send("level 0 0:02 0.02");
    let v = Variant::builtin("makruk").unwrap();
    let mut pos = Position::start(&v);
    let mut my_ms: i64 = 2000;
    for _ in 0..200 {
        let moves = pos.game_moves();
        if pos.outcome().is_some() {
            break;
        }
        let m = pos.uci(moves.iter().next().copied().unwrap());
        pos.play_uci(&m).unwrap();
        s.send(&format!("time {}", my_ms / 10));
        s.send("otim 200");
        let t = Instant::now();
        s.send(&format!("usermove {m}"));
        if let Some(o) = pos.outcome() {
            if pos.game_moves().is_empty() {
                // The engine's turn with no move: it names the result instead of a move.
                let r = o.result.pgn();
                s.expect(r, |l| l.starts_with(&format!("{r} {{")), 30);
            } else {
                // An end the GUI adjudicates (repetition, counting): the engine plays on.
                let mv = s.expect_prefix("move ");
                let ours = mv.split_whitespace().nth(1).unwrap();
                let mv = pos.parse_uci(ours).unwrap();
                assert!(pos.game_moves().contains(mv), "{ours} past {o}");
            }
            break;
        }
        let mv = s.expect_prefix("move ");
        my_ms += 20 - t.elapsed().as_millis() as i64;
        assert!(my_ms > 0, "out of time after {} plies", pos.history_len());
        let ours = mv.split_whitespace().nth(1).unwrap();
        let mv = pos
            .parse_uci(ours)
            .unwrap_or_else(|e| panic!("{ours}: {e}"));
        assert!(pos.game_moves().contains(mv), "{ours} is not a game move");
        pos.make(mv);
    }
    assert!(
        pos.history_len() > 20,
        "a short game: {} plies",
        pos.history_len()
    );
    s.send("ping 1");
    s.expect_prefix("pong 1");
    s.quit();
}

/// Counts the evaluators resolved for a search (a net loaded, in real use).
struct CountingResolver(Arc<std::sync::atomic::AtomicUsize>);

impl EvaluatorResolver for CountingResolver {
    fn resolve(
        &self,
        name: &str,
        variant: &Arc<Variant>,
    ) -> Result<Option<Arc<dyn Evaluator>>, ResolveError> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        BuiltinEvaluators.resolve(name, variant)
    }
    fn known(&self) -> Vec<String> {
        BuiltinEvaluators.known()
    }
}

/// The evaluator is made at `isready` (XBoard: `ping`), before a GUI starts the clock, and the
/// first `go` then uses it; a second `isready` makes nothing.
#[test]
fn the_evaluator_is_made_at_isready_not_inside_the_first_move() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let made = Arc::new(AtomicUsize::new(0));
    let mut s = Session::with_resolver(Arc::new(CountingResolver(made.clone())));
    s.send("uci");
    s.expect_prefix("uciok");
    assert_eq!(made.load(Ordering::SeqCst), 0);
    s.send("isready");
    s.expect_prefix("readyok");
    assert_eq!(made.load(Ordering::SeqCst), 1, "isready made the searcher");
    s.send("isready");
    s.expect_prefix("readyok");
    s.send("position startpos moves e3e4");
    s.send("go nodes 50");
    let line = s.expect_prefix("bestmove");
    bestmove_is_legal("makruk", None, &["e3e4"], &line);
    assert_eq!(
        made.load(Ordering::SeqCst),
        1,
        "go used the searcher isready made"
    );
    s.quit();

    let made = Arc::new(AtomicUsize::new(0));
    let mut s = Session::with_resolver(Arc::new(CountingResolver(made.clone())));
    s.xboard_game("xiangqi");
    s.send("ping 1");
    s.expect_prefix("pong 1");
    let at_ping = made.load(Ordering::SeqCst);
    s.send("ping 2");
    s.expect_prefix("pong 2");
    assert_eq!(
        made.load(Ordering::SeqCst),
        at_ping,
        "the second ping made nothing"
    );
    s.send("st 0.1");
    s.send("usermove h2e2");
    s.expect_prefix("move ");
    assert_eq!(
        made.load(Ordering::SeqCst),
        at_ping,
        "the move used the searcher ping made"
    );
    s.quit();
}
