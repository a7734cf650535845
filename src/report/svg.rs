//! Inline SVG charts for the HTML report: line charts with error bars, bar charts with
//! intervals and reference marks, stacked shares. Plain SVG 1.1 with no script and no external
//! resource, so the page renders anywhere, offline; every chart is an `<svg class="chart">`
//! with a `data-chart` name (the headless-browser test finds them by it).

use std::fmt::Write;

const W: f64 = 640.0;
const H: f64 = 300.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 46.0;
pub const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A point: x, y and an optional interval of y.
pub type Point = (f64, f64, Option<(f64, f64)>);

/// One line.
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
}

/// About `n` round tick values covering [lo, hi].
fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let span = (hi - lo).max(1e-9);
    let raw = span / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-6 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

/// A tick's label with as many decimals as the spacing of `all` needs.
fn fmt_tick_in(t: f64, all: &[f64]) -> String {
    let step = match all {
        [a, b, ..] => (b - a).abs(),
        _ => 1.0,
    };
    let mut d = 0usize;
    while d < 8
        && ((step * 10f64.powi(d as i32)).round() - step * 10f64.powi(d as i32)).abs() > 1e-6
    {
        d += 1;
    }
    format!("{t:.d$}")
}

struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    fn new(x: (f64, f64), y: (f64, f64)) -> Frame {
        let pad = |(a, b): (f64, f64)| {
            if (b - a).abs() < 1e-12 {
                (a - 1.0, b + 1.0)
            } else {
                (a, b)
            }
        };
        let (x0, x1) = pad(x);
        let (y0, y1) = pad(y);
        let m = (y1 - y0) * 0.05;
        Frame {
            x0,
            x1,
            y0: y0 - m,
            y1: y1 + m,
        }
    }
    fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x0) / (self.x1 - self.x0) * (W - LEFT - RIGHT)
    }
    fn py(&self, y: f64) -> f64 {
        H - BOTTOM - (y - self.y0) / (self.y1 - self.y0) * (H - TOP - BOTTOM)
    }
}

fn open(s: &mut String, id: &str, title: &str) {
    let _ = write!(
        s,
        r##"<svg class="chart" data-chart="{}" xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img"><title>{}</title><rect width="{W}" height="{H}" fill="#fff"/><text x="{}" y="20" font-size="{}" font-weight="bold" text-anchor="{}">{}</text>"##,
        esc(id),
        esc(title),
        // A long title starts at the left edge rather than running off it.
        if title.len() > 60 {
            8.0
        } else {
            (W - RIGHT + LEFT) / 2.0
        },
        if title.len() > 80 { 12 } else { 14 },
        if title.len() > 60 { "start" } else { "middle" },
        esc(title)
    );
}

/// Ends a chart that has nothing to draw, saying so (the `empty` class marks it for the
/// browser test).
fn close_empty(s: &mut String, msg: &str) {
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" font-size="12" text-anchor="middle" class="empty">{msg}</text></svg>"#,
        W / 2.0,
        H / 2.0
    );
}

fn axes(s: &mut String, f: &Frame, xlabel: &str, ylabel: &str, xticks: &[(f64, String)]) {
    let yt = ticks(f.y0, f.y1, 5);
    for &t in &yt {
        let y = f.py(t);
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            fmt_tick_in(t, &yt)
        );
    }
    for (x, label) in xticks {
        let px = f.px(*x);
        let _ = write!(
            s,
            r##"<line x1="{px:.1}" x2="{px:.1}" y1="{}" y2="{}" stroke="#999"/><text x="{px:.1}" y="{}" font-size="11" text-anchor="middle">{}</text>"##,
            H - BOTTOM,
            H - BOTTOM + 4.0,
            H - BOTTOM + 16.0,
            esc(label)
        );
    }
    let _ = write!(
        s,
        r##"<line x1="{LEFT}" x2="{}" y1="{b}" y2="{b}" stroke="#333"/><line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{b}" stroke="#333"/><text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text><text transform="translate(16,{}) rotate(-90)" font-size="12" text-anchor="middle">{}</text>"##,
        W - RIGHT,
        (W - RIGHT + LEFT) / 2.0,
        H - 8.0,
        esc(xlabel),
        (H - BOTTOM + TOP) / 2.0,
        esc(ylabel),
        b = H - BOTTOM
    );
}

fn legend(s: &mut String, names: &[(String, &str)]) {
    for (i, (name, color)) in names.iter().enumerate() {
        let y = TOP + 8.0 + 18.0 * i as f64;
        let x = W - RIGHT + 12.0;
        let short: String = name.chars().take(20).collect();
        let _ = write!(
            s,
            r##"<rect x="{x}" y="{:.1}" width="12" height="12" fill="{color}"/><text x="{}" y="{:.1}" font-size="11">{}</text>"##,
            y - 10.0,
            x + 16.0,
            y,
            esc(&short)
        );
    }
}

