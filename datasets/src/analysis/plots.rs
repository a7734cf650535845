//! Charts of an analysis, as SVG and PNG: draw rate and first-player score per group with their
//! intervals (`rates`), fitted piece values with intervals and the variant file's values
//! (`piece-values-GROUP`), and the game-length histogram (`lengths-GROUP`). Text needs a
//! TrueType font: `VARZERO_FONT` or a usual system font (DejaVu Sans, Liberation Sans...);
//! without one the charts are drawn without labels.

use super::GroupReport;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

type DynError = Box<dyn std::error::Error>;

/// Registers a font for chart text if one is found.
pub fn font_available() -> bool {
    static FONT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FONT.get_or_init(|| {
        let mut candidates: Vec<PathBuf> = std::env::var_os("VARZERO_FONT")
            .map(PathBuf::from)
            .into_iter()
            .collect();
        candidates.extend(
            [
                "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                "/usr/share/fonts/dejavu/DejaVuSans.ttf",
                "/usr/share/fonts/TTF/DejaVuSans.ttf",
                "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
                "/usr/share/fonts/liberation/LiberationSans-Regular.ttf",
                "/usr/share/fonts/noto/NotoSans-Regular.ttf",
                "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
                "/System/Library/Fonts/Supplemental/Arial.ttf",
                "/Library/Fonts/Arial.ttf",
                "C:\\Windows\\Fonts\\arial.ttf",
            ]
            .iter()
            .map(PathBuf::from),
        );
        for p in candidates {
            if let Ok(bytes) = std::fs::read(&p) {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                    return true;
                }
            }
        }
        false
    })
}

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
const BLUE_BAR: RGBColor = RGBColor(70, 110, 190);
const RED_BAR: RGBColor = RGBColor(200, 90, 70);

#[allow(clippy::type_complexity)] // one drawing closure per backend
fn draw_to(
    dir: &Path,
    stem: &str,
    formats: PlotFormats,
    draw: &dyn Fn(&DrawingArea<SVGBackend, Shift>, bool) -> Result<(), DynError>,
    draw_png: &dyn Fn(&DrawingArea<BitMapBackend, Shift>, bool) -> Result<(), DynError>,
    written: &mut Vec<PathBuf>,
) -> Result<(), DynError> {
    let text = font_available();
    if formats.svg {
        let p = dir.join(format!("{stem}.svg"));
        {
            let root = SVGBackend::new(&p, SIZE).into_drawing_area();
            root.fill(&WHITE)?;
            draw(&root, text)?;
            root.present()?;
        }
        written.push(p);
    }
    if formats.png {
        let p = dir.join(format!("{stem}.png"));
        {
            let root = BitMapBackend::new(&p, SIZE).into_drawing_area();
            root.fill(&WHITE)?;
            draw_png(&root, text)?;
            root.present()?;
        }
        written.push(p);
    }
    Ok(())
}

/// A bar from `x0` to `x1` of height `y`, with an error bar from `lo` to `hi`.
fn bar_with_interval<DB: DrawingBackend>(
    chart: &mut ChartContext<
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    x0: f64,
    x1: f64,
    y: f64,
    lo: f64,
    hi: f64,
    color: RGBColor,
) -> Result<(), DynError>
where
    DB::ErrorType: 'static,
{
    chart.draw_series(std::iter::once(Rectangle::new(
        [(x0, 0.0), (x1, y)],
        color.mix(0.8).filled(),
    )))?;
    if lo.is_finite() && hi.is_finite() {
        let xm = (x0 + x1) / 2.0;
        let w = (x1 - x0) / 4.0;
        for path in [
            vec![(xm, lo), (xm, hi)],
            vec![(xm - w, lo), (xm + w, lo)],
            vec![(xm - w, hi), (xm + w, hi)],
        ] {
            chart.draw_series(std::iter::once(PathElement::new(
                path,
                BLACK.stroke_width(2),
            )))?;
        }
    }
    Ok(())
}

fn rates_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    text: bool,
    reports: &[GroupReport],
    labels: &[String],
) -> Result<(), DynError>
where
    DB::ErrorType: 'static,
{
    let g = reports.len() as f64;
    let mut c = ChartBuilder::on(root);
    c.margin(15)
        .x_label_area_size(if text { 10 } else { 5 })
        .y_label_area_size(if text { 50 } else { 5 });
    if text {
        c.caption(
            "draw rate and first-player score (95% Wilson intervals)",
            ("sans-serif", 20),
        );
    }
    let mut chart = c.build_cartesian_2d(0.0..g.max(1.0), -0.12..1.0)?;
    if text {
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .disable_x_mesh()
            .x_labels(0)
            .y_desc("rate / score")
            .draw()?;
    }
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(0.0, 0.5), (g, 0.5)],
        BLACK.mix(0.3),
    )))?;
    for (i, r) in reports.iter().enumerate() {
        let x = i as f64;
        let d = r.draw_rate;
        let s = r.first_player_score;
        bar_with_interval(
            &mut chart,
            x + 0.1,
            x + 0.47,
            d.value,
            d.lower,
            d.upper,
            BLUE_BAR,
        )?;
        bar_with_interval(
            &mut chart,
            x + 0.53,
            x + 0.9,
            s.value,
            s.lower,
            s.upper,
            RED_BAR,
        )?;
        if text {
            let style = ("sans-serif", 15).into_font().color(&BLACK);
            chart.draw_series(std::iter::once(Text::new(
                labels[i].clone(),
                (x + 0.1, -0.05),
                style,
            )))?;
        }
    }
    if text {
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(0.0, 0.0), (0.0, 0.0)],
                BLUE_BAR.filled(),
            )))?
            .label("draw rate")
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], BLUE_BAR.filled()));
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(0.0, 0.0), (0.0, 0.0)],
                RED_BAR.filled(),
            )))?
            .label("first-player score")
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], RED_BAR.filled()));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE)
            .border_style(BLACK)
            .draw()?;
    }
    Ok(())
}

