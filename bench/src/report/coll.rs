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
    if let Some(b) = two {
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
}
