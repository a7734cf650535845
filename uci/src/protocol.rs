//! Our engine as a UCI engine, with Fairy-Stockfish's conventions: the variant is chosen by
//! the `UCI_Variant` option (our names and Fairy-Stockfish's: makruk, cambodian, karouk,
//! xiangqi...), `VariantPath` loads a variant file (TOML) whose variant `UCI_Variant` can then
//! select, positions come as `position startpos|fen FEN [moves ...]`, and `go` takes `nodes`,
//! `movetime`, `wtime/btime/winc/binc/movestogo`, `depth` (mean playout depth), `mate`,
//! `searchmoves` or `infinite` (under a clock or `movetime`, smart pruning stops a search whose
//! best move cannot change); `MultiPV` reports several root lines. The search (MCTS with the
//! evaluator of the `Evaluator` option)
//! runs on its own thread, so `stop` and `isready` are answered while it thinks; it prints
//! `info` lines about once a second and `bestmove` at the end. A bad command gets an
//! `info string error: ...` line and changes nothing, except `go`: every `go` ends in
//! `bestmove`, its bad arguments reported and the rest searched.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use varzero_rules::variant::canonical_name;
use varzero_rules::{Color, Move, Position, Variant};
use varzero_search::{EvaluatorResolver, Limits, SearchConfig, SearchInfo, Searcher};

#[path = "xboard.rs"]
mod xboard;

/// Where the engine writes; shared with the search thread.
pub type Output = Arc<Mutex<Box<dyn Write + Send>>>;

/// The engine's output and the protocol it speaks: a line is written in UCI's notation and
/// translated on its way out when the GUI speaks UCCI (ranks from 0, `nobestmove`).
#[derive(Clone)]
struct Wire {
    out: Output,
    ucci: Arc<AtomicBool>,
    /// XBoard/CECP (after `xboard`): the search's lines become `move` and thinking output.
    xboard: Arc<xboard::XboardWire>,
}

impl Wire {
    fn say(&self, line: &str) {
        let line = if self.xboard.on.load(Ordering::Relaxed) {
            match self.xboard.line(line) {
                Some(l) => l,
                None => return,
            }
        } else if self.ucci.load(Ordering::Relaxed) {
            ucci_line(line)
        } else {
            line.to_string()
        };
        self.raw(&line);
    }

    /// A line as it is, in no protocol's translation.
    fn raw(&self, line: &str) {
        let mut o = self.out.lock().unwrap();
        let _ = writeln!(o, "{line}");
        let _ = o.flush();
    }
}

/// A move of ours (`h3e3`, ranks from 1) in UCCI's notation (`h2e2`, ranks from 0); anything
/// else as it is.
fn move_to_ucci(m: &str) -> String {
    shift_ranks(m, -1).unwrap_or_else(|| m.to_string())
}

/// A UCCI move in our notation.
fn move_from_ucci(m: &str) -> String {
    shift_ranks(m, 1).unwrap_or_else(|| m.to_string())
}

/// `m` with every rank number moved by `by`: `None` unless it is squares (a file letter, then
/// digits) and nothing else.
fn shift_ranks(m: &str, by: i32) -> Option<String> {
    let mut out = String::new();
    let b = m.as_bytes();
    let mut i = 0;
    let mut squares = 0;
    while i < b.len() {
        if !b[i].is_ascii_lowercase() {
            return None;
        }
        out.push(b[i] as char);
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if start == i {
            // A promotion letter at the end, not a square.
            if i == b.len() && squares == 2 {
                return Some(out);
            }
            return None;
        }
        let rank: i32 = m[start..i].parse().ok()?;
        if rank + by < 0 {
            return None;
        }
        out.push_str(&(rank + by).to_string());
        squares += 1;
    }
    (squares == 2).then_some(out)
}

