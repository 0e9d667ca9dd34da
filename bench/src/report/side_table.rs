//! One table per collective, nonblocking collective or one-sided operation
//! with every MPI side by side: stock, heapmpi, heapmpi / the same MPI's
//! stock, heapmpi / the better stock, and the spread.

use super::format::{
    fmt_ratio, fmt_size, fmt_val, metric_heading, oversubscribed_note, rma_window,
};
use super::series::{series, stock_best};
use crate::benches::{Bench, Kind, Metric};
use crate::opts::Opts;
use crate::results::Results;
use crate::runner::{mpi_title, Variant};
use crate::stats::Summary;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One table per collective (one-sided operation) with every MPI side by
/// side: stock, heapmpi, heapmpi / the same MPI's stock, heapmpi / the
/// better stock.
pub(super) fn side_table(
    out: &mut String,
    res: &Results,
    opts: &Opts,
    b: &Bench,
    m: &Metric,
    legend: bool,
) {
    let mpis: Vec<&String> = opts.mpis.iter().collect();
    let st: Vec<BTreeMap<u64, Summary>> = mpis
        .iter()
        .map(|mpi| series(res, b, m, mpi, Variant::Stock))
        .collect();
    let hp: Vec<BTreeMap<u64, Summary>> = mpis
        .iter()
        .map(|mpi| series(res, b, m, mpi, Variant::Heapmpi))
        .collect();
    // stock's node-aware collectives, where measured (across nodes)
    let aw: Vec<BTreeMap<u64, Summary>> = mpis
        .iter()
        .map(|mpi| series(res, b, m, mpi, Variant::Aware))
        .collect();
    let aw: &[BTreeMap<u64, Summary>] = if aw.iter().any(|t| !t.is_empty()) {
        &aw
    } else {
        &[]
    };
    let sizes: std::collections::BTreeSet<u64> = st
        .iter()
        .chain(hp.iter())
        .flat_map(|t| t.keys().copied())
        .collect();
    if sizes.is_empty() {
        return;
    }
    let ranks = res.ranks.get(b.name).copied().unwrap_or(2);
    let runs: usize = mpis
        .iter()
        .map(|mpi| {
            res.runs
                .get(&(b.name, mpi.to_string(), Variant::Stock))
                .map_or(0, Vec::len)
        })
        .min()
        .unwrap_or(0);
    let _ = writeln!(
        out,
        "\n== {} [{}] — {} ranks{}, median of {} runs",
        metric_heading(b, m),
        m.unit,
        ranks,
        oversubscribed_note(ranks),
        runs
    );
    if legend && b.is_rma() {
        let _ = writeln!(
            out,
            "   (rank 0 -> rank 1; us per iteration on rank 0, lower is better; put_bw/get_bw in GB/s,\n    \
             higher is better; h/st = heapmpi / the same MPI's stock; h/best = heapmpi / the better\n    \
             stock of the run at that size; * = heapmpi more than 10% worse than its stock; spread =\n    \
             largest (max-min)/median of the series; size - = no message size (fence alone, and\n    \
             fop/cas on one int64); accumulate: size/8 doubles, MPI_SUM; window: {})",
            rma_window(b)
        );
    } else if legend && b.is_nbc() {
        let _ = writeln!(
            out,
            "   (each nonblocking collective: pure communication time, post + MPI_Wait at once, us per\n    \
             call, each rank's average, max over the ranks, lower is better; then its overlap with a\n    \
             dummy computation of that length (OMB: 100 - 100 x (overall - compute) / pure, each the\n    \
             average over the ranks), %, higher is better. Times: h/st = heapmpi / the same MPI's\n    \
             stock, h/best = heapmpi / the faster stock of the run at that size, * = heapmpi more\n    \
             than 10% slower than its stock; overlap: h-st, h-best = heapmpi minus stock in points,\n    \
             * = more than 10 points below its stock; spread = largest (max-min)/median of the\n    \
             series; reductions: size/8 doubles, MPI_SUM; heapmpi copies payloads up to 1 KiB into\n    \
             its cells and reads larger ones in place)"
        );
    } else if legend {
        let _ = writeln!(
            out,
            "   (us per call, each rank's average, max over the ranks; lower is better;\n    \
             h/st = heapmpi / the same MPI's stock; h/best = heapmpi / the faster stock of the\n    \
             run at that size; * = heapmpi more than 10% slower than its stock; spread = largest\n    \
             (max-min)/median of the series; reductions: size/8 doubles, MPI_SUM)"
        );
    }
    if legend && !aw.is_empty() {
        let _ = writeln!(
            out,
            "   (node-aware = stock with its node-aware collectives: Open MPI's coll/han, MPICH's\n    \
             smp algorithms; h/aw = heapmpi / that, * when more than 10% worse; h/best is taken\n    \
             over every stock run, default and node-aware)"
        );
    }
    // A percentage (overlap) is compared by difference, in points; the
    // others by ratio.
    let pct = m.kind == Kind::Percent;
    let cmp = |h: f64, a: f64| if pct { h - a } else { h / a };
    // heapmpi against its stock beyond which a point is marked: 10% worse
    // (a percentage: 10 points lower)
    let worse = |r: f64| {
        if pct {
            r < -10.0
        } else if m.higher_is_better {
            r < 1.0 / 1.10
        } else {
            r > 1.10
        }
    };
    let fmt_cmp = |r: f64| {
        if pct {
            format!("{r:+.1}")
        } else {
            fmt_ratio(r)
        }
    };
    let short = |mpi: &str| match mpi {
        "openmpi" => "OMPI",
        "mpich" => "MPICH",
        "openmpi5" => "OMPI5",
        "mpich5" => "MPICH5",
        "impi" => "IMPI",
        "mpiabi" => "MPIABI",
        _ => "MPI",
    };
    let w = 9;
    let mut h1 = format!("{:>9} ", "");
    let mut h2 = format!("{:>9} ", "size");
    let group = |title: &str, n: usize, width: usize| {
        format!("{:^width$} ", title, width = n * (width + 1) - 1)
    };
    h1.push_str(&group("stock", mpis.len(), w));
    if !aw.is_empty() {
        h1.push_str(&group("node-aware", mpis.len(), w));
    }
    h1.push_str(&group("heapmpi", mpis.len(), w));
    h1.push_str(&group(if pct { "h-st" } else { "h/st" }, mpis.len(), 7));
    if !aw.is_empty() {
        h1.push_str(&group(if pct { "h-aw" } else { "h/aw" }, mpis.len(), 7));
    }
    h1.push_str(&group(if pct { "h-best" } else { "h/best" }, mpis.len(), 7));
    let groups = if aw.is_empty() { 2 } else { 3 };
    for _ in 0..groups {
        for mpi in &mpis {
            let _ = write!(h2, "{:>w$} ", short(mpi));
        }
    }
    for _ in 0..groups {
        for mpi in &mpis {
            let _ = write!(h2, "{:>6}  ", short(mpi));
        }
    }
    let _ = writeln!(out, "{}", h1.trim_end());
    let _ = writeln!(out, "{}{:>6}", h2, "spread");
    let mut over: Vec<(u64, &str, f64)> = vec![];
    let mut compared = 0;
    for &size in &sizes {
        let mut line = format!(
            "{:>9} ",
            if size == 0 {
                "-".to_string()
            } else {
                fmt_size(size)
            }
        );
        let mut spread: f64 = 0.0;
        for t in st.iter().chain(aw.iter()).chain(hp.iter()) {
            let x = t.get(&size);
            let _ = write!(line, "{:>w$} ", x.map_or("-".into(), |x| fmt_val(x.median)));
            if let Some(x) = x.filter(|x| x.n > 1) {
                spread = spread.max(x.spread_pct());
            }
        }
        for (i, mpi) in mpis.iter().enumerate() {
            let cell = match (st[i].get(&size), hp[i].get(&size)) {
                (Some(a), Some(h)) if a.median > 0.0 || pct => {
                    let r = cmp(h.median, a.median);
                    compared += 1;
                    if worse(r) {
                        over.push((size, mpi_title(mpi), r));
                    }
                    format!("{}{}", fmt_cmp(r), if worse(r) { "*" } else { " " })
                }
                _ => "- ".into(),
            };
            let _ = write!(line, "{cell:>7} ");
        }
        for (i, a) in aw.iter().enumerate() {
            let cell = match (a.get(&size), hp[i].get(&size)) {
                (Some(a), Some(h)) if a.median > 0.0 || pct => {
                    let r = cmp(h.median, a.median);
                    format!("{}{}", fmt_cmp(r), if worse(r) { "*" } else { " " })
                }
                _ => "- ".into(),
            };
            let _ = write!(line, "{cell:>7} ");
        }
        let best = stock_best(res, opts, b, m, size);
        for h in &hp {
            let cell = match (best, h.get(&size)) {
                (Some((bv, _)), Some(h)) => format!("{} ", fmt_cmp(cmp(h.median, bv))),
                _ => "- ".into(),
            };
            let _ = write!(line, "{cell:>7} ");
        }
        let _ = write!(
            line,
            "{:>7}",
            if spread > 0.0 {
                format!("{spread:.0}%")
            } else {
                "-".into()
            }
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    if compared > 0 {
        let (within, worse_than) = if pct {
            ("within 10 points of", "more than 10 points below")
        } else {
            ("within 10% of", "more than 10% worse than")
        };
        if over.is_empty() {
            let _ = writeln!(
                out,
                "   heapmpi {within} its stock or better at all {compared} points"
            );
        } else {
            // worst first
            over.sort_by(|a, b| {
                let bad = |r: f64| {
                    if pct {
                        -r
                    } else if m.higher_is_better {
                        1.0 / r
                    } else {
                        r
                    }
                };
                bad(b.2).partial_cmp(&bad(a.2)).unwrap()
            });
            let num = |r: f64| {
                if pct {
                    format!("{r:+.1}")
                } else {
                    format!("{r:.2}")
                }
            };
            let _ = writeln!(
                out,
                "   heapmpi {worse_than} its stock at {} of {compared} points: {}",
                over.len(),
                over.iter()
                    .take(6)
                    .map(|(s, mpi, r)| if *s == 0 {
                        // no message size (barrier, fence, fop, cas)
                        format!("{mpi} {}", num(*r))
                    } else {
                        format!("{} {mpi} {}", fmt_size(*s), num(*r))
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
}
