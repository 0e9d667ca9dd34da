//! The report's tail: the heapmpi runs in which heapmpi was not active in
//! every rank, and every failure of the run.

use crate::results::Results;
use std::fmt::Write as _;

/// The warnings and failures, if any.
pub(super) fn problems(out: &mut String, res: &Results) {
    if !res.heap_not_active.is_empty() {
        let _ = writeln!(
            out,
            "\nWARNING: heapmpi was not active in every rank of {} run(s); those numbers are not heapmpi's:",
            res.heap_not_active.len()
        );
        for w in &res.heap_not_active {
            let _ = writeln!(out, "  {w}");
        }
    }
    if !res.failures.is_empty() {
        let _ = writeln!(out, "\nFAILURES ({}):", res.failures.len());
        for f in &res.failures {
            let _ = writeln!(out, "  {}", f.replace('\n', "\n    "));
        }
    }
}
