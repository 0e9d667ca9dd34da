//! The application table, the headline of the report: every metric of
//! every application stock against heapmpi, the physics check and the MPI
//! shares; the wall-time targets; and a paragraph per application.

use super::format::{fmt_ratio, fmt_sig, oversubscribed_note};
use super::targets::print_targets;
use crate::app::AppResult;
use crate::opts::Opts;
use crate::results::Results;
use crate::runner::{mpi_title, Variant};
use crate::stats::Summary;
use std::fmt::Write as _;

fn fmt_share(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{:.1}%", x * 100.0))
}

/// "yes" / "NO" / "-": the physics check of an application.
pub fn same(a: &AppResult) -> &'static str {
    match &a.verdict {
        Some(v) if v.ok => "yes",
        Some(_) => "NO",
        None => "-",
    }
}

/// The application table: the headline of the report.
pub(super) fn apps(out: &mut String, res: &Results, opts: &Opts) {
    if res.apps.is_empty() {
        return;
    }
    let ranks = opts.app_ranks;
    let bound = if opts.nodes > 1 {
        let over = oversubscribed_note(ranks);
        format!(
            " across {} nodes ({} a node{}){over}",
            opts.nodes,
            ranks.div_ceil(opts.nodes),
            if over.is_empty() { ", unbound" } else { "" },
        )
    } else if ranks > crate::runner::cpu_count() {
        oversubscribed_note(ranks)
    } else {
        " bound to cores".to_string()
    };
    let _ = writeln!(
        out,
        "\n== applications: stock MPI vs heapmpi, {ranks} ranks{bound}, median of {} run(s) each, \
         alternating stock/heapmpi",
        opts.app_reps
    );
    let _ = writeln!(
        out,
        "   speedup = stock / heapmpi for times, heapmpi / stock for rates (> 1: heapmpi faster);\n   \
         min-max = spread of the runs; same = the physics every heapmpi run printed {} stock's;\n   \
         MPI share: of stock's wall time, from one extra run with every call in the real MPI and HEAPMPI_PROFILE timing them;\n   \
         accel share: of heapmpi's MPI time, the part served through the heap (one extra heapmpi run with HEAPMPI_PROFILE;\n   \
         both untimed: profiling costs ~0.1 us a call); bound = 1 / (1 - MPI share): the wall-time speedup if MPI took no time",
        if ranks <= 2 {
            "is identical to"
        } else {
            "lies within the spread of"
        }
    );
    if opts.app_reps < 3 {
        let _ = writeln!(
            out,
            "   ({} run(s) each: no median worth the name, a smoke test only)",
            opts.app_reps
        );
    }
    let _ = writeln!(
        out,
        "{:<17} {:<33} {:<7} {:>10} {:>10} {:>8} {:>21} {:>21} {:>5} {:>4} {:>9} {:>11} {:>6}",
        "application",
        "metric",
        "unit",
        "stock",
        "heapmpi",
        "speedup",
        "stock min-max",
        "heapmpi min-max",
        "runs",
        "same",
        "MPI share",
        "accel share",
        "bound"
    );
    for a in &res.apps {
        if let Some(why) = &a.skipped {
            let _ = writeln!(
                out,
                "{:<17} NOT RUN: {}",
                a.title,
                why.lines().next().unwrap_or("")
            );
            continue;
        }
        let (_, accel) = a.shares();
        let (mpi_share, bound) = (a.stock_mpi_share(), a.bound());
        for (i, m) in a.metrics.iter().enumerate() {
            let st = a.summary(&m.key, Variant::Stock);
            let hp = a.summary(&m.key, Variant::Heapmpi);
            let range = |x: Option<Summary>| {
                x.map_or("-".into(), |x| {
                    format!("{}-{}", fmt_sig(x.min), fmt_sig(x.max))
                })
            };
            let _ =
                writeln!(
                out,
                "{:<17} {:<33} {:<7} {:>10} {:>10} {:>8} {:>21} {:>21} {:>5} {:>4} {:>9} {:>11} {:>6}",
                if i == 0 { a.title } else { "" },
                m.title,
                m.unit,
                st.map_or("-".into(), |x| fmt_sig(x.median)),
                hp.map_or("-".into(), |x| fmt_sig(x.median)),
                a.speedup(m)
                    .map_or("-".into(), |s| format!("{}x", fmt_ratio(s.0))),
                range(st),
                range(hp),
                format!(
                    "{}/{}",
                    st.map_or(0, |x| x.n),
                    hp.map_or(0, |x| x.n)
                ),
                if i == 0 { same(a) } else { "" },
                if i == 0 { fmt_share(mpi_share) } else { String::new() },
                if i == 0 { fmt_share(accel) } else { String::new() },
                match bound {
                    Some(b) if i == 0 => format!("{}x", fmt_ratio(b)),
                    _ => String::new(),
                },
            );
        }
        if a.metrics.is_empty() {
            let _ = writeln!(out, "{:<17} no run succeeded", a.title);
        }
    }
    app_targets(out, res);
    // What ran, and the verdicts in words.
    for a in &res.apps {
        let _ = writeln!(out, "\n   {} ({}):", a.title, a.name);
        if let Some(why) = &a.skipped {
            let _ = writeln!(out, "     NOT RUN: {}", why.replace('\n', "\n       "));
            continue;
        }
        let _ = writeln!(
            out,
            "     {}, {} ranks, {}; runs in {}",
            a.what,
            a.ranks,
            mpi_title(&a.mpi),
            a.dir.display()
        );
        let _ = writeln!(out, "     physics compared: {}", a.physics);
        if let Some(v) = &a.verdict {
            let n = v.stock_runs + v.heap_runs;
            if v.heap_identical {
                let _ = writeln!(
                    out,
                    "     IDENTICAL: every heapmpi run printed the same {} lines as stock ({} runs compared)",
                    v.lines, n
                );
            } else if v.ok {
                let _ = writeln!(
                    out,
                    "     within the stock spread: every number of every heapmpi run lies in the stock runs' range \
                     (largest relative deviation from stock: heapmpi {:.1e}, stock among itself {:.1e}); first difference: {}",
                    v.max_rel_heap,
                    v.max_rel_stock,
                    v.difference.as_deref().unwrap_or("-")
                );
            } else {
                let _ = writeln!(
                    out,
                    "     DIFFERENT ({}): {}",
                    if v.exact {
                        "identical required"
                    } else {
                        "outside the stock spread"
                    },
                    v.difference.as_deref().unwrap_or("-")
                );
                if v.max_rel_heap > 0.0 {
                    let _ = writeln!(
                        out,
                        "     largest relative deviation of a number from stock: {:.1e} (stock runs among themselves: {:.1e})",
                        v.max_rel_heap, v.max_rel_stock
                    );
                }
                if let Some(r) = &a.repro {
                    let _ = writeln!(out, "     reproduce: {r}");
                }
            }
            if !v.stock_identical {
                let _ = writeln!(
                    out,
                    "     note: the stock runs differ among themselves too: {}",
                    v.stock_difference.as_deref().unwrap_or("-")
                );
            }
        }
        for f in &a.failures {
            let _ = writeln!(out, "     problem: {}", f.replace('\n', "\n       "));
        }
    }
}

