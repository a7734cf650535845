//! The training log: one `StepLog` a step, kept as a CSV (`train_log.csv`) that a resumed run
//! reads back, cuts at its checkpoint's step and appends to.

use crate::error::{at, Result};
use std::path::Path;

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

const LOG_HEADER: &str = "step,lr,loss,policy_loss,value_loss,policy_acc,value_acc,samples_per_s";

pub(crate) fn log_line(l: &StepLog) -> String {
    format!(
        "{},{:.6},{:.6},{:.6},{:.6},{:.4},{:.4},{:.1}",
        l.step,
        l.lr,
        l.loss,
        l.policy_loss,
        l.value_loss,
        l.policy_acc,
        l.value_acc,
        l.samples_per_s
    )
}

pub(crate) fn read_log(path: &Path) -> Vec<StepLog> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<f64> = line
                .split(',')
                .map(|x| x.parse().ok())
                .collect::<Option<Vec<_>>>()?;
            (f.len() == 8).then(|| StepLog {
                step: f[0] as u64,
                lr: f[1],
                loss: f[2],
                policy_loss: f[3],
                value_loss: f[4],
                policy_acc: f[5],
                value_acc: f[6],
                samples_per_s: f[7],
            })
        })
        .collect()
}

pub(crate) fn write_log(path: &Path, logs: &[StepLog]) -> Result<()> {
    let mut text = String::from(LOG_HEADER);
    text.push('\n');
    for l in logs {
        text.push_str(&log_line(l));
        text.push('\n');
    }
    let tmp = path.with_extension("csv.tmp");
    std::fs::write(&tmp, text).map_err(at(&tmp))?;
    std::fs::rename(&tmp, path).map_err(at(path))
}
