//! External engines speaking UCI with Fairy-Stockfish conventions: the variant is set through
//! the `UCI_Variant` option, positions are sent as `position fen FEN moves ...`, and each move
//! is searched under a node, time or depth budget. A crash, a timeout or an illegal answer loses
//! the game; the engine is restarted for the next one.
//!
//! Spec: `uci:COMMAND ARGS[@KEY=VALUE,...]` with keys
//! `nodes=N`, `movetime=MS`, `depth=D` (the budget, at least one, or `clock`: the match's),
//! `timeout=MS` (per move; default movetime + 1 s + movetime, or 60 s),
//! `variant=NAME` (the `UCI_Variant` value; default the variant's `fairy_stockfish` name, else
//! our name), `name=NAME` (shown in reports), and `option.NAME=VALUE` (any `setoption`, sent
//! before `UCI_Variant`, e.g. `option.VariantPath=variants.ini`). Arguments are split like a
//! shell does (quotes and backslashes).

use crate::error::{Error, Result};
use crate::players::{GameView, Player, PlayerError, PlayerFactory};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use varzero_rules::Variant;

/// How long the handshake (`uci`, `isready`) may take.
pub const INIT_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Clone, Debug, PartialEq, Default)]
pub struct UciEngineConfig {
    /// Program and arguments.
    pub command: Vec<String>,
    pub nodes: Option<u64>,
    pub movetime: Option<u64>,
    pub depth: Option<u32>,
    /// Per-move limit in milliseconds.
    pub timeout: Option<u64>,
    pub variant: Option<String>,
    pub name: Option<String>,
    pub options: Vec<(String, String)>,
    /// The `fsf@` player: Fairy-Stockfish, given our definitions of the variants it has no
    /// built-in name for ([`fsf_variant_path`]).
    pub fairy_stockfish: bool,
    /// `@clock`: the match's clock is the budget (`go wtime ... btime ...`).
    pub clock: bool,
}

/// Fairy-Stockfish definitions of the variants we play that it does not know by a built-in name
/// (`ajaxxiangqi`), the same file the differential test and the perft counts use.
pub const FSF_CUSTOM_VARIANTS: &str =
    include_str!("../../scripts/difftest_data/fsf-custom-variants.ini");

/// A `VariantPath` file defining Fairy-Stockfish's variant `name`, when [`FSF_CUSTOM_VARIANTS`]
/// defines it: written once into the cache (by rename), its path returned.
pub fn fsf_variant_path(name: &str) -> Option<std::path::PathBuf> {
    let defined = FSF_CUSTOM_VARIANTS.lines().any(|l| {
        l.strip_prefix('[')
            .and_then(|r| r.split([':', ']']).next())
            .is_some_and(|n| n == name)
    });
    if !defined {
        return None;
    }
    let dir = cache_dir().unwrap_or_else(std::env::temp_dir).join("fsf");
    let path = dir.join("varzero-variants.ini");
    if std::fs::read_to_string(&path).ok().as_deref() != Some(FSF_CUSTOM_VARIANTS) {
        let tmp = dir.join(format!("varzero-variants.ini.{}.tmp", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        std::fs::write(&tmp, FSF_CUSTOM_VARIANTS).ok()?;
        std::fs::rename(&tmp, &path).ok()?;
    }
    Some(path)
}

/// Splits a command line like a POSIX shell (no expansions): whitespace separates words,
/// quotes group, a backslash escapes the next character outside single quotes.
pub fn split_command(s: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => return Err(Error::Spec(format!("unclosed ' in '{s}'"))),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x) => cur.push(x),
                            None => return Err(Error::Spec(format!("trailing \\ in '{s}'"))),
                        },
                        Some(x) => cur.push(x),
                        None => return Err(Error::Spec(format!("unclosed \" in '{s}'"))),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(x) => cur.push(x),
                    None => return Err(Error::Spec(format!("trailing \\ in '{s}'"))),
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

/// The cache our scripts install into: `$VARZERO_CACHE`, else `~/.cache/varzero`.
pub fn cache_dir() -> Option<std::path::PathBuf> {
    std::env::var_os("VARZERO_CACHE")
        .filter(|p| !p.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache/varzero"))
        })
}

