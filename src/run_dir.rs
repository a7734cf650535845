//! The run directory: the one interface between the stages of a run (`varzero pipeline` on one
//! machine, or a cluster driver's tasks on many). [`RunDir`] owns its layout: every path is a
//! method, every path pattern is in [`LAYOUT`] (which docs/architecture.md and
//! `varzero pipeline --stage layout` print), and every file is a typed record written and read
//! by the code here. A reader gets an error naming the file for a file it cannot read, and
//! `None` ("not yet written") for one a stage has not made yet; never a silent default.
//!
//! The layout has a version, `run.json` `{"format": N}`, checked whenever a run is opened.
//! Directories made before the version existed hold format 1 (this layout) and get the file.

use crate::write_atomic;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use varzero_datasets::table::{self, Fields, Row, TableError};

/// The version of the layout below; bump it on any change of a path or of a file's format.
pub const RUN_FORMAT: u32 = 1;

/// One entry of the layout: a path relative to the run directory, `NNN` standing for a
/// generation (three digits).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Entry {
    pub key: &'static str,
    pub pattern: &'static str,
    pub what: &'static str,
}

impl Entry {
    pub fn per_generation(&self) -> bool {
        self.pattern.contains("NNN")
    }
}

macro_rules! layout {
    ($($name:ident = $key:literal, $pattern:literal, $what:literal;)*) => {
        $(const $name: Entry = Entry { key: $key, pattern: $pattern, what: $what };)*
        /// Every file and directory of a run, in the order a run makes them.
        pub const LAYOUT: &[Entry] = &[$($name),*];
    };
}

layout! {
    FORMAT = "format", "run.json", "the layout's version (`{\"format\": 1}`), checked on open";
    CONFIG = "config", "config.toml", "the effective run config (every --param applied); a resume must match it";
    SELFPLAY = "selfplay", "selfplay/gen-NNN", "generation NNN's self-play games: a dataset directory of Parquet shards";
    REANALYSE = "reanalyse", "reanalyse/gen-NNN", "positions of earlier self-play searched again with net NNN (MuZero's Reanalyse; `reanalyse` in the config): fresh targets, the games' results kept";
    TRAINING = "training", "training/gen-NNN", "the trainer's output for net NNN: checkpoints, train_log.csv, train_curves.png";
    MODEL = "model", "models/gen-NNN.safetensors", "net NNN (its sidecar models/gen-NNN.json beside it)";
    TRAIN_LOG = "train_log", "logs/train-gen-NNN.csv", "net NNN's training log (step, lr, losses, accuracies, samples/s)";
    TRAIN_CURVES = "train_curves", "logs/train-gen-NNN.png", "net NNN's training curves";
    MATCH_RECORD = "match_record", "logs/match-gen-NNN.json", "net NNN against the net before it (or generation 0): score, interval, Elo, gating verdict";
    LADDER_RECORD = "ladder_record", "logs/ladder-gen-NNN.json", "generation NNN's climb: its ladder name and the highest rung it held";
    LADDER_RAW_RECORD = "ladder_raw_record", "logs/ladder-gen-NNN-raw.json", "net NNN's climb raw (no tactical blend; `[ladder] raw`)";
    FINAL_MATCH = "final_match", "logs/match-last-vs-gen-000.json", "the last net against generation 0's player";
    SUMMARY = "summary", "logs/summary.json", "the run's closing matches: last net against net 1 (raw and with the search) and against generation 0's player";
    MATCHES_CSV = "matches_csv", "logs/matches.csv", "every match record as one table";
    STAGES_CSV = "stages_csv", "logs/stages.csv", "each stage's wall time, CPU time and cores busy";
    CPU_LEDGER = "cpu_ledger", "logs/cpu.json", "CPU seconds of each stage (self-play of a generation, training of a net), brought up to date every 30 s while it runs, so a stage killed and resumed counts all it spent";
    CPU_RANGES = "cpu_ranges", "logs/cpu.d", "CPU seconds of self-play ranges played by a cluster's tasks, one file each";
    LADDER_DIR = "ladder_dir", "ladder", "the rated generations' ladder games (the rungs are cached elsewhere)";
    LADDER_RATINGS = "ladder_ratings", "ladder/ratings.csv", "the ladder's ratings, rungs and generations on one scale";
    LADDER_CSV = "ladder_csv", "logs/ladder.csv", "each generation's ladder Elo with its interval and the CPU-hours that made it";
    LADDER_PNG = "ladder_png", "logs/ladder.png", "Elo against generation and CPU-hours";
    REPORT = "report", "report.html", "the run's page (a view of the logs, rebuilt after every generation)";
}

