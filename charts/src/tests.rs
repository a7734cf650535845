use super::*;

const SIZE: (u32, u32) = (640, 300);

fn elo() -> Chart {
    line_chart(
        "ladder-elo",
        "Elo <by> generation",
        "generation",
        "Elo",
        &[Series {
            name: "net".into(),
            points: vec![
                (0.0, 10.0, Some((0.0, 20.0))),
                (1.0, 50.0, None),
                (2.0, f64::NAN, None),
            ],
        }],
        &[(0.0, "anchor".into())],
    )
}

fn bars() -> Chart {
    let bar = |label: &str, value, group| Bar {
        label: label.into(),
        value,
        interval: Some((value - 0.1, value + 0.1)),
        reference: Some(value + 0.05),
        group,
    };
    bar_chart(
        "rates",
        "Rates",
        "rate",
        &[bar("a", 0.3, 0), bar("a", 0.6, 1), bar("b", 0.4, 0)],
        &["draw".into(), "score".into()],
    )
}

fn shares() -> Chart {
    stacked_shares(
        "endings",
        "Endings",
        &["mate".into(), "draw".into()],
        &[
            ("gen 1".into(), vec![0.25, 0.75]),
            ("gen 2".into(), vec![1.0, 0.0]),
        ],
    )
}

fn lengths() -> Chart {
    histogram(
        "lengths",
        "Lengths",
        "plies",
        "games",
        &[(0.0, 10.0, 3.0), (10.0, 20.0, 0.0), (20.0, 30.0, 5.0)],
    )
}

/// The elements of `svg` that carry `class`.
fn count(svg: &str, class: &str) -> usize {
    svg.matches(&format!("class=\"{class}\"")).count()
}

#[test]
fn an_svg_chart_has_its_name_and_marks_its_data() {
    let s = elo().svg(SIZE);
    assert!(
        s.starts_with("<svg class=\"chart\" data-chart=\"ladder-elo\" "),
        "{s}"
    );
    assert!(s.trim_end().ends_with("</svg>"));
    assert!(
        s.contains("Elo &lt;by&gt; generation"),
        "the title is escaped"
    );
    // The line, one error bar (three strokes and its ring) and two dots; the NaN point draws
    // nothing.
    assert_eq!(s.matches("<polyline class=\"data\"").count(), 1, "{s}");
    assert_eq!(s.matches("<line class=\"data\"").count(), 3, "{s}");
    assert_eq!(s.matches("<circle class=\"data\"").count(), 3, "{s}");
    // Generations are whole: no "0.50" between them.
    assert!(
        s.contains(">\n0\n</text>") && !s.contains(">\n0.50\n</text>"),
        "{s}"
    );
    assert_eq!(count(&s, "empty"), 0);
    assert!(
        s.matches("stroke=\"#888888\"").count() > 3,
        "the rung is dashed"
    );
    assert!(
        s.contains(">\nanchor\n</text>"),
        "the rung is labelled: {s}"
    );
    assert!(
        s.contains(">\ngeneration\n</text>"),
        "the x axis is labelled"
    );
    // Self-contained: one svg element, no script, nothing fetched.
    assert_eq!(s.matches("<svg").count(), 1);
    assert!(!s.contains("<script") && !s.contains("href") && !s.contains("https://"));
}

#[test]
fn every_kind_marks_its_data() {
    let b = bars().svg(SIZE);
    assert_eq!(b.matches("<rect class=\"data\"").count(), 3, "{b}");
    assert_eq!(b.matches("<polygon").count(), 3, "three reference diamonds");
    // One label under the cluster of two "a" bars, one under "b".
    assert_eq!(b.matches(">\na\n</text>").count(), 1, "{b}");
    assert!(b.contains(">\nreference (diamond)\n</text>"));
    let s = shares().svg(SIZE);
    assert_eq!(count(&s, "data"), 3, "zero shares draw nothing: {s}");
    assert!(s.contains("<title>mate: 25.0%</title>"), "{s}");
    let h = lengths().svg(SIZE);
    assert_eq!(count(&h, "data"), 2, "{h}");
}

#[test]
fn a_chart_without_data_says_so() {
    let none = [
        line_chart("l", "L", "x", "y", &[], &[]),
        line_chart(
            "n",
            "N",
            "x",
            "y",
            &[Series {
                name: "s".into(),
                points: vec![(f64::NAN, 1.0, None)],
            }],
            &[],
        ),
        bar_chart("b", "B", "y", &[], &[]),
        stacked_shares("s", "S", &[], &[]),
        histogram("h", "H", "x", "y", &[]),
    ];
    for c in none {
        let s = c.svg(SIZE);
        assert_eq!(count(&s, "empty"), 1, "{s}");
        assert_eq!(count(&s, "data"), 0, "{s}");
        assert!(s.contains(&format!("data-chart=\"{}\"", c.id)));
        assert!(s.contains("no data"));
    }
}

#[test]
fn a_png_is_written_at_its_size() {
    let d = tempfile::tempdir().unwrap();
    for (c, size) in [(elo(), (500, 300)), (bars(), (900, 520)), (shares(), SIZE)] {
        let p = d.path().join(format!("{}.png", c.id));
        c.write_png(&p, size).unwrap();
        let img = image::open(&p).unwrap().to_rgb8();
        assert_eq!(img.dimensions(), size);
        // Something besides the white background was drawn.
        assert!(img.pixels().any(|px| px.0 != [255, 255, 255]));
    }
    let p = d.path().join("row.png");
    write_png_row(&[elo(), lengths()], &p, (1000, 420)).unwrap();
    assert_eq!(image::open(&p).unwrap().to_rgb8().dimensions(), (1000, 420));
    // An SVG file is the inline chart, as a file.
    let p = d.path().join("rates.svg");
    bars().write_svg(&p, SIZE).unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), bars().svg(SIZE));
}

#[test]
fn an_empty_chart_is_still_a_png() {
    // A data-free PNG is a blank image of its size, not an error.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("empty.png");
    line_chart("e", "E", "x", "y", &[], &[])
        .with_y_range(0.0, 1.0)
        .write_png(&p, (300, 200))
        .unwrap();
    assert_eq!(image::open(&p).unwrap().to_rgb8().dimensions(), (300, 200));
}