/// Where the `fsf` player finds Fairy-Stockfish: `$VARZERO_FSF`, else the binary that
/// `scripts/setup-fsf` builds into `$VARZERO_CACHE/fsf` (default `~/.cache/varzero/fsf`).
pub fn fairy_stockfish_path() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    if let Some(p) = std::env::var_os("VARZERO_FSF").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let p = cache_dir()?.join("fsf/fairy-stockfish");
    p.exists().then_some(p)
}

impl UciEngineConfig {
    /// Parses what follows `uci:`.
    pub fn parse(s: &str) -> Result<UciEngineConfig> {
        let mut cfg = UciEngineConfig::default();
        let (cmd, keys) = match s.rsplit_once('@') {
            Some((c, k)) if k.contains('=') || k.split(',').any(|x| x.trim() == "clock") => {
                (c, Some(k))
            }
            _ => (s, None),
        };
        cfg.command = split_command(cmd)?;
        if cfg.command.is_empty() {
            return Err(Error::Spec("uci: needs a command".into()));
        }
        for kv in keys
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .filter(|k| !k.is_empty())
        {
            if kv == "clock" {
                cfg.clock = true;
                continue;
            }
            let (k, v) = kv.split_once('=').ok_or_else(|| {
                Error::Spec(format!(
                    "uci engine setting '{kv}': expected KEY=VALUE or clock"
                ))
            })?;
            let num = |what: &str| {
                v.trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|&x| x > 0)
                    .ok_or_else(|| Error::Spec(format!("{what} '{v}' must be a positive number")))
            };
            match k.trim() {
                "nodes" => cfg.nodes = Some(num("nodes")?),
                "movetime" => cfg.movetime = Some(num("movetime")?),
                "depth" => cfg.depth = Some(num("depth")? as u32),
                "timeout" => cfg.timeout = Some(num("timeout")?),
                "variant" => cfg.variant = Some(v.trim().to_string()),
                "name" => cfg.name = Some(v.trim().to_string()),
                k if k.starts_with("option.") && k.len() > 7 => {
                    cfg.options.push((k[7..].to_string(), v.trim().to_string()))
                }
                other => {
                    return Err(Error::Spec(format!(
                        "unknown uci engine setting '{other}' (nodes, movetime, depth, timeout, \
                         variant, name, option.NAME)"
                    )))
                }
            }
        }
        if cfg.nodes.is_none() && cfg.movetime.is_none() && cfg.depth.is_none() && !cfg.clock {
            return Err(Error::Spec(format!(
                "uci:{s}: give a search budget, e.g. @nodes=1000, @movetime=100 or @clock (the match's)"
            )));
        }
        Ok(cfg)
    }

    /// The `go` command for one move, under the match's clock if it has one.
    pub fn go_command(&self, clock: Option<&crate::clock::ClockView>) -> String {
        let mut go = String::from("go");
        if let Some(c) = clock {
            go.push(' ');
            go.push_str(&c.go_params());
        }
        if let Some(n) = self.nodes {
            go.push_str(&format!(" nodes {n}"));
        }
        if let Some(t) = self
            .movetime
            .filter(|_| clock.is_none_or(|c| c.movetime.is_none()))
        {
            go.push_str(&format!(" movetime {t}"));
        }
        if let Some(d) = self.depth {
            go.push_str(&format!(" depth {d}"));
        }
        go
    }

    /// How long to wait for `bestmove`. Under a clock, the mover's time and a second more: an
    /// engine past its time has lost on the clock anyway, and is only waited for so that its
    /// answer (and its health) is known.
    pub fn move_timeout(&self, clock: Option<(&crate::clock::ClockView, bool)>) -> Duration {
        if let Some((c, white)) = clock {
            return c.deadline(white) + Duration::from_millis(1000);
        }
        Duration::from_millis(match (self.timeout, self.movetime) {
            (Some(t), _) => t,
            (None, Some(m)) => 2 * m + 1000,
            (None, None) => 60_000,
        })
    }

    /// The `UCI_Variant` value for a variant.
    pub fn variant_name(&self, v: &Variant) -> String {
        self.variant
            .clone()
            .or_else(|| v.fairy_stockfish.clone())
            .unwrap_or_else(|| v.name.clone())
    }
}

pub struct UciPlayerFactory {
    name: String,
    cfg: UciEngineConfig,
    variant: Arc<Variant>,
}

