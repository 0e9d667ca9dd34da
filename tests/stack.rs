//! PMPI tool stacking: heapmpi under a profiler, as sites run it.
//!
//! Two tool fixtures, built per MPI as shared libraries:
//! - `tests/c/tool_counter.c`, mpiP-style: defines nine `MPI_*` routines,
//!   counts and calls `PMPI_*`, and reduces its counts with `PMPI_Reduce`
//!   inside its `MPI_Finalize`;
//! - `tests/c/tool_forward.c`, Darshan-style: defines `MPI_*` and `PMPI_*`
//!   and forwards with `dlsym(RTLD_NEXT, "PMPI_*")`.
//!
//! With the tool preloaded before heapmpi (`LD_PRELOAD=tool` for the
//! ranks, started through `wrappers/heapmpi-exec`, which puts heapmpi
//! last), stdout (the program's lines and the tool's report) must be
//! stock's with the same tool, and heapmpi active with the program's
//! messages and collectives through the heap. In the other order
//! (`libheapmpi.so:tool`) and in the `--wrap` way in, where the program's
//! calls reach heapmpi first, the job must give exactly one warning that
//! names the bypassed tool, and the program's own output must be stock's.
//!
//! Programs: `tests/c/stack_app.c`, and the same calls from Fortran with
//! `use mpi` and `use mpi_f08` (`tests/f/stack_app_f*.f90`). Open MPI's
//! Fortran bindings and MPICH's `mpi_f08` start-up call `PMPI_*`, so stock
//! `tool_counter` sees none of such a program's calls (it prints nothing):
//! the heapmpi run must print the same, and `tool_forward`, which wraps
//! `PMPI_*`, must count what it counts stock (heapmpi's Fortran bindings
//! then go through the MPI's own, see `src/ffi/fortran.rs`).
//!
//! Run: `cargo test --release --test stack`.

use heapmpi_testkit as common;

use common::*;
use std::path::PathBuf;
use std::process::Command;

const TOOLS: [&str; 2] = ["tool_counter", "tool_forward"];

/// Builds a tool fixture as a shared library for `f` (one build at a time:
/// the two tests build the same files).
fn tool(name: &str, f: Flavour) -> Result<PathBuf, String> {
    static BUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let dir = repo_root().join("target").join("stack").join(f.name());
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let out = dir.join(format!("lib{name}.so"));
    let tmp = dir.join(format!(".lib{name}.so.{}", std::process::id()));
    let mut cc = Command::new(f.mpicc());
    cc.args(["-shared", "-fPIC", "-o"])
        .arg(&tmp)
        .arg(c_source(name))
        .arg("-ldl");
    clean_env(&mut cc);
    cc.envs(f.tool_env());
    let res = run_command(cc, std::time::Duration::from_secs(120))?;
    if !res.status.success() {
        return Err(format!(
            "building {name} for {}:\n{}",
            f.name(),
            res.report()
        ));
    }
    std::fs::rename(&tmp, &out).map_err(|e| e.to_string())?;
    Ok(out)
}

/// The launcher of `f` for 2 ranks with `preload` in the ranks' LD_PRELOAD
/// and `HEAPMPI_STATS=1`, running `argv`.
fn job(f: Flavour, preload: &str, argv: &[&str]) -> Command {
    let mut c = Command::new(f.launcher());
    clean_env(&mut c);
    c.envs(f.tool_env());
    if f.is_openmpi() {
        c.env("OMPI_ALLOW_RUN_AS_ROOT", "1");
        c.env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        c.args(["-np", "2", "-x", &format!("LD_PRELOAD={preload}")]);
        c.args(["-x", "HEAPMPI_STATS=1"]);
    } else {
        c.args(["-n", "2", "-genv", "LD_PRELOAD", preload]);
        c.args(["-genv", "HEAPMPI_STATS", "1"]);
    }
    c.args(argv).current_dir(repo_root());
    c
}

fn sorted_stdout(o: &Output) -> Vec<String> {
    let mut v: Vec<String> = o.stdout.lines().map(str::to_string).collect();
    v.sort();
    v
}

fn run(cmd: Command) -> Result<Output, String> {
    let o = run_command(cmd, job_timeout())?;
    if !o.status.success() || o.timed_out {
        return Err(format!("job failed:\n{}", o.report()));
    }
    Ok(o)
}

/// The programs: C, Fortran `use mpi` and `use mpi_f08`.
const PROGRAMS: [&str; 3] = ["stack_app", "stack_app_f", "stack_app_f08"];

