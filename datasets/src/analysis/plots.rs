//! Charts of an analysis, as SVG and PNG: draw rate and first-player score per group with their
//! intervals (`rates`), fitted piece values with intervals and the variant file's values
//! (`piece-values-GROUP`), and the game-length histogram (`lengths-GROUP`). Drawn through
//! varzero-charts; a PNG's text needs a TrueType font (`VARZERO_FONT` or a usual system font,
//! see `font_available`), without one it is drawn without labels.

use super::GroupReport;
use std::path::{Path, PathBuf};
use varzero_charts::{bar_chart, histogram, Bar, Chart};

pub use varzero_charts::font_available;

/// Which files to write.
#[derive(Clone, Copy, Debug)]
pub struct PlotFormats {
    pub svg: bool,
    pub png: bool,
}

impl Default for PlotFormats {
    fn default() -> Self {
        PlotFormats {
            svg: true,
            png: true,
        }
    }
}

/// A file-name-safe label of a group.
pub fn slug(r: &GroupReport) -> String {
    let name: String = r
        .variant
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("{name}-{}", &r.rules_hash[..r.rules_hash.len().min(8)])
}

const SIZE: (u32, u32) = (900, 520);

/// Two bars a group, draw rate and first-player score, with their intervals; 0.5 is marked.
fn rates_chart(reports: &[GroupReport], labels: &[String]) -> Chart {
    let bar = |label: &String, v: &super::Interval, group| Bar {
        label: label.clone(),
        value: v.value,
        interval: Some((v.lower, v.upper)),
        reference: None,
        group,
    };
    let bars: Vec<Bar> = reports
        .iter()
        .zip(labels)
        .flat_map(|(r, l)| [bar(l, &r.draw_rate, 0), bar(l, &r.first_player_score, 1)])
        .collect();
    bar_chart(
        "rates",
        "draw rate and first-player score (95% Wilson intervals)",
        "rate / score",
        &bars,
        &["draw rate".into(), "first-player score".into()],
    )
    .with_hlines(&[(0.5, "0.5".into())])
    .with_y_range(0.0, 1.0)
}

fn values_chart(id: &str, r: &GroupReport, label: &str) -> Option<Chart> {
    let pv = r.piece_values.as_ref()?;
    let bars: Vec<Bar> = pv
        .values
        .iter()
        .map(|p| Bar {
            label: p.key.clone(),
            value: p.value,
            interval: Some((p.lower, p.upper)),
            reference: Some(p.file_value as f64),
            group: 0,
        })
        .collect();
    Some(
        bar_chart(
            id,
            &format!(
                "{label}: piece values ({} = 1; 95% bootstrap; diamond: variant file)",
                pv.reference
            ),
            "value",
            &bars,
            &["fitted".into()],
        )
        .with_reference_name("variant file"),
    )
}

fn lengths_chart(id: &str, r: &GroupReport, label: &str) -> Chart {
    let bins: Vec<(f64, f64, f64)> = r
        .length
        .histogram
        .iter()
        .map(|&(a, b, n)| (a as f64, b as f64, n as f64))
        .collect();
    histogram(
        id,
        &format!(
            "{label}: game length (mean {:.1}, median {:.0} plies)",
            r.length.mean, r.length.median
        ),
        "plies",
        "games",
        &bins,
    )
}

/// Writes `chart` as `dir/ID.svg` and `dir/ID.png`, as `formats` asks.
fn write(
    dir: &Path,
    chart: &Chart,
    formats: PlotFormats,
    written: &mut Vec<PathBuf>,
) -> Result<(), String> {
    if formats.svg {
        let p = dir.join(format!("{}.svg", chart.id));
        chart.write_svg(&p, SIZE).map_err(|e| e.to_string())?;
        written.push(p);
    }
    if formats.png {
        let p = dir.join(format!("{}.png", chart.id));
        chart.write_png(&p, SIZE).map_err(|e| e.to_string())?;
        written.push(p);
    }
    Ok(())
}

/// Writes the charts of `reports` into `dir` (created); `labels` name the groups (default:
/// `variant (hash)`). Returns the files written.
pub fn write_plots(
    dir: &Path,
    reports: &[GroupReport],
    labels: Option<&[String]>,
    formats: PlotFormats,
) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let default: Vec<String> = reports.iter().map(super::group_label).collect();
    let labels = labels.unwrap_or(&default);
    let mut written = Vec::new();
    write(dir, &rates_chart(reports, labels), formats, &mut written)?;
    for (r, label) in reports.iter().zip(labels) {
        let s = slug(r);
        if let Some(c) = values_chart(&format!("piece-values-{s}"), r, label) {
            write(dir, &c, formats, &mut written)?;
        }
        let c = lengths_chart(&format!("lengths-{s}"), r, label);
        write(dir, &c, formats, &mut written)?;
    }
    Ok(written)
}
