//! Any bytes as `varzero probe` requests: one JSON answer per line, an error answer for bad
//! input, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../../src/commands/probe.rs"]
mod probe;

fuzz_target!(|data: &[u8]| {
    let _ = probe::serve(data, std::io::sink());
});
