//! The CSV files: raw.csv (every value), summary.csv (medians, spreads,
//! ratios, stock-best), rma_memcpy.csv, limits.csv, apps.csv and
//! apps_raw.csv.

use super::format::metric_name;
use super::series::{memcpy_1core, series, stock_best};
use crate::benches::Kind;
use crate::opts::Opts;
use crate::results::Results;
use crate::runner::Variant;
use crate::stats::Summary;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

pub fn write_csv(opts: &Opts, res: &Results, out: &Path) -> io::Result<()> {
    // raw: one line per measured value
    let mut raw = String::from("bench,metric,unit,mpi,variant,rep,size,value\n");
    for ((bn, mpi, v), runs) in &res.runs {
        let Some(b) = opts.benches.iter().find(|b| b.name == *bn) else {
            continue;
        };
        for (rep, t) in runs.iter().enumerate() {
            for (size, vals) in t {
                for m in b.metrics {
                    if let Some(x) = vals.get(m.column) {
                        let _ = writeln!(
                            raw,
                            "{},{},{},{},{},{},{},{}",
                            b.name,
                            metric_name(m),
                            m.unit,
                            mpi,
                            v.name(),
                            rep + 1,
                            size,
                            x * m.scale
                        );
                    }
                }
            }
        }
    }
    fs::write(out.join("raw.csv"), raw)?;

    let mut sum = String::from(
        "bench,metric,unit,higher_is_better,mpi,ranks,size,stock_median,stock_min,stock_max,stock_n,\
         heapmpi_median,heapmpi_min,heapmpi_max,heapmpi_n,ratio_heapmpi_over_stock,\
         stock_best_median,stock_best_mpi,ratio_heapmpi_over_stock_best\n",
    );
    for b in &opts.benches {
        for m in b.metrics {
            for mpi in &opts.mpis {
                let st = series(res, b, m, mpi, Variant::Stock);
                let hp = series(res, b, m, mpi, Variant::Heapmpi);
                let sizes: std::collections::BTreeSet<u64> =
                    st.keys().chain(hp.keys()).copied().collect();
                for s in sizes {
                    let f = |x: Option<&Summary>| match x {
                        Some(x) => format!("{},{},{},{}", x.median, x.min, x.max, x.n),
                        None => ",,,0".into(),
                    };
                    let ratio = match (st.get(&s), hp.get(&s)) {
                        (Some(a), Some(h)) if a.median != 0.0 => format!("{}", h.median / a.median),
                        _ => String::new(),
                    };
                    let best = match stock_best(res, opts, b, m, s) {
                        Some((v, mpi)) => format!(
                            "{v},{mpi},{}",
                            hp.get(&s)
                                .map_or(String::new(), |h| format!("{}", h.median / v))
                        ),
                        None => ",,".into(),
                    };
                    let _ = writeln!(
                        sum,
                        "{},{},{},{},{},{},{},{},{},{},{}",
                        b.name,
                        metric_name(m),
                        m.unit,
                        m.higher_is_better,
                        mpi,
                        res.ranks.get(b.name).copied().unwrap_or(2),
                        s,
                        f(st.get(&s)),
                        f(hp.get(&s)),
                        ratio,
                        best
                    );
                }
            }
        }
    }
    fs::write(out.join("summary.csv"), sum)?;

    // one-sided bandwidth against one-core memcpy at the same size
    let mut rows = String::new();
    for b in opts.benches.iter().filter(|b| b.is_rma()) {
        for m in b.metrics.iter().filter(|m| m.kind == Kind::Bandwidth) {
            for mpi in &opts.mpis {
                for v in [Variant::Stock, Variant::Heapmpi] {
                    for (size, x) in series(res, b, m, mpi, v) {
                        if let Some(mc) = memcpy_1core(res, size) {
                            let _ = writeln!(
                                rows,
                                "{},{},{},{},{},{},{},{}",
                                b.name,
                                metric_name(m),
                                mpi,
                                v.name(),
                                size,
                                x.median,
                                mc,
                                x.median / mc
                            );
                        }
                    }
                }
            }
        }
    }
    if !rows.is_empty() {
        fs::write(
            out.join("rma_memcpy.csv"),
            format!("bench,metric,mpi,variant,size,median_gbs,memcpy_1core_gbs,fraction\n{rows}"),
        )?;
    }

    if let Some(l) = &res.limits {
        let mut s = String::from("limit,size,value,unit\n");
        for (size, a, b) in &l.memcpy {
            let _ = writeln!(s, "memcpy_1core,{size},{a},GB/s");
            let _ = writeln!(s, "memcpy_2core,{size},{b},GB/s");
        }
        let _ = writeln!(s, "cacheline_oneway_best,,{},ns", l.cacheline_best_ns);
        let _ = writeln!(s, "cacheline_oneway_median,,{},ns", l.cacheline_median_ns);
        fs::write(out.join("limits.csv"), s)?;
    }

    if !res.apps.is_empty() {
        write_apps_csv(res, out)?;
    }
    Ok(())
}

