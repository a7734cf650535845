//! Shipped nets (issue 29, deliverable 5): players and engines name them without a path
//! (`net:shipped`, `net:NAME`, `auto`), each shipped net loads for its variant, and a net is
//! refused in one line for another variant or for rules a variant file or `--set` changed.

mod common;
use common::{err, ok, refused, varzero};
use std::path::{Path, PathBuf};
use std::process::Output;

fn vz_nets(nets: &Path, args: &[&str]) -> Output {
    varzero()
        .env("VARZERO_NETS", nets)
        .args(args)
        .output()
        .unwrap()
}

/// A tiny random makruk net with its card, as nets/ holds them.
fn tiny_nets(dir: &Path) {
    common::tiny_net(dir, "makruk", "makruk");
    let v = varzero_rules::Variant::builtin("makruk").unwrap();
    std::fs::write(
        dir.join("makruk.toml"),
        format!(
            "variant = \"makruk\"\nrules_hash = \"{:016x}\"\nrecipe = \"test\"\ncommand = \"none\"\n\
             generation = 1\ncpu_hours = 0.0\n[rating]\nelo = 0.0\nlow = 0.0\nhigh = 0.0\n\
             anchor = \"random\"\nplayer = \"net:shipped@8\"\nsource = \"none\"\n[search]\n\
             playouts = 8\ntactics = 0.5\n",
            v.rules_hash
        ),
    )
    .unwrap();
}

fn analyse(nets: &Path, variant: &str, evaluator: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "analyse",
        "--variant",
        variant,
        "--playouts",
        "8",
        "--evaluator",
        evaluator,
        "--json",
    ];
    args.extend_from_slice(extra);
    vz_nets(nets, &args)
}

fn one_line_refusal(o: &Output, what: &str) {
    refused(o, what);
    assert_eq!(err(o).trim_end().lines().count(), 1, "{}", err(o));
}

