//! Drawing a chart on any plotters backend: the one place that decides how each kind looks.

use crate::svg::Tag;
use crate::{Bar, Chart, Plot, Series};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
];
const GRID: RGBColor = RGBColor(0xe4, 0xe4, 0xe4);
const REFERENCE: RGBColor = RGBColor(0x88, 0x88, 0x88);
const NOTE: RGBColor = RGBColor(0x55, 0x55, 0x55);
const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
const FONT: &str = "sans-serif";
/// plotters' font sizes are 1.24 times the pixel size the SVG writes.
const TITLE_PT: f64 = 18.0;
const LABEL_PT: f64 = 14.0;
const DESC_PT: f64 = 15.0;
const NOTE_PT: f64 = 12.5;

type Res<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;
type Cartesian<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

fn style(pt: f64, c: &'static RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle::from((FONT, pt).into_font())
        .color(c)
        .pos(Pos::new(h, v))
}

/// Draws `c` on `area`; `text` is false for a bitmap without a font (marks only).
pub(crate) fn draw<DB: DrawingBackend>(
    c: &Chart,
    area: &DrawingArea<DB, Shift>,
    text: bool,
    tag: &Tag,
) -> Res<DB> {
    let (w, h) = area.dim_in_pixel();
    if text {
        // A long title starts at the left edge rather than running off both.
        let long = c.title.chars().count() > 60;
        let pt = if c.title.chars().count() > 80 {
            15.0
        } else {
            TITLE_PT
        };
        let (x, anchor) = if long {
            (8, HPos::Left)
        } else {
            (w as i32 / 2, HPos::Center)
        };
        area.draw_text(&c.title, &style(pt, &BLACK, anchor, VPos::Top), (x, 8))?;
    }
    let body = area.margin(30, 4, 4, 4);
    if is_empty(c) {
        if text {
            tag.empty();
            let msg = match c.plot {
                Plot::Lines { .. } => "no data yet",
                _ => "no data",
            };
            body.draw_text(
                msg,
                &style(LABEL_PT, &INK, HPos::Center, VPos::Center),
                (w as i32 / 2, h as i32 / 2 - 30),
            )?;
            tag.plain();
        }
        return Ok(());
    }
    // Legends sit in a column of their own on the right, as long names do not cover data.
    let legend_w = match c.plot {
        Plot::Histogram { .. } => 0,
        _ => (w / 4).min(150),
    };
    let (plot, legend_area) = body.split_horizontally(w.saturating_sub(8 + legend_w));
    match &c.plot {
        Plot::Lines {
            x_label,
            y_label,
            series,
        } => {
            lines(c, &plot, text, tag, x_label, y_label, series)?;
            let names: Vec<(String, RGBColor)> = series
                .iter()
                .enumerate()
                .map(|(i, s)| (s.name.clone(), color(i)))
                .collect();
            legend(&legend_area, text, &names)
        }
        Plot::Bars {
            y_label,
            bars,
            groups,
            reference_name,
        } => {
            bar_chart(c, &plot, text, tag, y_label, bars)?;
            let mut names: Vec<(String, RGBColor)> = groups
                .iter()
                .enumerate()
                .map(|(i, g)| (g.clone(), color(i)))
                .collect();
            if bars.iter().any(|b| b.reference.is_some()) {
                names.push((reference_name.clone(), BLACK));
            }
            legend(&legend_area, text, &names)
        }
        Plot::Shares { categories, rows } => {
            shares(&plot, text, tag, categories, rows)?;
            let names: Vec<(String, RGBColor)> = categories
                .iter()
                .enumerate()
                .map(|(i, s)| (s.clone(), color(i)))
                .collect();
            legend(&legend_area, text, &names)
        }
        Plot::Histogram {
            x_label,
            y_label,
            bins,
        } => histogram(c, &plot, text, tag, x_label, y_label, bins),
    }
}

fn is_empty(c: &Chart) -> bool {
    match &c.plot {
        Plot::Lines { series, .. } => !series
            .iter()
            .flat_map(|s| &s.points)
            .any(|p| p.0.is_finite() && p.1.is_finite()),
        Plot::Bars { bars, .. } => !bars.iter().any(|b| b.value.is_finite()),
        Plot::Shares { rows, .. } => rows.is_empty(),
        Plot::Histogram { bins, .. } => bins.is_empty(),
    }
}

/// The range of the finite values, widened where it is a single value.
fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        (0.0, 1.0)
    } else if hi - lo < 1e-12 {
        (lo - 1.0, hi + 1.0)
    } else {
        (lo, hi)
    }
}

