//! SVG and PNG plots with plotters: one figure per benchmark metric, message
//! size on a log axis, stock (dashed, hollow circles) and heapmpi (solid,
//! filled triangles) per MPI, min–max bars, and the machine's limits; and
//! the application suite as one figure. `write` draws them all.

pub mod apps;
pub mod micro;
mod style;

use crate::opts::Opts;
use crate::results::Results;
use std::path::{Path, PathBuf};

/// Every plot of the run (the applications' first), with the machine and
/// build from the report's header (`env`) as notes; the files written.
pub fn write(
    opts: &Opts,
    res: &Results,
    out: &Path,
    env: &[(String, String)],
) -> Result<Vec<PathBuf>, String> {
    let notes: Vec<String> = env
        .iter()
        .filter(|(k, _)| {
            k == "date" || k == "cpu" || k == "Open MPI" || k == "MPICH" || k == "heapmpi commit"
        })
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    apps::apps(opts, res, out, &notes).and_then(|mut a| {
        micro::all(opts, res, out, &notes).map(|b| {
            a.extend(b);
            a
        })
    })
}
