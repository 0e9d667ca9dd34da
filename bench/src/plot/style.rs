//! What every figure shares: the canvas size, the font (DejaVu Sans,
//! registered at run time), each MPI's colour, the curve and line styles.

use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

pub(super) const W: u32 = 1280;
pub(super) const H: u32 = 760;
pub(super) const LEGEND_W: u32 = 330;

pub(super) const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
];

pub(super) fn load_font() -> Result<(), String> {
    let mut paths: Vec<String> = vec![];
    if let Ok(p) = std::env::var("HEAPMPI_BENCH_FONT") {
        paths.push(p);
    }
    paths.extend(FONT_PATHS.iter().map(|s| s.to_string()));
    for p in &paths {
        if let Ok(bytes) = std::fs::read(p) {
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            register_font("sans-serif", FontStyle::Normal, bytes)
                .map_err(|_| format!("{p}: not a usable font"))?;
            return Ok(());
        }
    }
    Err("no TrueType font found (Debian: apt-get install fonts-dejavu-core; or set HEAPMPI_BENCH_FONT)".into())
}

pub(super) fn mpi_color(mpi: &str) -> RGBColor {
    match mpi {
        "openmpi" => RGBColor(31, 119, 180),
        "openmpi5" => RGBColor(44, 160, 44),
        "mpich5" => RGBColor(255, 127, 14),
        "impi" => RGBColor(148, 103, 189),
        "mpiabi" => RGBColor(140, 86, 75),
        _ => RGBColor(214, 39, 40),
    }
}

pub(super) const GREY: RGBColor = RGBColor(110, 110, 110);
pub(super) const DARK: RGBColor = RGBColor(30, 30, 30);
pub(super) const GREEN: RGBColor = RGBColor(44, 160, 44);

#[derive(Clone, Copy)]
pub(super) enum Line {
    Solid,
    Dashed,
    Dotted,
}

#[derive(Clone, Copy)]
pub(super) enum Mark {
    None,
    Circle,
    Triangle,
}

pub(super) struct Curve {
    pub(super) label: String,
    pub(super) color: RGBColor,
    pub(super) line: Line,
    pub(super) mark: Mark,
    pub(super) width: u32,
    /// (x, median, min, max)
    pub(super) points: Vec<(f64, f64, f64, f64)>,
    pub(super) bars: bool,
}

impl Curve {
    /// The stroke this curve is drawn with (in the chart and the legend).
    pub(super) fn style(&self) -> ShapeStyle {
        ShapeStyle {
            color: self.color.to_rgba(),
            filled: false,
            stroke_width: self.width,
        }
    }
}

pub(super) fn e<E: std::fmt::Debug>(err: E) -> String {
    format!("plot: {err:?}")
}
