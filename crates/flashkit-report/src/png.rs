//! SVG figures rasterised to PNG with resvg (pure Rust). Text needs a font: the system's
//! fonts are loaded, and a machine without any gets a clear error rather than a figure with
//! its labels silently missing.

use resvg::{tiny_skia, usvg};
use std::sync::OnceLock;
use thiserror::Error;

/// Why a PNG could not be made.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum PngError {
    /// No system font was found for the figure's text.
    #[error(
        "no fonts found to draw the figures' text (install a font such as Debian's fonts-dejavu-core, or use --svg)"
    )]
    NoFonts,
    /// The SVG could not be parsed.
    #[error("cannot read the SVG: {0}")]
    Svg(String),
    /// Rasterising or encoding failed.
    #[error("cannot draw the PNG: {0}")]
    Render(String),
}

fn options() -> &'static usvg::Options<'static> {
    static OPTIONS: OnceLock<usvg::Options<'static>> = OnceLock::new();
    OPTIONS.get_or_init(|| {
        let mut options = usvg::Options::default();
        let fonts = options.fontdb_mut();
        fonts.load_system_fonts();
        // The figures ask for the generic "sans-serif", which fontdb maps to Arial unless told
        // otherwise: point it (and "serif", "monospace") at a family this machine has.
        let families: Vec<String> = fonts
            .faces()
            .flat_map(|face| face.families.iter().map(|(name, _)| name.clone()))
            .collect();
        let pick = |preferred: &[&str]| pick(preferred, &families);
        if let Some(sans) = pick(&[
            "DejaVu Sans",
            "Liberation Sans",
            "Arial",
            "Helvetica",
            "Noto Sans",
        ]) {
            fonts.set_sans_serif_family(sans);
        }
        if let Some(serif) = pick(&[
            "DejaVu Serif",
            "Liberation Serif",
            "Times New Roman",
            "Noto Serif",
        ]) {
            fonts.set_serif_family(serif);
        }
        if let Some(mono) = pick(&[
            "DejaVu Sans Mono",
            "Liberation Mono",
            "Courier New",
            "Noto Sans Mono",
        ]) {
            fonts.set_monospace_family(mono);
        }
        options
    })
}

/// The first of the `preferred` families that is among `families`, else the first of those.
fn pick(preferred: &[&str], families: &[String]) -> Option<String> {
    preferred
        .iter()
        .find(|p| families.iter().any(|f| f == *p))
        .map(|p| p.to_string())
        .or_else(|| families.first().cloned())
}

/// Rasterise `svg` at `scale` times its size (2.0 for print).
pub fn svg_to_png(svg: &str, scale: f32) -> Result<Vec<u8>, PngError> {
    let options = options();
    if options.fontdb.is_empty() {
        return Err(PngError::NoFonts);
    }
    let tree = usvg::Tree::from_str(svg, options).map_err(|e| PngError::Svg(e.to_string()))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or_else(|| PngError::Render("zero-sized figure".into()))?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| PngError::Render("cannot allocate the image".into()))?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| PngError::Render(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_preferred_family_present_is_picked() {
        let families: Vec<String> = ["Noto Sans", "Liberation Sans", "DejaVu Serif"]
            .map(String::from)
            .to_vec();
        let pick = |preferred: &[&str]| pick(preferred, &families);
        assert_eq!(
            pick(&["DejaVu Sans", "Liberation Sans", "Noto Sans"]).as_deref(),
            Some("Liberation Sans")
        );
        assert_eq!(pick(&["Arial"]).as_deref(), Some("Noto Sans"));
        assert_eq!(super::pick(&["Arial"], &[]), None);
    }

    #[test]
    fn a_figure_becomes_a_png_when_fonts_exist() {
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40\" height=\"20\"><rect width=\"40\" height=\"20\" fill=\"red\"/><text x=\"2\" y=\"15\">ok</text></svg>";
        // The fonts are the system's, all of them.
        let mut system = usvg::fontdb::Database::new();
        system.load_system_fonts();
        assert_eq!(options().fontdb.len(), system.len());
        match svg_to_png(svg, 2.0) {
            Ok(png) => {
                // Twice the figure's size, its red background drawn.
                let image = tiny_skia::Pixmap::decode_png(&png).expect("a PNG");
                assert_eq!((image.width(), image.height()), (80, 40));
                let corner = image.pixel(0, 0).expect("a pixel");
                assert_eq!((corner.red(), corner.green(), corner.blue()), (255, 0, 0));
            }
            Err(PngError::NoFonts) => {
                assert!(system.is_empty(), "fonts were found but not used");
                println!("skipped: this machine has no fonts");
            }
            Err(other) => panic!("{other}"),
        }
        assert!(matches!(
            svg_to_png("<not svg", 1.0),
            Err(PngError::Svg(_)) | Err(PngError::NoFonts)
        ));
    }
}
