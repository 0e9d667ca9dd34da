//! The application suite as one figure: a bar per application metric,
//! heapmpi's speedup over stock with the range the spreads allow, and the
//! physics check beside each application.

use super::style::{e, load_font, DARK, GREY, W};
use crate::opts::Opts;
use crate::report::apps::same;
use crate::report::format::fmt_ratio;
use crate::results::Results;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

/// The application suite as one figure: a horizontal bar per application
/// metric (wall time of each application, every HPCC component), the
/// speedup of heapmpi over stock (median; whiskers: the range the min-max
/// spreads allow), 1 = no change; the physics check beside each application.
pub fn apps(
    opts: &Opts,
    res: &Results,
    out: &Path,
    notes: &[String],
) -> Result<Vec<PathBuf>, String> {
    // (label, speedup, worst, best, colour)
    let mut rows: Vec<(String, f64, f64, f64, String)> = vec![];
    for a in &res.apps {
        for (i, m) in a.metrics.iter().enumerate() {
            let Some((s, lo, hi)) = a.speedup(m) else {
                continue;
            };
            let label = if i == 0 {
                format!("{} — {} [{}]", a.title, m.title, same(a))
            } else {
                format!("{} — {}", a.title, m.title)
            };
            rows.push((label, s, lo, hi, a.name.to_string()));
        }
    }
    if rows.is_empty() {
        return Ok(vec![]);
    }
    load_font()?;
    let h = 190 + 26 * rows.len() as u32;
    let title = format!(
        "applications: heapmpi vs stock — {} ranks{}, median of {} run{}{}",
        opts.app_ranks,
        if opts.app_ranks > crate::runner::cpu_count() {
            " (oversubscribed)"
        } else {
            " bound to cores"
        },
        opts.app_reps,
        if opts.app_reps == 1 {
            ""
        } else {
            "s, whiskers: min–max"
        },
        if opts.quick { " — QUICK MODE" } else { "" }
    );
    let svg = out.join("apps.svg");
    let png = out.join("apps.png");
    draw_apps(
        SVGBackend::new(&svg, (W, h)).into_drawing_area(),
        &title,
        &rows,
        notes,
    )?;
    draw_apps(
        BitMapBackend::new(&png, (W, h)).into_drawing_area(),
        &title,
        &rows,
        notes,
    )?;
    Ok(vec![png, svg])
}

fn draw_apps<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    rows: &[(String, f64, f64, f64, String)],
    notes: &[String],
) -> Result<(), String> {
    root.fill(&WHITE).map_err(e)?;
    let n = rows.len() as f64;
    let lo = rows
        .iter()
        .map(|r| r.2.min(r.1))
        .fold(1.0f64, f64::min)
        .max(0.01);
    let hi = rows.iter().map(|r| r.3.max(r.1)).fold(1.0f64, f64::max);
    let (xlo, xhi) = ((lo / 1.15).min(0.9), (hi * 1.25).max(1.1));
    let label_w = 430u32;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(14)
        .margin_left(label_w as i32)
        .margin_bottom(50)
        .x_label_area_size(56)
        .y_label_area_size(0)
        .build_cartesian_2d((xlo..xhi).log_scale(), 0.0..n)
        .map_err(e)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(16)
        .x_desc("speedup = stock time / heapmpi time (rates: heapmpi / stock); > 1: heapmpi faster")
        .x_label_formatter(&|x| fmt_ratio(*x))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 16))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(215, 215, 215))
        .draw()
        .map_err(e)?;
    let good = RGBColor(44, 160, 44);
    let bad = RGBColor(214, 39, 40);
    for (i, (label, s, wlo, whi, _)) in rows.iter().enumerate() {
        // top row first
        let y = n - i as f64 - 0.5;
        let c = if *s >= 1.0 { good } else { bad };
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(1.0, y - 0.32), (*s, y + 0.32)],
                c.mix(0.75).filled(),
            )))
            .map_err(e)?;
        if whi > wlo {
            let st = ShapeStyle {
                color: DARK.to_rgba(),
                filled: false,
                stroke_width: 1,
            };
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(*wlo, y), (*whi, y)],
                    st,
                )))
                .map_err(e)?;
            for x in [*wlo, *whi] {
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(x, y - 0.18), (x, y + 0.18)],
                        st,
                    )))
                    .map_err(e)?;
            }
        }
        let (px, py) = chart.backend_coord(&(xlo, y));
        root.draw(&Text::new(
            label.clone(),
            (px - 8, py),
            ("sans-serif", 14)
                .into_font()
                .color(&DARK)
                .pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(e)?;
        let (vx, vy) = chart.backend_coord(&(s.max(*whi).min(xhi), y));
        root.draw(&Text::new(
            format!("{s:.2}"),
            (vx + 6, vy),
            ("sans-serif", 13)
                .into_font()
                .color(&GREY)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(e)?;
    }
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(1.0, 0.0), (1.0, n)],
            ShapeStyle {
                color: DARK.to_rgba(),
                filled: false,
                stroke_width: 2,
            },
        )))
        .map_err(e)?;
    let (_, bottom) = root.dim_in_pixel();
    let lines = [
        "log scale; [yes] = the physics every heapmpi run printed is identical to stock's \
         (more ranks: within the stock runs' spread), [NO] = different"
            .to_string(),
        notes.join("; "),
    ];
    for (i, l) in lines.iter().enumerate() {
        root.draw(&Text::new(
            l.clone(),
            (10, bottom as i32 - 40 + 18 * i as i32),
            ("sans-serif", 12).into_font().color(&GREY),
        ))
        .map_err(e)?;
    }
    root.present().map_err(e)?;
    Ok(())
}