fn values_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    text: bool,
    r: &GroupReport,
    label: &str,
) -> Result<(), DynError>
where
    DB::ErrorType: 'static,
{
    let Some(pv) = &r.piece_values else {
        return Ok(());
    };
    let k = pv.values.len() as f64;
    let top = pv
        .values
        .iter()
        .flat_map(|p| [p.value, p.upper, p.file_value as f64])
        .filter(|x| x.is_finite())
        .fold(1.0f64, f64::max)
        * 1.1;
    let bottom = pv
        .values
        .iter()
        .flat_map(|p| [p.value, p.lower])
        .filter(|x| x.is_finite())
        .fold(0.0f64, f64::min);
    let pad = (top - bottom) * 0.08;
    let mut c = ChartBuilder::on(root);
    c.margin(15)
        .x_label_area_size(if text { 10 } else { 5 })
        .y_label_area_size(if text { 50 } else { 5 });
    if text {
        c.caption(
            format!(
                "{label}: piece values ({} = 1; 95% bootstrap; dash: variant file)",
                pv.reference
            ),
            ("sans-serif", 18),
        );
    }
    let mut chart = c.build_cartesian_2d(0.0..k, (bottom - pad)..top)?;
    if text {
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .disable_x_mesh()
            .x_labels(0)
            .y_desc("value")
            .draw()?;
    }
    for (i, p) in pv.values.iter().enumerate() {
        let x = i as f64;
        bar_with_interval(
            &mut chart,
            x + 0.2,
            x + 0.8,
            p.value,
            p.lower,
            p.upper,
            BLUE_BAR,
        )?;
        let f = p.file_value as f64;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x + 0.12, f), (x + 0.88, f)],
            RED_BAR.stroke_width(3),
        )))?;
        if text {
            chart.draw_series(std::iter::once(Text::new(
                p.key.clone(),
                (x + 0.45, bottom - pad * 0.5),
                ("sans-serif", 16).into_font().color(&BLACK),
            )))?;
        }
    }
    Ok(())
}

fn lengths_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    text: bool,
    r: &GroupReport,
    label: &str,
) -> Result<(), DynError>
where
    DB::ErrorType: 'static,
{
    let h = &r.length.histogram;
    if h.is_empty() {
        return Ok(());
    }
    let x0 = h[0].0 as f64;
    let x1 = h[h.len() - 1].1 as f64;
    let top = h.iter().map(|b| b.2).max().unwrap_or(1) as f64 * 1.1;
    let mut c = ChartBuilder::on(root);
    c.margin(15)
        .x_label_area_size(if text { 35 } else { 5 })
        .y_label_area_size(if text { 50 } else { 5 });
    if text {
        c.caption(
            format!(
                "{label}: game length (mean {:.1}, median {:.0} plies)",
                r.length.mean, r.length.median
            ),
            ("sans-serif", 18),
        );
    }
    let mut chart = c.build_cartesian_2d(x0..x1.max(x0 + 1.0), 0.0..top.max(1.0))?;
    if text {
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .x_desc("plies")
            .y_desc("games")
            .draw()?;
    }
    chart.draw_series(h.iter().map(|&(a, b, n)| {
        Rectangle::new(
            [(a as f64, 0.0), (b as f64, n as f64)],
            BLUE_BAR.mix(0.8).filled(),
        )
    }))?;
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
    let err = |e: DynError| e.to_string();
    draw_to(
        dir,
        "rates",
        formats,
        &|a, t| rates_chart(a, t, reports, labels),
        &|a, t| rates_chart(a, t, reports, labels),
        &mut written,
    )
    .map_err(err)?;
    for (r, label) in reports.iter().zip(labels) {
        let s = slug(r);
        if r.piece_values.is_some() {
            draw_to(
                dir,
                &format!("piece-values-{s}"),
                formats,
                &|a, t| values_chart(a, t, r, label),
                &|a, t| values_chart(a, t, r, label),
                &mut written,
            )
            .map_err(err)?;
        }
        draw_to(
            dir,
            &format!("lengths-{s}"),
            formats,
            &|a, t| lengths_chart(a, t, r, label),
            &|a, t| lengths_chart(a, t, r, label),
            &mut written,
        )
        .map_err(err)?;
    }
    Ok(written)
}
