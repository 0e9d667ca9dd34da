//! The collectives' targets and the halo exchange's,
//! judged on the medians of the run.

use super::format::{fmt_pairs, fmt_size, oversubscribed_note};
use super::series::{series, stock_best, vs_best};
use super::targets::{large_target, print_targets};
use crate::benches::{Bench, Metric};
use crate::opts::Opts;
use crate::results::Results;
use crate::runner::{mpi_title, Variant};
use std::fmt::Write as _;

/// The neighbourhood halo exchange's target: at every size, with
/// every MPI, heapmpi at least 1.5x faster than the better stock MPI, by the
/// medians of this run; `None` without a point to judge.
fn halo_target(
    res: &Results,
    opts: &Opts,
    b: &Bench,
    m: &Metric,
) -> Option<(String, Option<bool>, String)> {
    let (mut n, mut bad, mut worst) = (0, 0, None::<(u64, &str, f64)>);
    let sizes: Vec<u64> = series(res, b, m, &opts.mpis[0], Variant::Heapmpi)
        .keys()
        .copied()
        .collect();
    for s in sizes {
        for (mpi, r) in vs_best(res, opts, b, m, s) {
            n += 1;
            if r > 1.0 / 1.5 {
                bad += 1;
            }
            if worst.is_none_or(|w| r > w.2) {
                worst = Some((s, mpi, r));
            }
        }
    }
    let (s, mpi, r) = worst?;
    Some((
        "halo >= 1.5x faster than stock-best (every size)".into(),
        Some(bad == 0),
        format!(
            "{bad} of {n} points slower than that (worst {r:.2}, {:.1}x faster, at {} with {mpi})",
            1.0 / r,
            fmt_size(s)
        ),
    ))
}

/// Across nodes: every collective at every size no more than 10% slower
/// than the better of its MPI's stock default and stock node-aware
/// collectives (`Variant::Aware`), the points over 1.00 counted too (the
/// better of two stock series beats a third equal one by noise alone
/// about two times in three); `None` where the node-aware runs were not
/// made.
fn aware_target(res: &Results, opts: &Opts, b: &Bench) -> Option<(String, Option<bool>, String)> {
    let (mut n, mut over, mut bad, mut worst) = (0, 0, 0, None::<(String, f64)>);
    for m in b.metrics {
        for mpi in &opts.mpis {
            let st = series(res, b, m, mpi, Variant::Stock);
            let aw = series(res, b, m, mpi, Variant::Aware);
            for (s, h) in series(res, b, m, mpi, Variant::Heapmpi) {
                let better = [st.get(&s), aw.get(&s)]
                    .into_iter()
                    .flatten()
                    .map(|x| x.median)
                    .filter(|&x| x > 0.0)
                    .reduce(f64::min);
                let (Some(better), Some(_)) = (better, aw.get(&s)) else {
                    continue;
                };
                let r = h.median / better;
                n += 1;
                if r > 1.0 {
                    over += 1;
                }
                if r > 1.10 {
                    bad += 1;
                }
                if worst.as_ref().is_none_or(|w| r > w.1) {
                    worst = Some((format!("{} {} {}", m.key, fmt_size(s), mpi_title(mpi)), r));
                }
            }
        }
    }
    (n > 0).then(|| {
        let ranks = res.ranks.get(b.name).copied().unwrap_or(b.ranks);
        (
            format!(
                "{ranks} ranks across nodes: no more than 10% slower than stock's default or node-aware"
            ),
            Some(bad == 0),
            format!(
                "{bad} of {n} points over 1.10, {over} over 1.00{}",
                worst.map_or(String::new(), |(w, r)| format!(" (worst {r:.2}: {w})"))
            ),
        )
    })
}