/// A run directory.
#[derive(Clone, Debug)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    pub fn new(root: impl Into<PathBuf>) -> RunDir {
        RunDir { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn at(&self, e: Entry) -> PathBuf {
        self.root.join(e.pattern)
    }

    fn at_gen(&self, e: Entry, gen: u32) -> PathBuf {
        self.root
            .join(e.pattern.replace("NNN", &format!("{gen:03}")))
    }

    pub fn format_file(&self) -> PathBuf {
        self.at(FORMAT)
    }
    pub fn config(&self) -> PathBuf {
        self.at(CONFIG)
    }
    /// The parent of every generation's self-play directory.
    pub fn selfplay_root(&self) -> PathBuf {
        self.root.join("selfplay")
    }
    pub fn selfplay(&self, gen: u32) -> PathBuf {
        self.at_gen(SELFPLAY, gen)
    }
    pub fn reanalyse(&self, gen: u32) -> PathBuf {
        self.at_gen(REANALYSE, gen)
    }
    pub fn training_root(&self) -> PathBuf {
        self.root.join("training")
    }
    pub fn training(&self, gen: u32) -> PathBuf {
        self.at_gen(TRAINING, gen)
    }
    pub fn models(&self) -> PathBuf {
        self.root.join("models")
    }
    pub fn model(&self, gen: u32) -> PathBuf {
        self.at_gen(MODEL, gen)
    }
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }
    pub fn train_log(&self, gen: u32) -> PathBuf {
        self.at_gen(TRAIN_LOG, gen)
    }
    pub fn train_curves(&self, gen: u32) -> PathBuf {
        self.at_gen(TRAIN_CURVES, gen)
    }
    pub fn match_record(&self, gen: u32) -> PathBuf {
        self.at_gen(MATCH_RECORD, gen)
    }
    pub fn final_match(&self) -> PathBuf {
        self.at(FINAL_MATCH)
    }
    pub fn summary(&self) -> PathBuf {
        self.at(SUMMARY)
    }
    pub fn matches_csv(&self) -> PathBuf {
        self.at(MATCHES_CSV)
    }
    pub fn stages_csv(&self) -> PathBuf {
        self.at(STAGES_CSV)
    }
    pub fn cpu_ledger(&self) -> PathBuf {
        self.at(CPU_LEDGER)
    }
    pub fn cpu_ranges(&self) -> PathBuf {
        self.at(CPU_RANGES)
    }
    pub fn ladder_record(&self, gen: u32) -> PathBuf {
        self.at_gen(LADDER_RECORD, gen)
    }
    pub fn ladder_dir(&self) -> PathBuf {
        self.at(LADDER_DIR)
    }
    pub fn ladder_ratings(&self) -> PathBuf {
        self.at(LADDER_RATINGS)
    }
    pub fn ladder_csv(&self) -> PathBuf {
        self.at(LADDER_CSV)
    }
    pub fn ladder_png(&self) -> PathBuf {
        self.at(LADDER_PNG)
    }
    pub fn report(&self) -> PathBuf {
        self.at(REPORT)
    }

    /// Whether the directory holds a run: its config and a directory a stage writes.
    pub fn is_run(&self) -> bool {
        self.config().exists() && (self.selfplay_root().is_dir() || self.logs().is_dir())
    }

    /// The directories a run writes into, made by [`RunDir::create`].
    fn dirs(&self) -> [PathBuf; 5] {
        [
            self.selfplay_root(),
            self.models(),
            self.logs(),
            self.training_root(),
            self.root.join("reanalyse"),
        ]
    }

    /// Makes the directories and writes the format file (a directory made before the format
    /// existed is this format); refused for a directory of another format.
    pub fn create(&self) -> Result<()> {
        self.check_format()?;
        for d in self.dirs() {
            std::fs::create_dir_all(&d)
                .with_context(|| format!("cannot create {}", d.display()))?;
        }
        if !self.format_file().exists() {
            write_atomic(
                &self.format_file(),
                serde_json::to_string(&Format { format: RUN_FORMAT })? + "\n",
            )?;
        }
        Ok(())
    }

    /// Refused when `run.json` names a format this version does not read (or cannot be read).
    pub fn check_format(&self) -> Result<()> {
        let p = self.format_file();
        let Ok(text) = std::fs::read_to_string(&p) else {
            return Ok(());
        };
        let f: Format = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a run format file", p.display()))?;
        if f.format != RUN_FORMAT {
            anyhow::bail!(
                "{}: run format {}, this varzero reads format {RUN_FORMAT}{}",
                p.display(),
                f.format,
                if f.format > RUN_FORMAT {
                    " (written by a newer varzero: use that one)"
                } else {
                    ""
                }
            );
        }
        Ok(())
    }

    /// The generations with a self-play directory, in order.
    pub fn selfplay_generations(&self) -> Result<Vec<u32>> {
        let root = self.selfplay_root();
        let mut gens = Vec::new();
        let rd = match std::fs::read_dir(&root) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(gens),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", root.display())),
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if let Some(g) = name
                .strip_prefix("gen-")
                .and_then(|n| n.parse::<u32>().ok())
            {
                if e.path().is_dir() && self.selfplay(g) == e.path() {
                    gens.push(g);
                }
            }
        }
        gens.sort_unstable();
        Ok(gens)
    }

    /// The layout with this directory's paths, for a cluster driver (`--stage layout`): each
    /// entry's path, and for a per-generation entry its path for generations 0..=`generations`.
    pub fn layout_json(&self, generations: u32) -> serde_json::Value {
        let mut files = serde_json::Map::new();
        for e in LAYOUT {
            let v = if e.per_generation() {
                serde_json::Value::from(
                    (0..=generations)
                        .map(|g| self.at_gen(*e, g).display().to_string())
                        .collect::<Vec<_>>(),
                )
            } else {
                serde_json::Value::from(self.at(*e).display().to_string())
            };
            files.insert(e.key.to_string(), v);
        }
        serde_json::json!({
            "format": RUN_FORMAT,
            "root": self.root.display().to_string(),
            "generations": generations,
            "files": files,
        })
    }

    // Records.

    /// A generation's match record (`None`: not played yet).
    pub fn read_match(&self, gen: u32) -> Result<Option<MatchRecord>> {
        read_json(&self.match_record(gen))
    }
    pub fn write_match(&self, rec: &MatchRecord) -> Result<()> {
        write_json(&self.match_record(rec.generation), rec)
    }
    pub fn read_final_match(&self) -> Result<Option<MatchRecord>> {
        read_json(&self.final_match())
    }
    pub fn write_final_match(&self, rec: &MatchRecord) -> Result<()> {
        write_json(&self.final_match(), rec)
    }
    pub fn read_summary(&self) -> Result<Option<Vec<SummaryMatch>>> {
        read_json(&self.summary())
    }
    pub fn write_summary(&self, rows: &[SummaryMatch]) -> Result<()> {
        write_json(&self.summary(), &rows)
    }
    pub fn read_matches_csv(&self) -> Result<Option<Vec<MatchRecord>>> {
        read_table(&self.matches_csv())
    }
    pub fn write_matches_csv(&self, rows: &[MatchRecord]) -> Result<()> {
        write_atomic(&self.matches_csv(), table::to_csv(rows))
    }
    pub fn read_ladder_record(&self, gen: u32) -> Result<Option<LadderRecord>> {
        read_json(&self.ladder_record(gen))
    }
    pub fn ladder_raw_record(&self, gen: u32) -> PathBuf {
        self.at_gen(LADDER_RAW_RECORD, gen)
    }
    pub fn read_ladder_raw_record(&self, gen: u32) -> Result<Option<LadderRecord>> {
        read_json(&self.ladder_raw_record(gen))
    }
    pub fn write_ladder_raw_record(&self, rec: &LadderRecord) -> Result<()> {
        write_json(&self.ladder_raw_record(rec.generation), rec)
    }
    pub fn write_ladder_record(&self, rec: &LadderRecord) -> Result<()> {
        write_json(&self.ladder_record(rec.generation), rec)
    }
    pub fn read_ladder_csv(&self) -> Result<Option<Vec<LadderRow>>> {
        read_table(&self.ladder_csv())
    }
    pub fn write_ladder_csv(&self, rows: &[LadderRow]) -> Result<()> {
        write_atomic(&self.ladder_csv(), table::to_csv(rows))
    }
    pub fn read_stages(&self) -> Result<Option<Vec<StageRow>>> {
        read_table(&self.stages_csv())
    }
    /// Appends one row to `logs/stages.csv` (rewritten by rename).
    pub fn add_stage(&self, row: StageRow) -> Result<()> {
        let mut rows = self.read_stages()?.unwrap_or_default();
        rows.push(row);
        write_atomic(&self.stages_csv(), table::to_csv(&rows))
    }
    /// A training log copied into `logs/` (`None`: net `gen` not trained yet).
    pub fn read_train_log(&self, gen: u32) -> Result<Option<Vec<varzero_trainer::StepLog>>> {
        let p = self.train_log(gen);
        if !p.exists() {
            return Ok(None);
        }
        Ok(Some(varzero_trainer::read_log(&p)?))
    }
    /// The ladder's ratings (`None`: no generation rated yet).
    pub fn read_ladder_ratings(&self) -> Result<Option<Vec<varzero_arena::ladder::Rating>>> {
        Ok(varzero_arena::ladder::read_ratings(&self.ladder_ratings())?)
    }

    /// The CPU ledger: `logs/cpu.json` and every range file of `logs/cpu.d`.
    pub fn read_cpu(&self) -> Result<BTreeMap<CpuKey, f64>> {
        let mut m = self.read_cpu_ledger()?;
        let d = self.cpu_ranges();
        let rd = match std::fs::read_dir(&d) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(m),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", d.display())),
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            let Some(stem) = name.strip_suffix(".json") else {
                continue; // a temporary
            };
            if crate::is_temporary(&name) || name.starts_with('.') {
                continue;
            }
            let key = CpuKey::parse(stem)
                .with_context(|| format!("{}: not a CPU ledger key", p.display()))?;
            // The range's own file is its whole count (an older version also copied ranges
            // into the ledger: the file replaces that copy rather than adding to it).
            m.insert(key, read_number(&p)?);
        }
        Ok(m)
    }

    /// `logs/cpu.json` alone.
    fn read_cpu_ledger(&self) -> Result<BTreeMap<CpuKey, f64>> {
        let p = self.cpu_ledger();
        let raw: Option<BTreeMap<String, f64>> = read_json(&p)?;
        raw.unwrap_or_default()
            .into_iter()
            .map(|(k, v)| {
                CpuKey::parse(&k)
                    .with_context(|| format!("{}: '{k}' is not a CPU ledger key", p.display()))
                    .map(|k| (k, v))
            })
            .collect()
    }

    /// Adds `secs` to `key`: a range in its own file of `logs/cpu.d` (ranges run at once in
    /// other processes), anything else in `logs/cpu.json`.
    pub fn add_cpu(&self, key: &CpuKey, secs: f64) -> Result<()> {
        // Read-modify-write: a stage's CPU meter flushes from its own thread.
        static LEDGER: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _held = LEDGER.lock().unwrap_or_else(|e| e.into_inner());
        let secs = secs.max(0.0);
        if key.range.is_some() {
            let d = self.cpu_ranges();
            std::fs::create_dir_all(&d)
                .with_context(|| format!("cannot create {}", d.display()))?;
            let p = d.join(format!("{key}.json"));
            let old = if p.exists() { read_number(&p)? } else { 0.0 };
            return write_atomic(&p, format!("{}", old + secs));
        }
        // The ledger alone: the range files are added when read, never copied into it.
        let mut m: BTreeMap<String, f64> = self
            .read_cpu_ledger()?
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        *m.entry(key.to_string()).or_insert(0.0) += secs;
        write_atomic(&self.cpu_ledger(), serde_json::to_string_pretty(&m)?)
    }

    /// CPU-hours spent to make generation `gen`: self-play of the generations before it and
    /// training of the nets up to it.
    pub fn cpu_hours_to(&self, gen: u32) -> Result<f64> {
        let secs: f64 = self
            .read_cpu()?
            .iter()
            .filter(|(k, _)| match k.stage {
                CpuStage::Selfplay => k.generation < gen,
                CpuStage::Train => (1..=gen).contains(&k.generation),
            })
            .map(|(_, s)| s)
            // From +0.0: an empty f64 sum is -0.0, which the CSV would print as "-0.000000".
            .fold(0.0, |a, b| a + b);
        Ok(secs / 3600.0)
    }
}