impl UciPlayerFactory {
    pub fn new(spec: &str, cfg: UciEngineConfig, variant: Arc<Variant>) -> UciPlayerFactory {
        UciPlayerFactory {
            name: cfg.name.clone().unwrap_or_else(|| spec.to_string()),
            cfg,
            variant,
        }
    }
}

impl PlayerFactory for UciPlayerFactory {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn create(&self, _seed: u64) -> Result<Box<dyn Player>, PlayerError> {
        Ok(Box::new(UciEngine::start(&self.cfg, &self.variant)?))
    }
}

/// A running engine process.
pub struct UciEngine {
    cfg: UciEngineConfig,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    healthy: bool,
    /// The engine's `id name`, if it gave one.
    pub id_name: Option<String>,
    /// The last `info ... score` of the last search, as w - l for the side to move.
    last_value: Option<f32>,
}

/// An `info` line's score as w - l for the side to move: `mate N` is a win (N > 0) or a loss,
/// `cp X` goes through the inverse of lc0's centipawn mapping (the one `SearchInfo` uses to
/// print ours), q = atan(X / 111.71) / 1.5621.
pub fn info_value(line: &str) -> Option<f32> {
    let mut toks = line.split_whitespace();
    if toks.next() != Some("info") {
        return None;
    }
    while let Some(t) = toks.next() {
        if t == "score" {
            let kind = toks.next()?;
            let n: i64 = toks.next()?.parse().ok()?;
            return match kind {
                "mate" if n > 0 => Some(1.0),
                "mate" => Some(-1.0),
                "cp" => Some(((n as f64 / 111.714_640_912).atan() / 1.562_068_842_1) as f32),
                _ => None,
            };
        }
    }
    None
}

/// Makes the engine killed when the thread that starts it ends, and so whenever we end: a
/// SIGTERM or SIGINT (whose default action ends us at once, in the middle of a `go`), a panic,
/// or a `kill -9`, which no handler of ours could see. Without it an engine in the middle of
/// a long search outlived us until its search ended, since it reads the end of its input only
/// then. An engine lives in the match worker that made it and is dropped (`quit`, then killed)
/// there, so the thread's end is never too early. Linux only (elsewhere `Drop` alone).
#[allow(unsafe_code)] // pre_exec and prctl: the crate's one unsafe block
fn die_with_us(command: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: between fork and exec the closure calls only async-signal-safe functions
        // (prctl, getppid, _exit) and allocates nothing.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // We ended before prctl took effect: the signal will never come.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }
}

impl UciEngine {
    /// Starts the engine, runs the handshake, and sets the variant and options.
    pub fn start(cfg: &UciEngineConfig, variant: &Variant) -> Result<UciEngine, PlayerError> {
        let mut command = Command::new(&cfg.command[0]);
        command
            .args(&cfg.command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        die_with_us(&mut command);
        let mut child = command.spawn().map_err(|e| {
            PlayerError::Failure(format!("cannot start '{}': {e}", cfg.command.join(" ")))
        })?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(l) => {
                        if tx.send(l).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
        });
        let mut e = UciEngine {
            cfg: cfg.clone(),
            child,
            stdin,
            lines: rx,
            healthy: true,
            id_name: None,
            last_value: None,
        };
        e.send("uci")?;
        let mut variants: Option<Vec<String>> = None;
        let deadline = Instant::now() + INIT_TIMEOUT;
        loop {
            let line = e.next_line(deadline, "uciok")?;
            let t = line.trim();
            if t == "uciok" {
                break;
            }
            if let Some(n) = t.strip_prefix("id name ") {
                e.id_name = Some(n.trim().to_string());
            }
            if t.starts_with("option name UCI_Variant ") {
                let toks: Vec<&str> = t.split_whitespace().collect();
                variants = Some(
                    toks.windows(2)
                        .filter(|w| w[0] == "var")
                        .map(|w| w[1].to_string())
                        .collect(),
                );
            }
        }
        for (k, v) in &cfg.options {
            e.send(&format!("setoption name {k} value {v}"))?;
        }
        let want = cfg.variant_name(variant);
        let loads_variants = cfg.options.iter().any(|(k, _)| k == "VariantPath");
        match &variants {
            Some(list) if !list.contains(&want) && !loads_variants => {
                e.healthy = false;
                return Err(PlayerError::Failure(format!(
                    "the engine does not know UCI_Variant '{want}' (it knows {}); \
                     set @variant=NAME or @option.VariantPath=FILE",
                    list.join(" ")
                )));
            }
            Some(_) => e.send(&format!("setoption name UCI_Variant value {want}"))?,
            // No UCI_Variant option: an engine for one game; its moves are checked anyway.
            None => {}
        }
        e.ready(INIT_TIMEOUT)?;
        Ok(e)
    }

