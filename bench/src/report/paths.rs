//! Which path each collective took across nodes, from the paths runs
//! (`crate::paths`): per routine and MPI, the calls of all ranks through the
//! shared heap and to the real MPI.

use crate::opts::Opts;
use crate::results::Results;
use crate::runner::mpi_title;
use std::fmt::Write as _;

/// One table per collective benchmark that had paths runs.
pub(super) fn paths(out: &mut String, res: &Results, opts: &Opts) {
    for b in &opts.benches {
        let per_mpi: Vec<(&String, &Vec<crate::results::PathRow>)> = opts
            .mpis
            .iter()
            .filter_map(|m| res.paths.get(&(b.name, m.clone())).map(|r| (m, r)))
            .collect();
        if per_mpi.is_empty() {
            continue;
        }
        let ranks = res.ranks.get(b.name).copied().unwrap_or(b.ranks);
        let _ = writeln!(
            out,
            "\n== {}: the path of each collective across {} nodes, {ranks} ranks (HEAPMPI_PROFILE, calls of all ranks)",
            b.name, opts.nodes
        );
        let _ = writeln!(
            out,
            "   (heap = through the shared heap: the node's ranks through the heap, the node leaders\n    \
             through the real MPI; to the real MPI whole: remote = members on another node and no\n    \
             hierarchical form in heapmpi; args = arguments it leaves to the real MPI, such as a\n    \
             floating-point reduction whose order of combination it does not reproduce across nodes;\n    \
             other = passed, as every call of a rank alone on its node, which has no heap)"
        );
        let mut head = format!("   {:<22}", "routine");
        for (mpi, _) in &per_mpi {
            let _ = write!(
                head,
                " {:>24}",
                format!("{} heap/remote/args/other", mpi_title(mpi))
            );
        }
        let _ = writeln!(out, "{head}");
        let mut routines: Vec<&str> = per_mpi
            .iter()
            .flat_map(|(_, rows)| rows.iter().map(|r| r.routine.as_str()))
            .collect();
        routines.sort_unstable();
        routines.dedup();
        for r in routines {
            let mut line = format!("   {r:<22}");
            for (_, rows) in &per_mpi {
                let cell = rows
                    .iter()
                    .find(|x| x.routine == r)
                    .map_or("-".to_string(), |x| {
                        format!("{}/{}/{}/{}", x.heap, x.remote, x.args, x.other)
                    });
                let _ = write!(line, " {cell:>30}");
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
}
