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
/// for every MPI, stock and heapmpi (with --quick, each on one MPI per
/// run, the MPIs taking turns). Returns the runs as (bench, ranks, mpi,
/// variant), and notes on the runs left out.
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
    let mut quick_left = 0;
    for (j, (b, ranks)) in jobs.into_iter().enumerate() {
        // Stock MPICH (ch4) busy-polls: oversubscribed, each call waits for
        // time slices (~10 ms), and its validation would take minutes. The
        // checker itself is proven by the other stock runs.
        let busy = |mpi: &str| b.is_coll() && mpi == "mpich" && ranks > runner::cpu_count();
        for mpi in opts.mpis.iter().filter(|m| busy(m)) {
            notes.push(format!(
                "check {} {mpi} stock {ranks} ranks: not run (stock MPICH busy-polls when \
                 oversubscribed, ~10 ms a call; the checker is proven by the other stock runs)",
                b.name
            ));
        }
        // --quick validates stock on one MPI per run and heapmpi on the
        // next, the MPIs taking turns: one stock run proves the checker,
        // and every benchmark is validated under heapmpi on some MPI (the
        // conformance suites check heapmpi itself on every MPI).
        let stock: Vec<&String> = opts.mpis.iter().filter(|m| !busy(m)).collect();
        let quick_pick = (!stock.is_empty()).then(|| stock[j % stock.len()]);
        let heap_pick = (!opts.mpis.is_empty()).then(|| &opts.mpis[(j + 1) % opts.mpis.len()]);
        for mpi in &opts.mpis {
            for v in [Variant::Stock, Variant::Heapmpi] {
                if v == Variant::Stock {
                    if busy(mpi) {
                        continue;
                    }
                    if opts.quick && quick_pick != Some(mpi) {
                        quick_left += 1;
                        continue;
                    }
                } else if opts.quick && heap_pick != Some(mpi) {
                    quick_left += 1;
                    continue;
                }
                runs.push((b, ranks, mpi.clone(), v));
            }
        }
    }
    if quick_left > 0 {
        notes.push(format!(
            "--quick: {quick_left} validation runs left out (stock and heapmpi are each \
             validated on one MPI per benchmark and rank count, the MPIs taking turns)"
        ));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A full check validates stock wherever it can and heapmpi on every
    /// MPI; --quick each on one MPI per (benchmark, rank count), the MPIs
    /// taking turns.
    #[test]
    fn quick_validates_each_variant_once_per_run() {
        let args = |quick: bool| {
            let mut a: Vec<String> = vec!["--check".into()];
            if quick {
                a.push("--quick".into());
            }
            Opts::parse(&a).unwrap()
        };
        let (full, quick) = (args(false), args(true));
        let (full_runs, _) = check_runs(&full);
        let (quick_runs, notes) = check_runs(&quick);
        let count = |runs: &[(&Bench, usize, String, Variant)], v: Variant| {
            runs.iter().filter(|r| r.3 == v).count()
        };
        for v in [Variant::Stock, Variant::Heapmpi] {
            let mut per_run = std::collections::BTreeMap::new();
            for (b, ranks, mpi, rv) in &quick_runs {
                if *rv == v {
                    per_run
                        .entry((b.name, *ranks))
                        .or_insert_with(Vec::new)
                        .push(mpi.clone());
                }
            }
            assert!(per_run.values().all(|m| m.len() == 1), "{per_run:?}");
            let mpis: std::collections::BTreeSet<_> = per_run.values().flatten().collect();
            assert_eq!(
                mpis.len(),
                quick.mpis.len(),
                "the MPIs take turns: {per_run:?}"
            );
        }
        // Every (benchmark, rank count) is validated under heapmpi.
        assert_eq!(
            count(&quick_runs, Variant::Heapmpi) * quick.mpis.len(),
            count(&full_runs, Variant::Heapmpi)
        );
        assert!(count(&quick_runs, Variant::Stock) < count(&full_runs, Variant::Stock));
        assert!(notes.iter().any(|n| n.starts_with("--quick:")));
    }
}
