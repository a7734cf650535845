//! `varzero train`: fit a net on the newest positions of one or more dataset directories.

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Deserialize;
use std::path::PathBuf;
use std::sync::Arc;
use varzero_rules::Variant;
use varzero_trainer::OptimizerKind;

#[derive(Args)]
pub struct TrainArgs {
    /// Dataset directories (oldest first); the newest positions form the window.
    #[arg(long, required = true, num_args = 1..)]
    pub data: Vec<PathBuf>,
    /// Output directory: model.safetensors (+ .json), checkpoints, train_log.csv, train_curves.png.
    #[arg(long)]
    pub out: PathBuf,
    /// Start from this net's weights.
    #[arg(long)]
    pub init: Option<PathBuf>,
    /// A variant file; by default the variant named in the data.
    #[arg(long)]
    pub variant_file: Option<PathBuf>,
    /// A run configuration whose [train] table sets the defaults.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Training steps (a rerun with more steps continues from the last checkpoint).
    #[arg(long)]
    pub steps: Option<u64>,
    #[arg(long)]
    pub batch_size: Option<usize>,
    /// Newest positions to sample from.
    #[arg(long)]
    pub window: Option<usize>,
    /// Peak learning rate (cosine schedule down to lr_final_fraction of it).
    #[arg(long)]
    pub lr: Option<f64>,
    /// sgd (momentum) or adamw; AdamW wants a smaller --lr (e.g. 0.001) and a larger
    /// --weight-decay (e.g. 0.01).
    #[arg(long, value_parser = parse_optimizer)]
    pub optimizer: Option<OptimizerKind>,
    #[arg(long)]
    pub weight_decay: Option<f64>,
    /// Residual blocks of a fresh net.
    #[arg(long)]
    pub blocks: Option<usize>,
    /// Channels of a fresh net.
    #[arg(long)]
    pub channels: Option<usize>,
    /// cpu, cuda or cuda:N.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    #[arg(long)]
    pub quiet: bool,
}

/// `sgd` or `adamw`, read as the config file reads `optimizer`.
fn parse_optimizer(s: &str) -> std::result::Result<OptimizerKind, String> {
    OptimizerKind::deserialize(toml::Value::String(s.to_string()))
        .map_err(|_| format!("'{s}': expected sgd or adamw"))
}

/// The variant of the datasets: the one they all name (built in); datasets of different
/// variants or rules are refused, naming two that differ.
pub fn variant_of_data(dirs: &[PathBuf]) -> Result<Arc<Variant>> {
    let Some(rules) = varzero_datasets::common_rules(dirs)? else {
        anyhow::bail!(
            "no complete shard in {}",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Variant::builtin(&rules.variant)
        .with_context(|| format!("the datasets name variant '{}'", rules.variant))
}

pub fn run(a: TrainArgs) -> Result<()> {
    let variant = match &a.variant_file {
        Some(f) => Variant::from_file(f)?,
        None => variant_of_data(&a.data)?,
    };
    let mut cfg = varzero::run_config::train_config(&a.config)?;
    if let Some(x) = a.steps {
        cfg.steps = x;
    }
    if let Some(x) = a.batch_size {
        cfg.batch_size = x;
    }
    if let Some(x) = a.window {
        cfg.window = x;
    }
    if let Some(x) = a.lr {
        cfg.lr = x;
    }
    if let Some(x) = a.optimizer {
        cfg.optimizer = x;
    }
    if let Some(x) = a.weight_decay {
        cfg.weight_decay = x;
    }
    if let Some(x) = a.blocks {
        cfg.arch.blocks = x;
    }
    if let Some(x) = a.channels {
        cfg.arch.channels = x;
    }
    if let Some(init) = &a.init {
        // A net's shape is its own: --init continues that net, so a different shape is refused
        // rather than ignored.
        let have = varzero_eval_net::Net::read_meta(init)?.arch;
        for (flag, asked, has) in [
            ("--blocks", a.blocks, have.blocks),
            ("--channels", a.channels, have.channels),
        ] {
            if let Some(x) = asked.filter(|x| *x != has) {
                anyhow::bail!(
                    "{flag} {x}: the net of --init {} has {has} ({}x{}); leave {flag} out to continue it, or train a fresh net without --init",
                    init.display(),
                    have.blocks,
                    have.channels
                );
            }
        }
        cfg.arch = have;
    }
    {
        let mut p = varzero_settings::Problems::default();
        cfg.check(&mut p);
        let enc = varzero_eval_net::Encoding::new(&variant).with_attacks(cfg.arch.attacks);
        let mut b = varzero::sizes::Budget::default();
        varzero::sizes::training(&enc, &cfg, ("train.window", cfg.window), &mut b);
        let table = toml::Table::try_from(&cfg).unwrap_or_default();
        b.check(
            "training",
            varzero::sizes::physical_memory(),
            &|k: &str| varzero::sizes::value_in(&table, k.trim_start_matches("train.")),
            &mut p,
        );
        if !p.is_empty() {
            anyhow::bail!("{p}");
        }
    }
    let device = varzero_eval_net::parse_device(&a.device).map_err(anyhow::Error::msg)?;
    let bar = if a.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(cfg.steps)
    };
    bar.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} steps  {msg}").unwrap());
    let usage = varzero::usage::Usage::start();
    let s = varzero_trainer::train(
        &variant,
        &a.data,
        &a.out,
        a.init.as_deref(),
        &cfg,
        device,
        &mut |l| {
            bar.set_position(l.step);
            bar.set_message(format!(
                "loss {:.3} (policy {:.3}, value {:.3})  acc {:.2}/{:.2}  {:.0} samples/s",
                l.loss, l.policy_loss, l.value_loss, l.policy_acc, l.value_acc, l.samples_per_s
            ));
        },
    )?;
    bar.finish_and_clear();
    if let Some(r) = s.resumed_from {
        println!("resumed from the checkpoint at step {r}");
    }
    if let (Some(f), Some(l)) = (&s.first, &s.last) {
        println!(
            "trained {} steps on {} positions{} ({:.0} samples/s, {:.2} cores busy): loss {:.3} -> {:.3}, policy acc {:.2} -> {:.2}, value acc {:.2} -> {:.2}",
            s.steps_done, s.samples, if s.mirrored { ", mirrored" } else { "" }, s.samples_per_s, usage.cores(), f.loss, l.loss, f.policy_acc, l.policy_acc, f.value_acc, l.value_acc
        );
    }
    println!("model {}", s.model.display());
    println!(
        "logs {} and {}",
        a.out.join("train_log.csv").display(),
        a.out.join("train_curves.png").display()
    );
    Ok(())
}
