//! One figure per micro-benchmark metric: message size on a log axis,
//! stock (dashed, hollow circles) and heapmpi (solid, filled triangles) per
//! MPI with min–max bars, and the machine's limits (memcpy, cache line).

use super::style::{e, load_font, mpi_color, Curve, Line, Mark, DARK, GREEN, GREY, H, LEGEND_W, W};
use crate::benches::{Bench, Kind, Metric};
use crate::opts::Opts;
use crate::report::format::{fmt_size, fmt_val, oversubscribed_note, rma_window};
use crate::report::series::series;
use crate::results::{Limits, Results};
use crate::runner::{mpi_title, Variant};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

pub fn all(
    opts: &Opts,
    res: &Results,
    out: &Path,
    notes: &[String],
) -> Result<Vec<PathBuf>, String> {
    load_font()?;
    let mut files = vec![];
    for b in &opts.benches {
        for m in b.metrics {
            let curves = curves(opts, res, b, m);
            if curves.iter().all(|c| c.points.is_empty()) {
                continue;
            }
            let stem = if m.key.is_empty() {
                b.name.to_string()
            } else {
                format!("{}_{}", b.name, m.key)
            };
            let ranks = res.ranks.get(b.name).copied().unwrap_or(2);
            let n = opts.reps;
            let title = format!(
                "{} [{}] — {} ranks{}, median of {} run{}{}",
                if m.title == b.name {
                    b.name.to_string()
                } else {
                    format!("{}: {}", b.name, m.title)
                },
                m.unit,
                ranks,
                oversubscribed_note(ranks),
                n,
                if n == 1 { "" } else { "s, bars = min–max" },
                if opts.quick { " — QUICK MODE" } else { "" }
            );
            let svg = out.join(format!("{stem}.svg"));
            let png = out.join(format!("{stem}.png"));
            draw(
                SVGBackend::new(&svg, (W, H)).into_drawing_area(),
                &title,
                b,
                m,
                &curves,
                notes,
            )?;
            draw(
                BitMapBackend::new(&png, (W, H)).into_drawing_area(),
                &title,
                b,
                m,
                &curves,
                notes,
            )?;
            files.push(png);
            files.push(svg);
        }
    }
    Ok(files)
}

fn curves(opts: &Opts, res: &Results, b: &Bench, m: &Metric) -> Vec<Curve> {
    let mut cs = vec![];
    let mut xs: Vec<f64> = vec![];
    for mpi in &opts.mpis {
        for v in [Variant::Stock, Variant::Heapmpi] {
            let s = series(res, b, m, mpi, v);
            // a percentage (overlap) is drawn on a linear axis: 0 is a value
            let pct = m.kind == Kind::Percent;
            let points: Vec<(f64, f64, f64, f64)> = s
                .iter()
                .filter(|(size, x)| **size > 0 && (x.median > 0.0 || pct))
                .map(|(size, x)| {
                    let lo = if pct {
                        x.min
                    } else {
                        x.min.max(x.median * 1e-3)
                    };
                    (*size as f64, x.median, lo, x.max)
                })
                .collect();
            xs.extend(points.iter().map(|p| p.0));
            cs.push(Curve {
                label: format!("{} {}", mpi_title(mpi), v.name()),
                color: mpi_color(mpi),
                line: if v == Variant::Stock {
                    Line::Dashed
                } else {
                    Line::Solid
                },
                mark: if v == Variant::Stock {
                    Mark::Circle
                } else {
                    Mark::Triangle
                },
                width: 2,
                points,
                bars: opts.reps > 1,
            });
        }
    }
    if let (Some(l), false) = (&res.limits, xs.is_empty()) {
        let xmin = xs.iter().cloned().fold(f64::INFINITY, f64::min);
        let xmax = xs.iter().cloned().fold(0.0, f64::max);
        limit_curves(&mut cs, l, m.kind, xmin, xmax);
    }
    cs
}