fn write_apps_csv(res: &Results, out: &Path) -> io::Result<()> {
    let mut s = String::from(
        "app,title,metric,metric_title,unit,higher_is_better,mpi,ranks,stock_median,stock_min,\
         stock_max,stock_n,heapmpi_median,heapmpi_min,heapmpi_max,heapmpi_n,speedup,\
         speedup_worst,speedup_best,physics_check,identical,mpi_share,accel_share,stock_mpi_share,\
         bound,not_run\n",
    );
    let mut raw = String::from("app,metric,unit,variant,rep,value\n");
    let q = |x: &str| format!("\"{}\"", x.replace('"', "\"\""));
    for a in &res.apps {
        if let Some(why) = &a.skipped {
            let _ = writeln!(
                s,
                "{},{},,,,,,{},,,,0,,,,0,,,,,,,,,,{}",
                a.name,
                q(a.title),
                a.ranks,
                q(why)
            );
            continue;
        }
        let (mpi_share, accel) = a.shares();
        let check = match &a.verdict {
            Some(v) if v.exact => "identical",
            Some(_) => "within_stock_spread",
            None => "",
        };
        for m in &a.metrics {
            let f = |x: Option<Summary>| match x {
                Some(x) => format!("{},{},{},{}", x.median, x.min, x.max, x.n),
                None => ",,,0".into(),
            };
            let sp = a
                .speedup(m)
                .map_or(",,".into(), |(m, lo, hi)| format!("{m},{lo},{hi}"));
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},",
                a.name,
                q(a.title),
                m.key,
                q(&m.title),
                m.unit,
                m.higher_is_better,
                a.mpi,
                a.ranks,
                f(a.summary(&m.key, Variant::Stock)),
                f(a.summary(&m.key, Variant::Heapmpi)),
                sp,
                check,
                a.verdict
                    .as_ref()
                    .map_or(String::new(), |v| v.ok.to_string()),
                mpi_share.map_or(String::new(), |x| x.to_string()),
                accel.map_or(String::new(), |x| x.to_string()),
                a.stock_mpi_share().map_or(String::new(), |x| x.to_string()),
                a.bound().map_or(String::new(), |x| x.to_string()),
            );
            for v in [Variant::Stock, Variant::Heapmpi] {
                if let Some(vals) = a.values.get(&(m.key.clone(), v)) {
                    for (i, x) in vals.iter().enumerate() {
                        let _ = writeln!(
                            raw,
                            "{},{},{},{},{},{x}",
                            a.name,
                            m.key,
                            m.unit,
                            v.name(),
                            i + 1
                        );
                    }
                }
            }
        }
    }
    fs::write(out.join("apps.csv"), s)?;
    fs::write(out.join("apps_raw.csv"), raw)
}