/// An output line in UCCI: moves after `bestmove`, `ponder` and `pv` in its notation, and
/// `nobestmove` for `bestmove (none)`.
fn ucci_line(line: &str) -> String {
    if line == "bestmove (none)" {
        return "nobestmove".into();
    }
    if !(line.starts_with("bestmove ") || line.starts_with("info ")) {
        return line.to_string();
    }
    let mut moves = false;
    line.split(' ')
        .map(|w| {
            let out = if moves {
                move_to_ucci(w)
            } else {
                w.to_string()
            };
            match w {
                "bestmove" | "ponder" | "pv" => moves = true,
                _ if line.starts_with("bestmove") => moves = false,
                _ => {}
            }
            out
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The default of the `Hash` option (MiB; less where the cap, [`hash_cap_mb`], is less).
pub const DEFAULT_HASH_MB: usize = 256;

/// `v` without its self-play move limit (a draw after N plies is adjudication, not a rule).
fn without_move_limit(v: &Arc<Variant>) -> Arc<Variant> {
    v.with_overrides(&[format!("rules.move_limit={}", u32::MAX)])
        .unwrap_or_else(|_| v.clone())
}

/// Fairy-Stockfish's names of our variants, offered besides ours.
const FSF_ALIASES: &[&str] = &["cambodian", "karouk", "ajaxxiangqi", "elephantchess"];

pub struct UciEngine {
    wire: Wire,
    /// UCCI: how `go time` counts (seconds unless `setoption usemillisec true`), and the moves
    /// `banmoves` forbids until the next `position`.
    millisec: bool,
    banned: Vec<Move>,
    resolver: Arc<dyn EvaluatorResolver>,
    /// Variants loaded through `VariantPath`, by name (before the built-in ones).
    loaded: BTreeMap<String, Arc<Variant>>,
    /// The variant chosen (nets and evaluators are checked against it).
    variant: Arc<Variant>,
    /// The same rules without the self-play move limit, which is no rule of any game: the GUI
    /// adjudicates, so the engine plays on however long a game runs.
    playing: Arc<Variant>,
    evaluator: String,
    search_cfg: SearchConfig,
    show_wdl: bool,
    /// Memory for the search tree in MiB (`Hash`): a search, `go infinite` included, never
    /// grows its tree past it.
    hash_mb: usize,
    /// The most `hash_mb` may be ([`hash_cap_mb`]).
    hash_cap_mb: usize,
    /// `MultiPV`: root lines per `info` report.
    multipv: usize,
    /// The position to search; None after a `position` command that was refused (a bad FEN),
    /// so that no stale position is ever searched.
    pos: Option<Position>,
    /// Idle searcher (None while a search thread holds it) and what it was built for.
    searcher: Option<Searcher>,
    searcher_key: (String, u64, String),
    /// The search thread; it hands the searcher back (None after a panic).
    thread: Option<JoinHandle<Option<Searcher>>>,
    infinite: bool,
    stop: Arc<AtomicBool>,
    /// Set by the search thread before it prints `bestmove`: a command after that line never
    /// finds the engine busy (the thread is joined instead).
    finished: Arc<AtomicBool>,
    /// The game an XBoard GUI plays with the engine (after `xboard`).
    xb: xboard::XboardGame,
}

impl UciEngine {
    /// An engine starting with `variant` and evaluator `evaluator` (looked up by `resolver`).
    pub fn new(
        out: Output,
        resolver: Arc<dyn EvaluatorResolver>,
        variant: Arc<Variant>,
        evaluator: &str,
        search_cfg: SearchConfig,
    ) -> UciEngine {
        let playing = without_move_limit(&variant);
        let cap = hash_cap_mb(std::fs::read_to_string("/proc/meminfo").ok().as_deref());
        UciEngine {
            wire: Wire {
                out,
                ucci: Arc::default(),
                xboard: Arc::default(),
            },
            millisec: false,
            banned: Vec::new(),
            resolver,
            loaded: BTreeMap::new(),
            pos: Some(Position::start(&playing)),
            variant,
            playing,
            evaluator: evaluator.to_string(),
            search_cfg,
            show_wdl: false,
            hash_mb: DEFAULT_HASH_MB.min(cap),
            hash_cap_mb: cap,
            multipv: 1,
            searcher: None,
            searcher_key: (String::new(), 0, String::new()),
            thread: None,
            infinite: false,
            stop: Arc::default(),
            finished: Arc::default(),
            xb: xboard::XboardGame::default(),
        }
    }

    fn say(&self, line: &str) {
        self.wire.say(line);
    }

    fn ucci(&self) -> bool {
        self.wire.ucci.load(Ordering::Relaxed)
    }

    fn error(&self, msg: &str) {
        self.say(&format!("info string error: {msg}"));
    }

    fn searching(&mut self) -> bool {
        if self.finished.load(Ordering::Acquire)
            || self.thread.as_ref().is_some_and(|t| t.is_finished())
        {
            self.join();
        }
        self.thread.is_some()
    }

    /// Waits for the search thread and takes the searcher back.
    fn join(&mut self) {
        if let Some(t) = self.thread.take() {
            // The thread catches a panic of the search, and answers `bestmove` itself.
            self.searcher = t.join().ok().flatten();
        }
    }

    fn stop_search(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.join();
    }

    /// Reads commands until `quit` or the end of the input (which lets a finite search end).
    pub fn run(&mut self, input: impl BufRead) {
        for line in input.lines() {
            let Ok(line) = line else { break };
            if !self.command(&line) {
                self.stop_search();
                return;
            }
        }
        if self.infinite {
            self.stop.store(true, Ordering::Relaxed);
        }
        self.join();
    }

    /// Handles one command line; false on `quit`.
    pub fn command(&mut self, line: &str) -> bool {
        let line = line.trim();
        let (cmd, rest) = match line.split_once(char::is_whitespace) {
            Some((c, r)) => (c, r.trim()),
            None => (line, ""),
        };
        let busy = self.searching();
        if self.wire.xboard.on.load(Ordering::Relaxed) {
            return self.xboard_command(cmd, rest, busy);
        }
        if self.ucci() {
            return self.ucci_command(cmd, rest, busy);
        }
        match cmd {
            "" => {}
            "quit" => return false,
            "isready" => {
                self.warm_up();
                self.say("readyok");
            }
            "stop" => {
                if busy {
                    self.stop_search();
                }
            }
            "ponderhit" | "debug" => {}
            "uci" => self.uci(),
            "ucci" => self.start_ucci(),
            "xboard" => self.start_xboard(),
            _ if busy => self.error(&format!(
                "'{cmd}' while searching: ignored (send stop first)"
            )),
            "ucinewgame" => {
                if let Some(s) = &mut self.searcher {
                    s.clear();
                }
                self.pos = Some(Position::start(&self.playing));
            }
            "setoption" => self.setoption(rest),
            "position" => self.position(rest),
            "go" => self.go(rest),
            "d" => match &self.pos {
                Some(pos) => {
                    let mut text = pos.diagram();
                    text.push_str(&format!("Fen: {}", pos.fen()));
                    for l in text.lines() {
                        self.say(&format!("info string {l}"));
                    }
                }
                None => self.error("no position (the last 'position' command was refused)"),
            },
            other => self.error(&format!("unknown command '{other}'")),
        }
        true
    }

    fn variant_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Variant::builtin_names().map(String::from).collect();
        names.extend(FSF_ALIASES.iter().map(|s| s.to_string()));
        for n in self.loaded.keys() {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
        names
    }

    /// `ucci`: from now on the engine speaks UCCI, the protocol of Xiangqi GUIs, as
    /// Fairy-Stockfish does: ranks counted from 0 in moves, `banmoves`, `go time/increment/
    /// opptime`, `nobestmove`, `bye`. A variant of another board than 9x10 gives way to xiangqi.
    fn start_ucci(&mut self) {
        self.wire.ucci.store(true, Ordering::Relaxed);
        let size = self.variant.size;
        if (size.files, size.ranks) != (9, 10) {
            self.setoption("name UCI_Variant value xiangqi");
        }
        self.say(&format!("id name varzero {}", env!("CARGO_PKG_VERSION")));
        self.say("id author the varzero authors");
        self.say("option usemillisec type check default false");
        self.say(&format!(
            "option hashsize type spin min 1 max {} default {}",
            self.hash_cap_mb,
            DEFAULT_HASH_MB.min(self.hash_cap_mb)
        ));
        self.say(&format!(
            "option multipv type spin min 1 max {MAX_MULTIPV} default 1"
        ));
        self.say("option newgame type button");
        self.say("ucciok");
    }

    /// One UCCI command (after `ucci`); false on `quit`.
    fn ucci_command(&mut self, cmd: &str, rest: &str, busy: bool) -> bool {
        match cmd {
            "" => {}
            "quit" => {
                self.stop_search();
                self.say("bye");
                return false;
            }
            "isready" => {
                self.warm_up();
                self.say("readyok");
            }
            "stop" => {
                if busy {
                    self.stop_search();
                }
            }
            "ponderhit" | "probe" => {}
            _ if busy => self.error(&format!(
                "'{cmd}' while searching: ignored (send stop first)"
            )),
            "setoption" => self.ucci_setoption(rest),
            "position" => {
                self.banned.clear();
                let (setup, moves) = match rest.find("moves") {
                    Some(i) => (rest[..i].trim(), rest[i + 5..].trim()),
                    None => (rest.trim(), ""),
                };
                // UCCI's FENs may name Red to move `r`.
                let setup = match setup.strip_suffix(" r") {
                    Some(s) => format!("{s} w"),
                    None => setup.replacen(" r ", " w ", 1),
                };
                let moves: Vec<String> = moves.split_whitespace().map(move_from_ucci).collect();
                let line = if moves.is_empty() {
                    setup
                } else {
                    format!("{setup} moves {}", moves.join(" "))
                };
                self.position(&line);
            }
            "banmoves" => {
                let Some(pos) = self.pos.clone() else {
                    self.error("banmoves: no position");
                    return true;
                };
                let legal = pos.legal_moves();
                for m in rest.split_whitespace() {
                    match pos.parse_uci(&move_from_ucci(m)) {
                        Ok(mv) if legal.contains(mv) => {
                            if !self.banned.contains(&mv) {
                                self.banned.push(mv);
                            }
                        }
                        _ => self.error(&format!("banmoves: '{m}' is not a legal move: ignored")),
                    }
                }
            }
            "go" => self.ucci_go(rest),
            "uci" | "ucci" => self.start_ucci(),
            other => self.error(&format!("unknown command '{other}'")),
        }
        true
    }

    /// `setoption NAME [VALUE]` (UCCI's form; `setoption name N value V` is taken too).
    fn ucci_setoption(&mut self, rest: &str) {
        if rest.starts_with("name") {
            return self.setoption(rest);
        }
        let (name, value) = match rest.split_once(char::is_whitespace) {
            Some((n, v)) => (n, v.trim()),
            None => (rest, ""),
        };
        match name.to_ascii_lowercase().as_str() {
            "usemillisec" => match value {
                "true" | "on" => self.millisec = true,
                "false" | "off" => self.millisec = false,
                _ => self.error(&format!("usemillisec '{value}': true or false")),
            },
            "hashsize" => self.setoption(&format!("name Hash value {value}")),
            "multipv" => self.setoption(&format!("name MultiPV value {value}")),
            "newgame" => {
                if let Some(s) = &mut self.searcher {
                    s.clear();
                }
                self.banned.clear();
                self.pos = Some(Position::start(&self.playing));
            }
            // Settings of other engines' searches that ours has no counterpart for.
            "batch" | "debug" | "ponder" | "promotion" | "idle" | "style" | "knowledge"
            | "pruning" | "randomness" | "bookfiles" | "evalapi" | "loadbook" | "threads"
            | "drawmoves" | "repetition" => {}
            _ => self.error(&format!("unknown option '{name}'")),
        }
    }

    /// UCCI's `go [ponder|draw] depth N | nodes N | time T [movestogo M | increment I]
    /// [opptime T [oppmovestogo M | oppincrement I]] | infinite`, as the UCI `go` it means:
    /// the side to move's clock, the banned moves left out. Time is in seconds unless
    /// `usemillisec` is on; a value above 36,000 is taken as milliseconds whatever the option
    /// says (ten hours a side is past any GUI's clock, and a misread clock would lose on time).
    fn ucci_go(&mut self, rest: &str) {
        let toks: Vec<&str> = rest.split_whitespace().collect();
        let white = self
            .pos
            .as_ref()
            .is_none_or(|p| p.side_to_move() == Color::White);
        let (me, opp) = if white { ("w", "b") } else { ("b", "w") };
        let ms = |v: &str| -> String {
            match read_number(v) {
                Some((x, _)) if self.millisec || x > 36_000 => x.to_string(),
                Some((x, _)) => x.saturating_mul(1000).to_string(),
                None => v.to_string(),
            }
        };
        let mut words: Vec<String> = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            let key = toks[i];
            let value = toks.get(i + 1).copied().unwrap_or("");
            match key {
                "ponder" | "draw" => {
                    i += 1;
                    continue;
                }
                "infinite" => words.push("infinite".into()),
                "depth" | "nodes" => words.extend([key.to_string(), value.to_string()]),
                "time" => words.extend([format!("{me}time"), ms(value)]),
                "increment" => words.extend([format!("{me}inc"), ms(value)]),
                "opptime" => words.extend([format!("{opp}time"), ms(value)]),
                "oppincrement" => words.extend([format!("{opp}inc"), ms(value)]),
                "movestogo" => words.extend(["movestogo".into(), value.to_string()]),
                "oppmovestogo" => {}
                other => words.push(other.to_string()),
            }
            i += if matches!(key, "infinite") { 1 } else { 2 };
        }
        if !self.banned.is_empty() {
            if let Some(pos) = &self.pos {
                let allowed: Vec<String> = pos
                    .legal_moves()
                    .iter()
                    .filter(|m| !self.banned.contains(m))
                    .map(|&m| pos.uci(m))
                    .collect();
                if allowed.is_empty() {
                    return self.say("bestmove (none)");
                }
                words.push("searchmoves".into());
                words.extend(allowed);
            }
        }
        self.go(&words.join(" "));
    }

    fn uci(&self) {
        self.say(&format!("id name varzero {}", env!("CARGO_PKG_VERSION")));
        self.say("id author the varzero authors");
        let vars: String = self
            .variant_names()
            .iter()
            .map(|n| format!(" var {n}"))
            .collect();
        self.say(&format!(
            "option name UCI_Variant type combo default {}{vars}",
            self.variant.name
        ));
        self.say("option name VariantPath type string default <empty>");
        self.say(&format!(
            "option name Evaluator type string default {}",
            self.evaluator
        ));
        self.say(&format!(
            "option name CPuct type string default {}",
            self.search_cfg.c_puct
        ));
        self.say(&format!(
            "option name Tactics type string default {}",
            self.search_cfg.tactics
        ));
        self.say(&format!(
            "option name TacticsPriors type string default {}",
            self.search_cfg.tactics_priors
        ));
        self.say(&format!(
            "option name PolicyTemperature type string default {}",
            self.search_cfg.policy_temperature
        ));
        self.say(&format!(
            "option name Threads type spin default {} min 1 max {MAX_THREADS}",
            self.search_cfg.threads
        ));
        self.say("option name UCI_ShowWDL type check default false");
        self.say(&format!(
            "option name MultiPV type spin default 1 min 1 max {MAX_MULTIPV}"
        ));
        self.say(&format!(
            "option name Hash type spin default {} min 1 max {}",
            DEFAULT_HASH_MB.min(self.hash_cap_mb),
            self.hash_cap_mb
        ));
        self.say("uciok");
    }

    fn setoption(&mut self, rest: &str) {
        let Some(rest) = rest.strip_prefix("name") else {
            return self.error("expected 'setoption name NAME [value VALUE]'");
        };
        let rest = rest.trim();
        let (name, value) = match rest.find(" value") {
            Some(i) => (rest[..i].trim(), rest[i + 6..].trim()),
            None => (rest, ""),
        };
        match name.to_ascii_lowercase().as_str() {
            "uci_variant" => {
                let v = match self.loaded.get(value) {
                    Some(v) => Ok(v.clone()),
                    None => Variant::builtin(canonical_name(value)).map_err(|e| e.to_string()),
                };
                match v {
                    Ok(v) => {
                        // A net made for another variant is refused now, not at `go`.
                        if let Err(e) = self.resolver.resolve(&self.evaluator, &v) {
                            self.error(&format!(
                                "evaluator '{}' cannot play {}: {e}; it is reset to material",
                                self.evaluator, v.name
                            ));
                            self.evaluator = "material".into();
                        }
                        self.playing = without_move_limit(&v);
                        self.pos = Some(Position::start(&self.playing));
                        self.variant = v;
                    }
                    Err(_) => self.error(&format!(
                        "unknown variant '{value}' (known: {})",
                        self.variant_names().join(" ")
                    )),
                }
            }
            "variantpath" => {
                if value.is_empty() || value == "<empty>" {
                    return;
                }
                for p in value.split(';').filter(|p| !p.trim().is_empty()) {
                    match Variant::from_file(Path::new(p.trim())) {
                        Ok(v) => {
                            self.say(&format!(
                                "info string loaded variant {} (rules hash {:016x}) from {}",
                                v.name,
                                v.rules_hash,
                                p.trim()
                            ));
                            self.loaded.insert(v.name.clone(), v);
                        }
                        Err(e) => self.error(&format!(
                            "VariantPath: {}",
                            e.lines()
                                .iter()
                                .flat_map(|l| l.lines())
                                .collect::<Vec<_>>()
                                .join("; ")
                        )),
                    }
                }
            }
            "evaluator" => match self.resolver.resolve(value, &self.variant) {
                Ok(Some(_)) => self.evaluator = value.to_string(),
                Ok(None) => self.error(&format!(
                    "unknown evaluator '{value}' (known: {})",
                    self.resolver.known().join(", ")
                )),
                Err(e) => self.error(&format!("evaluator '{value}': {e}")),
            },
            "cpuct" => match value.parse::<f32>() {
                Ok(c) if c > 0.0 && c.is_finite() => {
                    self.search_cfg.c_puct = c;
                    self.searcher = None;
                }
                _ => self.error(&format!("CPuct '{value}': a positive number")),
            },
            "tactics" => match value.parse::<f32>() {
                Ok(t) if (0.0..=1.0).contains(&t) => {
                    self.search_cfg.tactics = t;
                    self.searcher = None;
                }
                _ => self.error(&format!("Tactics '{value}': a number from 0 to 1")),
            },
            "tacticspriors" => match value.parse::<f32>() {
                Ok(t) if (0.0..=1.0).contains(&t) => {
                    self.search_cfg.tactics_priors = t;
                    self.searcher = None;
                }
                _ => self.error(&format!("TacticsPriors '{value}': a number from 0 to 1")),
            },
            "policytemperature" => match value.parse::<f32>() {
                Ok(t) if t.is_finite() && t >= varzero_search::MIN_POLICY_TEMPERATURE => {
                    self.search_cfg.policy_temperature = t;
                    self.searcher = None;
                }
                _ => self.error(&format!(
                    "PolicyTemperature '{value}': a number at least {}",
                    varzero_search::MIN_POLICY_TEMPERATURE
                )),
            },
            "hash" => match read_number(value) {
                Some((mb, _)) if mb >= 1 => {
                    let cap = self.hash_cap_mb;
                    if mb > cap as u64 {
                        self.say(&format!(
                            "info string Hash {value} is past the cap (half the physical \
                             memory): Hash is {cap} MiB"
                        ));
                    }
                    self.hash_mb = mb.min(cap as u64) as usize;
                }
                _ => self.error(&format!(
                    "Hash '{value}': MiB from 1 to {}",
                    self.hash_cap_mb
                )),
            },
            "multipv" => match read_number(value) {
                Some((k, _)) if (1..=MAX_MULTIPV as u64).contains(&k) => self.multipv = k as usize,
                _ => self.error(&format!("MultiPV '{value}': from 1 to {MAX_MULTIPV}")),
            },
            "threads" => match read_number(value) {
                Some((k, _)) if (1..=MAX_THREADS as u64).contains(&k) => {
                    self.search_cfg.threads = k as u32
                }
                _ => self.error(&format!("Threads '{value}': from 1 to {MAX_THREADS}")),
            },
            "uci_showwdl" => match value {
                "true" => self.show_wdl = true,
                "false" => self.show_wdl = false,
                _ => self.error(&format!("UCI_ShowWDL '{value}': true or false")),
            },
            _ => self.error(&format!("unknown option '{name}'")),
        }
    }

    /// `position startpos|fen FEN [moves ...]`. A bad FEN leaves no position (`go` then
    /// refuses); an illegal move keeps the position before it, as Fairy-Stockfish does, and
    /// says so. Moves are played on past any end our rules see (repetition, counting): the
    /// GUI adjudicates.
    fn position(&mut self, rest: &str) {
        let (setup, moves) = match rest.find("moves") {
            Some(i) => (rest[..i].trim(), Some(rest[i + 5..].trim())),
            None => (rest.trim(), None),
        };
        let pos = if setup == "startpos" {
            Ok(Position::start(&self.playing))
        } else if let Some(fen) = setup.strip_prefix("fen") {
            Position::from_fen(&self.playing, fen.trim())
                .map_err(|e| format!("bad FEN '{}': {e}", fen.trim()))
        } else {
            Err(format!(
                "expected 'position startpos|fen FEN [moves ...]', got '{rest}'"
            ))
        };
        let mut pos = match pos {
            Ok(p) => p,
            Err(e) => {
                self.pos = None;
                return self.error(&format!("{e}; no position is set"));
            }
        };
        for (i, m) in moves.unwrap_or("").split_whitespace().enumerate() {
            let legal = pos.parse_uci(m).and_then(|mv| {
                if pos.legal_moves().contains(mv) {
                    Ok(mv)
                } else {
                    Err(varzero_rules::ParseMoveError::Illegal(m.to_string()))
                }
            });
            match legal {
                Ok(mv) => pos.make(mv),
                Err(e) => {
                    self.error(&format!(
                        "move {} of the list: {e}; the position is the one before it ({} to move)",
                        i + 1,
                        pos.side_to_move()
                    ));
                    break;
                }
            }
        }
        self.pos = Some(pos);
    }

    /// Reads a `go` command leniently, as a GUI needs: every problem (an unknown word, a
    /// number that is missing, unreadable or out of range, an illegal `searchmoves` move) is
    /// reported and the rest is searched, so that every `go` ends in `bestmove`.
    fn read_go(&self, rest: &str) -> Go {
        let toks: Vec<&str> = rest.split_whitespace().collect();
        let mut go = Go::default();
        let l = &mut go.limits;
        let (mut wtime, mut btime, mut winc, mut binc, mut mtg) = (None, None, 0u64, 0u64, None);
        let mut bounded = false;
        let mut i = 0;
        while i < toks.len() {
            let key = toks[i];
            i += 1;
            if !GO_KEYWORDS.contains(&key) {
                go.problems
                    .push(format!("unknown 'go' parameter '{key}': ignored"));
                continue;
            }
            match key {
                "infinite" => {
                    l.infinite = true;
                    continue;
                }
                "ponder" => continue,
                "searchmoves" => {
                    let from = go.searchmoves.len();
                    while i < toks.len() && !GO_KEYWORDS.contains(&toks[i]) {
                        go.searchmoves.push(toks[i].to_string());
                        i += 1;
                    }
                    if go.searchmoves.len() == from {
                        go.problems
                            .push("'go searchmoves' lists no move: every move is searched".into());
                    }
                    continue;
                }
                _ => {}
            }
            // The value; a keyword in its place is the next parameter, not a bad value.
            let Some(&value) = toks.get(i).filter(|t| !GO_KEYWORDS.contains(t)) else {
                go.problems
                    .push(format!("'go {key}' needs a number: '{key}' ignored"));
                continue;
            };
            i += 1;
            let x = match read_number(value) {
                Some((x, exact)) => {
                    if !exact {
                        go.problems
                            .push(format!("'go {key} {value}' is out of range: read as {x}"));
                    }
                    x
                }
                None => {
                    go.problems.push(format!(
                        "'go {key} {value}' needs a number: '{key}' ignored"
                    ));
                    continue;
                }
            };
            match key {
                "nodes" => l.playouts = Some(x.max(1)),
                "movetime" => l.time = Some(Duration::from_millis(x)),
                "depth" => l.depth = Some(x.clamp(1, u32::MAX as u64) as u32),
                "mate" => go.mate = Some(x),
                "wtime" => wtime = Some(x),
                "btime" => btime = Some(x),
                "winc" => winc = x,
                "binc" => binc = x,
                _ => mtg = Some(x.max(1)),
            }
            bounded |= matches!(key, "nodes" | "movetime" | "depth");
        }
        let white = self
            .pos
            .as_ref()
            .is_none_or(|p| p.side_to_move() == Color::White);
        let (mine, inc) = if white { (wtime, winc) } else { (btime, binc) };
        if let Some(t) = mine {
            let budget = varzero_search::time::move_budget(t, inc, mtg);
            // An unclear move may run on to the cap, unless `movetime` bounds it too.
            if l.time.is_none() {
                l.time_cap = Some(varzero_search::time::move_cap(t, inc, mtg));
            }
            l.time = Some(l.time.map_or(budget, |m| m.min(budget)));
            bounded = true;
        }
        // Time that would be spent on a move that cannot change is saved for later moves.
        l.smart_pruning = l.time.is_some() && !l.infinite;
        if !bounded && !l.infinite {
            if go.mate.is_some() {
                // The solver's proof of a win (any length) stops it before, as always.
                l.time = Some(MATE_TIME);
            } else if !go.problems.is_empty() || !go.searchmoves.is_empty() {
                // A GUI that sent a bad limit, or moves but no limit, waits for an answer,
                // not for `stop`.
                l.playouts = Some(self.search_cfg.playouts.max(1) as u64);
            } else {
                // `go` alone searches until `stop`, as Stockfish does.
                l.infinite = true;
            }
        }
        go
    }

    /// The legal moves of `pos` among `moves` (the others are reported in `problems`).
    fn searchmoves(pos: &Position, moves: &[String], problems: &mut Vec<String>) -> Vec<Move> {
        let legal = pos.legal_moves();
        let mut out = Vec::new();
        for m in moves {
            match pos.parse_uci(m) {
                Ok(mv) if legal.contains(mv) => {
                    if !out.contains(&mv) {
                        out.push(mv)
                    }
                }
                _ => problems.push(format!("searchmoves: '{m}' is not a legal move: ignored")),
            }
        }
        if out.is_empty() && !moves.is_empty() {
            problems.push("searchmoves: no legal move listed: every move is searched".into());
        }
        out
    }

    /// The searcher for the variant and evaluator set, made when there is none or they changed;
    /// true when it was made.
    fn make_searcher(&mut self) -> bool {
        let key = (
            self.variant.name.clone(),
            self.variant.rules_hash,
            self.evaluator.clone(),
        );
        if self.searcher.is_some() && self.searcher_key == key {
            return false;
        }
        let ev = match self.resolver.resolve(&self.evaluator, &self.variant) {
            Ok(Some(ev)) => Ok(ev),
            Ok(None) => Err(format!("unknown evaluator '{}'", self.evaluator)),
            Err(e) => Err(e.to_string()),
        };
        // The GUI still gets a move: the evaluator that always resolves searches instead.
        let ev = match ev {
            Ok(ev) => ev,
            Err(e) => {
                self.error(&format!("{e}; searching with material"));
                Arc::new(varzero_search::MaterialEvaluator::new(&self.variant))
            }
        };
        let ev = varzero_search::TacticalBlend::for_search(ev, &self.variant, &self.search_cfg);
        let mut searcher = Searcher::new(ev, self.search_cfg.clone());
        searcher.play_on = true;
        self.searcher = Some(searcher);
        self.searcher_key = key;
        true
    }

    /// `isready` (and XBoard's `ping`): a searcher made now is warmed by a one-playout search
    /// of the position, so that loading the net and its first forward are paid before the GUI
    /// starts the clock, not inside the first move's time (as Stockfish loads its net at
    /// `isready`). Nothing happens while a search runs or when the searcher is ready.
    fn warm_up(&mut self) {
        if self.searching() || !self.make_searcher() {
            return;
        }
        let pos = self
            .pos
            .clone()
            .unwrap_or_else(|| Position::start(&self.playing));
        if pos.legal_moves().is_empty() {
            return;
        }
        let limits = Limits {
            playouts: Some(1),
            ..Limits::default()
        };
        if let Some(searcher) = self.searcher.as_mut() {
            searcher.search(&pos, &limits, &AtomicBool::new(false), &mut |_| {});
        }
    }

    fn go(&mut self, rest: &str) {
        let mut go = self.read_go(rest);
        let Some(pos) = self.pos.clone() else {
            for p in &go.problems {
                self.error(p);
            }
            self.error("no position to search: the last 'position' command was refused");
            return self.say("bestmove (none)");
        };
        go.limits.searchmoves = Self::searchmoves(&pos, &go.searchmoves, &mut go.problems);
        for p in &go.problems {
            self.error(p);
        }
        let limits = go.limits;
        // `(none)` only without a legal move; an end by our rules alone (repetition, counting)
        // is the GUI's to adjudicate, and the engine answers a move as Fairy-Stockfish does.
        if pos.legal_moves().is_empty() {
            return self.say("bestmove (none)");
        }
        self.make_searcher();
        let mut searcher = self.searcher.take().expect("an idle searcher");
        searcher.max_bytes = self.hash_mb << 20;
        searcher.cfg.threads = self.search_cfg.threads.max(1);
        searcher.multipv = self.multipv;
        self.stop.store(false, Ordering::Relaxed);
        self.finished.store(false, Ordering::Release);
        self.infinite = limits.infinite;
        let stop = self.stop.clone();
        let finished = self.finished.clone();
        let out = self.wire.clone();
        let show_wdl = self.show_wdl;
        let multipv = self.multipv;
        self.thread = Some(std::thread::spawn(move || {
            let searched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut report = |i: &SearchInfo| {
                    for line in info_lines(&pos, i, show_wdl, multipv) {
                        out.say(&line);
                    }
                };
                let info = searcher.search(&pos, &limits, &stop, &mut report);
                (info, searcher)
            }));
            finished.store(true, Ordering::Release);
            match searched {
                Ok((info, searcher)) => {
                    match info.best {
                        Some(m) => out.say(&format!("bestmove {}", pos.uci(m))),
                        None => out.say("bestmove (none)"),
                    }
                    Some(searcher)
                }
                Err(_) => {
                    // A GUI waits for `bestmove` whatever happened: a legal move, and a
                    // fresh searcher next time.
                    out.say("info string error: the search failed");
                    let first = limits.searchmoves.first().copied();
                    let m = first.or_else(|| pos.legal_moves().iter().next().copied());
                    out.say(&format!(
                        "bestmove {}",
                        m.map_or("(none)".into(), |m| pos.uci(m))
                    ));
                    None
                }
            }
        }));
    }
}

