//! Every chart varzero draws, defined once and drawn through plotters to either of two targets:
//! an inline SVG string for the HTML report, or a PNG (and a standalone SVG) file for the
//! pipeline's logs and the analysis plots. A chart is data (the kinds below) until it is drawn, so
//! the report and the files cannot drift apart. The inline SVG follows the report's conventions:
//! `<svg class="chart" data-chart="ID">`, the marks that show data carry the class `data`, and a
//! chart without data says so in an element of class `empty` (the headless-browser test relies
//! on all three). Plain SVG 1.1 with no script and no external resource.

#![forbid(unsafe_code)]

mod draw;
mod font;
mod svg;

use std::fmt;
use std::path::Path;

pub use font::font_available;

/// A point: x, y and an optional (95%) interval of y.
pub type Point = (f64, f64, Option<(f64, f64)>);

/// One line of a line chart.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
}

/// One bar: label, value, interval, and a reference value marked beside it.
#[derive(Clone, Debug)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub interval: Option<(f64, f64)>,
    pub reference: Option<f64>,
    /// Colour index (bars of one group share it); names come from the chart's groups.
    pub group: usize,
}

/// What a chart shows.
#[derive(Clone, Debug)]
pub(crate) enum Plot {
    /// Lines over a numeric x axis, error bars where a point has an interval.
    Lines {
        x_label: String,
        y_label: String,
        series: Vec<Series>,
    },
    /// Vertical bars with interval whiskers; a reference value is a black diamond. Consecutive
    /// bars with one label share it (a cluster).
    Bars {
        y_label: String,
        bars: Vec<Bar>,
        groups: Vec<String>,
        reference_name: String,
    },
    /// Horizontal stacked shares: one row per group, one colour per category.
    Shares {
        categories: Vec<String>,
        rows: Vec<(String, Vec<f64>)>,
    },
    /// Counts over numeric bins (lower, upper, count).
    Histogram {
        x_label: String,
        y_label: String,
        bins: Vec<(f64, f64, f64)>,
    },
}

/// A chart: a name (the report's `data-chart`), a title and what it plots.
#[derive(Clone, Debug)]
pub struct Chart {
    pub id: String,
    pub title: String,
    pub(crate) plot: Plot,
    /// Dashed horizontal reference lines (value, label), such as the ladder's rungs.
    pub(crate) hlines: Vec<(f64, String)>,
    /// A fixed y range instead of one fitted to the data.
    pub(crate) y_range: Option<(f64, f64)>,
}

/// Lines over a numeric x axis, with error bars where a point has an interval, and dashed
/// horizontal reference lines (value, label).
pub fn line_chart(
    id: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    hlines: &[(f64, String)],
) -> Chart {
    Chart::new(
        id,
        title,
        Plot::Lines {
            x_label: x_label.into(),
            y_label: y_label.into(),
            series: series.to_vec(),
        },
    )
    .with_hlines(hlines)
}

/// Vertical bars with interval whiskers; `groups` name the colours (a legend), and a bar's
/// reference value is a black diamond.
pub fn bar_chart(id: &str, title: &str, y_label: &str, bars: &[Bar], groups: &[String]) -> Chart {
    Chart::new(
        id,
        title,
        Plot::Bars {
            y_label: y_label.into(),
            bars: bars.to_vec(),
            groups: groups.to_vec(),
            reference_name: "reference (diamond)".into(),
        },
    )
}

/// Stacked horizontal shares: one row per group, one colour per category (shares sum to 1).
pub fn stacked_shares(
    id: &str,
    title: &str,
    categories: &[String],
    rows: &[(String, Vec<f64>)],
) -> Chart {
    Chart::new(
        id,
        title,
        Plot::Shares {
            categories: categories.to_vec(),
            rows: rows.to_vec(),
        },
    )
}

/// A histogram: bins (lower, upper, count) over a numeric x axis.
pub fn histogram(
    id: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    bins: &[(f64, f64, f64)],
) -> Chart {
    Chart::new(
        id,
        title,
        Plot::Histogram {
            x_label: x_label.into(),
            y_label: y_label.into(),
            bins: bins.to_vec(),
        },
    )
}

/// Why a chart could not be drawn or written.
#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl Chart {
    fn new(id: &str, title: &str, plot: Plot) -> Chart {
        Chart {
            id: id.into(),
            title: title.into(),
            plot,
            hlines: Vec::new(),
            y_range: None,
        }
    }

    /// Adds dashed horizontal reference lines (value, label).
    pub fn with_hlines(mut self, hlines: &[(f64, String)]) -> Chart {
        self.hlines.extend(hlines.iter().cloned());
        self
    }

    /// Fixes the y range (accuracies, rates) rather than fitting it to the data.
    pub fn with_y_range(mut self, lo: f64, hi: f64) -> Chart {
        self.y_range = Some((lo, hi));
        self
    }

    /// Names the bar chart's diamonds in its legend.
    pub fn with_reference_name(mut self, name: &str) -> Chart {
        if let Plot::Bars { reference_name, .. } = &mut self.plot {
            *reference_name = name.into();
        }
        self
    }

    /// The chart as an inline `<svg class="chart" data-chart="ID">` element of `size` pixels.
    pub fn svg(&self, size: (u32, u32)) -> String {
        svg::render(self, size)
    }

    /// The chart as a standalone SVG file.
    pub fn write_svg(&self, path: &Path, size: (u32, u32)) -> Result<(), Error> {
        std::fs::write(path, self.svg(size)).map_err(|e| Error(format!("{}: {e}", path.display())))
    }

    /// The chart as a PNG file.
    pub fn write_png(&self, path: &Path, size: (u32, u32)) -> Result<(), Error> {
        write_png_row(std::slice::from_ref(self), path, size)
    }
}

/// Charts side by side in one PNG of `size` pixels (the training curves, the two Elo plots).
/// Text needs a TrueType font (`font_available`); without one the marks are drawn alone.
pub fn write_png_row(charts: &[Chart], path: &Path, size: (u32, u32)) -> Result<(), Error> {
    use plotters::prelude::*;
    let err = |e: &dyn fmt::Display| Error(format!("{}: {e}", path.display()));
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let text = font_available();
    for (chart, area) in charts
        .iter()
        .zip(root.split_evenly((1, charts.len().max(1))))
    {
        draw::draw(chart, &area, text, &svg::Tag::none()).map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))
}

/// Escapes text for an attribute value or an element's content.
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests;
