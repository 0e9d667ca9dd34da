//! The one-sided summary: the headline figures per window kind, every MPI
//! side by side, and 1 MiB put/get bandwidth as a fraction of memcpy.

use super::format::{fmt_ratio, fmt_val, rma_window};
use super::series::{memcpy_1core, series, stock_best};
use crate::benches::Bench;
use crate::opts::Opts;
use crate::results::Results;
use crate::runner::{mpi_title, Variant};
use std::fmt::Write as _;

/// One-sided figures per window kind (the headline ones: fence alone,
/// fence + put/get 8 B + fence, lock + put 8 B + unlock; then the other
/// operations at 8 B and 1 MiB), every MPI side by side with heapmpi / its
/// stock and heapmpi / the better stock, and 1 MiB put/get bandwidth as a
/// fraction of one-core memcpy.
pub(super) fn rma_summary(out: &mut String, res: &Results, opts: &Opts) {
    let benches: Vec<&Bench> = opts
        .benches
        .iter()
        .copied()
        .filter(|b| b.is_rma())
        .collect();
    if benches.is_empty() {
        return;
    }
    // (metric key, size, label)
    let points: &[(&str, u64, &str)] = &[
        ("fence", 0, "fence alone [us]"),
        ("put_fence", 8, "fence + put 8 B + fence [us]"),
        ("get_fence", 8, "fence + get 8 B + fence [us]"),
        ("put_lock", 8, "lock + put 8 B + unlock [us]"),
        ("get_lock", 8, "lock + get 8 B + unlock [us]"),
        ("put_flush", 8, "put 8 B + flush [us]"),
        ("get_flush", 8, "get 8 B + flush [us]"),
        ("acc_lock", 8, "lock + acc 8 B + unlock [us]"),
        ("acc_flush", 8, "accumulate 8 B + flush [us]"),
        ("fop", 0, "fetch_and_op + flush [us]"),
        ("cas", 0, "compare_and_swap + flush [us]"),
        ("put_flush", 1 << 20, "put 1 MiB + flush [us]"),
        ("get_flush", 1 << 20, "get 1 MiB + flush [us]"),
        ("put_bw", 1 << 20, "put bandwidth 1 MiB [GB/s]"),
        ("get_bw", 1 << 20, "get bandwidth 1 MiB [GB/s]"),
    ];
    let _ = writeln!(
        out,
        "\n== one-sided (medians; rank 0 -> rank 1, 2 ranks; h/st = heapmpi / its stock, h/best =\n   \
         heapmpi / the better stock; times: < 1 = heapmpi faster; bandwidth: > 1 = heapmpi faster)"
    );
    let mut h1 = format!("{:<32}", "");
    let mut h2 = format!("{:<32}", "");
    for mpi in &opts.mpis {
        let _ = write!(h1, "{:^34}  ", mpi_title(mpi));
        let _ = write!(
            h2,
            "{:>9} {:>9} {:>6} {:>6}  ",
            "stock", "heapmpi", "h/st", "h/best"
        );
    }
    let _ = writeln!(out, "{}", h1.trim_end());
    let _ = writeln!(out, "{}", h2.trim_end());
    for b in benches {
        let _ = writeln!(out, "  window: {} ({})", rma_window(b), b.name);
        for (key, size, label) in points {
            let Some(m) = b.metrics.iter().find(|m| m.key == *key) else {
                continue;
            };
            let best = stock_best(res, opts, b, m, *size);
            let mut line = format!("{label:<32}");
            let mut any = false;
            for mpi in &opts.mpis {
                let st = series(res, b, m, mpi, Variant::Stock).get(size).copied();
                let hp = series(res, b, m, mpi, Variant::Heapmpi).get(size).copied();
                any |= st.is_some() || hp.is_some();
                let r = |x: Option<f64>| x.map_or("-".into(), fmt_ratio);
                let _ = write!(
                    line,
                    "{:>9} {:>9} {:>6} {:>6}  ",
                    st.map_or("-".into(), |x| fmt_val(x.median)),
                    hp.map_or("-".into(), |x| fmt_val(x.median)),
                    r(st.zip(hp)
                        .filter(|(a, _)| a.median > 0.0)
                        .map(|(a, h)| h.median / a.median)),
                    r(best.zip(hp).map(|((bv, _), h)| h.median / bv)),
                );
            }
            if any {
                let _ = writeln!(out, "{}", line.trim_end());
            }
        }
        // 1 MiB bandwidth against one memcpy on one core
        let size = 1u64 << 20;
        if let Some(mc) = memcpy_1core(res, size) {
            for key in ["put_bw", "get_bw"] {
                let Some(m) = b.metrics.iter().find(|m| m.key == key) else {
                    continue;
                };
                let mut line = format!("{:<32}", format!("{} 1 MiB / memcpy 1 core", &key[..3]));
                let mut any = false;
                for mpi in &opts.mpis {
                    let f =
                        |v: Variant| series(res, b, m, mpi, v).get(&size).map(|x| x.median / mc);
                    let (st, hp) = (f(Variant::Stock), f(Variant::Heapmpi));
                    any |= st.is_some() || hp.is_some();
                    let _ = write!(
                        line,
                        "{:>9} {:>9} {:>6} {:>6}  ",
                        st.map_or("-".into(), |x| format!("{x:.2}")),
                        hp.map_or("-".into(), |x| format!("{x:.2}")),
                        "",
                        ""
                    );
                }
                if any {
                    let _ = writeln!(out, "{}", line.trim_end());
                }
            }
        }
    }
    match memcpy_1core(res, 1 << 20) {
        Some(mc) => {
            let _ = writeln!(
                out,
                "  (memcpy of 1 MiB on one core, hot cache: {} GB/s; a one-copy put or get cannot\n   \
                 beat it. Timings never set the exit status.)",
                fmt_val(mc)
            );
        }
        None => {
            let _ = writeln!(
                out,
                "  (no memcpy limit measured (--no-limits): no fraction of memcpy. Timings never set\n   \
                 the exit status.)"
            );
        }
    }
}