/// The y range: fixed, or the data's with 5% either side.
fn y_range(c: &Chart, values: impl Iterator<Item = f64>) -> (f64, f64) {
    if let Some(r) = c.y_range {
        return r;
    }
    let (lo, hi) = span(values.chain(c.hlines.iter().map(|h| h.0)));
    let m = (hi - lo) * 0.05;
    (lo - m, hi + m)
}

/// The decimals that the ticks plotters puts on `range` with at most `n` labels need: those of
/// their spacing, so that labels read 0.0, 0.2, 0.4 or 0.25, 0.50 alike.
fn decimals(range: (f64, f64), n: usize) -> usize {
    let ticks = RangedCoordf64::from(range.0..range.1).key_points(n);
    let step = match ticks[..] {
        [a, b, ..] => (b - a).abs(),
        _ => (range.1 - range.0).abs(),
    };
    (0..8)
        .find(|&d| {
            let scaled = step * 10f64.powi(d as i32);
            (scaled.round() - scaled).abs() < 1e-6 * scaled.max(1.0)
        })
        .unwrap_or(8)
}

/// A tick label with `d` decimals.
fn tick(v: f64, d: usize) -> String {
    let s = format!("{v:.d$}");
    // "-0" and "-0.00" read as a sign where there is none.
    if s.trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        s.trim_start_matches('-').to_string()
    } else {
        s
    }
}

fn frame<'a, DB: DrawingBackend>(
    plot: &'a DrawingArea<DB, Shift>,
    text: bool,
    x: (f64, f64),
    y: (f64, f64),
    x_area: u32,
    y_area: u32,
) -> Result<Cartesian<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    ChartBuilder::on(plot)
        .margin(6)
        .margin_right(14)
        .x_label_area_size(if text { x_area } else { 4 })
        .y_label_area_size(if text { y_area } else { 4 })
        .build_cartesian_2d(x.0..x.1, y.0..y.1)
}

