//! The timing runs: every benchmark for every MPI and repetition, stock and
//! under heapmpi, each run's table into the results.

use crate::benches::Bench;
use crate::opts::Opts;
use crate::program_args::{bench_ranks, program_args};
use crate::progress::Progress;
use crate::results::Results;
use crate::runner::{self, Runner, Variant};
use std::path::Path;

/// Every timing run: repetition-major, stock/heapmpi alternating (ABBA) so
/// that slow drifts of the machine hit both alike; across nodes, the
/// collectives' stock runs with node-aware collectives in between.
pub fn run_all(
    opts: &Opts,
    runner: &Runner,
    bin_dir: &Path,
    progress: &mut Progress,
    res: &mut Results,
) {
    for rep in 0..opts.reps {
        for b in &opts.benches {
            for mpi in &opts.mpis {
                let mut order = vec![Variant::Stock, Variant::Heapmpi];
                if aware(opts, b) {
                    order.insert(1, Variant::Aware);
                }
                if rep % 2 == 1 {
                    order.reverse();
                }
                for v in order {
                    timing_run(opts, runner, bin_dir, b, mpi, v, rep, progress, res);
                }
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn timing_run(
    opts: &Opts,
    runner: &Runner,
    bin_dir: &Path,
    b: &'static Bench,
    mpi: &str,
    v: Variant,
    rep: usize,
    progress: &mut Progress,
    res: &mut Results,
) {
    let ranks = bench_ranks(opts, b);
    res.ranks.insert(b.name, ranks);
    let prog = bin_dir.join(mpi).join(b.program);
    let args = program_args(opts, b, false);
    progress.begin(&format!(
        "rep {}/{}  {:<7} {:<8} {:<7}",
        rep + 1,
        opts.reps,
        b.name,
        mpi,
        v.name()
    ));
    let log = format!("{}-{}-{}-r{}", b.name, mpi, v.name(), rep + 1);
    let o = runner.run(mpi, v, ranks, &prog, &args, &log, None);
    let mut note = String::new();
    if v == Variant::Heapmpi && o.ok {
        if let Some(why) = o.inactive_note(ranks) {
            note = format!("  (heapmpi active in {}/{} ranks!)", o.active_ranks, ranks);
            res.heap_not_active.push(format!("{log}: {why}"));
        }
    }
    progress.end(&o, &note);
    if !o.ok {
        res.failures.push(format!(
            "{log}: {}\n{}",
            o.error,
            runner::tail(&o.stderr, 8)
        ));
        return;
    }
    let t = runner::parse_table(&o.stdout);
    if t.is_empty() {
        res.failures.push(format!(
            "{log}: no data in the output ({})",
            o.log.display()
        ));
        return;
    }
    res.runs
        .entry((b.name, mpi.to_string(), v))
        .or_default()
        .push(t);
}

/// Whether benchmark `b` also runs stock with the MPI's node-aware
/// collectives ([`runner::aware_env`]): its blocking collectives across
/// `--nodes`, where heapmpi is held to the better of stock's default and
/// that (the settings choose no nonblocking algorithm).
pub fn aware(opts: &Opts, b: &Bench) -> bool {
    opts.nodes > 1 && b.is_coll() && !b.is_nbc()
}
