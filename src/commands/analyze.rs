//! `varzero analyze`: results, draw rates, terminations, game lengths and fitted piece values
//! of games tables, per variant and rules hash; a table, JSON, and charts.

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use varzero_datasets::analysis::{self, plots, AnalysisOptions, VariantLookup};
use varzero_rules::Variant;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum PlotFormat {
    Svg,
    Png,
    Both,
}

impl PlotFormat {
    pub fn formats(self) -> plots::PlotFormats {
        plots::PlotFormats {
            svg: !matches!(self, PlotFormat::Png),
            png: !matches!(self, PlotFormat::Svg),
        }
    }
}

#[derive(Args)]
pub struct AnalyzeArgs {
    /// Dataset directories (self-play or match output); repeat for several.
    #[arg(long = "games", required_unless_present = "fen")]
    pub dirs: Vec<PathBuf>,
    /// Not this command's: a position is `varzero analyse --fen` (said so, not a parse error).
    #[arg(long, hide = true)]
    pub fen: Option<String>,
    /// Print JSON (one object per variant and rules hash) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Write charts (draw rate and score, piece values, game lengths) into this directory.
    #[arg(long)]
    pub plots: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "both")]
    pub plot_format: PlotFormat,
    /// Variant files the games were played under (found by rules hash; a directory's
    /// variant.toml is read by itself).
    #[arg(long = "variant-file")]
    pub variant_files: Vec<PathBuf>,
    /// Positions sampled per game for the piece values.
    #[arg(long, default_value_t = 8)]
    pub samples_per_game: usize,
    /// First ply that may be sampled.
    #[arg(long, default_value_t = 6)]
    pub min_ply: u32,
    /// Sample only positions at least this many plies after the last capture or promotion.
    #[arg(long, default_value_t = 4)]
    pub stable_plies: u32,
    /// Fit the piece values to decisive games only.
    #[arg(long)]
    pub decisive_only: bool,
    /// Count a piece with extra moves in a region (the Xiangqi soldier across the river) as one
    /// piece; by default it is fitted as two, outside (the unit, when it is the unit kind) and
    /// inside the region (`P@across-river`).
    #[arg(long)]
    pub pool_regions: bool,
    /// Reference piece values to print beside the fit (TOML; configs/piece-values/ has
    /// Fairy-Stockfish's and the Xiangqi consensus); repeat for several.
    #[arg(long = "reference")]
    pub references: Vec<PathBuf>,
    /// Bootstrap resamples (over games) for the piece-value intervals.
    #[arg(long, default_value_t = 200)]
    pub bootstrap: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl AnalyzeArgs {
    pub fn options(&self) -> AnalysisOptions {
        AnalysisOptions {
            samples_per_game: self.samples_per_game,
            min_ply: self.min_ply,
            stable_plies: self.stable_plies,
            decisive_only: self.decisive_only,
            pool_regions: self.pool_regions,
            bootstrap: self.bootstrap,
            seed: self.seed,
            ..AnalysisOptions::default()
        }
    }
}

pub fn run(a: AnalyzeArgs) -> Result<()> {
    if a.fen.is_some() {
        anyhow::bail!(
            "varzero analyze reads games tables (--games DIR); one position is analysed by \
             varzero analyse --fen FEN"
        );
    }
    let references = a
        .references
        .iter()
        .map(|p| analysis::ReferenceSet::load(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut lookup = VariantLookup::new();
    for f in &a.variant_files {
        lookup.add(Variant::from_file(f)?);
    }
    for d in &a.dirs {
        if !d.exists() {
            bail!("{}: no such directory", d.display());
        }
        lookup.add_dir(d)?;
    }
    let (lf, skipped) = analysis::scan_game_dirs(&a.dirs)?;
    for s in &skipped {
        eprintln!("warning: {s}");
    }
    let Some(lf) = lf else {
        bail!(
            "no games in {}",
            a.dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    let reports = analysis::analyze(lf, &lookup, &a.options())?;
    if a.json {
        let groups: Vec<serde_json::Value> = reports.iter().map(|r| r.to_json()).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "groups": groups }))?
        );
    } else {
        print!("{}", analysis::format_reports_with(&reports, &references));
    }
    if let Some(dir) = &a.plots {
        if !plots::font_available() {
            eprintln!("warning: no TrueType font found (set VARZERO_FONT): charts without text");
        }
        let files = plots::write_plots(dir, &reports, None, a.plot_format.formats())
            .map_err(anyhow::Error::msg)?;
        eprintln!("{} charts written to {}", files.len(), dir.display());
    }
    Ok(())
}