fn memcpy_at(l: &Limits, size: f64, two: bool) -> Option<f64> {
    // nearest measured size (sizes are doubling; clamp at the ends)
    l.memcpy
        .iter()
        .min_by(|a, b| {
            let da = ((a.0 as f64).ln() - size.ln()).abs();
            let db = ((b.0 as f64).ln() - size.ln()).abs();
            da.partial_cmp(&db).unwrap()
        })
        .map(|x| if two { x.2 } else { x.1 })
}

fn limit_curves(cs: &mut Vec<Curve>, l: &Limits, kind: Kind, xmin: f64, xmax: f64) {
    match kind {
        Kind::Bandwidth => {
            for (two, label, color, line) in [
                (false, "memcpy, 1 core", GREY, Line::Dashed),
                (true, "memcpy, 2 cores (half each)", DARK, Line::Dotted),
            ] {
                let points = l
                    .memcpy
                    .iter()
                    .map(|p| {
                        let y = if two { p.2 } else { p.1 };
                        (p.0 as f64, y, y, y)
                    })
                    .filter(|p| p.1 > 0.0)
                    .collect();
                cs.push(Curve {
                    label: label.into(),
                    color,
                    line,
                    mark: Mark::None,
                    width: 2,
                    points,
                    bars: false,
                });
            }
        }
        Kind::Latency | Kind::Coll => {
            if l.cacheline_best_ns > 0.0 {
                let c = l.cacheline_best_ns / 1e3;
                cs.push(Curve {
                    label: format!("cache line one way ({:.0} ns)", l.cacheline_best_ns),
                    color: GREEN,
                    line: Line::Solid,
                    mark: Mark::None,
                    width: 2,
                    points: vec![(xmin, c, c, c), (xmax, c, c, c)],
                    bars: false,
                });
                if kind == Kind::Coll {
                    return;
                }
                // one-copy floor: one cache-line hop plus one memcpy of the message
                let mut points = vec![];
                let mut x = xmin;
                while x <= xmax * 1.0001 {
                    if let Some(g) = memcpy_at(l, x, false) {
                        if g > 0.0 {
                            let y = c + x / (g * 1e3);
                            points.push((x, y, y, y));
                        }
                    }
                    x *= 2.0;
                }
                cs.push(Curve {
                    label: "floor: cache line + 1 memcpy".into(),
                    color: GREEN,
                    line: Line::Dashed,
                    mark: Mark::None,
                    width: 2,
                    points,
                    bars: false,
                });
            }
        }
        Kind::Rate | Kind::Percent => {}
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    b: &Bench,
    m: &Metric,
    curves: &[Curve],
    notes: &[String],
) -> Result<(), String> {
    root.fill(&WHITE).map_err(e)?;
    let (chart_area, legend_area) = root.split_horizontally(W - LEGEND_W);

    let pts = curves.iter().flat_map(|c| c.points.iter());
    let (mut xmin, mut xmax, mut ymin, mut ymax) = (f64::INFINITY, 0.0f64, f64::INFINITY, 0.0f64);
    for p in pts {
        xmin = xmin.min(p.0);
        xmax = xmax.max(p.0);
        ymin = ymin.min(p.2.min(p.1));
        ymax = ymax.max(p.3.max(p.1));
    }
    if xmax <= xmin {
        xmin /= 2.0;
        xmax *= 2.0;
    }
    // a percentage's range as it is (linear axis)
    let (ymin_raw, ymax_raw) = (if ymin.is_finite() { ymin } else { 0.0 }, ymax);
    if ymin.is_nan() || ymin <= 0.0 || ymin.is_infinite() || ymax <= ymin {
        ymin = ymax.max(1.0) / 10.0;
        ymax = ymax.max(1.0) * 10.0;
    }
    // pad a little on both log axes
    let (xlo, xhi) = (xmin / 1.3, xmax * 1.3);
    let (ylo, yhi) = (ymin / 1.6, ymax * 1.6);

    let x_desc = if b.is_coll() {
        // a nonblocking collective's overlap has the sizes of its time
        match m.key.trim_end_matches("_ovl") {
            "reduce" | "allreduce" | "ireduce" | "iallreduce" => {
                "message size [bytes] (size/8 doubles, MPI_SUM)"
            }
            "allgather" | "gather" | "scatter" => "message size [bytes] per rank",
            "alltoall" => "message size [bytes] per pair of ranks",
            "halo" => "message size [bytes] per neighbour (4 per rank)",
            _ => "message size [bytes]",
        }
    } else if b.is_rma() {
        if m.key.starts_with("acc") {
            "message size [bytes] (size/8 doubles, MPI_SUM)"
        } else {
            "message size [bytes]"
        }
    } else if b.name == "malloc" {
        "block size [bytes]"
    } else if b.style == crate::benches::Style::Batches {
        "updates per message (8 bytes each)"
    } else if b.has_sizes() {
        "message size [bytes]"
    } else {
        "size"
    };
    let y_desc = format!(
        "{} [{}]{}",
        m.title,
        m.unit,
        if m.higher_is_better {
            "  (higher is better)"
        } else {
            "  (lower is better)"
        }
    );

    // The mesh and the curves, on either y axis (log for times and rates,
    // linear for a percentage).
    macro_rules! mesh_and_curves {
        ($chart:ident, $y_fmt:expr) => {{
            $chart
                .configure_mesh()
                .x_desc(x_desc)
                .y_desc(y_desc)
                .x_labels(12)
                .y_labels(12)
                .x_label_formatter(&|x| {
                    fmt_size(x.round() as u64)
                        .replace(" B", "")
                        .replace(" KiB", "K")
                        .replace(" MiB", "M")
                })
                .y_label_formatter(&$y_fmt)
                .label_style(("sans-serif", 16))
                .axis_desc_style(("sans-serif", 18))
                .light_line_style(RGBColor(235, 235, 235))
                .bold_line_style(RGBColor(215, 215, 215))
                .draw()
                .map_err(e)?;

            for c in curves {
                if c.points.is_empty() {
                    continue;
                }
                let style = c.style();
                let line_pts: Vec<(f64, f64)> = c.points.iter().map(|p| (p.0, p.1)).collect();
                match c.line {
                    Line::Solid => {
                        $chart
                            .draw_series(LineSeries::new(line_pts, style))
                            .map_err(e)?;
                    }
                    Line::Dashed => {
                        $chart
                            .draw_series(DashedLineSeries::new(line_pts, 9, 6, style))
                            .map_err(e)?;
                    }
                    Line::Dotted => {
                        $chart
                            .draw_series(DashedLineSeries::new(line_pts, 3, 4, style))
                            .map_err(e)?;
                    }
                }
                if c.bars {
                    $chart
                        .draw_series(c.points.iter().filter(|p| p.3 > p.2).map(|p| {
                            ErrorBar::new_vertical(
                                p.0,
                                p.2,
                                p.1,
                                p.3,
                                ShapeStyle {
                                    stroke_width: 1,
                                    ..style
                                },
                                8,
                            )
                        }))
                        .map_err(e)?;
                }
                match c.mark {
                    Mark::None => {}
                    Mark::Circle => {
                        $chart
                            .draw_series(c.points.iter().map(|p| Circle::new((p.0, p.1), 4, style)))
                            .map_err(e)?;
                    }
                    Mark::Triangle => {
                        $chart
                            .draw_series(
                                c.points
                                    .iter()
                                    .map(|p| TriangleMarker::new((p.0, p.1), 5, style.filled())),
                            )
                            .map_err(e)?;
                    }
                }
            }
        }};
    }
    if m.kind == Kind::Percent {
        // overlap: 0-100 % (a little room either side for the bars)
        let (ylo, yhi) = (ymin_raw.min(0.0) - 3.0, ymax_raw.max(100.0) + 3.0);
        let mut chart = ChartBuilder::on(&chart_area)
            .caption(title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(52)
            .y_label_area_size(78)
            .build_cartesian_2d((xlo..xhi).log_scale().base(2.0), ylo..yhi)
            .map_err(e)?;
        mesh_and_curves!(chart, |y: &f64| format!("{y:.0}"));
    } else {
        let mut chart = ChartBuilder::on(&chart_area)
            .caption(title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(52)
            .y_label_area_size(78)
            .build_cartesian_2d((xlo..xhi).log_scale().base(2.0), (ylo..yhi).log_scale())
            .map_err(e)?;
        mesh_and_curves!(chart, |y: &f64| fmt_val(*y));
    }

    // Legend, in its own panel right of the chart.
    let x0 = 10i32;
    let mut y = 70i32;
    legend_area
        .draw(&Text::new(
            "legend",
            (x0, y - 36),
            ("sans-serif", 18).into_font().color(&DARK),
        ))
        .map_err(e)?;
    for c in curves {
        if c.points.is_empty() {
            continue;
        }
        let style = c.style();
        let (a, z) = (x0, x0 + 44);
        match c.line {
            Line::Solid => {
                legend_area
                    .draw(&PathElement::new(vec![(a, y), (z, y)], style))
                    .map_err(e)?;
            }
            Line::Dashed | Line::Dotted => {
                let (dash, gap) = if matches!(c.line, Line::Dashed) {
                    (9, 6)
                } else {
                    (3, 4)
                };
                let mut s = a;
                while s < z {
                    legend_area
                        .draw(&PathElement::new(
                            vec![(s, y), ((s + dash).min(z), y)],
                            style,
                        ))
                        .map_err(e)?;
                    s += dash + gap;
                }
            }
        }
        match c.mark {
            Mark::None => {}
            Mark::Circle => legend_area
                .draw(&Circle::new(((a + z) / 2, y), 4, style))
                .map_err(e)?,
            Mark::Triangle => legend_area
                .draw(&TriangleMarker::new(((a + z) / 2, y), 5, style.filled()))
                .map_err(e)?,
        }
        legend_area
            .draw(&Text::new(
                c.label.clone(),
                (z + 10, y - 9),
                ("sans-serif", 16).into_font().color(&DARK),
            ))
            .map_err(e)?;
        y += 30;
    }
    // Provenance, small, at the bottom of the legend panel.
    let mut lines: Vec<String> = vec![];
    if b.name == "latency" {
        lines.push("0-byte latency: in the table".into());
        lines.push("(no 0 on a log axis)".into());
        lines.push(String::new());
    }
    if b.is_coll() && m.kind == Kind::Percent {
        lines.push("overlap (OMB): post, compute for".into());
        lines.push("the pure time, MPI_Wait; 100 - 100 x".into());
        lines.push("(overall - compute) / pure, each".into());
        lines.push("averaged over the ranks".into());
        lines.push(String::new());
    } else if b.is_coll() {
        lines.push("us per call: each rank's average,".into());
        lines.push("max over the ranks (OSU)".into());
        lines.push(String::new());
    }
    if b.is_rma() {
        lines.push("rank 0 -> rank 1, timed on rank 0".into());
        lines.push(format!("window: {}", rma_window(b)));
        lines.push(String::new());
    }
    if b.name == "malloc" {
        lines.push("stock = glibc malloc".into());
        lines.push("heapmpi = shared heap".into());
        lines.push(String::new());
    }
    for n in notes {
        // wrap long notes at ~40 characters
        let mut cur = String::new();
        for w in n.split_whitespace() {
            if !cur.is_empty() && cur.len() + w.len() > 40 {
                lines.push(std::mem::take(&mut cur));
                cur.push_str("  ");
            }
            if !cur.trim().is_empty() {
                cur.push(' ');
            }
            cur.push_str(w);
        }
        lines.push(cur);
    }
    let mut ny = H as i32 - 24 - 18 * lines.len() as i32;
    for l in lines {
        legend_area
            .draw(&Text::new(
                l,
                (x0, ny),
                ("sans-serif", 13).into_font().color(&GREY),
            ))
            .map_err(e)?;
        ny += 18;
    }
    root.present().map_err(e)?;
    Ok(())
}