fn hlines<DB: DrawingBackend>(c: &Chart, ch: &mut Cartesian<'_, DB>, text: bool) -> Res<DB> {
    let x = ch.x_range();
    for (v, label) in c.hlines.iter().filter(|h| h.0.is_finite()) {
        ch.draw_series(DashedLineSeries::new(
            [(x.start, *v), (x.end, *v)],
            5,
            4,
            REFERENCE.stroke_width(1),
        ))?;
        if text {
            ch.draw_series(std::iter::once(
                EmptyElement::at((x.end, *v))
                    + Text::new(
                        label.clone(),
                        (-4, -3),
                        style(NOTE_PT, &NOTE, HPos::Right, VPos::Bottom),
                    ),
            ))?;
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)] // one chart kind's fields, unpacked
fn lines<DB: DrawingBackend>(
    c: &Chart,
    plot: &DrawingArea<DB, Shift>,
    text: bool,
    tag: &Tag,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Res<DB> {
    let finite = |p: &&(f64, f64, Option<(f64, f64)>)| p.0.is_finite() && p.1.is_finite();
    let all = || series.iter().flat_map(|s| s.points.iter()).filter(finite);
    let x = span(all().map(|p| p.0));
    let y = y_range(
        c,
        all().flat_map(|p| {
            let (lo, hi) = p.2.unwrap_or((p.1, p.1));
            [p.1, lo, hi]
        }),
    );
    // Whole numbers (generations) get whole ticks.
    let integral = all().all(|p| p.0.fract() == 0.0);
    // As many x labels as fit side by side (a PNG's half-width panel has room for fewer), and
    // no more than whole numbers in the range, so that none falls between two.
    let fit = (plot.dim_in_pixel().0 / 75).clamp(2, 8) as usize;
    let xn = if integral {
        ((x.1 - x.0).round() as usize + 1).clamp(2, fit)
    } else {
        fit
    };
    let mut ch = frame(plot, text, x, y, 40, 60)?;
    if text {
        let (dx, dy) = (decimals(x, xn), decimals(y, 6));
        let xf = |v: &f64| {
            if integral && v.fract() != 0.0 {
                String::new()
            } else {
                tick(*v, dx)
            }
        };
        let yf = |v: &f64| tick(*v, dy);
        ch.configure_mesh()
            .disable_x_mesh()
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .x_labels(xn)
            .y_labels(6)
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .label_style((FONT, LABEL_PT))
            .axis_desc_style((FONT, DESC_PT))
            .x_desc(x_label)
            .y_desc(y_label)
            .draw()?;
    }
    hlines(c, &mut ch, text)?;
    for (i, s) in series.iter().enumerate() {
        let col = color(i);
        let pts: Vec<_> = s.points.iter().filter(finite).collect();
        tag.data();
        if pts.len() > 1 {
            ch.draw_series(LineSeries::new(
                pts.iter().map(|p| (p.0, p.1)),
                col.stroke_width(2),
            ))?;
        }
        ch.draw_series(pts.iter().filter_map(|p| {
            let (lo, hi) = p.2.filter(|(a, b)| a.is_finite() && b.is_finite())?;
            Some(ErrorBar::new_vertical(
                p.0,
                lo,
                p.1,
                hi,
                col.stroke_width(1),
                6,
            ))
        }))?;
        // Dots on short series only; on a training curve they would be a thick smear.
        if pts.len() < 60 {
            ch.draw_series(pts.iter().map(|p| Circle::new((p.0, p.1), 3, col.filled())))?;
        }
        tag.plain();
    }
    Ok(())
}

/// Writes `label` centred under x = `at` of the chart, below its axis.
fn x_label_at<DB: DrawingBackend>(
    ch: &Cartesian<'_, DB>,
    area: &DrawingArea<DB, Shift>,
    at: (f64, f64),
    label: &str,
    anchor: (HPos, VPos),
    offset: (i32, i32),
) -> Res<DB> {
    let (px, py) = ch.backend_coord(&at);
    let (bx, by) = area.get_base_pixel();
    area.draw_text(
        label,
        &style(LABEL_PT, &INK, anchor.0, anchor.1),
        (px - bx + offset.0, py - by + offset.1),
    )
}

fn bar_chart<DB: DrawingBackend>(
    c: &Chart,
    plot: &DrawingArea<DB, Shift>,
    text: bool,
    tag: &Tag,
    y_label: &str,
    bars: &[Bar],
) -> Res<DB> {
    let n = bars.len() as f64;
    let y = y_range(
        c,
        bars.iter().flat_map(|b| {
            let (lo, hi) = b.interval.unwrap_or((b.value, b.value));
            [b.value, lo, hi, b.reference.unwrap_or(b.value), 0.0]
        }),
    );
    let mut ch = frame(plot, text, (0.0, n), y, 30, 60)?;
    if text {
        let dy = decimals(y, 6);
        let yf = |v: &f64| tick(*v, dy);
        ch.configure_mesh()
            .disable_x_mesh()
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .x_labels(0)
            .y_labels(6)
            .y_label_formatter(&yf)
            .label_style((FONT, LABEL_PT))
            .axis_desc_style((FONT, DESC_PT))
            .y_desc(y_label)
            .draw()?;
        // One label under each run of bars that share it.
        let mut i = 0;
        while i < bars.len() {
            let j = (i..bars.len())
                .find(|&j| bars[j].label != bars[i].label)
                .unwrap_or(bars.len());
            let short: String = bars[i].label.chars().take(24).collect();
            let mid = (i + j) as f64 / 2.0;
            x_label_at(
                &ch,
                plot,
                (mid, y.0),
                &short,
                (HPos::Center, VPos::Top),
                (0, 6),
            )?;
            i = j;
        }
    }
    hlines(c, &mut ch, text)?;
    let base = 0f64.clamp(y.0, y.1);
    for (i, b) in bars.iter().enumerate().filter(|(_, b)| b.value.is_finite()) {
        let x = i as f64;
        tag.data();
        ch.draw_series(std::iter::once(Rectangle::new(
            [(x + 0.15, base), (x + 0.85, b.value)],
            color(b.group).mix(0.75).filled(),
        )))?;
        tag.plain();
        if let Some((lo, hi)) = b.interval.filter(|(a, c)| a.is_finite() && c.is_finite()) {
            // Whiskers without ErrorBar's ring, which would sit on the bar's top.
            let (m, w) = (x + 0.5, 0.08);
            ch.draw_series(
                [
                    vec![(m, lo), (m, hi)],
                    vec![(m - w, lo), (m + w, lo)],
                    vec![(m - w, hi), (m + w, hi)],
                ]
                .into_iter()
                .map(|p| PathElement::new(p, INK.stroke_width(2))),
            )?;
        }
        if let Some(r) = b.reference.filter(|r| r.is_finite()) {
            ch.draw_series(std::iter::once(
                EmptyElement::at((x + 0.8, r))
                    + Polygon::new(vec![(0, -6), (6, 0), (0, 6), (-6, 0)], BLACK.filled()),
            ))?;
        }
    }
    Ok(())
}

fn shares<DB: DrawingBackend>(
    plot: &DrawingArea<DB, Shift>,
    text: bool,
    tag: &Tag,
    categories: &[String],
    rows: &[(String, Vec<f64>)],
) -> Res<DB> {
    let n = rows.len() as f64;
    let mut ch = frame(plot, text, (0.0, 1.0), (0.0, n), 30, 150)?;
    if text {
        let xf = |v: &f64| format!("{:.0}%", 100.0 * v);
        ch.configure_mesh()
            .disable_y_mesh()
            .disable_x_mesh()
            .x_labels(5)
            .y_labels(0)
            .x_label_formatter(&xf)
            .label_style((FONT, LABEL_PT))
            .draw()?;
    }
    for (r, (label, parts)) in rows.iter().enumerate() {
        // The first row on top.
        let top = n - r as f64 - 0.1;
        if text {
            let short: String = label.chars().take(24).collect();
            x_label_at(
                &ch,
                plot,
                (0.0, top - 0.4),
                &short,
                (HPos::Right, VPos::Center),
                (-6, 0),
            )?;
        }
        let mut x = 0.0;
        for (k, share) in parts.iter().enumerate() {
            let w = if share.is_finite() {
                share.max(0.0)
            } else {
                0.0
            };
            if w > 0.0 {
                let name = categories.get(k).map_or("?", String::as_str);
                tag.data_tip(format!("{name}: {:.1}%", 100.0 * share));
                ch.draw_series(std::iter::once(Rectangle::new(
                    [(x, top), (x + w, top - 0.8)],
                    color(k).filled(),
                )))?;
                tag.plain();
            }
            x += w;
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)] // one chart kind's fields, unpacked
fn histogram<DB: DrawingBackend>(
    c: &Chart,
    plot: &DrawingArea<DB, Shift>,
    text: bool,
    tag: &Tag,
    x_label: &str,
    y_label: &str,
    bins: &[(f64, f64, f64)],
) -> Res<DB> {
    let x = span(bins.iter().flat_map(|b| [b.0, b.1]));
    let y = c
        .y_range
        .unwrap_or((0.0, bins.iter().map(|b| b.2).fold(1.0, f64::max) * 1.1));
    let mut ch = frame(plot, text, x, y, 40, 60)?;
    if text {
        let (dx, dy) = (decimals(x, 10), decimals(y, 10));
        let xf = |v: &f64| tick(*v, dx);
        let yf = |v: &f64| tick(*v, dy);
        ch.configure_mesh()
            .disable_x_mesh()
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .x_labels(10)
            .y_labels(10)
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .label_style((FONT, LABEL_PT))
            .axis_desc_style((FONT, DESC_PT))
            .x_desc(x_label)
            .y_desc(y_label)
            .draw()?;
    }
    hlines(c, &mut ch, text)?;
    tag.data();
    ch.draw_series(
        bins.iter()
            .filter(|b| b.2 > 0.0)
            .map(|&(a, b, n)| Rectangle::new([(a, 0.0), (b, n)], color(0).mix(0.8).filled())),
    )?;
    tag.plain();
    Ok(())
}

/// The legend: a swatch and a name per entry, in the column right of the plot.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: bool,
    names: &[(String, RGBColor)],
) -> Res<DB> {
    for (i, (name, col)) in names.iter().enumerate() {
        let y = 14 + 18 * i as i32;
        area.draw(&Rectangle::new([(4, y), (16, y + 12)], col.filled()))?;
        if text {
            let short: String = name.chars().take(22).collect();
            area.draw_text(
                &short,
                &style(LABEL_PT, &INK, HPos::Left, VPos::Center),
                (21, y + 6),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{decimals, tick};

    #[test]
    fn tick_labels_have_the_decimals_their_spacing_needs() {
        assert_eq!(decimals((0.0, 1.0), 6), 1);
        assert_eq!(decimals((-130.0, 480.0), 6), 0);
        assert_eq!(decimals((0.0, 0.0003), 4), 4);
        assert_eq!(decimals((0.0, 0.6), 3), 1);
        assert_eq!(tick(0.2, 1), "0.2");
        assert_eq!(tick(-0.0, 2), "0.00");
        assert_eq!(tick(-150.0, 0), "-150");
    }
}