#[test]
fn a_shipped_net_is_named_without_a_path_and_refused_for_other_rules() {
    let t = tempfile::tempdir().unwrap();
    tiny_nets(t.path());
    let nets = t.path();
    // By the variant, by name, and as the default evaluator.
    for ev in ["net:shipped", "net:makruk", "auto"] {
        let j: serde_json::Value =
            serde_json::from_str(&ok(&analyse(nets, "makruk", ev, &[]))).unwrap();
        assert!(
            j["evaluator"]
                .as_str()
                .unwrap_or("")
                .contains("makruk.safetensors"),
            "{ev}: {j}"
        );
    }
    // In a match, as a player.
    let out = t.path().join("m");
    ok(&vz_nets(
        nets,
        &[
            "match",
            "--variant",
            "makruk",
            "net:shipped@4",
            "material@4",
            "--games",
            "2",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    // Another variant: refused by name; `auto` falls back to material there.
    one_line_refusal(
        &analyse(nets, "xiangqi", "net:makruk", &[]),
        "shipped net 'makruk' plays makruk, not xiangqi",
    );
    one_line_refusal(
        &analyse(nets, "xiangqi", "net:shipped", &[]),
        "no shipped net for xiangqi",
    );
    let j: serde_json::Value =
        serde_json::from_str(&ok(&analyse(nets, "xiangqi", "auto", &[]))).unwrap();
    assert_eq!(j["evaluator"], "material", "{j}");
    // Changed rules: another hash.
    one_line_refusal(
        &analyse(nets, "makruk", "net:shipped", &["--set", "stalemate=loss"]),
        "these rules hash to",
    );
    // A card that is not there.
    one_line_refusal(
        &analyse(nets, "makruk", "net:nothing", &[]),
        "no shipped net 'nothing'",
    );
}

/// The repository's own nets: each loads for its variant and is refused for another.
#[test]
fn every_shipped_net_loads_for_its_variant_and_no_other() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("nets");
    let cards = varzero::shipped::cards(&dir).unwrap();
    assert!(!cards.is_empty(), "no cards in {}", dir.display());
    let doc =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/nets.md"))
            .unwrap();
    for (name, card) in cards {
        // docs/nets.md lists each with its rating.
        let row = format!("| `{name}` |");
        assert!(doc.contains(&row), "docs/nets.md has no row {row}");
        assert!(
            doc.contains(&format!(
                "{:+.0} [{:+.0}, {:+.0}]",
                card.rating.elo, card.rating.low, card.rating.high
            )),
            "docs/nets.md: {name}'s rating"
        );
        let ev = format!("net:{name}");
        let j: serde_json::Value =
            serde_json::from_str(&ok(&analyse(&dir, &card.variant, &ev, &[]))).unwrap();
        assert!(
            j["evaluator"].as_str().unwrap_or("").contains(&name),
            "{name}: {j}"
        );
        let other = if card.variant == "makruk" {
            "xiangqi"
        } else {
            "makruk"
        };
        one_line_refusal(&analyse(&dir, other, &ev, &[]), "plays");
        // The files are small: each is part of every clone.
        let bytes = std::fs::metadata(dir.join(format!("{name}.safetensors")))
            .unwrap()
            .len();
        assert!(bytes < 2 << 20, "{name}: {bytes} bytes");
    }
}

/// `varzero nets ship` makes a card from a run (its config, CPU ledger and ladder rating),
/// and `nets check` and `nets list` read the folder it wrote.
#[test]
fn a_run_s_net_is_shipped_with_its_card() {
    let t = tempfile::tempdir().unwrap();
    let cfg = t.path().join("mini.toml");
    std::fs::write(
        &cfg,
        "name = \"mini\"\nvariant = \"makruk\"\ngenerations = 1\ngames_per_generation = 4\n\
         match_games = 2\nmatch_playouts = 4\n[search]\nplayouts = 8\ntactics = 0.5\n[selfplay]\n\
         threads = 1\ngames_per_worker = 4\n[train]\nsteps = 4\nbatch_size = 8\n[train.arch]\n\
         blocks = 1\nchannels = 8\n[ladder]\nenabled = true\nraw = true\ngames = 2\n\
         playouts = 4\nrungs = [\"random\", \"material-raw@2\"]\n",
    )
    .unwrap();
    let run = t.path().join("run");
    let text = ok(&common::pipeline(&cfg, &run, &[]));
    // `[ladder] raw`: net 1 is rated with the run's search and raw, one row each.
    assert!(
        text.contains("gen 1: ladder ") && text.contains(", raw "),
        "{text}"
    );
    let csv = std::fs::read_to_string(run.join("logs/ladder.csv")).unwrap();
    assert!(
        csv.contains(",gen-001@4,") && csv.contains(",gen-001@4-raw,"),
        "{csv}"
    );
    let nets = t.path().join("nets");
    let o = vz_nets(
        &nets,
        &[
            "nets",
            "ship",
            "--run",
            run.to_str().unwrap(),
            "--generation",
            "1",
            "--name",
            "makruk",
            "--recipe",
            "a test",
        ],
    );
    let text = ok(&o);
    assert!(text.starts_with("shipped "), "{text}");
    let card = varzero::shipped::read_card(&nets.join("makruk.toml")).unwrap();
    assert_eq!(card.variant, "makruk");
    assert_eq!(card.generation, 1);
    assert_eq!(card.recipe, "configs/runs/mini.toml, generation 1 (a test)");
    assert_eq!(card.rating.anchor, "random");
    assert_eq!(card.rating.player, "net:makruk@4");
    assert_eq!(card.search.playouts, 4);
    assert!(card.rating.low <= card.rating.elo && card.rating.elo <= card.rating.high);
    let checked = ok(&vz_nets(&nets, &["nets", "check"]));
    assert!(
        checked.contains("makruk: ") && checked.contains("1x8"),
        "{checked}"
    );
    let listed = ok(&vz_nets(&nets, &["nets", "list"]));
    assert!(listed.contains("net:makruk@4"), "{listed}");
    // The default evaluator now plays it, with its card's search.
    let j: serde_json::Value =
        serde_json::from_str(&ok(&analyse(&nets, "makruk", "auto", &[]))).unwrap();
    assert!(
        j["evaluator"]
            .as_str()
            .unwrap()
            .contains("makruk.safetensors"),
        "{j}"
    );
    // Rated by a match instead: player A is the net, player B the anchor.
    let m = t.path().join("m");
    let net_a = format!("net:{}@4", run.join("models/gen-001.safetensors").display());
    ok(&vz_nets(
        &nets,
        &[
            "match",
            "--variant",
            "makruk",
            &net_a,
            "random",
            "--games",
            "2",
            "--quiet",
            "--out",
            m.to_str().unwrap(),
        ],
    ));
    ok(&vz_nets(
        &nets,
        &[
            "nets",
            "ship",
            "--run",
            run.to_str().unwrap(),
            "--generation",
            "1",
            "--name",
            "makruk-m",
            "--match",
            m.to_str().unwrap(),
        ],
    ));
    let card = varzero::shipped::read_card(&nets.join("makruk-m.toml")).unwrap();
    assert_eq!(
        (card.rating.anchor.as_str(), card.rating.player.as_str()),
        ("random", net_a.as_str())
    );
    assert!(
        card.rating.source.starts_with("a match of 1 game pairs"),
        "{}",
        card.rating.source
    );
    // A name that is not a name.
    refused(
        &vz_nets(
            &nets,
            &[
                "nets",
                "ship",
                "--run",
                run.to_str().unwrap(),
                "--generation",
                "1",
                "--name",
                "a/b",
            ],
        ),
        "--name 'a/b'",
    );
}
