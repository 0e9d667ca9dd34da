//! heapmpi-bench: OSU-style comparison of stock MPI against heapmpi.
//!
//! Builds libheapmpi and the C benchmark programs, measures the machine's
//! own limits, runs every benchmark stock and under heapmpi (alternating,
//! same binary) for each MPI and repetition, runs the application suite
//! (LAMMPS, HPC Challenge, Quantum ESPRESSO, OpenFOAM, CP2K, GROMACS) both
//! ways, and writes tables, CSV and plots. See bench/README.md.

mod app;
mod benches;
mod check;
mod compile;
mod limits;
mod machine;
mod opts;
mod paths;
mod plot;
mod profile;
mod program_args;
mod progress;
mod publish;
mod report;
mod results;
mod runner;
mod setup;
mod stats;
mod suite;
mod timing;

use opts::Opts;
use progress::{fmt_dur, Progress};
use results::Results;
use runner::Runner;
use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

/// Write to stdout, ignoring a closed pipe (`bench/run | head`).
macro_rules! out {
    ($($t:tt)*) => {{
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // bench/run asks which Debian packages the selected applications need
    let packages = args.iter().any(|a| a == "--app-packages");
    args.retain(|a| a != "--app-packages");
    if packages {
        return match Opts::parse(&args) {
            Ok(o) => {
                for a in app::selected(&o) {
                    out!("{} {}\n", a.name, a.packages.join(" "));
                }
                ExitCode::SUCCESS
            }
            // bench/run's driver call reports bad options itself
            Err(_) => ExitCode::SUCCESS,
        };
    }
    let opts = match Opts::parse(&args) {
        Ok(o) => o,
        Err(e) if e.is_empty() => {
            out!("{}\nbenchmarks:\n", opts::USAGE);
            for b in benches::BENCHES {
                out!("  {:<8} {}\n", b.name, b.what);
            }
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("heapmpi-bench: {e}\n\n{}", opts::USAGE);
            return ExitCode::from(2);
        }
    };
    match run(opts) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("heapmpi-bench: error: {e}");
            ExitCode::from(1)
        }
    }
}

/// One invocation: set up, build, validate, measure the limits, time the
/// micro-benchmarks, run the applications, then report.
fn run(mut opts: Opts) -> Result<ExitCode, String> {
    let t_start = Instant::now();
    let bench = setup::bench_dir();
    let root = setup::root(&bench)?;
    opts.mpis = setup::mpis(&opts, &root)?;
    publish::check(&opts)?;
    let out = setup::results_dir(&opts, &bench)?;
    let logs = out.join("logs");
    let mut runner = Runner {
        root: root.clone(),
        logs: logs.clone(),
        timeout: opts.timeout,
        libs: BTreeMap::new(),
        nodes: None,
        heapmpi_env: opts.heapmpi_env.clone(),
    };
    // Environment, for the report.
    let commit = machine::commit(&root);
    let mut env = machine::describe(&opts, &root, &commit);
    eprintln!("heapmpi-bench: results in {}", out.display());
    // Across nodes: started before the first run, stopped when this drops.
    let _nodes = match setup::start_nodes(&opts, &root, &bench, &mut runner)? {
        Some((guard, line)) => {
            env.push(line);
            Some(guard)
        }
        None => None,
    };

    // Build.
    let bin_dir = bench.join("target/c");
    compile::build(&opts, &root, &bench, &bin_dir, &logs)?;
    env.extend(setup::copy_libs(&opts, &root, &out, &mut runner));
    let runner = runner;

    let mut progress = Progress::new(planned_runs(&opts));
    let mut res = Results::default();

    // Validation.
    if opts.check {
        check::check(&opts, &runner, &bin_dir, &mut progress, &mut res);
        if !check::passed(&res) {
            report::write_text(&out.join("report.txt"), &report::validation::text(&res));
            return Ok(ExitCode::from(1));
        }
    }
    if opts.check_only {
        let text = report::validation::text(&res);
        out!("{text}");
        report::write_text(&out.join("report.txt"), &text);
        return Ok(ExitCode::SUCCESS);
    }

    // Machine limits.
    if opts.limits {
        limits::measure(&opts, &runner, &bin_dir, &mut progress, &mut res);
    }
    // Timing runs.
    timing::run_all(&opts, &runner, &bin_dir, &mut progress, &mut res);
    // Which path each collective took across nodes.
    paths::run_all(&opts, &runner, &bin_dir, &mut progress, &mut res);
    // Applications.
    if opts.app {
        res.add_apps(app::run_all(&opts, &runner, &bench, &out, &mut progress));
    }

    env.push(("load average at end".to_string(), machine::loadavg()));
    env.push((
        "total time".to_string(),
        fmt_dur(t_start.elapsed().as_secs_f64()),
    ));

    // Report.
    let text = report::text(&opts, &res, &env);
    out!("\n{text}");
    report::write(&opts, &res, &text, &out)?;
    if opts.plots {
        match plot::write(&opts, &res, &out, &env) {
            Ok(files) => {
                out!("plots:\n");
                for f in files {
                    out!("  {}\n", f.display());
                }
            }
            Err(e) => {
                eprintln!("heapmpi-bench: plots skipped: {e}");
            }
        }
    }
    // Publish: docs/figures.md; a refusal fails the run but keeps its results.
    let published = opts
        .publish
        .then(|| publish::write(&root, &opts, &res, &env, &commit, &text));
    match &published {
        Some(Ok(p)) => out!("published: {}\n", p.display()),
        Some(Err(e)) => eprintln!("heapmpi-bench: error: {e}"),
        None => {}
    }
    out!("results: {}\n", out.display());
    out!("total time: {}\n", fmt_dur(t_start.elapsed().as_secs_f64()));
    if !res.failures.is_empty() {
        eprintln!("heapmpi-bench: {} failure(s):", res.failures.len());
        for f in &res.failures {
            eprintln!("  {f}");
        }
        return Ok(ExitCode::from(1));
    }
    Ok(match published {
        Some(Err(_)) => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}

/// The runs this invocation will make, for the progress lines.
fn planned_runs(opts: &Opts) -> usize {
    // stock and heapmpi, and stock node-aware for some ([`timing::aware`])
    let n_jobs: usize = opts
        .benches
        .iter()
        .map(|b| if timing::aware(opts, b) { 3 } else { 2 })
        .sum::<usize>()
        * opts.mpis.len();
    let mut total = 0;
    if opts.check {
        total += check::check_runs(opts).0.len();
    }
    if !opts.check_only {
        total += n_jobs * opts.reps;
        total += opts
            .benches
            .iter()
            .filter(|b| paths::wanted(opts, b))
            .count()
            * opts.mpis.len();
        if opts.limits {
            total += 1;
        }
        if opts.app {
            total += app::selected(opts).len() * app::runs_per_app(opts);
        }
    }
    total
}