/// The words of a `go` command.
const GO_KEYWORDS: &[&str] = &[
    "searchmoves",
    "ponder",
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "depth",
    "nodes",
    "mate",
    "movetime",
    "infinite",
];

/// The most root lines `MultiPV` shows.
pub const MAX_MULTIPV: usize = 256;

/// The most search threads `Threads` takes (the search config's own bound).
pub const MAX_THREADS: usize = 256;

/// How long `go mate N` searches without another limit, unless the solver proves the result
/// first (docs/uci.md).
pub const MATE_TIME: Duration = Duration::from_secs(10);

/// A `go` command as read: the limits, the `searchmoves` words, `mate N`, and what could not
/// be read.
#[derive(Default)]
struct Go {
    limits: Limits,
    searchmoves: Vec<String>,
    mate: Option<u64>,
    problems: Vec<String>,
}

/// A whole number as a UCI argument: `Some((x, exact))`, where a negative number reads as 0
/// and one past `u64` as `u64::MAX` (`exact` false); None when it is no number.
fn read_number(t: &str) -> Option<(u64, bool)> {
    let (negative, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if negative {
        return Some((0, digits.bytes().all(|b| b == b'0')));
    }
    Some(digits.parse().map_or((u64::MAX, false), |x| (x, true)))
}

/// The most `Hash` may be, in MiB: half the physical memory (`MemTotal` of `meminfo`, the
/// text of /proc/meminfo), or [`FALLBACK_HASH_CAP_MB`] where it cannot be read. The tree
/// stays within Hash, so the engine never takes more than about half the machine.
pub fn hash_cap_mb(meminfo: Option<&str>) -> usize {
    let kib = meminfo.and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .and_then(|v| v.trim().parse::<u64>().ok())
    });
    match kib {
        Some(k) if k >= 2048 => (k / 1024 / 2) as usize,
        _ => FALLBACK_HASH_CAP_MB,
    }
}

