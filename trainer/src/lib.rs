//! Training: reads a sliding window of the newest positions (polars, lazily), and fits the
//! policy/value net with policy cross-entropy + WDL cross-entropy + weight decay, SGD with
//! momentum (or AdamW) and a cosine learning-rate schedule. Losses and accuracies go to a CSV
//! and a PNG; checkpoints (weights, optimizer state, step) are written atomically, and a rerun
//! resumes from the last one to the same state.
//!
//! Layout: `train` holds the loop ([`train()`]) and the bench of its step alone
//! ([`raw_loop_samples_per_s`]); `config` the `[train]` settings and their check; `data` the
//! window of samples and their batches; `mix` which of them a batch draws; `loss` a batch's losses and accuracies; `optim` the
//! learning-rate schedule and the optimizer; `checkpoint` saving and resuming; `log` the CSV of
//! steps and `plot` its curves (and the pipeline's Elo curves); `error` the error type. The public API is re-exported here.
#![forbid(unsafe_code)]

mod checkpoint;
mod config;
mod data;
mod error;
mod log;
mod loss;
mod mix;
mod optim;
mod plot;
mod train;

pub use config::{OptimizerKind, TrainConfig};
pub use data::{load_window, mix_hint_targets, Sample, Samples};
pub use error::{Error, Result};
pub use log::{read_log, StepLog};
pub use loss::{batch_losses, masked_policy_loss, OpponentTargets};
pub use mix::{selfplay_share_at, BatchMix};
pub use optim::lr_at;
pub use plot::{elo_charts, elo_curves, training_charts, EloPoint};
pub use train::{raw_loop_samples_per_s, train, TrainSummary};
