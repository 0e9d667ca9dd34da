//! One table per benchmark metric and MPI: size, stock and heapmpi medians,
//! heap/stock and the spread of each, then where heapmpi was worse. The
//! point-to-point benchmarks, the sweeps, random update and malloc.

use super::format::{fmt_size, fmt_val, metric_heading, oversubscribed_note};
use super::series::series;
use crate::benches::{Bench, Metric};
use crate::results::Results;
use crate::runner::{mpi_title, Variant};
use std::fmt::Write as _;

pub(super) fn table(out: &mut String, res: &Results, b: &Bench, m: &Metric, mpi: &str) {
    let st = series(res, b, m, mpi, Variant::Stock);
    let hp = series(res, b, m, mpi, Variant::Heapmpi);
    if st.is_empty() && hp.is_empty() {
        return;
    }
    let n_st = res
        .runs
        .get(&(b.name, mpi.to_string(), Variant::Stock))
        .map_or(0, Vec::len);
    let n_hp = res
        .runs
        .get(&(b.name, mpi.to_string(), Variant::Heapmpi))
        .map_or(0, Vec::len);
    let ranks = res.ranks.get(b.name).copied().unwrap_or(2);
    let _ = writeln!(
        out,
        "\n== {} [{}] — {}, {} ranks{}, median of {}{} runs",
        metric_heading(b, m),
        m.unit,
        mpi_title(mpi),
        ranks,
        oversubscribed_note(ranks),
        n_st,
        if n_hp != n_st {
            format!("/{n_hp}")
        } else {
            String::new()
        },
    );
    let better = if m.higher_is_better {
        "higher is better"
    } else {
        "lower is better"
    };
    let _ = writeln!(
        out,
        "   ({better}; heap/stock = heapmpi / stock; spread = (max-min)/median over the runs)"
    );
    let _ = writeln!(
        out,
        "{:>9} {:>11} {:>11} {:>10} {:>14}",
        "size", "stock", "heapmpi", "heap/stock", "spread st/hp"
    );
    let sizes: std::collections::BTreeSet<u64> = st.keys().chain(hp.keys()).copied().collect();
    // (size, heapmpi/stock) where heapmpi is worse
    let mut worse: Vec<(u64, f64)> = vec![];
    let mut compared = 0;
    for &s in &sizes {
        if let (Some(a), Some(h)) = (st.get(&s), hp.get(&s)) {
            if a.median != 0.0 {
                compared += 1;
                let r = h.median / a.median;
                if (m.higher_is_better && r < 1.0) || (!m.higher_is_better && r > 1.0) {
                    worse.push((s, r));
                }
            }
        }
    }
    for s in sizes {
        let a = st.get(&s);
        let h = hp.get(&s);
        let ratio = match (a, h) {
            (Some(a), Some(h)) if a.median != 0.0 => format!("{:.2}", h.median / a.median),
            _ => "-".into(),
        };
        let _ = writeln!(
            out,
            "{:>9} {:>11} {:>11} {:>10} {:>14}",
            if b.has_sizes() || b.name == "malloc" {
                fmt_size(s)
            } else {
                s.to_string()
            },
            a.map_or("-".into(), |x| fmt_val(x.median)),
            h.map_or("-".into(), |x| fmt_val(x.median)),
            ratio,
            format!(
                "{}/{}",
                a.filter(|x| x.n > 1)
                    .map_or("-".into(), |x| format!("{:.0}%", x.spread_pct())),
                h.filter(|x| x.n > 1)
                    .map_or("-".into(), |x| format!("{:.0}%", x.spread_pct()))
            )
        );
    }
    if compared > 1 {
        let worst = worse.iter().copied().reduce(|x, y| {
            let bad = |r: f64| if m.higher_is_better { 1.0 / r } else { r };
            if bad(y.1) > bad(x.1) {
                y
            } else {
                x
            }
        });
        let _ = match worst {
            None => writeln!(
                out,
                "   heapmpi at least as good as stock at all {compared} sizes"
            ),
            Some((s, r)) => writeln!(
                out,
                "   heapmpi worse than stock at {} of {compared} sizes; worst: {r:.2} at {}",
                worse.len(),
                fmt_size(s)
            ),
        };
    }
}
