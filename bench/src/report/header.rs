//! The report's head: the machine and build the run describes (date,
//! command, host, CPU, load, commit, MPI versions, the libraries), how the
//! micro-benchmarks were measured, quick mode, and how many validation runs
//! passed.

use crate::opts::Opts;
use crate::results::Results;
use std::fmt::Write as _;

/// The title, the machine and build (`env`), the method and validation.
pub(super) fn header(out: &mut String, opts: &Opts, res: &Results, env: &[(String, String)]) {
    let _ = writeln!(out, "heapmpi benchmark report");
    for (k, v) in env {
        let _ = writeln!(out, "  {k:<22} {v}");
    }
    if !opts.benches.is_empty() {
        let _ = writeln!(
        out,
        "\nMethod: OSU micro-benchmark methodology (OMB 7.x defaults{}), ranks bound to cores (more\n\
         ranks than cores: unbound), page-aligned buffers (collectives: malloc), warm-up iterations not timed. Every benchmark ran {} time(s) with stock\n\
         MPI and {} time(s) under heapmpi (wrappers/heapmpirun, LD_PRELOAD), alternating, same binary.",
        if opts.iter_scale != 1.0 { format!(", iteration counts x{}", opts.iter_scale) } else { String::new() },
        opts.reps,
        opts.reps
    );
    }
    if opts.nodes > 1 {
        let _ = writeln!(
            out,
            "Across {} nodes: every job's ranks {}, unbound (the nodes share\n\
             this machine's cores); messages between nodes are the real MPI's over TCP, stock and under heapmpi\n\
             alike; a rank alone on its node runs without a heap (nothing to share), where heapmpi only routes.",
            opts.nodes,
            crate::setup::placement(opts)
        );
    }
    if !opts.heapmpi_env.is_empty() {
        let set: Vec<String> = opts
            .heapmpi_env
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let _ = writeln!(out, "heapmpi runs with {} (--heapmpi-env).", set.join(" "));
    }
    if opts.quick {
        let _ = writeln!(out, "QUICK MODE: smoke test, few iterations and one repetition; numbers are not for comparison.");
    }
    if !res.checks.is_empty() {
        let passed = res.checks.iter().filter(|c| c.1).count();
        let _ = writeln!(
            out,
            "Validation (-c, every received byte checked): {passed}/{} runs passed.",
            res.checks.len()
        );
        for n in &res.check_notes {
            let _ = writeln!(out, "  {n}");
        }
    }
}