/// The cap of `Hash` where /proc/meminfo cannot be read (MiB).
pub const FALLBACK_HASH_CAP_MB: usize = 4096;

/// The `info` lines of a report: one as [`info_line`] with `MultiPV` 1, else one per root
/// line with `multipv K` (Stockfish's form), best first.
pub fn info_lines(pos: &Position, i: &SearchInfo, show_wdl: bool, multipv: usize) -> Vec<String> {
    if multipv <= 1 {
        return vec![info_line(pos, i, show_wdl)];
    }
    let ms = i.elapsed.as_millis().max(1);
    i.lines
        .iter()
        .enumerate()
        .map(|(k, l)| {
            let score = match l.mate {
                Some(n) => format!("mate {n}"),
                None => format!("cp {}", l.centipawns()),
            };
            let mut s = format!(
                "info depth {} seldepth {} multipv {} score {score}",
                i.depth.max(1),
                i.seldepth.max(1),
                k + 1
            );
            if show_wdl {
                s.push_str(&wdl_words(l.wdl));
            }
            s.push_str(&format!(
                " nodes {} nps {} time {ms} pv {}",
                i.visits,
                i.playouts as u128 * 1000 / ms,
                pos.uci_line(&l.pv).join(" ")
            ));
            s
        })
        .collect()
}

