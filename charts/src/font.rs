//! The font for chart text. plotters lays text out (and the bitmap backend draws it) through
//! ab_glyph, which has no font of its own, so one is registered from the system.

use plotters::style::FontStyle;
use std::path::PathBuf;

/// Registers a TrueType font for chart text if one is found: `VARZERO_FONT`, or a usual system
/// font (DejaVu Sans, Liberation Sans, Noto Sans, Arial). Without one a PNG is drawn without
/// text; an SVG keeps its text (the browser renders it) and only estimates its width.
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
                // plotters keeps registered fonts for the life of the process.
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                    return true;
                }
            }
        }
        false
    })
}
