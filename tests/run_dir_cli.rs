//! The run directory as an interface (issue 32): its layout comes from the binary
//! (`--stage layout`), its format is checked whenever it is opened, and the report reads typed
//! records, so a renamed file or column is an error naming it, never a quietly empty chart.

mod common;
use common::{ok, refused, vz};

use std::path::Path;
use std::process::Output;

const CONFIG: &str =
    "name = \"layout\"\nvariant = \"makruk\"\ngenerations = 2\ngames_per_generation = 2\n";

fn stage(cfg: &Path, dir: &Path, stage: &str) -> Output {
    common::pipeline(cfg, dir, &["--stage", stage])
}

#[test]
fn the_layout_comes_from_the_binary_and_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let cfg = t.path().join("c.toml");
    std::fs::write(&cfg, CONFIG).unwrap();
    let dir = t.path().join("run");
    let out = ok(&stage(&cfg, &dir, "layout"));
    assert!(!dir.exists(), "--stage layout wrote {}", dir.display());
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["format"], 1);
    let files = &j["files"];
    let p = |s: &str| dir.join(s).display().to_string();
    assert_eq!(files["config"], p("config.toml"));
    // Per generation: generations 0..=2.
    assert_eq!(files["selfplay"].as_array().unwrap().len(), 3);
    assert_eq!(files["selfplay"][2], p("selfplay/gen-002"));
    assert_eq!(files["model"][1], p("models/gen-001.safetensors"));
    assert_eq!(files["match_record"][1], p("logs/match-gen-001.json"));
    assert_eq!(files["ladder_csv"], p("logs/ladder.csv"));
}

#[test]
fn a_run_of_another_format_is_refused_wherever_it_is_opened() {
    let t = tempfile::tempdir().unwrap();
    let cfg = t.path().join("c.toml");
    std::fs::write(&cfg, CONFIG).unwrap();
    let dir = t.path().join("run");
    ok(&stage(&cfg, &dir, "open"));
    assert_eq!(
        std::fs::read_to_string(dir.join("run.json")).unwrap(),
        "{\"format\":1}\n"
    );
    // A run directory from before the format file existed is format 1: it gets the file.
    std::fs::remove_file(dir.join("run.json")).unwrap();
    ok(&stage(&cfg, &dir, "open"));
    assert!(dir.join("run.json").exists());
    std::fs::write(dir.join("run.json"), "{\"format\": 7}\n").unwrap();
    for s in ["open", "selfplay", "report", "layout", "all"] {
        refused(&stage(&cfg, &dir, s), "run.json: run format 7");
    }
    refused(&vz(&["report", dir.to_str().unwrap()]), "run format 7");
}

#[test]
fn the_report_names_a_renamed_column_and_says_what_is_not_yet_written() {
    let t = tempfile::tempdir().unwrap();
    let cfg = t.path().join("c.toml");
    std::fs::write(&cfg, CONFIG).unwrap();
    let dir = t.path().join("run");
    ok(&stage(&cfg, &dir, "open"));
    ok(&vz(&["report", dir.to_str().unwrap()]));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("not yet written"), "{html}");
    // A log whose column was renamed (an older or newer writer): an error naming both.
    std::fs::write(
        dir.join("logs/ladder.csv"),
        "generation,player,rating,error95,games,cpu_hours\n0,gen-000@64,0.0,0.0,10,0.0\n",
    )
    .unwrap();
    refused(
        &vz(&["report", dir.to_str().unwrap()]),
        "logs/ladder.csv: no column 'elo'",
    );
    std::fs::write(
        dir.join("logs/ladder.csv"),
        "generation,player,elo,error95,games,cpu_hours\n0,gen-000@64,x,0.0,10,0.0\n",
    )
    .unwrap();
    refused(
        &vz(&["report", dir.to_str().unwrap()]),
        "logs/ladder.csv:2: column 'elo'",
    );
    // A match record that is not one.
    std::fs::remove_file(dir.join("logs/ladder.csv")).unwrap();
    std::fs::write(dir.join("logs/matches.csv"), "generation,opponent\n1,x\n").unwrap();
    refused(
        &vz(&["report", dir.to_str().unwrap()]),
        "logs/matches.csv: no column 'games'",
    );
}
