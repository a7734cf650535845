//! XBoard/CECP (protocol version 2), the protocol of XBoard, WinBoard and the GUIs that speak
//! it, as Fairy-Stockfish speaks it: `xboard` as the first command switches the engine to it.
//! Unlike UCI the engine keeps the game: the GUI sends the opponent's moves (`usermove`), the
//! clocks (`level`, `time`, `otim`, `st`), and the engine answers `move M` on its own turn
//! unless `force` holds it. The UCI engine underneath searches: each turn becomes a UCI
//! `position` and `go`, and its `bestmove` and `info` lines become `move` and thinking output
//! on their way out ([`XboardWire`]). Moves are in coordinates, ranks counted from 0 on boards
//! of ten ranks (`h2e2` in Xiangqi), as XBoard and Fairy-Stockfish count them.

use super::{move_from_ucci, move_to_ucci, UciEngine};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use varzero_rules::{Color, GameResult, Position};

/// The output side of XBoard mode, shared with the search thread.
#[derive(Default)]
pub(super) struct XboardWire {
    /// The engine speaks XBoard.
    pub on: AtomicBool,
    /// `post`: thinking output on.
    pub post: AtomicBool,
    /// The board has ten ranks or more: moves count ranks from 0.
    pub from_zero: AtomicBool,
    /// A search stopped by `force`, `new`, `undo`... whose move must not be played.
    pub quiet: AtomicBool,
    /// The move the engine played (our notation), set before `move` is printed, so that the
    /// GUI's next command always finds it and the game takes it.
    pub moved: Mutex<Option<String>>,
}

impl XboardWire {
    fn to_gui(&self, m: &str) -> String {
        if self.from_zero.load(Ordering::Relaxed) {
            move_to_ucci(m)
        } else {
            m.to_string()
        }
    }

    /// A UCI output line in XBoard, or None where XBoard has nothing for it.
    pub fn line(&self, line: &str) -> Option<String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first().copied() {
            Some("bestmove") => {
                let m = words.get(1).copied().unwrap_or("(none)");
                if self.quiet.load(Ordering::Relaxed) || m == "(none)" {
                    return None;
                }
                *self.moved.lock().unwrap() = Some(m.to_string());
                Some(format!("move {}", self.to_gui(m)))
            }
            Some("info") if words.get(1) == Some(&"string") => {
                Some(format!("# {}", words[2..].join(" ")))
            }
            Some("info") => {
                if !self.post.load(Ordering::Relaxed) {
                    return None;
                }
                self.thinking(&words)
            }
            _ => Some(format!("# {line}")),
        }
    }

    /// `info depth D ... score cp S ... nodes N ... time T ... pv M...` as XBoard's thinking
    /// output, `D S T N M...` (time in centiseconds, a mate in n as 100000 + n); the first
    /// line of a MultiPV report only.
    fn thinking(&self, w: &[&str]) -> Option<String> {
        let get = |k: &str| w.iter().position(|x| *x == k).and_then(|i| w.get(i + 1));
        if get("multipv").is_some_and(|k| *k != "1") {
            return None;
        }
        let depth = get("depth")?;
        let score = match (get("score"), w.iter().position(|x| *x == "score")) {
            (Some(&"cp"), Some(i)) => w.get(i + 2)?.parse::<i64>().ok()?,
            (Some(&"mate"), Some(i)) => {
                let n: i64 = w.get(i + 2)?.parse().ok()?;
                if n >= 0 {
                    100_000 + n
                } else {
                    -100_000 + n
                }
            }
            _ => 0,
        };
        let time_cs = get("time").and_then(|t| t.parse::<u64>().ok()).unwrap_or(0) / 10;
        let nodes = get("nodes").copied().unwrap_or("0");
        let pv: Vec<String> = match w.iter().position(|x| *x == "pv") {
            Some(i) => w[i + 1..].iter().map(|m| self.to_gui(m)).collect(),
            None => Vec::new(),
        };
        Some(format!(
            "{depth} {score} {time_cs} {nodes} {}",
            pv.join(" ")
        ))
    }
}