/// Lines over a numeric x axis, with error bars where a point has an interval, and dashed
/// horizontal reference lines (value, label).
pub fn line_chart(
    id: &str,
    title: &str,
    xlabel: &str,
    ylabel: &str,
    series: &[Series],
    hlines: &[(f64, String)],
) -> String {
    let pts = || series.iter().flat_map(|s| s.points.iter());
    let xs: Vec<f64> = pts().map(|p| p.0).filter(|x| x.is_finite()).collect();
    let ys: Vec<f64> = pts()
        .flat_map(|p| {
            let (lo, hi) = p.2.unwrap_or((p.1, p.1));
            [p.1, lo, hi]
        })
        .chain(hlines.iter().map(|h| h.0))
        .filter(|y| y.is_finite())
        .collect();
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut s = String::new();
    open(&mut s, id, title);
    if xs.is_empty() || ys.is_empty() {
        close_empty(&mut s, "no data yet");
        return s;
    }
    let f = Frame::new((min(&xs), max(&xs)), (min(&ys), max(&ys)));
    // Whole numbers (generations) get whole ticks.
    let integral = xs.iter().all(|x| x.fract() == 0.0);
    let all = ticks(f.x0, f.x1, 8);
    let xt: Vec<(f64, String)> = all
        .iter()
        .filter(|t| !integral || t.fract() == 0.0)
        .map(|&t| (t, fmt_tick_in(t, &all)))
        .collect();
    axes(&mut s, &f, xlabel, ylabel, &xt);
    for (v, label) in hlines {
        let y = f.py(*v);
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#888" stroke-dasharray="5,4"/><text x="{}" y="{:.1}" font-size="10" fill="#555" text-anchor="end">{}</text>"##,
            W - RIGHT,
            W - RIGHT - 4.0,
            y - 3.0,
            esc(label)
        );
    }
    for (i, se) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let path: Vec<String> = se
            .points
            .iter()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .map(|p| format!("{:.1},{:.1}", f.px(p.0), f.py(p.1)))
            .collect();
        if path.len() > 1 {
            let _ = write!(
                s,
                r#"<polyline class="data" points="{}" fill="none" stroke="{color}" stroke-width="2"/>"#,
                path.join(" ")
            );
        }
        for p in &se.points {
            if !(p.0.is_finite() && p.1.is_finite()) {
                continue;
            }
            let (x, y) = (f.px(p.0), f.py(p.1));
            if let Some((lo, hi)) = p.2.filter(|(a, b)| a.is_finite() && b.is_finite()) {
                let _ = write!(
                    s,
                    r#"<line x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}" stroke="{color}"/>"#,
                    f.py(lo),
                    f.py(hi)
                );
            }
            if se.points.len() < 60 {
                let _ = write!(
                    s,
                    r#"<circle class="data" cx="{x:.1}" cy="{y:.1}" r="3" fill="{color}"/>"#
                );
            }
        }
    }
    let names: Vec<(String, &str)> = series
        .iter()
        .enumerate()
        .map(|(i, se)| (se.name.clone(), PALETTE[i % PALETTE.len()]))
        .collect();
    legend(&mut s, &names);
    s.push_str("</svg>");
    s
}

/// One bar: label, value, interval, and a reference value marked beside it.
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub interval: Option<(f64, f64)>,
    pub reference: Option<f64>,
    /// Colour index (bars of one group share it).
    pub group: usize,
}

