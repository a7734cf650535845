//! The training curves and the ladder's Elo curves, defined once: `train_curves.png` and
//! `logs/ladder.png` are drawn from these charts, and so are the report's.

use crate::StepLog;
use std::path::Path;
use varzero_charts::{line_chart, write_png_row, Chart, Series};

/// Two side by side, as the PNGs have always been.
const PNG_SIZE: (u32, u32) = (1000, 420);

/// Losses and accuracies by step. The report lays several generations' logs one after another
/// (their steps offset), so the titles say so.
pub fn training_charts(logs: &[StepLog]) -> [Chart; 2] {
    let series = |name: &str, f: fn(&StepLog) -> f64| Series {
        name: name.into(),
        points: logs.iter().map(|l| (l.step as f64, f(l), None)).collect(),
    };
    [
        line_chart(
            "training-loss",
            "Training loss (generations one after another)",
            "step",
            "loss",
            &[
                series("loss", |l| l.loss),
                series("policy loss", |l| l.policy_loss),
                series("value loss", |l| l.value_loss),
            ],
            &[],
        ),
        line_chart(
            "training-accuracy",
            "Policy and value accuracy",
            "step",
            "accuracy",
            &[
                series("policy top-1", |l| l.policy_acc),
                series("value", |l| l.value_acc),
            ],
            &[],
        )
        .with_y_range(0.0, 1.0),
    ]
}

pub(crate) fn curves(logs: &[StepLog], path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    if logs.is_empty() {
        return Ok(());
    }
    Ok(write_png_row(&training_charts(logs), path, PNG_SIZE)?)
}

/// One generation's rating on the ladder.
#[derive(Clone, Debug)]
pub struct EloPoint {
    pub generation: u32,
    pub cpu_hours: f64,
    pub elo: f64,
    /// Half-width of the 95% interval.
    pub error: f64,
}

/// Elo against generation and against CPU-hours, with error bars and the rungs (name, Elo) as
/// dashed reference lines: the plots lc0's and KataGo's training pages show.
pub fn elo_charts(points: &[EloPoint], rungs: &[(String, f64)]) -> [Chart; 2] {
    let rungs: Vec<(f64, String)> = rungs.iter().map(|(n, e)| (*e, n.clone())).collect();
    let by = |x: fn(&EloPoint) -> f64| {
        [Series {
            name: "generation".into(),
            points: points
                .iter()
                .map(|p| (x(p), p.elo, Some((p.elo - p.error, p.elo + p.error))))
                .collect(),
        }]
    };
    [
        line_chart(
            "ladder-elo",
            "Elo by generation (rungs dashed)",
            "generation",
            "Elo",
            &by(|p| p.generation as f64),
            &rungs,
        ),
        line_chart(
            "ladder-cpu",
            "Elo by CPU-hours of self-play and training",
            "CPU-hours",
            "Elo",
            &by(|p| p.cpu_hours),
            &rungs,
        ),
    ]
}

/// `elo_charts` as a PNG (nothing without points).
pub fn elo_curves(
    points: &[EloPoint],
    rungs: &[(String, f64)],
    path: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    if points.is_empty() {
        return Ok(());
    }
    Ok(write_png_row(&elo_charts(points, rungs), path, PNG_SIZE)?)
}