/// `run.json`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Format {
    format: u32,
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .with_context(|| format!("{}: cannot read", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<()> {
    write_atomic(path, serde_json::to_string_pretty(v)?)
}

fn read_table<R: Row>(path: &Path) -> Result<Option<Vec<R>>> {
    Ok(table::read_csv(path)?)
}

fn read_number(p: &Path) -> Result<f64> {
    let text =
        std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
    text.trim()
        .parse::<f64>()
        .with_context(|| format!("{}: not a number of seconds", p.display()))
}

/// A stage in the CPU ledger.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CpuStage {
    Selfplay,
    Train,
}

/// A key of the CPU ledger: `selfplay-gen-NNN`, `selfplay-gen-NNN@START-END` (a range), or
/// `train-gen-NNN`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CpuKey {
    pub stage: CpuStage,
    pub generation: u32,
    pub range: Option<(u64, u64)>,
}

impl CpuKey {
    pub fn selfplay(generation: u32, range: Option<&std::ops::Range<u64>>) -> CpuKey {
        CpuKey {
            stage: CpuStage::Selfplay,
            generation,
            range: range.map(|r| (r.start, r.end)),
        }
    }
    pub fn train(generation: u32) -> CpuKey {
        CpuKey {
            stage: CpuStage::Train,
            generation,
            range: None,
        }
    }
    pub fn parse(s: &str) -> Option<CpuKey> {
        let (stage, rest) = if let Some(r) = s.strip_prefix("selfplay-gen-") {
            (CpuStage::Selfplay, r)
        } else {
            (CpuStage::Train, s.strip_prefix("train-gen-")?)
        };
        let (gen, range) = match rest.split_once('@') {
            None => (rest, None),
            Some((g, r)) if stage == CpuStage::Selfplay => {
                let (a, b) = r.split_once('-')?;
                (g, Some((a.parse().ok()?, b.parse().ok()?)))
            }
            Some(_) => return None,
        };
        Some(CpuKey {
            stage,
            generation: gen.parse().ok()?,
            range,
        })
    }
}