/// The application suite's targets, judged on the medians of this run
/// (reported, never asserted): the geometric mean of the wall-time speedups
/// at least 1.10x and one application at least 1.25x; each beside the same
/// figure for the bounds, which say what the stock MPI share allows.
fn app_targets(out: &mut String, res: &Results) {
    let wall = |a: &AppResult| {
        let m = a.metrics.first()?;
        Some((a.speedup(m)?.0, a.bound()))
    };
    let ran: Vec<(&str, f64, Option<f64>)> = res
        .apps
        .iter()
        .filter_map(|a| wall(a).map(|(s, b)| (a.title, s, b)))
        .collect();
    if ran.is_empty() {
        return;
    }
    let geo = |v: &[f64]| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp();
    let speedups: Vec<f64> = ran.iter().map(|r| r.1).collect();
    let bounds: Vec<f64> = ran.iter().filter_map(|r| r.2).collect();
    let all_bounds = bounds.len() == ran.len();
    let bound_note = |x: f64| {
        if all_bounds {
            format!("; the bounds allow {}x", fmt_ratio(x))
        } else {
            String::new()
        }
    };
    let (gs, gb) = (geo(&speedups), geo(&bounds));
    let best = ran
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("not empty");
    let best_bound = ran
        .iter()
        .filter_map(|r| r.2.map(|b| (r.0, b)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let _ = writeln!(
        out,
        "\n   targets (wall time, medians of this run; bound: as above):"
    );
    print_targets(
        out,
        vec![
            (
                "geometric mean of the speedups >= 1.10x".into(),
                Some(gs >= 1.10),
                format!(
                    "{}x over {} application(s){}",
                    fmt_ratio(gs),
                    ran.len(),
                    bound_note(gb)
                ),
            ),
            (
                "one application >= 1.25x".into(),
                Some(best.1 >= 1.25),
                format!(
                    "best {} {}x{}",
                    best.0,
                    fmt_ratio(best.1),
                    best_bound.map_or(String::new(), |(t, b)| format!(
                        "; the largest bound is {t}'s, {}x",
                        fmt_ratio(b)
                    ))
                ),
            ),
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::text;

    /// An application with wall times `stock`/`heap` (seconds, two runs
    /// each) and a real-MPI profile giving stock's MPI share `share` (%).
    fn app(title: &'static str, stock: f64, heap: f64, share: Option<f64>) -> AppResult {
        let m = crate::app::AppMetric::new("wall", "wall time", "s", false);
        let mut a = AppResult {
            name: title,
            title,
            metrics: vec![m.clone()],
            ..Default::default()
        };
        a.values
            .insert((m.key.clone(), Variant::Stock), vec![stock, stock]);
        a.values.insert((m.key, Variant::Heapmpi), vec![heap, heap]);
        let csv = |pct: f64| format!("family,routine,pct_mpi,heap_time_pct\ntotal,all,{pct},0\n");
        a.real_profiles
            .extend(share.and_then(|x| crate::profile::parse(&[csv(x)])));
        a
    }

    #[test]
    fn app_targets_and_bounds() {
        let opts = Opts::parse(&["--apps-only".into()]).unwrap();
        let mut res = Results::default();
        // speedups 1.21x and 1.0x: geometric mean 1.10x; bounds 1/(1-0.5)
        // and 1/(1-0.2)
        res.apps.push(app("Fast", 1.21, 1.0, Some(50.0)));
        res.apps.push(app("Flat", 1.0, 1.0, Some(20.0)));
        assert_eq!(res.apps[0].bound(), Some(2.0));
        let t = text(&opts, &res, &[]);
        let line = |s: &str| {
            t.lines()
                .find(|l| l.contains(s))
                .unwrap_or_else(|| panic!("no line '{s}' in:\n{t}"))
                .to_string()
        };
        let geo = line("geometric mean of the speedups");
        assert!(geo.contains("met") && geo.contains("1.10x over 2"), "{geo}");
        // sqrt(2.0 * 1.25) = 1.58
        assert!(geo.contains("the bounds allow 1.58x"), "{geo}");
        let one = line("one application >= 1.25x");
        assert!(
            one.contains("MISSED") && one.contains("best Fast 1.21x"),
            "{one}"
        );
        assert!(one.contains("Fast's, 2.00x"), "{one}");
        assert!(line("Flat ").contains("1.25x"), "the bound column");
        // no real-MPI profile: no bound, and the mean says nothing of them
        res.apps.push(app("Unprofiled", 1.0, 1.0, None));
        assert_eq!(res.apps[2].bound(), None);
        let t = text(&opts, &res, &[]);
        let geo = t.lines().find(|l| l.contains("geometric mean")).unwrap();
        assert!(
            geo.contains("MISSED") && !geo.contains("bounds allow"),
            "{geo}"
        );
    }
}
