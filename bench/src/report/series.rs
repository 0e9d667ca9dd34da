//! The figures behind the tables: the median, min and max of one metric per
//! size over a run's repetitions, the better stock MPI at a size, heapmpi
//! against it, and the one-core memcpy the one-sided bandwidth is held to.

use crate::benches::{Bench, Kind, Metric};
use crate::opts::Opts;
use crate::results::Results;
use crate::runner::{mpi_title, Variant};
use crate::stats::Summary;
use std::collections::BTreeMap;

/// Median/min/max per size of one metric of one (bench, mpi, variant).
pub fn series(
    res: &Results,
    b: &Bench,
    m: &Metric,
    mpi: &str,
    v: Variant,
) -> BTreeMap<u64, Summary> {
    let mut per_size: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    if let Some(runs) = res.runs.get(&(b.name, mpi.to_string(), v)) {
        for t in runs {
            for (size, vals) in t {
                if let Some(x) = vals.get(m.column) {
                    per_size.entry(*size).or_default().push(x * m.scale);
                }
            }
        }
    }
    per_size
        .into_iter()
        .filter_map(|(s, v)| Summary::of(&v).map(|x| (s, x)))
        .collect()
}

/// The better stock median at `size` over the MPIs measured (the lower one
/// for times, the higher for rates), with its MPI (`openmpi`, `mpich`);
/// across nodes, over each MPI's default and node-aware collectives alike
/// (`Variant::Aware`, where measured).
pub fn stock_best<'a>(
    res: &Results,
    opts: &'a Opts,
    b: &Bench,
    m: &Metric,
    size: u64,
) -> Option<(f64, &'a str)> {
    let mut best: Option<(f64, &'a str)> = None;
    for (mpi, v) in opts
        .mpis
        .iter()
        .flat_map(|mpi| [(mpi, Variant::Stock), (mpi, Variant::Aware)])
    {
        if let Some(x) = series(res, b, m, mpi, v).get(&size) {
            let better = match best {
                None => true,
                Some((v, _)) => {
                    if m.higher_is_better {
                        x.median > v
                    } else {
                        x.median < v
                    }
                }
            };
            // times and rates: > 0; a percentage (overlap): 0 is a value
            let valid = x.median > 0.0 || (m.kind == Kind::Percent && x.median >= 0.0);
            if better && valid {
                best = Some((x.median, mpi.as_str()));
            }
        }
    }
    best
}

/// heapmpi / stock-best per MPI at one point of a metric.
pub(super) fn vs_best(
    res: &Results,
    opts: &Opts,
    b: &Bench,
    m: &Metric,
    size: u64,
) -> Vec<(&'static str, f64)> {
    let Some((bv, _)) = stock_best(res, opts, b, m, size) else {
        return vec![];
    };
    opts.mpis
        .iter()
        .filter_map(|mpi| {
            series(res, b, m, mpi, Variant::Heapmpi)
                .get(&size)
                .map(|h| (mpi_title(mpi), h.median / bv))
        })
        .collect()
}

/// One-core memcpy bandwidth at exactly `size` (GB/s), from the limits.
pub fn memcpy_1core(res: &Results, size: u64) -> Option<f64> {
    res.limits
        .as_ref()?
        .memcpy
        .iter()
        .find(|x| x.0 == size && x.1 > 0.0)
        .map(|x| x.1)
}