/// The game as the GUI and the engine play it.
#[derive(Default)]
pub(super) struct XboardGame {
    /// `force`: the engine plays neither side.
    force: bool,
    /// The side the engine plays (Black after `new`, as the protocol says).
    engine: Option<Color>,
    /// `level MPS BASE INC`: moves per session (0: the whole game), increment in ms.
    mps: u32,
    inc_ms: u64,
    /// `st N`: a fixed time a move, in ms.
    st_ms: Option<u64>,
    /// `sd N`: a depth limit (our mean playout depth).
    sd: Option<u64>,
    /// `time N` and `otim N`, in ms.
    time_ms: Option<u64>,
    otim_ms: Option<u64>,
}

impl UciEngine {
    /// `xboard`: from now on the engine speaks XBoard/CECP. It waits for `protover`.
    pub(super) fn start_xboard(&mut self) {
        self.wire.xboard.on.store(true, Ordering::Relaxed);
        self.set_rank_base();
        self.xb = XboardGame {
            engine: Some(Color::Black),
            ..XboardGame::default()
        };
    }

    fn set_rank_base(&self) {
        let ten = self.variant.size.ranks >= 10;
        self.wire.xboard.from_zero.store(ten, Ordering::Relaxed);
    }

    fn gui_move_to_ours(&self, m: &str) -> String {
        if self.wire.xboard.from_zero.load(Ordering::Relaxed) {
            move_from_ucci(m)
        } else {
            m.to_string()
        }
    }

    /// Stops a search without playing its move (the GUI took the turn away).
    fn xb_abort(&mut self, busy: bool) {
        if busy {
            self.wire.xboard.quiet.store(true, Ordering::Relaxed);
            self.stop_search();
            self.wire.xboard.quiet.store(false, Ordering::Relaxed);
        }
        self.xb_sync();
    }

    /// Plays the move the engine answered, once, on the game's position.
    fn xb_sync(&mut self) {
        let moved = self.wire.xboard.moved.lock().unwrap().take();
        if let (Some(m), Some(pos)) = (moved, self.pos.as_mut()) {
            match pos.parse_uci(&m) {
                Ok(mv) => pos.make(mv),
                Err(e) => self.wire.raw(&format!("# error: our own move {m}: {e}")),
            }
        }
    }