impl std::fmt::Display for CpuKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let stage = match self.stage {
            CpuStage::Selfplay => "selfplay",
            CpuStage::Train => "train",
        };
        write!(f, "{stage}-gen-{:03}", self.generation)?;
        if let Some((a, b)) = self.range {
            write!(f, "@{a}-{b}")?;
        }
        Ok(())
    }
}

/// One of the run's closing matches (`logs/summary.json`): what the loop learnt, told apart
/// from what the search adds. Intervals are 95%, from game pairs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SummaryMatch {
    /// What the match measures, e.g. "last net vs net 1, raw".
    pub label: String,
    pub player: String,
    pub opponent: String,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub score: f64,
    #[serde(with = "elo_json")]
    pub elo: f64,
    #[serde(with = "elo_json")]
    pub elo_low: f64,
    #[serde(with = "elo_json")]
    pub elo_high: f64,
    /// The rated net's generation and the CPU-hours of self-play and training that made it, on
    /// the rows that chart Elo against CPU-hours (the nets against generation 0's player);
    /// absent from the others and from summaries written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_hours: Option<f64>,
}

impl SummaryMatch {
    /// An Elo figure as the summary prints it: signed, whole, `+inf`/`-inf` for a clean sweep.
    pub fn elo_text(x: f64) -> String {
        if x.is_infinite() {
            if x > 0.0 { "+inf" } else { "-inf" }.to_string()
        } else {
            format!("{x:+.0}")
        }
    }

