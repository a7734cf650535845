//! `varzero probe`: a JSON-lines machine interface to the rules core (see docs/probe.md).
//!
//! One request per input line, one answer per output line, flushed after each answer, so a
//! tester can keep one process open and talk to it line by line. Every failure is answered
//! with `{"error": "..."}` and the process goes on with the next line.

use anyhow::Result;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::Arc;
use varzero_rules::{Position, Variant};

/// Compiled variants, keyed by (name, rule overrides), and the position of the last request:
/// a request that continues it (same variant, overrides and FEN, and a move list that extends
/// the last one) only plays the new moves, so a tester that sends a growing move list each
/// ply costs one move per request instead of the whole game.
#[derive(Default)]
struct Cache {
    variants: HashMap<(String, Vec<String>), Arc<Variant>>,
    last: Option<Last>,
}

struct Last {
    key: (String, Vec<String>, String),
    moves: Vec<String>,
    pos: Position,
}

impl Cache {
    fn get(&mut self, name: &str, sets: &[String]) -> Result<Arc<Variant>, String> {
        let key = (name.to_string(), sets.to_vec());
        if let Some(v) = self.variants.get(&key) {
            return Ok(v.clone());
        }
        let base = Variant::builtin(name).map_err(|e| format!("variant '{name}': {e}"))?;
        let v = if sets.is_empty() {
            base
        } else {
            base.with_overrides(sets)
                .map_err(|e| format!("variant '{name}' with set {sets:?}: {e}"))?
        };
        self.variants.insert(key, v.clone());
        Ok(v)
    }
}

pub fn run() -> Result<()> {
    serve(std::io::stdin().lock(), std::io::stdout().lock())
}

/// Answers every request of `input` on `out`, one JSON line each (the fuzz target drives this).
pub fn serve(mut input: impl BufRead, mut out: impl Write) -> Result<()> {
    let mut cache = Cache::default();
    let mut line = String::new();
    loop {
        line.clear();
        // A line that is not UTF-8 is an error answer, not the end of the session.
        let mut raw = Vec::new();
        if input.read_until(b'\n', &mut raw)? == 0 {
            break;
        }
        let answer = match String::from_utf8(raw) {
            Ok(s) => {
                line.push_str(&s);
                let text = line.trim();
                if text.is_empty() {
                    continue;
                }
                answer(&mut cache, text)
            }
            Err(_) => error("request is not UTF-8"),
        };
        serde_json::to_writer(&mut out, &answer)?;
        out.write_all(b"\n")?;
        out.flush()?;
    }
    Ok(())
}

fn error(msg: impl Into<String>) -> Value {
    json!({ "error": msg.into() })
}

/// One answer; a panic in the engine is caught and answered as an error too.
fn answer(cache: &mut Cache, text: &str) -> Value {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handle(cache, text))) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => error(e),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            error(format!("internal error (panic): {msg}"))
        }
    }
}

fn strings(req: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match req.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("'{key}' must be a list of strings"))
            })
            .collect(),
        // A single string of space-separated items is accepted as a convenience.
        Some(Value::String(s)) => Ok(s.split_whitespace().map(str::to_string).collect()),
        Some(_) => Err(format!("'{key}' must be a list of strings")),
    }
}

