//! The inline SVG target. plotters' SVG backend writes its elements straight into a string it
//! borrows, with no way to mark some of them; so this backend hands each primitive to a fresh
//! plotters SVG backend of its own, takes the one element it wrote, and adds the report's class
//! (`data`, `empty`) and tooltip while the drawing code has asked for them.

use crate::{esc, Chart};
use plotters::prelude::*;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};
use std::cell::RefCell;
use std::rc::Rc;

/// What the elements drawn from now on are: a class and a tooltip.
#[derive(Default)]
struct Mark {
    class: Option<&'static str>,
    tip: Option<String>,
}

/// The drawing code's handle on the marking; it does nothing for a PNG.
#[derive(Clone, Default)]
pub(crate) struct Tag(Option<Rc<RefCell<Mark>>>);

impl Tag {
    pub(crate) fn none() -> Tag {
        Tag(None)
    }
    fn set(&self, class: Option<&'static str>, tip: Option<String>) {
        if let Some(m) = &self.0 {
            *m.borrow_mut() = Mark { class, tip };
        }
    }
    /// Elements that show data (the browser test counts them).
    pub(crate) fn data(&self) {
        self.set(Some("data"), None);
    }
    /// A data element with a tooltip.
    pub(crate) fn data_tip(&self, tip: String) {
        self.set(Some("data"), Some(tip));
    }
    /// The notice of a chart without data.
    pub(crate) fn empty(&self) {
        self.set(Some("empty"), None);
    }
    /// Frame, axes, text.
    pub(crate) fn plain(&self) {
        self.set(None, None);
    }
}

struct Marked {
    size: (u32, u32),
    out: Rc<RefCell<String>>,
    mark: Rc<RefCell<Mark>>,
}

type Res = Result<(), DrawingErrorKind<std::io::Error>>;

impl Marked {
    fn emit(&mut self, f: impl FnOnce(&mut SVGBackend<'_>) -> Res) -> Res {
        let mut s = String::new();
        {
            let mut b = SVGBackend::with_string(&mut s, self.size);
            f(&mut b)?;
            b.present()?;
        }
        // `s` is the opening <svg> line, the element (none for a transparent one), </svg>.
        let body = s.split_once('\n').map_or("", |p| p.1);
        let body = body.strip_suffix("</svg>\n").unwrap_or(body);
        if body.is_empty() {
            return Ok(());
        }
        let m = self.mark.borrow();
        self.out
            .borrow_mut()
            .push_str(&annotate(body, m.class, m.tip.as_deref()));
        Ok(())
    }
}

/// `el` (one element as plotters wrote it) with a class and a `<title>` child.
fn annotate(el: &str, class: Option<&str>, tip: Option<&str>) -> String {
    let Some(name_end) = el.find([' ', '>', '/']) else {
        return el.to_string();
    };
    let mut s = el.to_string();
    if let Some(tip) = tip {
        let name = &el[1..name_end];
        if let Some(open) = s.trim_end().strip_suffix("/>") {
            s = format!("{open}><title>{}</title></{name}>\n", esc(tip));
        }
    }
    if let Some(c) = class {
        s.insert_str(name_end, &format!(" class=\"{c}\""));
    }
    s
}

impl DrawingBackend for Marked {
    type ErrorType = std::io::Error;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }
    fn ensure_prepared(&mut self) -> Res {
        Ok(())
    }
    fn present(&mut self) -> Res {
        Ok(())
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Res {
        self.emit(|b| b.draw_pixel(point, color))
    }
    fn draw_line<S: BackendStyle>(&mut self, from: BackendCoord, to: BackendCoord, s: &S) -> Res {
        self.emit(|b| b.draw_line(from, to, s))
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        s: &S,
        fill: bool,
    ) -> Res {
        self.emit(|b| b.draw_rect(upper_left, bottom_right, s, fill))
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        s: &S,
    ) -> Res {
        self.emit(|b| b.draw_path(path, s))
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        s: &S,
        fill: bool,
    ) -> Res {
        self.emit(|b| b.draw_circle(center, radius, s, fill))
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        s: &S,
    ) -> Res {
        self.emit(|b| b.fill_polygon(vert, s))
    }
    fn draw_text<S: BackendTextStyle>(&mut self, text: &str, s: &S, pos: BackendCoord) -> Res {
        self.emit(|b| b.draw_text(text, s, pos))
    }
    /// The browser renders an SVG's text, so it needs no font here; without one plotters could
    /// not lay out the axes, and an average glyph width does instead.
    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        s: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        if let Ok(((x0, y0), (x1, y1))) = s.layout_box(text) {
            return Ok(((x1 - x0) as u32, (y1 - y0) as u32));
        }
        let px = s.size() / 1.24;
        Ok(((text.chars().count() as f64 * px * 0.56) as u32, px as u32))
    }
}

pub(crate) fn render(chart: &Chart, (w, h): (u32, u32)) -> String {
    // The font, where there is one, makes the layout match what the browser will draw.
    crate::font_available();
    let out = Rc::new(RefCell::new(String::new()));
    let mark = Rc::new(RefCell::new(Mark::default()));
    let tag = Tag(Some(mark.clone()));
    let backend = Marked {
        size: (w, h),
        out: out.clone(),
        mark,
    };
    let root = backend.into_drawing_area();
    // Drawing into a string cannot fail; an error would leave a partial chart, still valid SVG.
    let _ = root.fill(&WHITE);
    let _ = crate::draw::draw(chart, &root, true, &tag);
    drop(root);
    let body = out.borrow();
    format!(
        r#"<svg class="chart" data-chart="{id}" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img"><title>{title}</title>
{body}</svg>"#,
        id = esc(&chart.id),
        title = esc(&chart.title),
    )
}

#[cfg(test)]
mod tests {
    use super::annotate;

    #[test]
    fn annotate_adds_class_and_tooltip() {
        let el = "<rect x=\"1\" y=\"2\"/>\n";
        assert_eq!(
            annotate(el, Some("data"), Some("a<b")),
            "<rect class=\"data\" x=\"1\" y=\"2\"><title>a&lt;b</title></rect>\n"
        );
        assert_eq!(annotate(el, None, None), el);
        let t = "<text x=\"1\">\nno data\n</text>\n";
        assert!(annotate(t, Some("empty"), None).starts_with("<text class=\"empty\" x="));
    }
}