    /// What a newcomer should read from the row: the player is stronger or weaker only where
    /// the whole 95% interval is on one side of 0.
    pub fn verdict(&self) -> &'static str {
        if self.elo_low > 0.0 {
            "stronger"
        } else if self.elo_high < 0.0 {
            "weaker"
        } else {
            "no measurable difference"
        }
    }

    pub fn line(&self) -> String {
        let e = Self::elo_text;
        format!(
            "{:<47} {:>5.1} / {:<4} (W {} D {} L {})  Elo {} [{}, {}]",
            self.label,
            self.wins as f64 + self.draws as f64 / 2.0,
            self.games,
            self.wins,
            self.draws,
            self.losses,
            e(self.elo),
            e(self.elo_low),
            e(self.elo_high)
        )
    }
}

/// A match of a generation's net (`logs/match-gen-NNN.json`, the final match, and one line of
/// `logs/matches.csv`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchRecord {
    pub generation: u32,
    pub opponent: String,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub score: f64,
    pub score_low: f64,
    pub score_high: f64,
    /// Infinite for a score of 0 or 1, written as the string "inf" or "-inf" (JSON has no
    /// infinity: a null would make the record unreadable and the match replayed on resume).
    #[serde(with = "elo_json")]
    pub elo: f64,
    pub accepted: bool,
}

