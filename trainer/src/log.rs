//! The training log: one `StepLog` a step, kept as a CSV (`train_log.csv`) that a resumed run
//! reads back, cuts at its checkpoint's step and appends to.

use crate::error::{at, Result};
use std::path::Path;
use varzero_datasets::table::{self, Fields, Row, TableError};

/// One logged step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepLog {
    pub step: u64,
    pub lr: f64,
    pub loss: f64,
    pub policy_loss: f64,
    pub value_loss: f64,
    pub policy_acc: f64,
    pub value_acc: f64,
    pub samples_per_s: f64,
}

impl Row for StepLog {
    const COLUMNS: &'static [&'static str] = &[
        "step",
        "lr",
        "loss",
        "policy_loss",
        "value_loss",
        "policy_acc",
        "value_acc",
        "samples_per_s",
    ];
    fn line(&self) -> String {
        format!(
            "{},{:.6},{:.6},{:.6},{:.6},{:.4},{:.4},{:.1}",
            self.step,
            self.lr,
            self.loss,
            self.policy_loss,
            self.value_loss,
            self.policy_acc,
            self.value_acc,
            self.samples_per_s
        )
    }
    fn read(f: &Fields) -> std::result::Result<Self, TableError> {
        Ok(StepLog {
            step: f.get("step")?,
            lr: f.get("lr")?,
            loss: f.get("loss")?,
            policy_loss: f.get("policy_loss")?,
            value_loss: f.get("value_loss")?,
            policy_acc: f.get("policy_acc")?,
            value_acc: f.get("value_acc")?,
            samples_per_s: f.get("samples_per_s")?,
        })
    }
}

/// The log at `path` (empty when there is none yet); a log that cannot be read is an error
/// naming the file and the column.
pub fn read_log(path: &Path) -> Result<Vec<StepLog>> {
    Ok(table::read_csv(path)
        .map_err(varzero_datasets::Error::from)?
        .unwrap_or_default())
}

pub(crate) fn write_log(path: &Path, logs: &[StepLog]) -> Result<()> {
    let text = table::to_csv(logs);
    let tmp = path.with_extension("csv.tmp");
    std::fs::write(&tmp, text).map_err(at(&tmp))?;
    std::fs::rename(&tmp, path).map_err(at(path))
}
