//! Any text as UCI commands: the engine answers or refuses each line, never panics, and every
//! search it starts ends on `stop`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::Write;
use std::sync::{Arc, Mutex};
use varzero_rules::Variant;
use varzero_search::BuiltinEvaluators;
use varzero_uci::{Output, UciEngine};
use varzero_search::SearchConfig;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let out: Output = Arc::new(Mutex::new(Box::new(std::io::sink()) as Box<dyn Write + Send>));
    let mut e = UciEngine::new(
        out,
        Arc::new(BuiltinEvaluators),
        Variant::builtin("makruk").unwrap(),
        "material",
        SearchConfig::default(),
    );
    for line in text.lines().take(64) {
        if line.contains("VariantPath") {
            continue; // reads files: the variant-file target covers their parser
        }
        if !e.command(line) {
            break;
        }
        // Every search, `go infinite` included, ends on `stop`.
        e.command("stop");
    }
    e.command("quit");
});