/// Vertical bars with interval whiskers; a reference value is a black diamond.
pub fn bar_chart(id: &str, title: &str, ylabel: &str, bars: &[Bar], groups: &[String]) -> String {
    let mut s = String::new();
    open(&mut s, id, title);
    let ys: Vec<f64> = bars
        .iter()
        .flat_map(|b| {
            let (lo, hi) = b.interval.unwrap_or((b.value, b.value));
            [b.value, lo, hi, b.reference.unwrap_or(b.value), 0.0]
        })
        .filter(|y| y.is_finite())
        .collect();
    if bars.is_empty() || ys.is_empty() {
        close_empty(&mut s, "no data");
        return s;
    }
    let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let n = bars.len() as f64;
    let f = Frame::new((0.0, n), (lo, hi));
    let xt: Vec<(f64, String)> = bars
        .iter()
        .enumerate()
        .map(|(i, b)| (i as f64 + 0.5, b.label.clone()))
        .collect();
    axes(&mut s, &f, "", ylabel, &xt);
    let bw = (f.px(1.0) - f.px(0.0)) * 0.7;
    for (i, b) in bars.iter().enumerate() {
        if !b.value.is_finite() {
            continue;
        }
        let color = PALETTE[b.group % PALETTE.len()];
        let cx = f.px(i as f64 + 0.5);
        let (y0, y1) = (f.py(0f64.max(f.y0)), f.py(b.value));
        let _ = write!(
            s,
            r#"<rect class="data" x="{:.1}" y="{:.1}" width="{bw:.1}" height="{:.1}" fill="{color}" fill-opacity="0.75"/>"#,
            cx - bw / 2.0,
            y0.min(y1),
            (y0 - y1).abs().max(0.5)
        );
        if let Some((a, c)) = b.interval.filter(|(a, c)| a.is_finite() && c.is_finite()) {
            let _ = write!(
                s,
                r##"<line x1="{cx:.1}" x2="{cx:.1}" y1="{:.1}" y2="{:.1}" stroke="#222" stroke-width="1.5"/><line x1="{:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#222"/><line x1="{:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#222"/>"##,
                f.py(a),
                f.py(c),
                cx - 5.0,
                cx + 5.0,
                f.py(a),
                f.py(a),
                cx - 5.0,
                cx + 5.0,
                f.py(c),
                f.py(c)
            );
        }
        if let Some(r) = b.reference.filter(|r| r.is_finite()) {
            let y = f.py(r);
            let _ = write!(
                s,
                r##"<path d="M{:.1},{y:.1} l6,-6 l6,6 l-6,6 z" fill="#000"/>"##,
                cx + bw / 2.0 - 6.0
            );
        }
    }
    let mut names: Vec<(String, &str)> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| (g.clone(), PALETTE[i % PALETTE.len()]))
        .collect();
    if bars.iter().any(|b| b.reference.is_some()) {
        names.push(("reference (diamond)".into(), "#000"));
    }
    legend(&mut s, &names);
    s.push_str("</svg>");
    s
}

/// Stacked horizontal shares: one row per group, one colour per category (shares sum to 1).
pub fn stacked_shares(
    id: &str,
    title: &str,
    categories: &[String],
    rows: &[(String, Vec<f64>)],
) -> String {
    let mut s = String::new();
    open(&mut s, id, title);
    if rows.is_empty() {
        close_empty(&mut s, "no data");
        return s;
    }
    let left = 150.0;
    let width = W - RIGHT - left;
    let h = ((H - TOP - BOTTOM) / rows.len() as f64).min(40.0);
    for (r, (label, shares)) in rows.iter().enumerate() {
        let y = TOP + 6.0 + h * r as f64;
        let short: String = label.chars().take(24).collect();
        let _ = write!(
            s,
            r#"<text x="{}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"#,
            left - 6.0,
            y + h * 0.55,
            esc(&short)
        );
        let mut x = left;
        for (c, share) in shares.iter().enumerate() {
            let w = width * share.max(0.0);
            if w > 0.0 {
                let _ = write!(
                    s,
                    r#"<rect class="data" x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{:.1}" fill="{}"><title>{}: {:.1}%</title></rect>"#,
                    h * 0.8,
                    PALETTE[c % PALETTE.len()],
                    esc(&categories[c]),
                    100.0 * share
                );
            }
            x += w;
        }
    }
    for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let x = left + width * t;
        let _ = write!(
            s,
            r##"<text x="{x:.1}" y="{:.1}" font-size="11" text-anchor="middle">{:.0}%</text>"##,
            TOP + 6.0 + h * rows.len() as f64 + 14.0,
            100.0 * t
        );
    }
    let names: Vec<(String, &str)> = categories
        .iter()
        .enumerate()
        .map(|(i, c)| (c.clone(), PALETTE[i % PALETTE.len()]))
        .collect();
    legend(&mut s, &names);
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_inside_the_range() {
        let shown = |t: Vec<f64>| {
            t.iter()
                .map(|&x| fmt_tick_in(x, &t))
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(shown(ticks(0.0, 1.0, 5)), "0.0 0.2 0.4 0.6 0.8 1.0");
        assert_eq!(shown(ticks(-130.0, 480.0, 5)), "0 200 400");
        assert_eq!(shown(ticks(0.0, 0.0003, 3)), "0.0000 0.0001 0.0002 0.0003");
        assert_eq!(shown(ticks(0.0, 1.0, 4)), "0.00 0.25 0.50 0.75 1.00");
    }

    #[test]
    fn charts_escape_text_and_say_when_empty() {
        let c = line_chart("x", "a<b", "x", "y", &[], &[]);
        assert!(c.contains("a&lt;b") && c.contains("no data yet"));
        let c = line_chart(
            "elo",
            "Elo",
            "generation",
            "Elo",
            &[Series {
                name: "net".into(),
                points: vec![(0.0, 10.0, Some((0.0, 20.0))), (1.0, 50.0, None)],
            }],
            &[(0.0, "anchor".into())],
        );
        assert_eq!(c.matches("<circle").count(), 2);
        assert!(c.contains("<polyline") && c.contains("stroke-dasharray"));
    }
}
