//! The validation report (--check-only, or a validation that failed): every
//! check run with its verdict, the runs left out, the failures.

use crate::results::Results;
use std::fmt::Write as _;

pub fn text(res: &Results) -> String {
    let mut out = String::new();
    let passed = res.checks.iter().filter(|c| c.1).count();
    let _ = writeln!(
        out,
        "validation runs (-c, every received byte checked): {passed}/{} passed",
        res.checks.len()
    );
    for (what, ok) in &res.checks {
        let _ = writeln!(out, "  {} {what}", if *ok { "ok  " } else { "FAIL" });
    }
    for n in &res.check_notes {
        let _ = writeln!(out, "  -    {n}");
    }
    for f in &res.failures {
        let _ = writeln!(out, "  {}", f.replace('\n', "\n    "));
    }
    out
}
