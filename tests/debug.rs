//! The debugging tools an MPI user reaches for keep working under heapmpi:
//! valgrind's memcheck finishes and reports the program's heap bugs as it
//! does stock, and programs built with AddressSanitizer or
//! UndefinedBehaviorSanitizer start, give stock's output, and still have
//! their heap bugs caught.
//!
//! Every way in: `heapmpirun` (preload), the `--wrap` build (`heapmpicc`,
//! with the sanitizer flags when there are any), and `heapmpi-exec` as a
//! launcher prefix; both MPIs. The program is `tests/c/debug_memcheck.c`:
//! MPI traffic through heapmpi's paths (a 1 MiB message, small ones both
//! ways, an allreduce), then, if asked, deliberate heap bugs in rank 0.
//!
//! What decides a case:
//! - the job ends (never killed by the timeout) and prints stock's lines;
//! - no memcheck error is raised in heapmpi's own code (no heapmpi frame
//!   in the stack where the error happened);
//! - each deliberate bug gets the report stock gets (memcheck's kind of
//!   error, AddressSanitizer's kind of bug), in the program's function.
//!
//! A default run takes one valgrind run per MPI and way in (the bugs, then
//! `heapmpi-exec` with the clean program) and the sanitizer cases spread
//! over the ways in; `tests/run --full` repeats the clean valgrind run 10
//! times for every way in and takes every sanitizer case every way.
//!
//! Run: `HEAPMPI_TEST_NO_BUILD=1 MPICC=mpicc.openmpi cargo test --profile
//! ci-tests --target-dir target/openmpi --test debug`.

use heapmpi_testkit as common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const PROGRAM: &str = "debug_memcheck";

/// How a case reaches heapmpi (or not): the three ways in, and stock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    Stock,
    Preload,
    Wrap,
    /// `mpirun -np N heapmpi-exec PROGRAM...` under the plain launcher.
    Exec,
}

const WAYS: [Way; 3] = [Way::Preload, Way::Wrap, Way::Exec];

impl Way {
    fn name(self) -> &'static str {
        match self {
            Way::Stock => "stock",
            Way::Preload => "preload",
            Way::Wrap => "wrap",
            Way::Exec => "heapmpi-exec",
        }
    }

    /// The build the way runs (the --wrap build for Wrap, a plain one else).
    fn mode(self) -> Mode {
        match self {
            Way::Wrap => Mode::Wrap,
            Way::Preload => Mode::Preload,
            Way::Stock | Way::Exec => Mode::Stock,
        }
    }
}

