//! Our engine as a UCI engine, with Fairy-Stockfish's conventions: the variant is chosen by
//! the `UCI_Variant` option (our names and Fairy-Stockfish's: makruk, cambodian, karouk,
//! xiangqi...), `VariantPath` loads a variant file (TOML) whose variant `UCI_Variant` can then
//! select, positions come as `position startpos|fen FEN [moves ...]`, and `go` takes `nodes`,
//! `movetime`, `wtime/btime/winc/binc/movestogo`, `depth` (mean playout depth) or `infinite`.
//! The search (MCTS with the evaluator of the `Evaluator` option) runs on its own thread, so
//! `stop` and `isready` are answered while it thinks; it prints `info` lines about once a
//! second and `bestmove` at the end. A bad command gets an `info string error: ...` line and
//! changes nothing.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use varzero_rules::variant::canonical_name;
use varzero_rules::{Color, Position, Variant};
use varzero_search::{EvaluatorResolver, Limits, SearchConfig, SearchInfo, Searcher};

/// Where the engine writes; shared with the search thread.
pub type Output = Arc<Mutex<Box<dyn Write + Send>>>;

fn say(out: &Output, line: &str) {
    let mut o = out.lock().unwrap();
    let _ = writeln!(o, "{line}");
    let _ = o.flush();
}

/// The default of the `Hash` option (MiB), and its range.
pub const DEFAULT_HASH_MB: usize = 256;
const MAX_HASH_MB: usize = 1 << 20;

/// `v` without its self-play move limit (a draw after N plies is adjudication, not a rule).
fn without_move_limit(v: &Arc<Variant>) -> Arc<Variant> {
    v.with_overrides(&[format!("rules.move_limit={}", u32::MAX)])
        .unwrap_or_else(|_| v.clone())
}

/// A `go` command that cannot be read.
#[derive(Debug, thiserror::Error)]
enum GoError {
    #[error("'go {0}' needs a number")]
    Number(String),
    #[error("'searchmoves' is not supported")]
    SearchMoves,
    #[error("unknown 'go' parameter '{0}'")]
    Unknown(String),
}

/// Fairy-Stockfish's names of our variants, offered besides ours.
const FSF_ALIASES: &[&str] = &["cambodian", "karouk", "ajaxxiangqi", "elephantchess"];