fn handle(cache: &mut Cache, text: &str) -> Result<Value, String> {
    let req: Value = serde_json::from_str(text).map_err(|e| format!("bad JSON: {e}"))?;
    let req = req
        .as_object()
        .ok_or_else(|| "request must be a JSON object".to_string())?;
    for k in req.keys() {
        if !matches!(k.as_str(), "variant" | "fen" | "moves" | "set" | "annotate") {
            return Err(format!("unknown field '{k}'"));
        }
    }
    let name = match req.get("variant") {
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err("'variant' must be a string".into()),
        None => return Err("missing 'variant'".into()),
    };
    let sets = strings(req, "set")?;
    let moves = strings(req, "moves")?;
    let v = cache.get(name, &sets)?;
    let annotate = match req.get("annotate") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("'annotate' must be true or false".into()),
    };
    let fen = match req.get("fen") {
        None | Some(Value::Null) => "startpos".to_string(),
        Some(Value::String(f)) => f.trim().to_string(),
        Some(_) => return Err("'fen' must be a string".into()),
    };
    let key = (name.to_string(), sets.clone(), fen.clone());
    let (mut pos, mut played) = match cache.last.take() {
        Some(last) if last.key == key && moves.starts_with(&last.moves) => (last.pos, last.moves),
        _ => {
            let pos = if fen == "startpos" {
                Position::start(&v)
            } else {
                Position::from_fen(&v, &fen).map_err(|e| format!("bad FEN '{fen}': {e}"))?
            };
            (pos, Vec::new())
        }
    };
    let res = play(&mut pos, &moves, &mut played);
    // Keep the position reached (even after an illegal move) for the next request.
    let pos = &mut cache
        .last
        .insert(Last {
            key,
            moves: played,
            pos,
        })
        .pos;
    res?;
    let mut legal: Vec<String> = pos.game_moves().iter().map(|&m| pos.uci(m)).collect();
    legal.sort();
    let outcome = pos.outcome();
    let (ply, limit) = pos.counting();
    let counting = if limit != 0 {
        json!({ "ply": ply, "limit": limit })
    } else {
        Value::Null
    };
    let checks = if v.rules.checks_to_win > 0 {
        let c = pos.checks_remaining();
        json!([c[0], c[1]])
    } else {
        Value::Null
    };
    let mut answer = json!({
        "legal": legal,
        "fen": pos.fen(),
        "check": pos.in_check(),
        "ended": outcome.is_some(),
        "result": outcome.map(|o| o.result.pgn()),
        "termination": outcome.map(|o| o.termination.name()),
        "counting": counting,
        "checks_remaining": checks,
    });
    if annotate {
        let (captures, checks) = annotations(pos);
        answer["captures"] = json!(captures);
        answer["checks"] = json!(checks);
    }
    Ok(answer)
}

/// Plays `moves[played.len()..]`, appending each move played to `played`.
fn play(pos: &mut Position, moves: &[String], played: &mut Vec<String>) -> Result<(), String> {
    for (i, m) in moves.iter().enumerate().skip(played.len()) {
        if let Some(o) = pos.outcome() {
            return Err(format!(
                "move {} '{m}': the game is already over ({o})",
                i + 1
            ));
        }
        let mv = pos
            .parse_uci(m)
            .map_err(|e| format!("move {}: {e} (position {})", i + 1, pos.fen()))?;
        // The repetition ban (Oxeli) is game legality, not perft legality.
        if !pos.game_moves().iter().any(|&g| g == mv) {
            return Err(format!(
                "move {} '{m}': forbidden by the repetition rule (position {})",
                i + 1,
                pos.fen()
            ));
        }
        pos.make(mv);
        played.push(m.clone());
    }
    Ok(())
}