impl MatchRecord {
    pub fn line(&self) -> String {
        format!(
            "match vs {}: score {:.3} [{:.3}, {:.3}] (W {} D {} L {}) elo {:+.0}{}",
            self.opponent,
            self.score,
            self.score_low,
            self.score_high,
            self.wins,
            self.draws,
            self.losses,
            self.elo,
            if self.accepted {
                ""
            } else {
                " -- rejected by gating"
            }
        )
    }
}

impl Row for MatchRecord {
    const COLUMNS: &'static [&'static str] = &[
        "generation",
        "opponent",
        "games",
        "wins",
        "draws",
        "losses",
        "score",
        "score_low",
        "score_high",
        "elo",
        "accepted",
    ];
    fn line(&self) -> String {
        format!(
            "{},{},{},{},{},{},{:.4},{:.4},{:.4},{:.1},{}",
            self.generation,
            self.opponent,
            self.games,
            self.wins,
            self.draws,
            self.losses,
            self.score,
            self.score_low,
            self.score_high,
            self.elo,
            self.accepted
        )
    }
    fn read(f: &Fields) -> std::result::Result<Self, TableError> {
        Ok(MatchRecord {
            generation: f.get("generation")?,
            opponent: f.raw("opponent")?.to_string(),
            games: f.get("games")?,
            wins: f.get("wins")?,
            draws: f.get("draws")?,
            losses: f.get("losses")?,
            score: f.get("score")?,
            score_low: f.get("score_low")?,
            score_high: f.get("score_high")?,
            elo: f.get("elo")?,
            accepted: f.get("accepted")?,
        })
    }
}

mod elo_json {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        if x.is_finite() {
            s.serialize_f64(*x)
        } else if *x > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Elo {
            Number(f64),
            Text(String),
        }
        match Elo::deserialize(d)? {
            Elo::Number(x) => Ok(x),
            Elo::Text(t) => t.parse::<f64>().map_err(serde::de::Error::custom),
        }
    }
}

/// What the ladder stage recorded of a generation (`logs/ladder-gen-NNN.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LadderRecord {
    pub generation: u32,
    pub player: String,
    /// The highest rung it scored at least half against.
    pub top_rung: Option<usize>,
}