pub struct UciEngine {
    out: Output,
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
    /// The position to search; None after a `position` command that was refused (a bad FEN),
    /// so that no stale position is ever searched.
    pos: Option<Position>,
    /// Idle searcher (None while a search thread holds it) and what it was built for.
    searcher: Option<Searcher>,
    searcher_key: (String, u64, String),
    thread: Option<JoinHandle<Searcher>>,
    infinite: bool,
    stop: Arc<AtomicBool>,
    /// Set by the search thread before it prints `bestmove`: a command after that line never
    /// finds the engine busy (the thread is joined instead).
    finished: Arc<AtomicBool>,
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
        UciEngine {
            out,
            resolver,
            loaded: BTreeMap::new(),
            pos: Some(Position::start(&playing)),
            variant,
            playing,
            evaluator: evaluator.to_string(),
            search_cfg,
            show_wdl: false,
            hash_mb: DEFAULT_HASH_MB,
            searcher: None,
            searcher_key: (String::new(), 0, String::new()),
            thread: None,
            infinite: false,
            stop: Arc::default(),
            finished: Arc::default(),
        }
    }

    fn say(&self, line: &str) {
        say(&self.out, line);
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
            match t.join() {
                Ok(s) => self.searcher = Some(s),
                Err(_) => {
                    self.searcher = None;
                    self.error("the search failed");
                }
            }
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
        match cmd {
            "" => {}
            "quit" => return false,
            "isready" => self.say("readyok"),
            "stop" => {
                if busy {
                    self.stop_search();
                }
            }
            "ponderhit" | "debug" => {}
            "uci" => self.uci(),
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
        self.say("option name UCI_ShowWDL type check default false");
        self.say(&format!(
            "option name Hash type spin default {DEFAULT_HASH_MB} min 1 max {MAX_HASH_MB}"
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
                Ok(c) if c > 0.0 => {
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
            "hash" => match value.parse::<usize>() {
                Ok(mb) if (1..=MAX_HASH_MB).contains(&mb) => self.hash_mb = mb,
                _ => self.error(&format!("Hash '{value}': MiB from 1 to {MAX_HASH_MB}")),
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

    fn limits(&self, rest: &str) -> Result<Limits, GoError> {
        let toks: Vec<&str> = rest.split_whitespace().collect();
        let mut l = Limits::default();
        let (mut wtime, mut btime, mut winc, mut binc, mut mtg) = (None, None, 0u64, 0u64, None);
        let mut i = 0;
        while i < toks.len() {
            let num = |j: usize| -> Result<u64, GoError> {
                toks.get(j)
                    .and_then(|t| t.parse::<i64>().ok())
                    .map(|x| x.max(0) as u64)
                    .ok_or_else(|| GoError::Number(toks[j - 1].to_string()))
            };
            match toks[i] {
                "infinite" => l.infinite = true,
                "ponder" => {}
                "nodes" => {
                    l.playouts = Some(num(i + 1)?.max(1));
                    i += 1;
                }
                "movetime" => {
                    l.time = Some(Duration::from_millis(num(i + 1)?));
                    i += 1;
                }
                "depth" => {
                    l.depth = Some(num(i + 1)?.max(1) as u32);
                    i += 1;
                }
                "wtime" | "btime" | "winc" | "binc" | "movestogo" | "mate" => {
                    let x = num(i + 1)?;
                    match toks[i] {
                        "wtime" => wtime = Some(x),
                        "btime" => btime = Some(x),
                        "winc" => winc = x,
                        "binc" => binc = x,
                        "movestogo" => mtg = Some(x.max(1)),
                        _ => {}
                    }
                    i += 1;
                }
                "searchmoves" => {
                    return Err(GoError::SearchMoves);
                }
                other => return Err(GoError::Unknown(other.to_string())),
            }
            i += 1;
        }
        let white = self
            .pos
            .as_ref()
            .is_none_or(|p| p.side_to_move() == Color::White);
        let (mine, inc) = if white { (wtime, winc) } else { (btime, binc) };
        if let Some(t) = mine {
            let budget = (t / mtg.unwrap_or(30) + inc * 3 / 4)
                .min(t / 3)
                .saturating_sub(20)
                .max(5);
            l.time = Some(l.time.map_or(Duration::from_millis(budget), |m| {
                m.min(Duration::from_millis(budget))
            }));
        }
        if l.playouts.is_none() && l.time.is_none() && l.depth.is_none() {
            // `go` alone searches until `stop`, as Stockfish does.
            l.infinite = true;
        }
        Ok(l)
    }

    fn go(&mut self, rest: &str) {
        let limits = match self.limits(rest) {
            Ok(l) => l,
            Err(e) => return self.error(&e.to_string()),
        };
        let Some(pos) = self.pos.clone() else {
            self.error("no position to search: the last 'position' command was refused");
            return self.say("bestmove (none)");
        };
        // `(none)` only without a legal move; an end by our rules alone (repetition, counting)
        // is the GUI's to adjudicate, and the engine answers a move as Fairy-Stockfish does.
        if pos.legal_moves().is_empty() {
            return self.say("bestmove (none)");
        }
        let key = (
            self.variant.name.clone(),
            self.variant.rules_hash,
            self.evaluator.clone(),
        );
        if self.searcher.is_none() || self.searcher_key != key {
            let ev = match self.resolver.resolve(&self.evaluator, &self.variant) {
                Ok(Some(ev)) => ev,
                Ok(None) => return self.error(&format!("unknown evaluator '{}'", self.evaluator)),
                Err(e) => return self.error(&e.to_string()),
            };
            let ev = varzero_search::TacticalBlend::for_search(ev, &self.variant, &self.search_cfg);
            let mut searcher = Searcher::new(ev, self.search_cfg.clone());
            searcher.play_on = true;
            self.searcher = Some(searcher);
            self.searcher_key = key;
        }
        let mut searcher = self.searcher.take().expect("an idle searcher");
        searcher.max_bytes = self.hash_mb << 20;
        self.stop.store(false, Ordering::Relaxed);
        self.finished.store(false, Ordering::Release);
        self.infinite = limits.infinite;
        let stop = self.stop.clone();
        let finished = self.finished.clone();
        let out = self.out.clone();
        let show_wdl = self.show_wdl;
        self.thread = Some(std::thread::spawn(move || {
            let mut report = |i: &SearchInfo| say(&out, &info_line(&pos, i, show_wdl));
            let info = searcher.search(&pos, &limits, &stop, &mut report);
            finished.store(true, Ordering::Release);
            match info.best {
                Some(m) => say(&out, &format!("bestmove {}", pos.uci(m))),
                None => say(&out, "bestmove (none)"),
            }
            searcher
        }));
    }
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
        let w = (i.wdl[0] * 1000.0).round() as i32;
        let l = (i.wdl[2] * 1000.0).round() as i32;
        s.push_str(&format!(" wdl {w} {} {l}", 1000 - w - l));
    }
    if !i.pv.is_empty() {
        s.push_str(" pv");
        let mut p = pos.clone();
        for &m in &i.pv {
            s.push(' ');
            s.push_str(&p.uci(m));
            p.make(m);
        }
    }
    s
}