    /// One XBoard command; false on `quit`.
    pub(super) fn xboard_command(&mut self, cmd: &str, rest: &str, busy: bool) -> bool {
        // The engine's last move is in the game before the GUI's answer to it.
        if !busy {
            self.xb_sync();
        }
        match cmd {
            "" | "accepted" | "rejected" | "random" | "hard" | "easy" | "computer" | "name"
            | "rating" | "ics" | "hint" | "bk" | "draw" | "white" | "black" | "nps" | "xboard"
            | "." | "exit" | "pause" | "resume" => {}
            "quit" => {
                self.xb_abort(busy);
                return false;
            }
            "protover" => self.xb_features(),
            "new" => {
                self.xb_abort(busy);
                if let Some(s) = &mut self.searcher {
                    s.clear();
                }
                self.pos = Some(Position::start(&self.playing));
                self.xb = XboardGame {
                    engine: Some(Color::Black),
                    mps: self.xb.mps,
                    inc_ms: self.xb.inc_ms,
                    time_ms: self.xb.time_ms,
                    otim_ms: self.xb.otim_ms,
                    ..XboardGame::default()
                };
            }
            "variant" => {
                self.xb_abort(busy);
                let known = self.variant_names().iter().any(|n| n == rest)
                    || varzero_rules::Variant::builtin(varzero_rules::variant::canonical_name(
                        rest,
                    ))
                    .is_ok();
                if !known {
                    self.wire
                        .raw(&format!("Error (unsupported variant): {rest}"));
                    return true;
                }
                self.setoption(&format!("name UCI_Variant value {rest}"));
                self.set_rank_base();
                self.pos = Some(Position::start(&self.playing));
            }
            "force" | "result" => {
                self.xb_abort(busy);
                self.xb.force = true;
            }
            "go" => {
                self.xb_abort(busy);
                self.xb.force = false;
                self.xb.engine = self.pos.as_ref().map(|p| p.side_to_move());
                self.xb_think();
            }
            "playother" => {
                self.xb_abort(busy);
                self.xb.force = false;
                self.xb.engine = self.pos.as_ref().map(|p| !p.side_to_move());
            }
            "?" => {
                if busy {
                    self.stop_search();
                }
            }
            "ping" => {
                // Answered after the move the engine is thinking about, as the protocol asks.
                if busy {
                    self.join();
                    self.xb_sync();
                } else {
                    // XBoard pings before it starts the clock: the net is loaded now.
                    self.warm_up();
                }
                self.wire.raw(&format!("pong {rest}"));
            }
            "post" => self.wire.xboard.post.store(true, Ordering::Relaxed),
            "nopost" => self.wire.xboard.post.store(false, Ordering::Relaxed),
            "level" => self.xb_level(rest),
            "st" => match rest.parse::<f64>() {
                Ok(s) if s > 0.0 && s.is_finite() => self.xb.st_ms = Some((s * 1000.0) as u64),
                _ => self.wire.raw(&format!("Error (bad time): st {rest}")),
            },
            "sd" => match rest.parse::<u64>() {
                Ok(d) if d > 0 => self.xb.sd = Some(d),
                _ => self.wire.raw(&format!("Error (bad depth): sd {rest}")),
            },
            "time" | "otim" => match rest.parse::<i64>() {
                Ok(cs) => {
                    let ms = Some(cs.max(0) as u64 * 10);
                    if cmd == "time" {
                        self.xb.time_ms = ms;
                    } else {
                        self.xb.otim_ms = ms;
                    }
                }
                Err(_) => self.wire.raw(&format!("Error (bad time): {cmd} {rest}")),
            },
            "setboard" => {
                self.xb_abort(busy);
                match Position::from_fen(&self.playing, rest) {
                    Ok(p) => self.pos = Some(p),
                    Err(e) => self
                        .wire
                        .raw(&format!("tellusererror Illegal position: {e}")),
                }
            }
            "undo" | "remove" => {
                self.xb_abort(busy);
                let n = if cmd == "undo" { 1 } else { 2 };
                if let Some(pos) = self.pos.as_mut() {
                    for _ in 0..n.min(pos.history_len()) {
                        pos.unmake();
                    }
                }
            }
            "cores" => self.setoption(&format!("name Threads value {rest}")),
            "memory" => self.setoption(&format!("name Hash value {rest}")),
            "option" => match rest.split_once('=') {
                Some((n, v)) => self.setoption(&format!("name {n} value {v}")),
                None => self.setoption(&format!("name {rest}")),
            },
            "usermove" => self.xb_usermove(rest, busy),
            _ if busy => self.wire.raw(&format!("Error (engine is thinking): {cmd}")),
            // A GUI without `usermove=1` sends the move alone.
            m if self
                .pos
                .as_ref()
                .is_some_and(|p| p.parse_uci(&self.gui_move_to_ours(m)).is_ok()) =>
            {
                self.xb_usermove(m, busy)
            }
            other => self.wire.raw(&format!("Error (unknown command): {other}")),
        }
        true
    }

    fn xb_features(&self) {
        let names = self.variant_names();
        self.wire.raw(&format!(
            "feature myname=\"varzero {}\" ping=1 setboard=1 usermove=1 time=1 draw=0 sigint=0 \
             sigterm=0 colors=0 analyze=0 reuse=1 memory=1 smp=1 variants=\"{}\"",
            env!("CARGO_PKG_VERSION"),
            names.join(",")
        ));
        self.wire.raw(&format!(
            "feature option=\"Evaluator -string {}\"",
            self.evaluator
        ));
        self.wire.raw("feature done=1");
    }

    /// `level MPS BASE INC`: BASE in minutes or `minutes:seconds`, INC in seconds.
    fn xb_level(&mut self, rest: &str) {
        let w: Vec<&str> = rest.split_whitespace().collect();
        let mps = w.first().and_then(|x| x.parse::<u32>().ok());
        let inc = w.get(2).and_then(|x| x.parse::<f64>().ok());
        match (mps, inc) {
            (Some(mps), Some(inc)) if inc >= 0.0 && inc.is_finite() => {
                self.xb.mps = mps;
                self.xb.inc_ms = (inc * 1000.0) as u64;
                self.xb.st_ms = None;
            }
            _ => self.wire.raw(&format!("Error (bad level): level {rest}")),
        }
    }

