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
    use varzero_eval_net::tch::Device;
    let v = varzero_rules::Variant::builtin("makruk").unwrap();
    let net = varzero_eval_net::Net::new(
        &v,
        varzero_eval_net::Arch {
            blocks: 1,
            channels: 8,
        },
        Device::Cpu,
    );
    net.save(&dir.join("makruk.safetensors")).unwrap();
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
    for (name, card) in cards {
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
