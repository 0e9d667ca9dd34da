//! The machine-limits table: memcpy on one and two cores per size, and
//! the one-way latency of a cache line between two cores.

use super::format::{fmt_size, fmt_val};
use crate::results::Results;
use std::fmt::Write as _;

/// The limits measured without MPI, if they were.
pub(super) fn limits(out: &mut String, res: &Results) {
    if let Some(l) = &res.limits {
        let _ = writeln!(out, "\n== machine limits (best of several trials; no MPI)");
        let _ = writeln!(
            out,
            "   cache line between two cores, one way: {:.1} ns (median of trials {:.1} ns)",
            l.cacheline_best_ns, l.cacheline_median_ns
        );
        let _ = writeln!(
            out,
            "{:>9} {:>16} {:>16}",
            "size", "memcpy 1 core", "memcpy 2 cores"
        );
        for (s, a, b) in &l.memcpy {
            let _ = writeln!(
                out,
                "{:>9} {:>11} GB/s {:>11} GB/s",
                fmt_size(*s),
                fmt_val(*a),
                fmt_val(*b)
            );
        }
    }
}