/// The game-legal moves that capture and those that give check, each sorted.
fn annotations(pos: &mut Position) -> (Vec<String>, Vec<String>) {
    let moves: Vec<_> = pos.game_moves().iter().copied().collect();
    let (mut captures, mut checks) = (Vec::new(), Vec::new());
    for m in moves {
        let name = pos.uci(m);
        if pos.piece_at(m.to_sq()).is_some() {
            captures.push(name.clone());
        }
        pos.make(m);
        if pos.in_check() {
            checks.push(name);
        }
        pos.unmake();
    }
    captures.sort();
    checks.sort();
    (captures, checks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(cache: &mut Cache, req: &str) -> Value {
        answer(cache, req)
    }

    #[test]
    fn start_position_and_moves() {
        let mut c = Cache::default();
        let a = ask(&mut c, r#"{"variant":"makruk"}"#);
        assert_eq!(a["legal"].as_array().unwrap().len(), 23);
        assert_eq!(
            a["fen"],
            "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - - 0 1"
        );
        assert_eq!(a["ended"], false);
        assert_eq!(a["result"], Value::Null);
        assert_eq!(a["counting"], Value::Null);
        let b = ask(
            &mut c,
            r#"{"variant":"xiangqi","fen":"startpos","moves":["h3e3"]}"#,
        );
        assert_eq!(
            b["fen"],
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1"
        );
        let legal: Vec<&str> = b["legal"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        let mut sorted = legal.clone();
        sorted.sort();
        assert_eq!(legal, sorted);
    }

    #[test]
    fn errors_are_answers() {
        let mut c = Cache::default();
        for req in [
            "not json",
            "[1,2]",
            r#"{"variant":"nope"}"#,
            r#"{"moves":[]}"#,
            r#"{"variant":"makruk","fen":"banana"}"#,
            r#"{"variant":"makruk","set":["stalemate=sideways"]}"#,
            r#"{"variant":"makruk","bogus":1}"#,
        ] {
            let a = ask(&mut c, req);
            assert!(a["error"].is_string(), "{req}: {a}");
        }
        let a = ask(&mut c, r#"{"variant":"makruk","moves":["e3e4","e3e4"]}"#);
        let e = a["error"].as_str().unwrap();
        assert!(e.starts_with("move 2"), "{e}");
        assert!(e.contains("e3e4"), "{e}");
        // The process goes on, and the cached position is not corrupted by the failure.
        let b = ask(&mut c, r#"{"variant":"makruk","moves":["e3e4","d6d5"]}"#);
        assert_eq!(
            b["fen"],
            "rnsmksnr/8/ppp1pppp/3p4/4P3/PPPP1PPP/8/RNSKMSNR w - - 0 2"
        );
    }

    #[test]
    fn continuing_requests_match_fresh_ones() {
        let moves = ["e3e4", "d6d5", "e4d5", "e6e5", "d5d6"];
        let mut warm = Cache::default();
        for n in 0..=moves.len() {
            let req = json!({"variant": "kar-ouk", "moves": &moves[..n]}).to_string();
            let a = ask(&mut warm, &req);
            let b = ask(&mut Cache::default(), &req);
            assert_eq!(a, b, "{req}");
        }
    }

    #[test]
    fn game_end_counting_and_checks() {
        let mut c = Cache::default();
        // Kar Ouk: a check wins at once and leaves no moves.
        let a = ask(
            &mut c,
            r#"{"variant":"kar-ouk","fen":"4k3/8/8/8/8/8/8/R3K3 w - - 1+1 0 1","moves":["a1a8"]}"#,
        );
        assert_eq!(a["ended"], true, "{a}");
        assert_eq!(a["result"], "1-0");
        assert_eq!(a["termination"], "check-wins");
        assert_eq!(a["checks_remaining"], json!([0, 1]));
        assert_eq!(a["legal"], json!([]));
        let b = ask(
            &mut c,
            r#"{"variant":"kar-ouk","fen":"4k3/8/8/8/8/8/8/R3K3 w - - 1+1 0 1","moves":["a1a8","e8e7"]}"#,
        );
        assert!(b["error"].as_str().unwrap().contains("already over"), "{b}");
        // Makruk pieces' honour: K+R vs K starts a 16-move count at 2 * 3 pieces.
        let d = ask(
            &mut c,
            r#"{"variant":"makruk","fen":"8/8/8/4k3/8/8/8/R3K3 w - - 0 1","moves":["a1a2"]}"#,
        );
        assert_eq!(d["counting"], json!({"ply": 6, "limit": 32}));
        assert_eq!(d["fen"], "8/8/8/4k3/8/8/R7/4K3 b - 32 6 1");
    }

    #[test]
    fn overrides_and_annotations() {
        let mut c = Cache::default();
        let a = ask(
            &mut c,
            r#"{"variant":"oxeli","set":["face_off=none"],"annotate":true}"#,
        );
        assert_eq!(a["captures"], json!(["c1c6", "f1f6"]), "{a}");
        assert_eq!(a["checks"], json!([]));
        assert_eq!(c.variants.len(), 1);
        ask(&mut c, r#"{"variant":"oxeli","set":["face_off=none"]}"#);
        ask(&mut c, r#"{"variant":"oxeli"}"#);
        assert_eq!(c.variants.len(), 2);
    }
}