    fn send(&mut self, line: &str) -> Result<(), PlayerError> {
        let r = writeln!(self.stdin, "{line}").and_then(|_| self.stdin.flush());
        r.map_err(|e| {
            self.healthy = false;
            PlayerError::Crash(format!(
                "cannot write to the engine ({e}){}",
                self.exit_note()
            ))
        })
    }

    fn exit_note(&mut self) -> String {
        std::thread::sleep(Duration::from_millis(20));
        match self.child.try_wait() {
            Ok(Some(st)) => format!(", it exited with {st}"),
            _ => String::new(),
        }
    }

    /// The next line before `deadline`.
    fn next_line(&mut self, deadline: Instant, waiting_for: &str) -> Result<String, PlayerError> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(l) => Ok(l),
            Err(RecvTimeoutError::Timeout) => Err(PlayerError::Timeout(format!(
                "no '{waiting_for}' within the time allowed"
            ))),
            Err(RecvTimeoutError::Disconnected) => {
                self.healthy = false;
                Err(PlayerError::Crash(format!(
                    "the engine closed its output while we waited for '{waiting_for}'{}",
                    self.exit_note()
                )))
            }
        }
    }

    fn ready(&mut self, timeout: Duration) -> Result<(), PlayerError> {
        self.send("isready")?;
        let deadline = Instant::now() + timeout;
        loop {
            let l = self.next_line(deadline, "readyok").inspect_err(|_| {
                self.healthy = false;
            })?;
            if l.trim() == "readyok" {
                return Ok(());
            }
        }
    }

    /// The engine's own score of a final position without legal moves, for the side to move:
    /// Stockfish-family engines answer `go` there with `info depth 0 score mate 0` (lost: mated,
    /// or a stalemate that loses) or `score cp 0` (drawn) and `bestmove (none)`. None when it
    /// says nothing readable.
    pub fn score_final(&mut self, start_fen: &str, moves: &[String]) -> Option<i8> {
        let mut position = format!("position fen {start_fen}");
        if !moves.is_empty() {
            position.push_str(" moves ");
            position.push_str(&moves.join(" "));
        }
        self.send(&position).ok()?;
        self.send("go depth 1").ok()?;
        let deadline = Instant::now() + self.cfg.move_timeout(None).min(Duration::from_secs(10));
        let mut verdict = None;
        loop {
            let l = match self.next_line(deadline, "bestmove") {
                Ok(l) => l,
                Err(_) => {
                    self.healthy = false;
                    return None;
                }
            };
            let toks: Vec<&str> = l.split_whitespace().collect();
            if toks.first() == Some(&"bestmove") {
                return verdict;
            }
            if toks.first() == Some(&"info") {
                if let Some(i) = toks.iter().position(|t| *t == "score") {
                    let n = toks.get(i + 2).and_then(|x| x.parse::<i64>().ok());
                    verdict = match (toks.get(i + 1).copied(), n) {
                        // `mate 0` and `mate -N`: the side to move is mated (a won final
                        // position would be `mate N` with N > 0).
                        (Some("mate"), Some(n)) if n <= 0 => Some(-1),
                        (Some("mate"), Some(_)) => Some(1),
                        (Some("cp"), Some(0)) => Some(0),
                        (Some("cp"), Some(c)) => Some(c.signum() as i8),
                        _ => verdict,
                    };
                }
            }
        }
    }

    /// Asks for a move in the game so far.
    pub fn bestmove(
        &mut self,
        start_fen: &str,
        moves: &[String],
        stop: Option<&std::sync::atomic::AtomicBool>,
        clock: Option<(&crate::clock::ClockView, bool)>,
    ) -> Result<String, PlayerError> {
        let mut position = format!("position fen {start_fen}");
        if !moves.is_empty() {
            position.push_str(" moves ");
            position.push_str(&moves.join(" "));
        }
        self.send(&position)?;
        let go = self.cfg.go_command(clock.map(|c| c.0));
        self.send(&go)?;
        self.last_value = None;
        let timeout = self.cfg.move_timeout(clock);
        let deadline = Instant::now() + timeout;
        loop {
            let step = (Instant::now() + Duration::from_millis(100)).min(deadline);
            match self.next_line(step, "bestmove") {
                Ok(l) => {
                    if let Some(v) = info_value(&l) {
                        self.last_value = Some(v);
                    }
                    let mut toks = l.split_whitespace();
                    if toks.next() == Some("bestmove") {
                        return match toks.next() {
                            None | Some("(none)") | Some("0000") => Err(PlayerError::IllegalMove(
                                format!("'{}' in a position with legal moves", l.trim()),
                            )),
                            Some(m) => Ok(m.to_string()),
                        };
                    }
                }
                Err(PlayerError::Timeout(msg)) => {
                    if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                        let _ = self.send("stop");
                        self.healthy = false;
                        return Err(PlayerError::Failure("the match stopped".into()));
                    }
                    if Instant::now() >= deadline {
                        // Ask it to stop; whatever it says, the game is lost. Keep it only if it
                        // answers promptly.
                        let _ = self.send("stop");
                        let grace = Instant::now() + Duration::from_millis(500);
                        self.healthy = false;
                        while let Ok(l) = self.next_line(grace, "bestmove") {
                            if l.starts_with("bestmove") {
                                self.healthy = true;
                                break;
                            }
                        }
                        return Err(PlayerError::Timeout(format!(
                            "{msg} ({} ms after '{go}')",
                            timeout.as_millis()
                        )));
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Player for UciEngine {
    fn judge_end(&mut self, game: &GameView) -> Option<i8> {
        self.score_final(game.start_fen, game.moves)
    }
    fn new_game(&mut self) -> Result<(), PlayerError> {
        self.send("ucinewgame")?;
        self.ready(INIT_TIMEOUT)
    }
    fn choose(&mut self, game: &GameView) -> Result<String, PlayerError> {
        let white = game.pos.side_to_move() == varzero_rules::Color::White;
        self.bestmove(
            game.start_fen,
            game.moves,
            Some(game.stop),
            game.clock.as_ref().map(|c| (c, white)),
        )
    }
    fn healthy(&self) -> bool {
        self.healthy
    }
    fn last_value(&self) -> Option<f32> {
        self.last_value
    }
}

impl Drop for UciEngine {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit").and_then(|_| self.stdin.flush());
        let deadline = Instant::now() + Duration::from_millis(500);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => break,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_scores_become_values_for_the_side_to_move() {
        let v = |l: &str| info_value(l);
        assert_eq!(
            v("info depth 3 seldepth 5 score mate 2 nodes 10 pv a1a2"),
            Some(1.0)
        );
        assert_eq!(v("info depth 0 score mate 0"), Some(-1.0));
        assert_eq!(v("info depth 9 score mate -3 pv e1e2"), Some(-1.0));
        assert_eq!(v("info depth 4 score cp 0 nodes 100"), Some(0.0));
        // The inverse of cp = 111.71 tan(1.5621 q): q = 0.5 prints as 111.71 tan(0.78103) = 111.
        let half = v("info depth 4 score cp 111 nodes 100").unwrap();
        assert!((half - 0.5).abs() < 0.01, "{half}");
        assert!(v("info depth 4 score cp -30000").unwrap() < -0.99);
        assert_eq!(v("info string NNUE evaluation enabled"), None);
        assert_eq!(v("bestmove e2e4"), None);
    }

    #[test]
    fn our_fairy_stockfish_definitions_are_found_by_name() {
        let p = fsf_variant_path("ajaxxiangqi").expect("ajaxxiangqi is defined");
        assert_eq!(std::fs::read_to_string(p).unwrap(), FSF_CUSTOM_VARIANTS);
        assert_eq!(
            fsf_variant_path("makruk"),
            None,
            "built into Fairy-Stockfish"
        );
        assert_eq!(fsf_variant_path("ajax"), None, "a prefix is not a name");
    }
}
