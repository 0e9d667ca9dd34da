//! Number and heading formats every table shares: sizes, ratios, values,
//! an application's figures, a metric's name and heading, the
//! oversubscription note and a one-sided window's kind.

use crate::benches::{Bench, Metric};

pub fn fmt_size(s: u64) -> String {
    if s >= 1 << 20 && s % (1 << 20) == 0 {
        format!("{} MiB", s >> 20)
    } else if s >= 1 << 10 && s % (1 << 10) == 0 {
        format!("{} KiB", s >> 10)
    } else {
        format!("{s} B")
    }
}

/// A ratio: two decimals, more below 0.1 (an exponent below 0.001), fewer
/// above 10.
pub fn fmt_ratio(r: f64) -> String {
    if r < 0.001 {
        format!("{r:.1e}")
    } else if r < 0.1 {
        format!("{r:.3}")
    } else if r < 10.0 {
        format!("{r:.2}")
    } else if r < 100.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.0}")
    }
}

/// Three significant digits or so, no exponent for the usual ranges.
pub fn fmt_val(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a < 0.01 {
        format!("{v:.4}")
    } else if a < 1.0 {
        format!("{v:.3}")
    } else if a < 10.0 {
        format!("{v:.2}")
    } else if a < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// An application's figure: four significant digits, an exponent outside
/// 0.001..100000.
pub fn fmt_sig(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if !(1e-3..1e5).contains(&a) {
        return format!("{v:.3e}");
    }
    let dec = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
    format!("{v:.dec$}")
}

/// "Open MPI 0.52, MPICH 0.61"
pub(super) fn fmt_pairs(v: &[(&str, f64)]) -> String {
    v.iter()
        .map(|(mpi, r)| format!("{mpi} {r:.2}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn metric_name(m: &Metric) -> String {
    if m.key.is_empty() {
        m.title.replace(' ', "_")
    } else {
        m.key.to_string()
    }
}

pub(super) fn metric_heading(b: &Bench, m: &Metric) -> String {
    if b.metrics.len() > 1 || m.title != b.name {
        format!("{} — {}", b.name, m.title)
    } else {
        b.name.to_string()
    }
}

/// " (oversubscribed: N cores, unbound)" when `ranks` outnumber the cores.
pub fn oversubscribed_note(ranks: usize) -> String {
    let cpus = crate::runner::cpu_count();
    if ranks > cpus {
        format!(
            " (oversubscribed: {cpus} core{}, unbound)",
            if cpus == 1 { "" } else { "s" }
        )
    } else {
        String::new()
    }
}

/// The window kind of a one-sided benchmark, for headings.
pub fn rma_window(b: &Bench) -> &'static str {
    if b.mode_args.contains(&"create") {
        "MPI_Alloc_mem + MPI_Win_create"
    } else {
        "MPI_Win_allocate"
    }
}
