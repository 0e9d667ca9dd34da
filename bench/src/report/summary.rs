//! The summary table: a few headline (benchmark, size) points per MPI,
//! stock, heapmpi and their ratio.

use super::format::{fmt_ratio, fmt_val};
use super::series::series;
use crate::opts::Opts;
use crate::results::Results;
use crate::runner::{mpi_title, Variant};
use std::fmt::Write as _;

/// Headline numbers: a few (benchmark, size) points per MPI.
pub(super) fn headline(out: &mut String, res: &Results, opts: &Opts) {
    let points: &[(&str, usize, u64, &str)] = &[
        ("latency", 0, 0, "latency 0 B [us]"),
        ("latency", 0, 8, "latency 8 B [us]"),
        ("latency", 0, 4096, "latency 4 KiB [us]"),
        ("latency", 0, 1 << 20, "latency 1 MiB [us]"),
        ("lat_fresh", 0, 4096, "latency 4 KiB, fresh [us]"),
        ("lat_fresh", 0, 65536, "latency 64 KiB, fresh [us]"),
        ("lat_fresh", 0, 1 << 20, "latency 1 MiB, fresh [us]"),
        ("lat_vector", 0, 4096, "latency 4 KiB, vector [us]"),
        ("lat_vector", 0, 65536, "latency 64 KiB, vector [us]"),
        ("lat_vector", 0, 1 << 20, "latency 1 MiB, vector [us]"),
        ("bw", 0, 1 << 20, "bandwidth 1 MiB [GB/s]"),
        ("bw", 0, 4 << 20, "bandwidth 4 MiB [GB/s]"),
        ("bibw", 0, 1 << 20, "bi-bandwidth 1 MiB [GB/s]"),
        ("mbw_mr", 1, 1, "message rate 1 B [Mmsg/s]"),
        ("bw_sweep", 1, 1, "sweep: msg rate 1 B [M/s]"),
        ("bw_sweep", 1, 8, "sweep: msg rate 8 B [M/s]"),
        ("bw_sweep", 1, 64, "sweep: msg rate 64 B [M/s]"),
        ("random_update", 0, 1, "random update x1 [Mup/s]"),
        ("random_update", 0, 64, "random update x64 [Mup/s]"),
        ("random_update4", 0, 64, "random update 4 ranks [Mup/s]"),
        ("random_update8", 0, 64, "random update 8 ranks [Mup/s]"),
        ("coll", 0, 0, "barrier [us]"),
        ("coll", 4, 8, "allreduce 8 B [us]"),
        ("coll", 4, 1 << 20, "allreduce 1 MiB [us]"),
        ("coll", 1, 8, "bcast 8 B [us]"),
        ("coll", 1, 1 << 20, "bcast 1 MiB [us]"),
        ("coll", 3, 1 << 20, "reduce 1 MiB [us]"),
        ("coll", 5, 1024, "allgather 1 KiB [us]"),
        ("coll", 5, 1 << 20, "allgather 1 MiB [us]"),
        ("coll", 6, 1024, "alltoall 1 KiB [us]"),
        ("coll4", 0, 0, "4 ranks: barrier [us]"),
        ("coll4", 4, 8, "4 ranks: allreduce 8 B [us]"),
        ("coll4", 4, 1 << 20, "4 ranks: allreduce 1M [us]"),
        ("nbc", 0, 0, "ibarrier [us]"),
        ("nbc", 9, 8, "iallreduce 8 B [us]"),
        ("nbc", 9, 1 << 20, "iallreduce 1 MiB [us]"),
        ("rma", 0, 0, "rma: fence alone [us]"),
        ("rma", 1, 8, "rma: put 8 B, fences [us]"),
        ("rma", 3, 8, "rma: put 8 B, lock [us]"),
        ("rma", 5, 8, "rma: put 8 B, flush [us]"),
        ("rma", 11, 1 << 20, "rma: put bw 1 MiB [GB/s]"),
        ("rma", 12, 1 << 20, "rma: get bw 1 MiB [GB/s]"),
    ];
    let mut rows = vec![];
    for (bn, mi, size, label) in points {
        let Some(b) = opts.benches.iter().find(|b| b.name == *bn) else {
            continue;
        };
        let Some(m) = b.metrics.get(*mi) else {
            continue;
        };
        let mut cells = vec![];
        let mut any = false;
        for mpi in &opts.mpis {
            let st = series(res, b, m, mpi, Variant::Stock).get(size).copied();
            let hp = series(res, b, m, mpi, Variant::Heapmpi).get(size).copied();
            any |= st.is_some() || hp.is_some();
            let r = match (st, hp) {
                (Some(a), Some(h)) if a.median != 0.0 => fmt_ratio(h.median / a.median),
                _ => "-".into(),
            };
            cells.push(format!(
                "{:>9} {:>9} {:>6}",
                st.map_or("-".into(), |x| fmt_val(x.median)),
                hp.map_or("-".into(), |x| fmt_val(x.median)),
                r
            ));
        }
        if any {
            rows.push(format!("{:<27}{}", label, cells.join("  ")));
        }
    }
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n== summary (medians; ratio = heapmpi / stock)");
    let mut h1 = format!("{:<27}", "");
    let mut h2 = format!("{:<27}", "");
    for mpi in &opts.mpis {
        let _ = write!(h1, "{:^26}  ", mpi_title(mpi));
        let _ = write!(h2, "{:>9} {:>9} {:>6}  ", "stock", "heapmpi", "ratio");
    }
    let _ = writeln!(out, "{}", h1.trim_end());
    let _ = writeln!(out, "{}", h2.trim_end());
    let fresh = rows.iter().any(|r| r.contains(", fresh"));
    let vector = rows.iter().any(|r| r.contains(", vector"));
    for r in rows {
        let _ = writeln!(out, "{r}");
    }
    if fresh {
        let _ = writeln!(
            out,
            "  (fresh = lat_fresh: each rank rewrites its send buffer before every send, as an\n   \
             application packs new data; OMB's buffers stay in the caches, which flatters a receiver\n   \
             that reads the sender's buffer in place: heapmpi's single copy, Open MPI's CMA)"
        );
    }
    if vector {
        let _ = writeln!(
            out,
            "  (vector = lat_vector: the message is every other double of a buffer twice its size,\n   \
             MPI_Type_vector(size/8, 1, 2, MPI_DOUBLE) on both sides)"
        );
    }
}
