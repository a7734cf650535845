//! Training curves as a PNG: losses and accuracies by step.

use crate::StepLog;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// A curve: its label, the value it plots, its colour.
type Curve = (&'static str, fn(&StepLog) -> f64, RGBColor);

/// Registers a system font for labels if one is found; without one the chart has no text.
pub(crate) fn font_available() -> bool {
    static FONT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FONT.get_or_init(|| {
        for p in [
            "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/TTF/DejaVuSans.ttf",
        ] {
            if let Ok(bytes) = std::fs::read(p) {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                    return true;
                }
            }
        }
        false
    })
}

pub(crate) fn curves(logs: &[StepLog], path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    if logs.is_empty() {
        return Ok(());
    }
    let text = font_available();
    let root = BitMapBackend::new(path, (1000, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(500);
    let max_step = logs.last().unwrap().step as f64;
    let max_loss = logs.iter().map(|l| l.loss).fold(0.0, f64::max) * 1.05;
    let series: [Curve; 3] = [
        ("loss", |l| l.loss, BLACK),
        ("policy", |l| l.policy_loss, BLUE),
        ("value", |l| l.value_loss, RED),
    ];
    let mut c = ChartBuilder::on(&left);
    c.margin(10)
        .x_label_area_size(if text { 30 } else { 5 })
        .y_label_area_size(if text { 45 } else { 5 });
    if text {
        c.caption("losses", ("sans-serif", 18));
    }
    let mut chart = c.build_cartesian_2d(0.0..max_step.max(1.0), 0.0..max_loss.max(1e-3))?;
    if text {
        chart.configure_mesh().x_desc("step").draw()?;
    }
    for (name, f, color) in series {
        let s = chart.draw_series(LineSeries::new(
            logs.iter().map(|l| (l.step as f64, f(l))),
            color,
        ))?;
        if text {
            s.label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], color));
        }
    }
    if text {
        chart
            .configure_series_labels()
            .background_style(WHITE)
            .border_style(BLACK)
            .draw()?;
    }
    let mut c = ChartBuilder::on(&right);
    c.margin(10)
        .x_label_area_size(if text { 30 } else { 5 })
        .y_label_area_size(if text { 45 } else { 5 });
    if text {
        c.caption("accuracy", ("sans-serif", 18));
    }
    let mut chart = c.build_cartesian_2d(0.0..max_step.max(1.0), 0.0..1.0)?;
    if text {
        chart.configure_mesh().x_desc("step").draw()?;
    }
    let acc: [Curve; 2] = [
        ("policy top-1", |l| l.policy_acc, BLUE),
        ("value", |l| l.value_acc, RED),
    ];
    for (name, f, color) in acc {
        let s = chart.draw_series(LineSeries::new(
            logs.iter().map(|l| (l.step as f64, f(l))),
            color,
        ))?;
        if text {
            s.label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], color));
        }
    }
    if text {
        chart
            .configure_series_labels()
            .background_style(WHITE)
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
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

/// Elo against generation and against CPU-hours, with error bars and the rungs as dashed
/// reference lines (the plots lc0's and KataGo's training pages show), as a PNG.
pub fn elo_curves(
    points: &[EloPoint],
    rungs: &[(String, f64)],
    path: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    if points.is_empty() {
        return Ok(());
    }
    let text = font_available();
    let root = BitMapBackend::new(path, (1000, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(500);
    let lo = points
        .iter()
        .map(|p| p.elo - p.error)
        .chain(rungs.iter().map(|r| r.1))
        .fold(f64::INFINITY, f64::min);
    let hi = points
        .iter()
        .map(|p| p.elo + p.error)
        .chain(rungs.iter().map(|r| r.1))
        .fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.05).max(10.0);
    let (lo, hi) = (lo - pad, hi + pad);
    type Axis<'a, DB> = (&'a str, fn(&EloPoint) -> f64, &'a DrawingArea<DB, Shift>);
    let axes: [Axis<_>; 2] = [
        ("generation", |p| p.generation as f64, &left),
        ("CPU-hours", |p| p.cpu_hours, &right),
    ];
    for (name, x, area) in axes {
        let xmax = points.iter().map(x).fold(0.0, f64::max).max(1e-3) * 1.05;
        let mut c = ChartBuilder::on(area);
        c.margin(10)
            .x_label_area_size(if text { 30 } else { 5 })
            .y_label_area_size(if text { 50 } else { 5 });
        if text {
            c.caption(format!("Elo by {name}"), ("sans-serif", 18));
        }
        let mut chart = c.build_cartesian_2d(0.0..xmax, lo..hi)?;
        if text {
            chart.configure_mesh().x_desc(name).y_desc("Elo").draw()?;
        }
        for (label, elo) in rungs {
            let color = RGBColor(150, 150, 150);
            chart.draw_series(DashedLineSeries::new(
                [(0.0, *elo), (xmax, *elo)],
                6,
                4,
                color.into(),
            ))?;
            if text {
                chart.draw_series(std::iter::once(Text::new(
                    label.clone(),
                    (xmax * 0.8, *elo),
                    ("sans-serif", 12).into_font().color(&color),
                )))?;
            }
        }
        chart.draw_series(points.iter().map(|p| {
            ErrorBar::new_vertical(x(p), p.elo - p.error, p.elo, p.elo + p.error, BLUE, 6)
        }))?;
        chart.draw_series(LineSeries::new(points.iter().map(|p| (x(p), p.elo)), BLUE))?;
        chart.draw_series(
            points
                .iter()
                .map(|p| Circle::new((x(p), p.elo), 3, BLUE.filled())),
        )?;
    }
    root.present()?;
    Ok(())
}
