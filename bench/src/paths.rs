//! Which path each collective takes across nodes: after the timing runs,
//! one more heapmpi run of each blocking collective benchmark with
//! `HEAPMPI_PROFILE` (heapmpi's own per-routine accounting, written as CSV
//! at `MPI_Finalize`), whose counts say, per routine and summed over the
//! ranks, how many calls went through the shared heap (on a communicator
//! spanning nodes: the node phase through the heap and the node leaders
//! through the real MPI) and how many went to the real MPI whole, and why
//! (`remote`: members on another node, where heapmpi has no hierarchical
//! form). Not timed: the profile's clock reads would show in the times.

use crate::benches::Bench;
use crate::opts::Opts;
use crate::program_args::{bench_ranks, program_args};
use crate::progress::Progress;
use crate::results::{PathRow, Results};
use crate::runner::{Runner, Variant};
use std::path::Path;

/// Whether benchmark `b` gets a paths run: its blocking collectives,
/// across `--nodes`.
pub fn wanted(opts: &Opts, b: &Bench) -> bool {
    opts.nodes > 1 && b.is_coll() && !b.is_nbc()
}

/// The paths runs: one heapmpi run per wanted benchmark and MPI, with few
/// iterations (the counts' proportions do not depend on them).
pub fn run_all(
    opts: &Opts,
    runner: &Runner,
    bin_dir: &Path,
    progress: &mut Progress,
    res: &mut Results,
) {
    for b in opts.benches.iter().filter(|b| wanted(opts, b)) {
        for mpi in &opts.mpis {
            let ranks = bench_ranks(opts, b);
            let prog = bin_dir.join(mpi).join(b.program);
            let mut args = program_args(opts, b, false);
            args.extend(["-i", "4", "-x", "1"].map(String::from));
            let log = format!("{}-{}-paths", b.name, mpi);
            let csv = runner.logs.join(format!("{log}.csv"));
            progress.begin(&format!("paths   {:<7} {:<8} heapmpi", b.name, mpi));
            let env = [(
                "HEAPMPI_PROFILE".to_string(),
                csv.to_string_lossy().into_owned(),
            )];
            let o = runner.run_env(mpi, Variant::Heapmpi, ranks, &prog, &args, &log, None, &env);
            progress.end(&o, "");
            let rows = std::fs::read_to_string(&csv)
                .map(|t| parse(&t))
                .unwrap_or_default();
            if !o.ok || rows.is_empty() {
                res.failures.push(format!(
                    "{log}: no profile ({}; {})",
                    csv.display(),
                    if o.ok { "empty" } else { &o.error }
                ));
                continue;
            }
            res.paths.insert((b.name, mpi.clone()), rows);
        }
    }
}

/// The collective routines' rows of a `HEAPMPI_PROFILE` CSV (`family,
/// routine, calls, bytes, time_s, max_rank_s, pct_mpi, heap_calls,
/// heap_time_pct, passed, remote, unknown_comm, args, real_object`).
pub fn parse(csv: &str) -> Vec<PathRow> {
    let mut lines = csv.lines();
    let Some(head) = lines.next() else {
        return vec![];
    };
    let cols: Vec<&str> = head.split(',').collect();
    let at = |name: &str| cols.iter().position(|c| *c == name);
    let (Some(fam), Some(routine), Some(calls), Some(heap), Some(remote)) = (
        at("family"),
        at("routine"),
        at("calls"),
        at("heap_calls"),
        at("remote"),
    ) else {
        return vec![];
    };
    let args = at("args");
    let others: Vec<usize> = ["passed", "unknown_comm", "real_object"]
        .iter()
        .filter_map(|c| at(c))
        .collect();
    lines
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let num = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
            (f.get(fam).is_some_and(|x| x.contains("coll"))).then(|| PathRow {
                routine: f[routine].to_string(),
                calls: num(calls),
                heap: num(heap),
                remote: num(remote),
                args: args.map_or(0, num),
                other: others.iter().map(|&i| num(i)).sum(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_keeps_the_collectives() {
        let csv = "family,routine,calls,bytes,time_s,max_rank_s,pct_mpi,heap_calls,heap_time_pct,passed,remote,unknown_comm,args,real_object\n\
                   collective,MPI_Bcast,40,320,0.1,0.1,1.0,40,90.0,0,0,0,0,0\n\
                   collective,MPI_Alltoall,40,320,0.1,0.1,1.0,0,0,0,38,0,2,0\n\
                   point-to-point,MPI_Send,4,32,0.1,0.1,1.0,0,0,0,4,0,0,0\n\
                   total,all,84,672,0.3,0.3,3.0,40,30.0,,,,,\n";
        let rows = parse(csv);
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(
            rows[1],
            PathRow {
                routine: "MPI_Alltoall".into(),
                calls: 40,
                heap: 0,
                remote: 38,
                args: 2,
                other: 0
            }
        );
    }
}
