//! Any input to the FEN parser gives a position or a `ParseFenError`, never a panic; a parsed
//! position writes a FEN that parses back to the same FEN, and its moves can be generated.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};
use varzero_rules::{Position, Variant};

fn variants() -> &'static Vec<Arc<Variant>> {
    static V: OnceLock<Vec<Arc<Variant>>> = OnceLock::new();
    V.get_or_init(|| Variant::builtin_names().map(|n| Variant::builtin(n).unwrap()).collect())
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let vs = variants();
    let v = &vs[sel as usize % vs.len()];
    if let Ok(mut pos) = Position::from_fen(v, text) {
        let fen = pos.fen();
        let again = Position::from_fen(v, &fen).expect("written FEN parses");
        assert_eq!(again.fen(), fen);
        let _ = pos.perft(2);
        let _ = pos.outcome();
    }
});
