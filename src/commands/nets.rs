//! `varzero nets`: the shipped nets (docs/nets.md). `list` prints their cards, `check` loads
//! each for its variant (what CI runs), and `ship` copies a run's net into the folder with a
//! card made from the run itself: its config, its CPU ledger and its ladder rating.

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use std::path::PathBuf;
use varzero::run_dir::RunDir;
use varzero::shipped::{self, Card, Rating};

#[derive(Subcommand)]
pub enum NetsCmd {
    /// The shipped nets' cards as a table (the folder: $VARZERO_NETS, else the clone's nets/).
    List,
    /// Loads every shipped net for its variant; a card that does not fit its net or its rules
    /// is an error naming it.
    Check,
    /// Copies net GENERATION of a run into the folder as NAME, with its card.
    Ship {
        /// The run directory.
        #[arg(long)]
        run: PathBuf,
        #[arg(long)]
        generation: u32,
        /// The shipped name (`makruk` is what `net:shipped` plays in Makruk).
        #[arg(long)]
        name: String,
        /// A word on the recipe beside the run's config (`recipe 5: half of each batch from
        /// self-play`).
        #[arg(long, default_value = "")]
        recipe: String,
        /// The folder (default: the shipped nets' folder).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

pub fn run(cmd: NetsCmd) -> Result<()> {
    match cmd {
        NetsCmd::List => list(),
        NetsCmd::Check => check(),
        NetsCmd::Ship {
            run,
            generation,
            name,
            recipe,
            dir,
        } => ship(&run, generation, &name, &recipe, dir),
    }
}

fn list() -> Result<()> {
    let dir = shipped::nets_dir();
    let cards = shipped::cards(&dir)?;
    println!("shipped nets in {}", dir.display());
    println!(
        "{:<16} {:<12} {:>4} {:>7}  {:<24} rating",
        "name", "variant", "gen", "CPU-h", "player"
    );
    for (name, c) in &cards {
        println!(
            "{:<16} {:<12} {:>4} {:>7.2}  {:<24} {:+.0} [{:+.0}, {:+.0}] ({} = 0)",
            name,
            c.variant,
            c.generation,
            c.cpu_hours,
            c.rating.player,
            c.rating.elo,
            c.rating.low,
            c.rating.high,
            c.rating.anchor
        );
    }
    Ok(())
}

fn check() -> Result<()> {
    let dir = shipped::nets_dir();
    let cards = shipped::cards(&dir)?;
    if cards.is_empty() {
        bail!("no shipped nets in {}", dir.display());
    }
    for (name, c) in &cards {
        let v = varzero_rules::Variant::builtin(&c.variant)
            .with_context(|| format!("{name}.toml: variant '{}'", c.variant))?;
        let s = shipped::find_in(&dir, name, &v)?;
        let net = varzero_eval_net::Net::load(&s.path, &v, varzero_eval_net::tch::Device::Cpu)?;
        let bytes = std::fs::metadata(&s.path)?.len();
        println!(
            "{name}: {} {}x{}, {} KiB, fits {}'s rules {}",
            s.path.display(),
            net.meta.arch.blocks,
            net.meta.arch.channels,
            bytes / 1024,
            v.name,
            c.rules_hash
        );
    }
    Ok(())
}

fn ship(
    run: &std::path::Path,
    generation: u32,
    name: &str,
    recipe: &str,
    dir: Option<PathBuf>,
) -> Result<()> {
    if !shipped::is_name(name) || name == shipped::SHIPPED {
        bail!(
            "--name '{name}': letters, digits, '-' and '_' only, and not '{}'",
            shipped::SHIPPED
        );
    }
    let r = RunDir::new(run);
    let cfg_path = r.config();
    let text = std::fs::read_to_string(&cfg_path)
        .with_context(|| format!("{} holds no run", run.display()))?;
    let cfg: varzero::pipeline::PipelineConfig = varzero::run_config::parse_toml(&cfg_path, &text)?;
    let model = r.model(generation);
    let meta = varzero_eval_net::Net::read_meta(&model)
        .with_context(|| format!("net {generation} of {}", run.display()))?;
    let rows = r
        .read_ladder_csv()?
        .with_context(|| format!("{}: no ladder ratings (logs/ladder.csv)", run.display()))?;
    let row = rows
        .iter()
        .find(|x| x.generation == generation && !x.player.ends_with("-raw"))
        .with_context(|| {
            format!(
                "{}: generation {generation} has no ladder rating in logs/ladder.csv",
                run.display()
            )
        })?;
    let mut search = cfg.search.clone();
    search.playouts = cfg.ladder.playouts.unwrap_or(cfg.match_playouts);
    let anchor = cfg
        .ladder
        .anchor
        .clone()
        .or_else(|| cfg.ladder.rungs.as_ref().and_then(|r| r.first().cloned()))
        .unwrap_or_else(|| "the ladder's first rung".into());
    let card = Card {
        variant: meta.variant.clone(),
        rules_hash: meta.rules_hash.clone(),
        recipe: format!(
            "configs/runs/{}.toml, generation {generation}{}",
            cfg.name,
            if recipe.is_empty() {
                String::new()
            } else {
                format!(" ({recipe})")
            }
        ),
        command: format!("varzero pipeline --config configs/runs/{}.toml", cfg.name),
        generation,
        cpu_hours: (row.cpu_hours * 100.0).round() / 100.0,
        rating: Rating {
            elo: row.elo.round(),
            low: (row.elo - row.error95).round(),
            high: (row.elo + row.error95).round(),
            anchor,
            player: format!("net:{name}@{}", search.playouts),
            source: format!(
                "the run's ladder, {} games per pairing (logs/ladder.csv)",
                cfg.ladder.games
            ),
        },
        search,
    };
    let dir = dir.unwrap_or_else(shipped::nets_dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let out = dir.join(format!("{name}.safetensors"));
    varzero::copy_atomic(&model, &out)?;
    varzero::copy_atomic(&model.with_extension("json"), &out.with_extension("json"))?;
    let body = format!(
        "# A shipped net's card (docs/nets.md): made by `varzero nets ship --run {} --generation {generation} --name {name}`.\n{}",
        run.display(),
        toml::to_string(&card)?
    );
    varzero::write_atomic(&dir.join(format!("{name}.toml")), body)?;
    println!(
        "shipped {} as {} ({} {:+.0} [{:+.0}, {:+.0}], {:.2} CPU-h)",
        model.display(),
        out.display(),
        card.variant,
        card.rating.elo,
        card.rating.low,
        card.rating.high,
        card.cpu_hours
    );
    Ok(())
}