/// One line of `logs/ladder.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderRow {
    pub generation: u32,
    pub player: String,
    pub elo: f64,
    pub error95: f64,
    pub games: u64,
    pub cpu_hours: f64,
}

impl Row for LadderRow {
    const COLUMNS: &'static [&'static str] = &[
        "generation",
        "player",
        "elo",
        "error95",
        "games",
        "cpu_hours",
    ];
    fn line(&self) -> String {
        format!(
            "{},{},{:.1},{:.1},{},{:.6}",
            self.generation, self.player, self.elo, self.error95, self.games, self.cpu_hours
        )
    }
    fn read(f: &Fields) -> std::result::Result<Self, TableError> {
        Ok(LadderRow {
            generation: f.get("generation")?,
            player: f.raw("player")?.to_string(),
            elo: f.get("elo")?,
            error95: f.get("error95")?,
            games: f.get("games")?,
            cpu_hours: f.get("cpu_hours")?,
        })
    }
}

/// One line of `logs/stages.csv`: a stage's wall time, CPU time (this process and the engines
/// it ran) and the cores it kept busy.
#[derive(Clone, Debug, PartialEq)]
pub struct StageRow {
    pub stage: String,
    pub generation: u32,
    pub wall_s: f64,
    pub cpu_s: f64,
    pub cores_busy: f64,
}

impl Row for StageRow {
    const COLUMNS: &'static [&'static str] =
        &["stage", "generation", "wall_s", "cpu_s", "cores_busy"];
    fn line(&self) -> String {
        format!(
            "{},{},{:.1},{:.1},{:.3}",
            self.stage, self.generation, self.wall_s, self.cpu_s, self.cores_busy
        )
    }
    fn read(f: &Fields) -> std::result::Result<Self, TableError> {
        Ok(StageRow {
            stage: f.raw("stage")?.to_string(),
            generation: f.get("generation")?,
            wall_s: f.get("wall_s")?,
            cpu_s: f.get("cpu_s")?,
            cores_busy: f.get("cores_busy")?,
        })
    }
}

