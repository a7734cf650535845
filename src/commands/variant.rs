//! `varzero variant`: the shipped variants, checking variant files (every problem of every file
//! at once), and the effective definition of a variant after `extends` and overrides.

use anyhow::{bail, Result};
use clap::Subcommand;
use std::path::PathBuf;
use varzero::run_config::VariantArg;
use varzero_rules::Variant;

#[derive(Subcommand)]
pub enum VariantCmd {
    /// The shipped variants.
    List,
    /// Check variant files; reports every problem of every file.
    Check { files: Vec<PathBuf> },
    /// The effective (merged) definition of a variant as TOML.
    Show {
        #[command(flatten)]
        variant: VariantArg,
    },
}

pub fn run(cmd: VariantCmd) -> Result<()> {
    match cmd {
        VariantCmd::List => {
            for name in Variant::builtin_names() {
                let v = Variant::builtin(name)?;
                println!(
                    "{:<16} {}x{}  {}",
                    name, v.size.files, v.size.ranks, v.description
                );
            }
        }
        VariantCmd::Check { files } => {
            if files.is_empty() {
                bail!("no files given");
            }
            let mut bad = 0;
            for f in &files {
                match Variant::from_file(f) {
                    Ok(v) => println!(
                        "{}: ok ({}, {} pieces, rules hash {:016x})",
                        f.display(),
                        v.name,
                        v.pieces.len(),
                        v.rules_hash
                    ),
                    Err(e) => {
                        bad += 1;
                        for line in e.lines() {
                            println!("{line}");
                        }
                    }
                }
            }
            if bad > 0 {
                bail!("{bad} of {} variant files have problems", files.len());
            }
        }
        VariantCmd::Show { variant } => {
            let v = variant.load()?;
            print!("{}", toml::to_string(&v.config)?);
        }
    }
    Ok(())
}
