//! Validation (--check): every benchmark run with every received byte
//! checked, stock and under heapmpi, at the rank counts that exercise the
//! most paths; the verdict on stderr.

use crate::benches::{Bench, Style};
use crate::opts::Opts;
use crate::program_args::program_args;
use crate::progress::Progress;
use crate::results::Results;
use crate::runner::{self, Runner, Variant};
use std::path::Path;

/// Validation runs: every benchmark at 2 ranks, mbw_mr also at 4 ranks
/// (two pairs at once: matching and per-pair queues get exercised), and the
/// oversubscribed collectives (coll4) at 3 and 4 ranks instead (a rank
/// count that is not a power of two, and more members than cores); each
/// for every MPI, stock and heapmpi. Returns the runs as (bench, ranks,
/// mpi, variant), and notes on the runs left out.
#[allow(clippy::type_complexity)]
pub fn check_runs(opts: &Opts) -> (Vec<(&'static Bench, usize, String, Variant)>, Vec<String>) {
    let mut jobs: Vec<(&'static Bench, usize)> = vec![];
    for b in &opts.benches {
        if b.is_coll() && b.ranks > 2 {
            jobs.push((b, 3));
            jobs.push((b, b.ranks));
        } else {
            jobs.push((b, 2));
        }
    }
    if let Some(b) = opts.benches.iter().find(|b| b.name == "mbw_mr") {
        jobs.push((b, 4));
    }
    let mut runs = vec![];
    let mut notes = vec![];
    for (b, ranks) in jobs {
        for mpi in &opts.mpis {
            for v in [Variant::Stock, Variant::Heapmpi] {
                // Stock MPICH (ch4) busy-polls: oversubscribed, each call
                // waits for time slices (~10 ms), and its validation would
                // take minutes. The checker itself is proven by the other
                // stock runs.
                if b.is_coll()
                    && mpi == "mpich"
                    && v == Variant::Stock
                    && ranks > runner::cpu_count()
                {
                    notes.push(format!(
                        "check {} mpich stock {ranks} ranks: not run (stock MPICH busy-polls when \
                         oversubscribed, ~10 ms a call; the checker is proven by the other stock runs)",
                        b.name
                    ));
                    continue;
                }
                runs.push((b, ranks, mpi.clone(), v));
            }
        }
    }
    (runs, notes)
}

pub fn check(
    opts: &Opts,
    runner: &Runner,
    bin_dir: &Path,
    progress: &mut Progress,
    res: &mut Results,
) {
    let (runs, notes) = check_runs(opts);
    res.check_notes = notes;
    for (b, ranks, mpi, v) in runs {
        let what = format!(
            "check {:<7} {:<8} {:<7} {} ranks",
            b.name,
            mpi,
            v.name(),
            ranks
        );
        progress.begin(&what);
        let prog = bin_dir.join(&mpi).join(b.program);
        let args = program_args(opts, b, true);
        let log = format!("check-{}-{}-{}-{}ranks", b.name, mpi, v.name(), ranks);
        let o = runner.run(&mpi, v, ranks, &prog, &args, &log, None);
        let mut passed = o.ok;
        let mut why = String::new();
        if !o.ok {
            why = o.error.clone();
        } else if b.style != Style::TimeScale && !o.stdout.contains("# validation passed") {
            passed = false;
            why = "no '# validation passed' line".into();
        }
        if passed && v == Variant::Heapmpi {
            if let Some(note) = o.inactive_note(ranks) {
                passed = false;
                why = note;
            }
        }
        let note = if o.ok && !passed {
            format!("  FAILED: {why}")
        } else {
            String::new()
        };
        progress.end(&o, &note);
        if !passed {
            let errs: Vec<&str> = o
                .stderr
                .lines()
                .chain(o.stdout.lines())
                .filter(|l| l.contains("VALIDATION") || l.contains("validation FAILED"))
                .take(10)
                .collect();
            res.failures.push(format!(
                "{log}: {why}\n{}\n(see {}; command in {})",
                if errs.is_empty() {
                    runner::tail(&o.stderr, 8)
                } else {
                    errs.join("\n")
                },
                o.log.display(),
                o.log.with_extension("cmd").display()
            ));
        }
        res.checks.push((
            format!("{what}: {}", if passed { "ok" } else { why.as_str() }),
            passed,
        ));
    }
}

/// Say on stderr whether every validation run passed; false if one failed.
pub fn passed(res: &Results) -> bool {
    let failed: Vec<&(String, bool)> = res.checks.iter().filter(|c| !c.1).collect();
    if !failed.is_empty() {
        eprintln!("\nVALIDATION FAILED:");
        for f in &failed {
            eprintln!("  {}", f.0);
        }
        for f in &res.failures {
            eprintln!("  {f}");
        }
        return false;
    }
    eprintln!(
        "validation passed: {} runs, every received byte checked",
        res.checks.len()
    );
    true
}
