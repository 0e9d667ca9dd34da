//! The report: the text tables (stdout and report.txt) and the CSV files
//! of a run, one file per table or per thing reported. `text` puts the
//! tables together in their order; `write` writes report.txt and the CSV.

pub mod apps;
mod coll;
mod csv;
pub mod format;
mod header;
mod limits;
mod nbc;
mod paths;
mod problems;
mod rma;
pub mod series;
mod side_table;
mod summary;
mod table;
mod targets;
pub mod validation;

use crate::opts::Opts;
use crate::results::Results;
use std::fs;
use std::path::Path;

/// The whole report, in its order: header, applications, summary, targets,
/// one-sided summary, every benchmark's tables, machine limits, problems.
pub fn text(opts: &Opts, res: &Results, env: &[(String, String)]) -> String {
    let mut out = String::new();
    header::header(&mut out, opts, res, env);

    apps::apps(&mut out, res, opts);
    summary::headline(&mut out, res, opts);
    coll::coll_targets(&mut out, res, opts);
    paths::paths(&mut out, res, opts);
    nbc::nbc_targets(&mut out, res, opts);
    rma::rma_summary(&mut out, res, opts);

    for b in &opts.benches {
        for m in b.metrics {
            if b.side_by_side() {
                let first = std::ptr::eq(m, &b.metrics[0]);
                side_table::side_table(&mut out, res, opts, b, m, first);
                continue;
            }
            for mpi in &opts.mpis {
                table::table(&mut out, res, b, m, mpi);
            }
        }
    }

    limits::limits(&mut out, res);
    problems::problems(&mut out, res);
    out
}

/// Write report.txt (`text`) and the CSV files into `out`.
pub fn write(opts: &Opts, res: &Results, text: &str, out: &Path) -> Result<(), String> {
    write_text(&out.join("report.txt"), text);
    csv::write_csv(opts, res, out).map_err(|e| format!("writing CSV: {e}"))
}

/// Write a text file; a failure is said on stderr, not fatal.
pub fn write_text(p: &Path, s: &str) {
    if let Err(e) = fs::write(p, s) {
        eprintln!("heapmpi-bench: cannot write {}: {e}", p.display());
    }
}
