//! Target lines (`met` / `MISSED` / `-`) and the large-message target the
//! collectives and the nonblocking collectives share.

use super::format::fmt_size;
use super::series::{series, vs_best};
use crate::benches::{Bench, Metric};
use crate::opts::Opts;
use crate::results::Results;
use crate::runner::Variant;
use std::fmt::Write as _;

/// The worst heapmpi / stock-best of a time metric over the sizes 64 KiB
/// ..= 1 MiB (those the first MPI's heapmpi series has), as a target line:
/// met when it is at most `1 / factor` (`factor` x faster).
pub(super) fn large_target(
    res: &Results,
    opts: &Opts,
    b: &Bench,
    m: &Metric,
    factor: f64,
) -> (String, Option<bool>, String) {
    let mut worst: Option<(u64, &str, f64)> = None;
    let mut n = 0;
    let sizes: Vec<u64> = series(res, b, m, &opts.mpis[0], Variant::Heapmpi)
        .keys()
        .copied()
        .filter(|&s| (64 << 10..=1 << 20).contains(&s))
        .collect();
    for s in sizes {
        for (mpi, r) in vs_best(res, opts, b, m, s) {
            n += 1;
            if worst.is_none_or(|w| r > w.2) {
                worst = Some((s, mpi, r));
            }
        }
    }
    let ok = worst.map(|w| w.2 <= 1.0 / factor);
    (
        format!("{} 64 KiB-1 MiB >= {factor}x faster than stock-best", m.key),
        ok,
        worst.map_or(String::new(), |(s, mpi, r)| {
            format!(
                "worst of {n}: {r:.2} ({:.1}x faster) at {} with {mpi}",
                1.0 / r,
                fmt_size(s)
            )
        }),
    )
}

/// Target lines: `met` / `MISSED` / `-` (nothing to judge), the target,
/// the figures behind it.
pub(super) fn print_targets(out: &mut String, lines: Vec<(String, Option<bool>, String)>) {
    for (label, ok, detail) in lines {
        let _ = writeln!(
            out,
            "  {:<7} {label}{}",
            match ok {
                Some(true) => "met",
                Some(false) => "MISSED",
                None => "-",
            },
            if detail.is_empty() {
                String::new()
            } else {
                format!(": {detail}")
            }
        );
    }
}