/// Tool before heapmpi (through heapmpi-exec): stock's stdout, tool report
/// included, and heapmpi active with the traffic on the heap.
fn tool_first(f: Flavour, program: &str, tool_name: &str) -> Result<(), String> {
    let lib = tool(tool_name, f)?;
    let prog = compile(program, f, Mode::Stock)?;
    let lib = lib.to_string_lossy();
    let prog = prog.to_string_lossy();
    let stock = run(job(f, &lib, &[&prog]))?;
    // The C program proves the fixture works; a Fortran program's calls
    // may never reach a tool of MPI_* stock (bindings that call PMPI_*),
    // and then heapmpi must not make them reach it either.
    if program == "stack_app" && !stock.stdout.contains(&format!("{tool_name}: ")) {
        return Err(format!(
            "stock run printed no report of {tool_name}:\n{}",
            stock.report()
        ));
    }
    let exec = repo_root().join("wrappers").join("heapmpi-exec");
    let heap = run(job(f, &lib, &[&exec.to_string_lossy(), &prog]))?;
    if sorted_stdout(&heap) != sorted_stdout(&stock) {
        return Err(format!(
            "stdout differs from stock's with {tool_name} first\n--- stock ---\n{}\n--- heapmpi ---\n{}",
            stock.report(),
            heap.report()
        ));
    }
    check_status_lines(&heap, 2, HeapState::Active)?;
    if !warning_lines(&heap.stderr).is_empty() {
        return Err(format!(
            "a warning in the documented order:\n{}",
            heap.report()
        ));
    }
    let p2p: u64 = stats_numbers(&heap.stderr, "fastbox")?.iter().sum();
    let coll: u64 = stats_numbers(&heap.stderr, "heap")?.iter().sum();
    if p2p == 0 || coll == 0 {
        return Err(format!(
            "heapmpi served nothing under {tool_name} (fastbox {p2p}, collectives {coll}):\n{}",
            heap.report()
        ));
    }
    Ok(())
}

/// The program's own lines (not a tool's report).
fn program_lines(o: &Output) -> Vec<String> {
    sorted_stdout(o)
        .into_iter()
        .filter(|l| !l.starts_with("tool_"))
        .collect()
}

/// heapmpi reached first (preloaded before the tool, or linked with
/// --wrap): the program's output is stock's and exactly one warning names
/// the tool.
fn tool_bypassed(f: Flavour, mode: Mode, tool_name: &str) -> Result<(), String> {
    let lib = tool(tool_name, f)?;
    ensure_library(f)?;
    let stock_prog = compile("stack_app", f, Mode::Stock)?;
    let stock = run(job(f, "", &[&stock_prog.to_string_lossy()]))?;
    let (preload, prog) = match mode {
        Mode::Wrap => (
            lib.to_string_lossy().into_owned(),
            compile("stack_app", f, Mode::Wrap)?,
        ),
        _ => (
            format!("{}:{}", f.shared_lib().display(), lib.display()),
            stock_prog.clone(),
        ),
    };
    let heap = run(job(f, &preload, &[&prog.to_string_lossy()]))?;
    if program_lines(&heap) != program_lines(&stock) {
        return Err(format!(
            "the program's output differs from stock's\n--- stock ---\n{}\n--- heapmpi ---\n{}",
            stock.report(),
            heap.report()
        ));
    }
    check_status_lines(&heap, 2, HeapState::Active)?;
    let warnings = warning_lines(&heap.stderr);
    let name = lib.file_name().unwrap().to_string_lossy().into_owned();
    if warnings.len() != 1 || !warnings[0].contains(&name) || !warnings[0].contains("never reach") {
        return Err(format!(
            "want one warning naming {name}, got {warnings:?}:\n{}",
            heap.report()
        ));
    }
    Ok(())
}

#[test]
fn profiler_before_heapmpi_sees_every_call_and_heapmpi_serves_them() {
    let mut fl = Failures::default();
    for f in [Flavour::OpenMpi, Flavour::Mpich] {
        for program in PROGRAMS {
            for t in TOOLS {
                let case = format!("{program} {} {t} first", f.name());
                match tool_first(f, program, t) {
                    Ok(()) => fl.passed(&case, "stock's output, heapmpi active"),
                    Err(e) => fl.fail(&case, e),
                }
            }
        }
    }
    fl.finish("profiler_before_heapmpi");
}

#[test]
fn heapmpi_before_a_profiler_says_so_once() {
    let mut fl = Failures::default();
    for f in [Flavour::OpenMpi, Flavour::Mpich] {
        for mode in [Mode::Preload, Mode::Wrap] {
            for t in TOOLS {
                let case = format!("stack_app {} {} {t} bypassed", f.name(), mode.name());
                match tool_bypassed(f, mode, t) {
                    Ok(()) => fl.passed(&case, "one warning, stock's output"),
                    Err(e) => fl.fail(&case, e),
                }
            }
        }
    }
    fl.finish("heapmpi_before_a_profiler");
}