/// Builds `tests/c/debug_memcheck.c` with `flags` (a sanitizer's) for `f`,
/// plainly or through `heapmpicc` for the --wrap build, into
/// `target/c-tests/<mpi>/debug-<tag>-<kind>/`.
fn build(f: Flavour, wrap: bool, flags: &[&str], tag: &str) -> Result<PathBuf, String> {
    if wrap {
        ensure_library(f)?;
    }
    let kind = if wrap { "wrap" } else { "stock" };
    let dir = repo_root()
        .join("target/c-tests")
        .join(f.name())
        .join(format!("debug-{tag}-{kind}"));
    std::fs::create_dir_all(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
    let out = dir.join(PROGRAM);
    let mut cmd = if wrap {
        let mut c = Command::new(repo_root().join("wrappers/heapmpicc"));
        c.env("MPICC", f.mpicc());
        c
    } else {
        Command::new(f.mpicc())
    };
    cmd.args(CFLAGS)
        .arg("-g")
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(c_source(PROGRAM))
        .current_dir(repo_root());
    clean_env(&mut cmd);
    cmd.envs(f.tool_env());
    let res = run_command(cmd, std::time::Duration::from_secs(300))?;
    if !res.status.success() {
        return Err(format!(
            "compiling {PROGRAM} ({tag}, {kind}) failed:\n{}",
            res.report()
        ));
    }
    Ok(out)
}

/// The job: `prefix` (a tool and its options) then `prog arg`, 2 ranks,
/// the way `way` starts it, with `env` for the ranks.
fn job(
    f: Flavour,
    way: Way,
    prefix: &[&str],
    prog: &Path,
    arg: &str,
    env: &[(&str, &str)],
) -> Result<Output, String> {
    if way != Way::Stock {
        ensure_library(f)?;
    }
    let prog = prog.to_string_lossy().into_owned();
    let mut words: Vec<&str> = Vec::new();
    let exec = repo_root().join("wrappers/heapmpi-exec");
    let exec = exec.to_string_lossy().into_owned();
    if way == Way::Exec {
        words.push(&exec);
    }
    words.extend_from_slice(prefix);
    words.push(&prog);
    words.push(arg);
    // The ranks need the variables: Open MPI's mpirun (and heapmpirun over
    // it) passes only what -x names, MPICH's mpiexec the whole environment.
    // The -x options go in front of the program's words, where mpi_command
    // puts the program.
    let mut all: Vec<&str> = Vec::new();
    if f.is_openmpi() {
        for (k, _) in env {
            all.extend(["-x", k]);
        }
    }
    all.extend(words);
    let mut cmd = mpi_command(f, way.mode(), 2, Path::new(all[0]), &all[1..]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_command(cmd, job_timeout())
}

/// One error of valgrind's report: its headline and the stack where it
/// happened (not the allocation's or the free's, which follow "Address
/// ... alloc'd" / "Block was alloc'd").
#[derive(Debug)]
struct VgError {
    headline: String,
    stack: Vec<String>,
}

/// The errors in valgrind's stderr (lines `==PID== ...`).
fn vg_errors(stderr: &str) -> Vec<VgError> {
    let mut errors: Vec<VgError> = Vec::new();
    let mut in_stack = false;
    for line in stderr.lines() {
        let Some(rest) = line.strip_prefix("==").and_then(|l| l.split_once("== ")) else {
            in_stack = false;
            continue;
        };
        let body = rest.1;
        let trimmed = body.trim_start();
        if trimmed.starts_with("at 0x") || trimmed.starts_with("by 0x") {
            if in_stack {
                if let Some(e) = errors.last_mut() {
                    e.stack.push(trimmed.to_string());
                }
            }
            continue;
        }
        in_stack = false;
        if body.is_empty() || body.starts_with(' ') {
            continue;
        }
        // Headlines memcheck raises (not its summaries, warnings or the
        // "Address 0x... is ..." lines that open the allocation's stack).
        const KINDS: [&str; 6] = [
            "Invalid ",
            "Conditional jump",
            "Use of uninitialised",
            "Syscall param",
            "Mismatched free",
            "Source and destination overlap",
        ];
        if KINDS.iter().any(|k| body.starts_with(k)) {
            errors.push(VgError {
                headline: body.to_string(),
                stack: Vec::new(),
            });
            in_stack = true;
        }
    }
    errors
}

/// No error happened in heapmpi's code, and the program's own functions
/// raised exactly the errors in `expected` (kind, function), each once.
fn check_memcheck(o: &Output, expected: &[(&str, &str)]) -> Result<(), String> {
    let errors = vg_errors(&o.stderr);
    for e in &errors {
        if e.stack.iter().any(|l| l.contains("heapmpi")) {
            return Err(format!(
                "memcheck raised an error in heapmpi's code: {}\n  {}",
                e.headline,
                e.stack.join("\n  ")
            ));
        }
    }
    let mut mine: Vec<(String, String)> = errors
        .iter()
        .filter_map(|e| {
            let f = e.stack.iter().find_map(|l| {
                [
                    "overflow_here",
                    "use_after_free_here",
                    "double_free_here",
                    "uninit_here",
                    " main ",
                ]
                .into_iter()
                .find(|f| l.contains(f))
            })?;
            Some((e.headline.clone(), f.trim().to_string()))
        })
        .collect();
    mine.sort();
    let mut want: Vec<(String, String)> = expected
        .iter()
        .map(|(k, f)| (k.to_string(), f.to_string()))
        .collect();
    want.sort();
    let found = |w: &(String, String)| {
        mine.iter()
            .filter(|m| m.0.starts_with(&w.0) && m.1 == w.1)
            .count()
    };
    if mine.len() != want.len() || want.iter().any(|w| found(w) != 1) {
        return Err(format!(
            "memcheck's errors in the program: expected {want:?}, got {mine:?}"
        ));
    }
    Ok(())
}

/// The four bugs of `bugs` and what memcheck says about each.
const MEMCHECK_BUGS: [(&str, &str); 4] = [
    ("Invalid write of size 1", "overflow_here"),
    ("Invalid read of size 1", "use_after_free_here"),
    ("Invalid free()", "double_free_here"),
    (
        "Conditional jump or move depends on uninitialised value",
        "uninit_here",
    ),
];

/// The program's lines that do not depend on what a bug read (its traffic
/// verdicts and the last line), sorted (ranks print in any order). Every
/// line starts with "rank ", and one is split there too: Hydra once glued
/// rank 1's line to the end of rank 0's unfinished one in a stock run
/// under valgrind ("... was smallrank 1: memcheck traffic ok").
fn lines(o: &Output) -> Vec<String> {
    let mut l: Vec<String> = o
        .stdout
        .replace("rank ", "\nrank ")
        .lines()
        .filter(|l| {
            l.starts_with("rank ") && (l.contains("memcheck traffic") || l.ends_with(" done"))
        })
        .map(String::from)
        .collect();
    l.sort();
    l
}

fn same_lines(o: &Output, stock: &[String]) -> Result<(), String> {
    let got = lines(o);
    if got != stock {
        return Err(format!(
            "stdout differs from stock's: expected {stock:?}, got {got:?}"
        ));
    }
    Ok(())
}

const VALGRIND: [&str; 3] = ["valgrind", "-q", "--num-callers=40"];

/// valgrind's memcheck under heapmpi: the job ends with stock's output,
/// heapmpi's code raises no error, and the program's four heap bugs get
/// the reports they get stock, in the program's functions. The bugs run
/// through LD_PRELOAD and --wrap; a default run takes one of them per MPI,
/// the MPIs taking one each (a job under memcheck with heapmpi costs 11-12
/// CPU-s here), and the clean run through heapmpi-exec on both.
#[test]
fn valgrind_finishes_and_reports_the_programs_bugs_as_stock() {
    require_tool("valgrind");
    let mut fl = Failures::new();
    let reps = if full() { 10 } else { 1 };
    for (fi, f) in available_flavours().into_iter().enumerate() {
        let (plain, wrapped) = match (build(f, false, &[], "plain"), build(f, true, &[], "plain")) {
            (Ok(p), Ok(w)) => (p, w),
            (Err(e), _) | (_, Err(e)) => {
                fl.fail(&format!("{PROGRAM} {}", f.name()), e);
                continue;
            }
        };
        let prog = |way: Way| if way == Way::Wrap { &wrapped } else { &plain };
        // Stock first: the reference lines, and memcheck's reports of the bugs.
        let name = format!("valgrind {PROGRAM} bugs {} stock", f.name());
        let Ok(stock) = job(f, Way::Stock, &VALGRIND, &plain, "bugs", &[]) else {
            fl.fail(&name, "the stock job could not start");
            continue;
        };
        let ok = check_success(&stock).and_then(|_| check_memcheck(&stock, &MEMCHECK_BUGS));
        let passed = ok.is_ok();
        fl.check(&name, &stock, ok);
        if !passed {
            continue;
        }
        let want = lines(&stock);
        let bug_ways: &[Way] = match (full(), fi % 2) {
            (true, _) => &[Way::Preload, Way::Wrap],
            (false, 0) => &[Way::Preload],
            (false, _) => &[Way::Wrap],
        };
        for &way in bug_ways {
            let name = format!("valgrind {PROGRAM} bugs {} {}", f.name(), way.name());
            let out = job(f, way, &VALGRIND, prog(way), "bugs", &[]);
            fl.record(&name, out, |o| {
                check_success(o)?;
                same_lines(o, &want)?;
                check_memcheck(o, &MEMCHECK_BUGS)
            });
        }
        let clean: Vec<String> = want
            .iter()
            .filter(|l| l.contains("memcheck traffic"))
            .cloned()
            .chain(std::iter::once("rank 0: clean done".to_string()))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let ways: &[Way] = if full() { &WAYS } else { &[Way::Exec] };
        for &way in ways {
            for rep in 1..=reps {
                let name = format!(
                    "valgrind {PROGRAM} clean {} {} (run {rep})",
                    f.name(),
                    way.name()
                );
                let out = job(f, way, &VALGRIND, prog(way), "clean", &[]);
                fl.record(&name, out, |o| {
                    check_success(o)?;
                    same_lines(o, &clean)?;
                    check_memcheck(o, &[])
                });
            }
        }
    }
    fl.finish("valgrind_finishes_and_reports_the_programs_bugs_as_stock");
}

/// The MPI libraries' own leaks at exit are not the program's: stock and
/// heapmpi runs alike leave LeakSanitizer out.
const ASAN_ENV: [(&str, &str); 1] = [("ASAN_OPTIONS", "detect_leaks=0")];

/// AddressSanitizer: a program built with `-fsanitize=address` starts
/// under every way in and gives stock's output (the runtime first in the
/// library list, heapmpi leaving malloc to it), and its heap-buffer
/// overflow and use after free are still caught, in the program's
/// functions. UndefinedBehaviorSanitizer builds give stock's output too.
#[test]
fn sanitizer_builds_start_and_still_catch_heap_bugs() {
    let mut fl = Failures::new();
    for (fi, f) in available_flavours().into_iter().enumerate() {
        for (tag, flags) in [
            (
                "asan",
                &["-fsanitize=address", "-fno-omit-frame-pointer"][..],
            ),
            (
                "ubsan",
                &["-fsanitize=undefined", "-fno-sanitize-recover=undefined"][..],
            ),
        ] {
            let (plain, wrapped) = match (build(f, false, flags, tag), build(f, true, flags, tag)) {
                (Ok(p), Ok(w)) => (p, w),
                (Err(e), _) | (_, Err(e)) => {
                    fl.fail(&format!("{PROGRAM} {tag} {}", f.name()), e);
                    continue;
                }
            };
            let prog = |way: Way| if way == Way::Wrap { &wrapped } else { &plain };
            let env: &[(&str, &str)] = if tag == "asan" { &ASAN_ENV } else { &[] };
            let name = format!("{tag} {PROGRAM} clean {} stock", f.name());
            let Ok(stock) = job(f, Way::Stock, &[], &plain, "clean", env) else {
                fl.fail(&name, "the stock job could not start");
                continue;
            };
            let ok = check_success(&stock);
            let passed = ok.is_ok();
            fl.check(&name, &stock, ok);
            if !passed {
                continue;
            }
            let want = lines(&stock);
            for way in WAYS {
                let name = format!("{tag} {PROGRAM} clean {} {}", f.name(), way.name());
                let out = job(f, way, &[], prog(way), "clean", env);
                fl.record(&name, out, |o| {
                    check_success(o)?;
                    same_lines(o, &want)
                });
            }
            if tag != "asan" {
                continue;
            }
            for (bi, (bug, report, func)) in [
                ("overflow", "heap-buffer-overflow", "overflow_here"),
                (
                    "use_after_free",
                    "heap-use-after-free",
                    "use_after_free_here",
                ),
            ]
            .into_iter()
            .enumerate()
            {
                for (wi, way) in WAYS.into_iter().enumerate() {
                    if !full() && (fi + bi + wi) % WAYS.len() != 0 {
                        continue;
                    }
                    let name = format!("{tag} {PROGRAM} {bug} {} {}", f.name(), way.name());
                    let out = job(f, way, &[], prog(way), bug, env);
                    fl.record(&name, out, |o| {
                        let head = format!("ERROR: AddressSanitizer: {report}");
                        let at = o
                            .stderr
                            .find(&head)
                            .ok_or_else(|| format!("AddressSanitizer did not report {report}"))?;
                        // The first stack after the report is where it happened.
                        let stack = &o.stderr[at..o.stderr.len().min(at + 3000)];
                        if !stack.contains(func) {
                            return Err(format!("the {report} report does not name {func}"));
                        }
                        if o.status.success() {
                            return Err("the job exited 0 after AddressSanitizer's report".into());
                        }
                        Ok(())
                    });
                }
            }
        }
    }
    fl.finish("sanitizer_builds_start_and_still_catch_heap_bugs");
}

/// Which (MPI, way in) pairs a debugger case takes: every one in a
/// release run, else one way per MPI, `shift` choosing which.
fn debugger_cases(shift: usize) -> Vec<(Flavour, Mode)> {
    available_flavours()
        .into_iter()
        .enumerate()
        .flat_map(|(i, f)| {
            HEAPMPI_MODES
                .into_iter()
                .enumerate()
                .filter(move |(j, _)| full() || (i + j + shift) % HEAPMPI_MODES.len() == 0)
                .map(move |(_, m)| (f, m))
        })
        .collect()
}

/// gdb attached to a live rank prints its stack through heapmpi's frames
/// down to the program's `main`: rank 1 waits in `MPI_Recv` (heapmpi's
/// wait) while gdb looks.
#[test]
fn gdb_backtraces_a_live_rank_through_heapmpi() {
    let gdb = require_tool("gdb");
    let mut fl = Failures::new();
    for (f, mode) in debugger_cases(0) {
        // Rank 0 sends to the waiting rank 1 once this file exists.
        let go = repo_root().join(format!(
            "target/debug-go-{}-{}-{}",
            f.name(),
            mode.name(),
            std::process::id()
        ));
        let _ = std::fs::remove_file(&go);
        let go_arg = go.to_string_lossy().into_owned();
        let args = ["wait", go_arg.as_str()];
        let case = Case::new("debug_core", f, mode, 2).args(&args);
        let name = case.name();
        let (mut job, _) = match spawn_mpi(&case) {
            Ok(j) => j,
            Err(e) => {
                fl.fail(&name, e);
                continue;
            }
        };
        let start = std::time::Instant::now();
        let pid = loop {
            let out = job.stdout_so_far();
            if let Some(p) = out
                .lines()
                .find_map(|l| l.strip_prefix("rank 1: pid "))
                .and_then(|p| p.trim().parse::<i32>().ok())
            {
                break Some(p);
            }
            if !job.running() || start.elapsed() > job_timeout() {
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        };
        let Some(pid) = pid else {
            let _ = std::fs::write(&go, b"");
            let out = job.wait(job_timeout());
            let _ = std::fs::remove_file(&go);
            fl.check(&name, &out, Err("rank 1 never printed its pid".into()));
            continue;
        };
        // Rank 1 prints its pid just before MPI_Recv, which cannot
        // complete before the file exists; give it a moment to be inside.
        std::thread::sleep(std::time::Duration::from_secs(1));
        let mut cmd = Command::new(&gdb);
        cmd.args([
            "-q",
            "-batch",
            "-p",
            &pid.to_string(),
            "-ex",
            "thread 1",
            "-ex",
            "bt",
        ]);
        let bt = run_command(cmd, std::time::Duration::from_secs(60));
        let _ = std::fs::write(&go, b"");
        let out = job.wait(job_timeout());
        let _ = std::fs::remove_file(&go);
        let res = match bt {
            Err(e) => Err(format!("gdb: {e}")),
            Ok(bt) => {
                let text = bt.stdout;
                let frames: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
                let has = |w: &str| frames.iter().any(|l| l.contains(w));
                // MPI_Recv's exported body may be inlined into heapmpi's
                // receive (LTO): either name shows the receive.
                if has("heapmpi") && (has("MPI_Recv") || has("::recv")) && has("main") {
                    check_success(&out)
                } else {
                    Err(format!(
                        "gdb's backtrace of rank 1 lacks heapmpi's frames, the receive or main:\n{text}\n{}",
                        bt.stderr
                    ))
                }
            }
        };
        fl.check(&format!("{name}: gdb -p rank 1, bt"), &out, res);
    }
    fl.finish("gdb_backtraces_a_live_rank_through_heapmpi");
}

/// A rank that crashes leaves a core file that holds its heap blocks
/// (gdb reads the marker it wrote into a block of the shared heap back
/// from the core) and not the whole region (tens of GiB a rank mapped,
/// most never committed): the core stays small.
#[test]
fn a_crashed_ranks_core_file_holds_its_heap_blocks() {
    let gdb = require_tool("gdb");
    let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap_or_default();
    if pattern.starts_with('|') {
        panic!(
            "core files go to a program ({}), not to files: this test cannot run \
             (set kernel.core_pattern=core)",
            pattern.trim()
        );
    }
    let mut fl = Failures::new();
    for (f, mode) in debugger_cases(1) {
        let dir = repo_root().join("target").join(format!(
            "debug-cores/{}-{}-{}",
            f.name(),
            mode.name(),
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(e) = std::fs::create_dir_all(&dir) {
            fl.fail("core directory", e.to_string());
            continue;
        }
        // Every rank may dump core (unlimited) into the case's directory.
        let script = format!(
            "ulimit -c unlimited || exit 99; cd '{}' || exit 98; exec \"$@\"",
            dir.display()
        );
        let args = ["crash"];
        let case = Case::new("debug_core", f, mode, 2).args(&args);
        let name = case.name();
        let prog = match compile("debug_core", f, mode) {
            Ok(p) => p,
            Err(e) => {
                fl.fail(&name, e);
                continue;
            }
        };
        fl.record(&name, run_mpi_per_rank(&case, &script), |o| {
            let line = o
                .stdout
                .lines()
                .find(|l| l.starts_with("rank 0: block "))
                .ok_or("rank 0 printed no block line")?;
            let words: Vec<&str> = line.split_whitespace().collect();
            let (addr, marker) = (words[3], words[words.len() - 1]);
            if !line.contains("heapmpi") {
                return Err(format!("the block is not in heapmpi's region: {line}"));
            }
            let core = std::fs::read_dir(&dir)
                .map_err(|e| e.to_string())?
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .find(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("core"))
                })
                .ok_or_else(|| format!("no core file in {}", dir.display()))?;
            let size = std::fs::metadata(&core).map_err(|e| e.to_string())?.len();
            if size > 512 << 20 {
                return Err(format!(
                    "the core file is {size} bytes: the whole region was dumped"
                ));
            }
            let mut cmd = Command::new(&gdb);
            cmd.arg("-q")
                .arg("-batch")
                .args(["-ex", &format!("x/s {addr}")])
                .arg(&prog)
                .arg(&core);
            let x = run_command(cmd, std::time::Duration::from_secs(60))?;
            if !x.stdout.contains(marker) {
                return Err(format!(
                    "gdb read {addr} from the core file without the marker {marker}:\n{}{}",
                    x.stdout, x.stderr
                ));
            }
            Ok(())
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
    fl.finish("a_crashed_ranks_core_file_holds_its_heap_blocks");
}

/// `HEAPMPI_CHECK=1`: a write 3 bytes past a 100-byte block ends the job
/// at the block's `free` with one line naming the rank, the block's
/// address and size; a program with traffic and no bug runs through with
/// the check on (no false alarm from heapmpi's own blocks).
#[test]
fn heapmpi_check_names_a_block_written_past_its_end() {
    let mut fl = Failures::new();
    let check = [("HEAPMPI_CHECK", "1")];
    let overrun = ["overrun"];
    let clean = ["clean"];
    for (f, mode) in heapmpi_matrix() {
        let case = Case::new("debug_core", f, mode, 2)
            .args(&overrun)
            .env(&check);
        fl.run(case, |o| {
            let block = o
                .stdout
                .lines()
                .find_map(|l| l.strip_prefix("rank 0: block "))
                .ok_or("rank 0 printed no block")?
                .trim()
                .to_string();
            if o.stdout.contains("overrun not caught") {
                return Err("the overrun was not caught at free".into());
            }
            one_alarm(
                o,
                &format!(
                    "heapmpi: HEAPMPI_CHECK (rank 0, at free): in this rank's part of the shared \
                     heap, the 100-byte block at {block} was written past its end"
                ),
            )
            .map(drop)
        });
        let case = Case::new(PROGRAM, f, mode, 2).args(&clean).env(&check);
        fl.run(case, |o| {
            check_success(o)?;
            if o.stderr.contains("HEAPMPI_CHECK") {
                return Err("HEAPMPI_CHECK raised an alarm in a program without a bug".into());
            }
            if lines(o).len() != 3 {
                return Err(format!(
                    "expected the program's 3 lines, got {:?}",
                    lines(o)
                ));
            }
            Ok(())
        });
    }
    fl.finish("heapmpi_check_names_a_block_written_past_its_end");
}

/// `HEAPMPI_CHECK=1`'s page guards and buffer checks: a write through a
/// pointer to another rank's block, a write run past the end of this
/// rank's heap, a write at the same place in the next rank's part, a
/// block with a broken canary given to `MPI_Send` and a send of more bytes
/// than its block holds each end the job with one line naming the rank
/// whose memory it is and the block, then an abort (`tests/c/debug_core.c`
/// documents each case). A default run takes each case through one
/// (MPI, way in), the five spread over all of them; `--full` takes every
/// case every way.
#[test]
fn heapmpi_check_names_writes_into_other_ranks_memory() {
    // The size of a rank's part: "next" writes that far from its block.
    const PART: &str = "268435456";
    let env = [("HEAPMPI_CHECK", "1"), ("HEAPMPI_HEAP_SIZE", "256M")];
    type Want = fn(&str, &str) -> String;
    let cases: [(&str, &[&str], Want); 5] = [
        ("stale", &[], |block, _| {
            format!(
                "heapmpi: HEAPMPI_CHECK (rank 1): a write at {:#x} into rank 0's part of the \
                 shared heap, inside the 200-byte block at {block}: a stale or wild pointer",
                hex(block) + 16
            )
        }),
        ("beyond", &[], |_, _| {
            "heapmpi: HEAPMPI_CHECK (rank 0): a write at 0x".to_string()
        }),
        ("next", &[PART], |_, target| {
            format!(
                "heapmpi: HEAPMPI_CHECK (rank 0): a write at {target} into rank 1's part of the \
                 shared heap"
            )
        }),
        ("send", &[], |block, _| {
            format!(
                "heapmpi: HEAPMPI_CHECK (rank 0, at MPI send): in this rank's part of the \
                 shared heap, the 100-byte block at {block} was written past its end"
            )
        }),
        ("sendpast", &[], |block, _| {
            format!(
                "heapmpi: HEAPMPI_CHECK (rank 0, at MPI send): this rank's 100-byte block at \
                 {block} is the buffer of a 200-byte message: 100 bytes past its end would be \
                 sent"
            )
        }),
    ];
    let matrix = heapmpi_matrix();
    let mut fl = Failures::new();
    for (i, (what, extra, want)) in cases.into_iter().enumerate() {
        let ways: Vec<(Flavour, Mode)> = if full() {
            matrix.clone()
        } else {
            vec![matrix[i % matrix.len()]]
        };
        for (f, mode) in ways {
            let mut args = vec![what];
            args.extend_from_slice(extra);
            let case = Case::new("debug_core", f, mode, 2).args(&args).env(&env);
            fl.run(case, |o| {
                let line = o
                    .stdout
                    .lines()
                    .find_map(|l| l.strip_prefix("rank 0: block "))
                    .ok_or("rank 0 printed no block")?;
                let mut words = line.split_whitespace();
                let block = words.next().unwrap_or_default().to_string();
                let target = words.nth(1).unwrap_or_default().to_string();
                if o.stdout.contains("not caught") {
                    return Err(format!("{what}: the bad access was not caught"));
                }
                let line = one_alarm(o, &want(&block, &target))?;
                if what == "beyond" && !line.contains("past the end of this rank's heap") {
                    return Err(format!("the line does not say past the end: {line}"));
                }
                Ok(())
            });
        }
    }
    fl.finish("heapmpi_check_names_writes_into_other_ranks_memory");
}

/// A job `HEAPMPI_CHECK` stopped: exactly one line of it on stderr,
/// starting with `want`, and a failed exit. That line.
fn one_alarm(o: &Output, want: &str) -> Result<String, String> {
    let hits: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.contains("HEAPMPI_CHECK"))
        .collect();
    if hits.len() != 1 || !hits[0].starts_with(want) {
        return Err(format!("expected one line starting {want:?}, got {hits:?}"));
    }
    if o.status.success() {
        return Err("the job exited 0 after the check's abort".into());
    }
    Ok(hits[0].to_string())
}

/// The value of a "0x..." address as printed by `%p`.
fn hex(s: &str) -> usize {
    usize::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or(0)
}

/// `HEAPMPI_CHECK=1` raises no false alarm: conformance programs that
/// exercise every path where heapmpi reads or writes another rank's memory
/// (large messages, threads, fork, collectives, nonblocking collectives,
/// windows and atomics) give stock's output with the page guards and
/// buffer checks on, at 2 ranks: in a default run each program on one
/// MPI through one way in, spread over all four pairs; `--full`: every
/// program on both MPIs, both ways.
#[test]
fn heapmpi_check_keeps_conformance_programs_as_stock() {
    let programs = [
        ("p2p_large", "large"),
        ("p2p_threads", "threads"),
        ("p2p_fork", "fork"),
        ("coll_sweep", "csweep"),
        ("coll_nonblocking", "nonblocking"),
        ("rma_basic", "rma"),
        ("rma_atomic", "atomic"),
    ];
    let env = [("HEAPMPI_CHECK", "1")];
    let mut fl = Failures::new();
    let flavours = available_flavours();
    for (i, (program, verdict)) in programs.into_iter().enumerate() {
        for (j, &f) in flavours.iter().enumerate() {
            // A default run: each program on one MPI through one way in,
            // the programs spread over every pair.
            let modes: Vec<Mode> = if full() {
                HEAPMPI_MODES.to_vec()
            } else if i % flavours.len() == j {
                vec![HEAPMPI_MODES[(i / flavours.len()) % HEAPMPI_MODES.len()]]
            } else {
                continue;
            };
            let stock_case = Case::new(program, f, Mode::Stock, 2);
            let Some(stock) = reference(&mut fl, &stock_case, 2, verdict) else {
                continue;
            };
            for mode in modes {
                let case = Case::new(program, f, mode, 2).env(&env);
                fl.run(case, |o| {
                    check_same_as_stock(o, &stock)?;
                    if o.stderr.contains("HEAPMPI_CHECK") {
                        return Err("HEAPMPI_CHECK raised an alarm in a correct program".into());
                    }
                    Ok(())
                });
            }
        }
    }
    fl.finish("heapmpi_check_keeps_conformance_programs_as_stock");
}
