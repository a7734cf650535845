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
        /// Rate it by a match instead of the run's ladder: a `varzero match --out DIR` whose
        /// player A is this net (with the search it is shipped with) and whose player B is the
        /// anchor (0 Elo). Elo and interval from game pairs.
        #[arg(long = "match")]
        match_dir: Option<PathBuf>,
    },
    /// How nets' own priors (raw, and mixed as the search mixes them) agree with the exchange
    /// hints on a dataset's game positions and on their siblings (one random move away).
    Hints {
        #[command(flatten)]
        variant: varzero::run_config::VariantArg,
        /// A dataset directory (self-play or a teacher's games).
        #[arg(long)]
        games: PathBuf,
        /// Nets as evaluators (`net:makruk`, `net:FILE.safetensors`); repeat for several.
        #[arg(long = "net", required = true)]
        nets: Vec<String>,
        /// A run config whose [search] sets the mix: its `tactics_priors`, mix and hint
        /// temperature. Without one, or at a weight of 0, the weight is 0.5 (the run configs').
        #[arg(long)]
        config: Option<PathBuf>,
        /// Game positions to sample, evenly spaced through the dataset.
        #[arg(long, default_value_t = 2000)]
        positions: usize,
        /// Seed of the siblings' random moves.
        #[arg(long, default_value_t = 1)]
        seed: u64,
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
            match_dir,
        } => ship(&run, generation, &name, &recipe, dir, match_dir),
        NetsCmd::Hints {
            variant,
            games,
            nets,
            config,
            positions,
            seed,
        } => {
            let v = variant.load()?;
            let search = varzero::run_config::search_config(&config)?;
            super::hints::run(&v, &games, &nets, &search, positions, seed)
        }
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
            "{name}: {} {}x{}{}, {} KiB, fits {}'s rules {}",
            s.path.display(),
            net.meta.arch.blocks,
            net.meta.arch.channels,
            match (net.meta.arch.attacks, net.meta.arch.opponent_policy) {
                (true, true) => " with attack planes and an opponent-policy head",
                (true, false) => " with attack planes",
                (false, true) => " with an opponent-policy head",
                (false, false) => "",
            },
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
    match_dir: Option<PathBuf>,
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
    let cpu_hours = r.cpu_hours_to(generation)?;
    let mut search = cfg.search.clone();
    search.playouts = cfg.ladder.playouts.unwrap_or(cfg.match_playouts);
    let rating = match &match_dir {
        Some(m) => rating_from_match(m)?,
        None => rating_from_ladder(&r, &cfg, generation, name, search.playouts)?,
    };
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
        cpu_hours: (cpu_hours * 100.0).round() / 100.0,
        rating,
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

/// The rating of net `generation` in the run's ladder (logs/ladder.csv), the run's search.
fn rating_from_ladder(
    r: &RunDir,
    cfg: &varzero::pipeline::PipelineConfig,
    generation: u32,
    name: &str,
    playouts: u32,
) -> Result<Rating> {
    let rows = r.read_ladder_csv()?.with_context(|| {
        format!(
            "{}: no ladder ratings (logs/ladder.csv)",
            r.root().display()
        )
    })?;
    let row = rows
        .iter()
        .find(|x| x.generation == generation && !x.player.ends_with("-raw"))
        .with_context(|| {
            format!(
                "{}: generation {generation} has no ladder rating in logs/ladder.csv",
                r.root().display()
            )
        })?;
    let anchor = cfg
        .ladder
        .anchor
        .clone()
        .or_else(|| cfg.ladder.rungs.as_ref().and_then(|r| r.first().cloned()))
        .unwrap_or_else(|| "the ladder's first rung".into());
    Ok(Rating {
        elo: row.elo.round(),
        low: (row.elo - row.error95).round(),
        high: (row.elo + row.error95).round(),
        anchor,
        player: format!("net:{name}@{playouts}"),
        source: format!(
            "the run's ladder, {} games per pairing (logs/ladder.csv)",
            cfg.ladder.games
        ),
    })
}

/// The rating of a match's player A against its player B (the anchor), from game pairs.
fn rating_from_match(dir: &std::path::Path) -> Result<Rating> {
    let (shards, _) = varzero_datasets::read_live_games(dir)
        .with_context(|| format!("--match {}", dir.display()))?;
    let first = shards
        .iter()
        .flat_map(|s| s.1.iter())
        .next()
        .with_context(|| format!("--match {}: no games", dir.display()))?;
    let j: serde_json::Value = serde_json::from_str(&first.search)
        .with_context(|| format!("--match {}: not a match's games", dir.display()))?;
    let (white, black) = (
        j["white"].as_str().unwrap_or_default().to_string(),
        j["black"].as_str().unwrap_or_default().to_string(),
    );
    let (a, b) = if j["a_white"].as_bool().unwrap_or(true) {
        (white, black)
    } else {
        (black, white)
    };
    let scores = varzero_arena::matches::match_scores(dir, &a, &b)?;
    let mut penta = varzero_stats::Pentanomial::default();
    let mut by_pair: std::collections::BTreeMap<u64, Vec<varzero_stats::GameScore>> =
        Default::default();
    for (i, s) in &scores {
        by_pair.entry(i / 2).or_default().push(*s);
    }
    for pair in by_pair.values().filter(|p| p.len() == 2) {
        penta.add(pair[0], pair[1]);
    }
    if penta.pairs() == 0 {
        bail!("--match {}: no finished game pair", dir.display());
    }
    let e = penta.elo();
    Ok(Rating {
        elo: e.elo.round(),
        low: e.lower.round(),
        high: e.upper.round(),
        anchor: b,
        player: a,
        source: format!(
            "a match of {} game pairs (varzero match --out {})",
            penta.pairs(),
            dir.display()
        ),
    })
}