/// The collective targets, judged on the medians of this run
/// (reported, never asserted), and the halo exchange's.
pub(super) fn coll_targets(out: &mut String, res: &Results, opts: &Opts) {
    let two = opts.benches.iter().find(|b| b.name == "coll");
    let four = opts.benches.iter().find(|b| b.name == "coll4");
    if two.is_none() && four.is_none() {
        return;
    }
    let metric = |b: &Bench, key: &str| b.metrics.iter().find(|m| m.key == key).copied();
    let _ = writeln!(
        out,
        "\n== collectives: targets (medians of this run; best = the faster stock MPI)"
    );
    let mut lines: Vec<(String, Option<bool>, String)> = vec![];
    // The speed targets of one node (barrier, small allreduce, large
    // messages, halo) are about the heap: across nodes a run of 2 ranks
    // has one rank per node and only routes.
    if let Some(b) = two.filter(|_| opts.nodes == 1) {
        for (key, size, label) in [
            ("barrier", 0u64, "barrier <= 0.7x stock-best"),
            ("allreduce", 8, "allreduce 8 B <= 0.7x stock-best"),
        ] {
            let Some(m) = metric(b, key) else { continue };
            let v = vs_best(res, opts, b, &m, size);
            let ok = (!v.is_empty()).then(|| v.iter().all(|x| x.1 <= 0.7));
            lines.push((label.into(), ok, fmt_pairs(&v)));
        }
        for key in ["bcast", "reduce", "allreduce", "allgather"] {
            let Some(m) = metric(b, key) else { continue };
            lines.push(large_target(res, opts, b, &m, 3.0));
        }
        if let Some(m) = metric(b, "halo") {
            lines.extend(halo_target(res, opts, b, &m));
        }
    }
    if let Some(b) = two {
        // no collective at any size more than 10% slower than its stock
        let (mut n, mut bad, mut worst) = (0, 0, None::<(String, f64)>);
        let (mut nb, mut badb) = (0, 0);
        for m in b.metrics {
            for mpi in &opts.mpis {
                let st = series(res, b, m, mpi, Variant::Stock);
                for (s, h) in series(res, b, m, mpi, Variant::Heapmpi) {
                    if let Some(a) = st.get(&s).filter(|a| a.median > 0.0) {
                        let r = h.median / a.median;
                        n += 1;
                        if r > 1.10 {
                            bad += 1;
                        }
                        if worst.as_ref().is_none_or(|w| r > w.1) {
                            worst =
                                Some((format!("{} {} {}", m.key, fmt_size(s), mpi_title(mpi)), r));
                        }
                    }
                    if let Some((bv, _)) = stock_best(res, opts, b, m, s) {
                        nb += 1;
                        if h.median / bv > 1.10 {
                            badb += 1;
                        }
                    }
                }
            }
        }
        if n > 0 {
            lines.push((
                "no collective, no size > 10% slower than stock".into(),
                Some(bad == 0),
                format!(
                    "{bad} of {n} points over 1.10{}; vs stock-best: {badb} of {nb}",
                    worst.map_or(String::new(), |(w, r)| format!(" (worst {r:.2}: {w})"))
                ),
            ));
        }
    }
    if let Some(b) = four {
        let (mut n, mut bad, mut worst) = (0, 0, None::<(String, f64)>);
        for m in b.metrics {
            for mpi in &opts.mpis {
                let st = series(res, b, m, mpi, Variant::Stock);
                for (s, h) in series(res, b, m, mpi, Variant::Heapmpi) {
                    if let Some(a) = st.get(&s).filter(|a| a.median > 0.0) {
                        let r = h.median / a.median;
                        n += 1;
                        if r > 1.0 {
                            bad += 1;
                        }
                        if worst.as_ref().is_none_or(|w| r > w.1) {
                            let size = if s == 0 {
                                String::new()
                            } else {
                                format!(" {}", fmt_size(s))
                            };
                            worst = Some((format!("{}{size} {}", m.key, mpi_title(mpi)), r));
                        }
                    }
                }
            }
        }
        if n > 0 {
            let ranks = res.ranks.get(b.name).copied().unwrap_or(b.ranks);
            lines.push((
                format!(
                    "{ranks} ranks{}: no slower than stock",
                    oversubscribed_note(ranks)
                ),
                Some(bad == 0),
                format!(
                    "{bad} of {n} points over 1.00{}",
                    worst.map_or(String::new(), |(w, r)| format!(" (worst {r:.2}: {w})"))
                ),
            ));
        }
    }
    for b in [two, four].into_iter().flatten() {
        lines.extend(aware_target(res, opts, b));
    }
    print_targets(out, lines);
    let _ = writeln!(
        out,
        "  (2 ranks unless said; ratios are heapmpi / stock medians, < 1 = heapmpi faster; a point\n   \
         within the spread of its table is noise; timings never set the exit status)"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::parse_table;

    /// The halo target: met only when every size of every MPI is 1.5x
    /// faster than the better stock; the worst point is named.
    #[test]
    fn halo_target_judges_every_size() {
        let opts = Opts::parse(&["--bench=coll".into(), "--no-app".into()]).unwrap();
        let b = opts.benches.iter().find(|b| b.name == "coll").unwrap();
        let m = b.metrics.iter().find(|m| m.key == "halo").copied().unwrap();
        // size, then barrier .. scatter (not measured here), then halo
        let nan = "nan ".repeat(9);
        let out =
            |small: f64, large: f64| format!("# osu_coll\n8 {nan}{small}\n65536 {nan}{large}\n");
        let judge = |heap_large: f64| {
            let mut res = Results::default();
            for (mpi, stock) in [("openmpi", out(0.5, 20.0)), ("mpich", out(1.5, 30.0))] {
                for (v, o) in [
                    (Variant::Stock, stock),
                    (Variant::Heapmpi, out(0.3, heap_large)),
                ] {
                    res.runs
                        .entry(("coll", mpi.to_string(), v))
                        .or_default()
                        .push(parse_table(&o));
                }
            }
            halo_target(&res, &opts, b, &m).unwrap()
        };
        // 8 B: 0.3 / 0.5 = 0.6; 64 KiB: 10 / 20 = 0.5, both MPIs.
        let (_, ok, detail) = judge(10.0);
        assert_eq!(ok, Some(true), "{detail}");
        assert!(detail.starts_with("0 of 4 points"), "{detail}");
        // 64 KiB: 15 / 20 = 0.75 with both MPIs, the better stock's 20 us.
        let (_, ok, detail) = judge(15.0);
        assert_eq!(ok, Some(false));
        assert!(
            detail.starts_with("2 of 4 points") && detail.contains("0.75"),
            "{detail}"
        );
        assert!(detail.contains("at 64 KiB"), "{detail}");
    }

    /// Across nodes heapmpi is held to the better of its MPI's stock
    /// default and node-aware runs; without node-aware runs, no target.
    #[test]
    fn aware_target_takes_the_better_stock() {
        let opts = Opts::parse(&["--bench=coll".into(), "--no-app".into()]).unwrap();
        let b = opts.benches.iter().find(|b| b.name == "coll").unwrap();
        // size, then barrier (column 1) .. halo; only bcast (column 2) here
        let row = |x: f64| format!("# osu_coll\n8 nan {x}\n");
        let judge = |aware: Option<f64>| {
            let mut res = Results::default();
            let mut add = |v, x| {
                res.runs
                    .entry(("coll", "openmpi".to_string(), v))
                    .or_default()
                    .push(parse_table(&row(x)));
            };
            add(Variant::Stock, 10.0);
            add(Variant::Heapmpi, 8.0);
            if let Some(a) = aware {
                add(Variant::Aware, a);
            }
            aware_target(&res, &opts, b)
        };
        assert!(judge(None).is_none());
        let (_, ok, detail) = judge(Some(12.0)).unwrap();
        assert_eq!(ok, Some(true), "{detail}");
        // 8 / 7.5 = 1.07: over 1.00, within 10%
        let (_, ok, detail) = judge(Some(7.5)).unwrap();
        assert_eq!(ok, Some(true), "{detail}");
        assert!(
            detail.starts_with("0 of 1 points over 1.10, 1 over"),
            "{detail}"
        );
        let (_, ok, detail) = judge(Some(6.0)).unwrap();
        assert_eq!(ok, Some(false));
        assert!(detail.contains("1.33"), "{detail}");
    }
}
