//! Any variant file gives a variant or a `VariantError`, never a panic; a compiled variant's
//! start position supports move generation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use varzero_rules::{Position, Variant};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(v) = Variant::from_toml_str(text, "fuzz.toml") {
        let mut pos = Position::start(&v);
        let _ = pos.perft(2);
    }
});