    fn xb_usermove(&mut self, m: &str, busy: bool) {
        self.xb_abort(busy);
        let ours = self.gui_move_to_ours(m);
        let Some(pos) = self.pos.as_mut() else {
            return self.wire.raw(&format!("Illegal move (no position): {m}"));
        };
        match pos.parse_uci(&ours) {
            Ok(mv) if pos.game_moves().contains(mv) => pos.make(mv),
            _ => return self.wire.raw(&format!("Illegal move: {m}")),
        }
        self.xb_think();
    }

    /// The engine's turn: a search under the game's clock, unless `force` or the game is over.
    fn xb_think(&mut self) {
        let Some(mut pos) = self.pos.clone() else {
            return;
        };
        if self.xb.force || self.xb.engine != Some(pos.side_to_move()) {
            return;
        }
        // Only an end with no move to make is claimed: XBoard accepts an engine's win claim
        // only where its own rules see mate, and counts a claim it cannot verify (our repetition,
        // counting or move limit) as false and forfeits the claimant. Past every other end of
        // ours the engine plays on and the GUI adjudicates, as under UCI and as Fairy-Stockfish
        // does.
        let no_move = pos.game_moves().is_empty();
        if let Some(o) = pos.outcome().filter(|_| no_move) {
            let why = o.termination.name();
            let result = o.result.pgn();
            let winner = match o.result {
                GameResult::Win(Color::White) => "White wins",
                GameResult::Win(Color::Black) => "Black wins",
                GameResult::Draw => "Draw",
            };
            return self.wire.raw(&format!("{result} {{{winner}: {why}}}"));
        }
        let mut go = Vec::new();
        if let Some(st) = self.xb.st_ms {
            go.push(format!("movetime {st}"));
        } else if let Some(mine) = self.xb.time_ms {
            let white = pos.side_to_move() == Color::White;
            let theirs = self.xb.otim_ms.unwrap_or(mine);
            let (w, b) = if white {
                (mine, theirs)
            } else {
                (theirs, mine)
            };
            let inc = self.xb.inc_ms;
            go.push(format!("wtime {w} btime {b} winc {inc} binc {inc}"));
            if self.xb.mps > 0 {
                // Moves made by the side to move since the start, the session's count from them.
                let made = pos.game_ply() / 2;
                let left = self.xb.mps - made % self.xb.mps;
                go.push(format!("movestogo {left}"));
            }
        }
        if let Some(d) = self.xb.sd {
            go.push(format!("depth {d}"));
        }
        if go.is_empty() {
            // No clock given: the search settings' playouts.
            go.push(format!("nodes {}", self.search_cfg.playouts));
        }
        self.go(&go.join(" "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_lines_become_moves_and_thinking_output() {
        let w = XboardWire::default();
        w.on.store(true, Ordering::Relaxed);
        assert_eq!(w.line("bestmove e3e4").as_deref(), Some("move e3e4"));
        assert_eq!(w.moved.lock().unwrap().take().as_deref(), Some("e3e4"));
        let info = "info depth 7 seldepth 12 multipv 1 score cp -35 nodes 1200 nps 4000 time 300 pv h3e3 h10g8";
        assert_eq!(w.line(info), None, "thinking output is off until post");
        w.post.store(true, Ordering::Relaxed);
        w.from_zero.store(true, Ordering::Relaxed);
        assert_eq!(w.line(info).as_deref(), Some("7 -35 30 1200 h2e2 h9g7"));
        assert_eq!(
            w.line("info depth 3 score mate 2 nodes 10 time 5 pv a1a2")
                .as_deref(),
            Some("3 100002 0 10 a0a1")
        );
        assert_eq!(w.line("info depth 3 multipv 2 score cp 1 pv a1a2"), None);
        assert_eq!(w.line("bestmove h3e3").as_deref(), Some("move h2e2"));
        assert_eq!(w.moved.lock().unwrap().take().as_deref(), Some("h3e3"));
        // A move the GUI took away is not played.
        w.quiet.store(true, Ordering::Relaxed);
        assert_eq!(w.line("bestmove h3e3"), None);
        assert!(w.moved.lock().unwrap().is_none());
        assert_eq!(w.line("readyok").as_deref(), Some("# readyok"));
        assert_eq!(
            w.line("info string error: x").as_deref(),
            Some("# error: x")
        );
    }
}