/// ` wdl W D L` in permille, summing to 1000 (an unvisited move is even).
fn wdl_words(wdl: [f32; 3]) -> String {
    let wdl = if wdl.iter().any(|x| !x.is_finite()) {
        [0.0, 1.0, 0.0]
    } else {
        wdl
    };
    let w = (wdl[0] * 1000.0).round() as i32;
    let l = (wdl[2] * 1000.0).round() as i32;
    format!(" wdl {w} {} {l}", 1000 - w - l)
}

/// An `info` line for a search's progress.
pub fn info_line(pos: &Position, i: &SearchInfo, show_wdl: bool) -> String {
    let ms = i.elapsed.as_millis().max(1);
    let score = if let Some(n) = i.mate {
        format!("mate {n}")
    } else {
        format!("cp {}", i.centipawns())
    };
    let mut s = format!(
        "info depth {} seldepth {} nodes {} nps {} time {} score {score}",
        i.depth.max(1),
        i.seldepth.max(1),
        i.visits,
        i.playouts as u128 * 1000 / ms,
        ms
    );
    if show_wdl {
        s.push_str(&wdl_words(i.wdl));
    }
    if !i.pv.is_empty() {
        s.push_str(" pv ");
        s.push_str(&pos.uci_line(&i.pv).join(" "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ucci_moves_count_ranks_from_zero() {
        assert_eq!(move_from_ucci("h2e2"), "h3e3");
        assert_eq!(move_from_ucci("a9a8"), "a10a9");
        assert_eq!(move_to_ucci("e10e9"), "e9e8");
        assert_eq!(move_to_ucci("b1c3"), "b0c2");
        // Not moves: left alone.
        for w in ["(none)", "cp", "12", "a0", "e1e2e3", "E1e2"] {
            assert_eq!(move_to_ucci(w), w);
        }
        assert_eq!(
            ucci_line("info depth 3 seldepth 5 nodes 10 nps 9 time 1 score cp 12 pv h3e3 h10g8"),
            "info depth 3 seldepth 5 nodes 10 nps 9 time 1 score cp 12 pv h2e2 h9g7"
        );
        assert_eq!(ucci_line("bestmove h3e3"), "bestmove h2e2");
        assert_eq!(ucci_line("bestmove (none)"), "nobestmove");
        assert_eq!(ucci_line("readyok"), "readyok");
        assert_eq!(
            ucci_line("info string a1a2 stays"),
            "info string a1a2 stays"
        );
    }
}