/// The layout as a Markdown table (docs/architecture.md holds it; a test keeps them equal).
pub fn layout_markdown() -> String {
    let mut s = String::from("| path | what |\n|---|---|\n");
    for e in LAYOUT {
        s.push_str(&format!("| `RUN/{}` | {} |\n", e.pattern, e.what));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_row_reads_stronger_or_weaker_only_when_its_interval_excludes_zero() {
        let row = |lo: f64, hi: f64| SummaryMatch {
            label: "net 2 vs net 1, raw".into(),
            player: "a".into(),
            opponent: "b".into(),
            games: 40,
            wins: 0,
            draws: 0,
            losses: 0,
            score: 0.5,
            elo: (lo + hi) / 2.0,
            elo_low: lo,
            elo_high: hi,
            generation: None,
            cpu_hours: None,
        };
        assert_eq!(row(19.0, 212.0).verdict(), "stronger");
        assert_eq!(row(-150.0, 20.0).verdict(), "no measurable difference");
        assert_eq!(row(-185.0, -4.0).verdict(), "weaker");
        assert_eq!(row(-96.0, 0.0).verdict(), "no measurable difference");
        assert_eq!(row(f64::NEG_INFINITY, -300.0).verdict(), "weaker");
    }

    #[test]
    fn paths_follow_the_layout() {
        let r = RunDir::new("/runs/x");
        assert_eq!(r.model(3), Path::new("/runs/x/models/gen-003.safetensors"));
        assert_eq!(r.selfplay(0), Path::new("/runs/x/selfplay/gen-000"));
        assert_eq!(
            r.match_record(12),
            Path::new("/runs/x/logs/match-gen-012.json")
        );
        assert_eq!(r.train_log(1), Path::new("/runs/x/logs/train-gen-001.csv"));
        assert_eq!(r.ladder_ratings(), Path::new("/runs/x/ladder/ratings.csv"));
        // Every directory a per-generation entry lives in is made by `create`.
        for e in LAYOUT {
            let parent = Path::new(e.pattern).parent().unwrap();
            if e.per_generation() && parent != Path::new("") {
                assert!(
                    r.dirs().contains(&r.root().join(parent)),
                    "{} is in no directory the run makes",
                    e.pattern
                );
            }
        }
        let j = r.layout_json(2);
        assert_eq!(j["files"]["selfplay"][2], "/runs/x/selfplay/gen-002");
        assert_eq!(j["files"]["config"], "/runs/x/config.toml");
    }

    #[test]
    fn a_match_record_with_an_infinite_elo_reads_back() {
        for elo in [f64::NEG_INFINITY, f64::INFINITY, -12.5] {
            let r = MatchRecord {
                generation: 2,
                opponent: "material@64".into(),
                games: 40,
                wins: 0,
                draws: 0,
                losses: 40,
                score: 0.0,
                score_low: 0.0,
                score_high: 0.0,
                elo,
                accepted: true,
            };
            let text = serde_json::to_string(&r).unwrap();
            let back: MatchRecord = serde_json::from_str(&text).unwrap();
            assert_eq!(back.elo, elo, "{text}");
            // And as a line of logs/matches.csv.
            let csv = table::to_csv(std::slice::from_ref(&r));
            let rows: Vec<MatchRecord> = table::parse_csv(Path::new("m.csv"), &csv).unwrap();
            assert_eq!(rows[0].elo, elo, "{csv}");
        }
    }

    #[test]
    fn cpu_keys_round_trip_and_ranges_are_not_counted_twice() {
        for k in [
            "selfplay-gen-003",
            "selfplay-gen-000@10-20",
            "train-gen-012",
        ] {
            assert_eq!(CpuKey::parse(k).unwrap().to_string(), k);
        }
        assert!(CpuKey::parse("train-gen-001@1-2").is_none());
        assert!(CpuKey::parse("gen-001").is_none());
        let t = tempfile::tempdir().unwrap();
        let r = RunDir::new(t.path());
        r.create().unwrap();
        r.add_cpu(&CpuKey::selfplay(0, Some(&(0..5))), 3600.0)
            .unwrap();
        r.add_cpu(&CpuKey::selfplay(0, None), 3600.0).unwrap();
        r.add_cpu(&CpuKey::train(1), 1800.0).unwrap();
        r.add_cpu(&CpuKey::train(1), 1800.0).unwrap();
        let zero = r.cpu_hours_to(0).unwrap();
        assert!(zero == 0.0 && zero.is_sign_positive(), "{zero}");
        assert_eq!(r.cpu_hours_to(1).unwrap(), 3.0);
    }

    #[test]
    fn a_newer_format_is_refused_and_an_old_run_gets_the_file() {
        let t = tempfile::tempdir().unwrap();
        let r = RunDir::new(t.path());
        r.create().unwrap();
        assert_eq!(
            std::fs::read_to_string(r.format_file()).unwrap(),
            "{\"format\":1}\n"
        );
        std::fs::write(r.format_file(), "{\"format\": 2}").unwrap();
        let e = r.create().unwrap_err().to_string();
        assert!(
            e.contains("run.json: run format 2") && e.contains("newer"),
            "{e}"
        );
    }

    #[test]
    fn a_renamed_column_names_the_file() {
        let t = tempfile::tempdir().unwrap();
        let r = RunDir::new(t.path());
        r.create().unwrap();
        assert!(r.read_ladder_csv().unwrap().is_none());
        std::fs::write(r.ladder_csv(), "generation,player,rating\n0,a,1\n").unwrap();
        let e = crate::one_line(&r.read_ladder_csv().unwrap_err());
        assert!(
            e.contains("logs/ladder.csv") && e.contains("no column 'elo'"),
            "{e}"
        );
    }

    #[test]
    fn docs_architecture_holds_the_layout() {
        let doc = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"),
        )
        .unwrap();
        assert!(
            doc.contains(&layout_markdown()),
            "docs/architecture.md: paste this table (from run_dir::layout_markdown):\n{}",
            layout_markdown()
        );
    }
}
