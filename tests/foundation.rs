//! Foundation integration tests: the shared heap under real `mpirun`.
//!
//! Every test walks a matrix of {Open MPI, MPICH} x {LD_PRELOAD via
//! `wrappers/heapmpirun`, `--wrap` via `wrappers/heapmpicc`} (and rank
//! counts), runs the C programs from `tests/c/`, and reports every failing
//! combination with its full output. A missing compiler or launcher fails
//! the test (a test that cannot run never counts as passed). Tests are
//! independent and
//! safe to run in parallel.
//!
//! Run: `cargo test --release --test foundation` (builds the library for
//! both flavours first through `wrappers/heapmpi-build`).

use heapmpi_testkit as common;

use common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Blocks rank 0 allocates in share_pointers.c (NB0).
const SHARE_POINTERS_BLOCKS: usize = 10;

fn share_pointers_expected(n: usize) -> Vec<String> {
    (0..n)
        .map(|r| {
            let verified = if r == 0 {
                n - 1
            } else {
                SHARE_POINTERS_BLOCKS + n - 2
            };
            format!("rank {r}: verified {verified} blocks")
        })
        .collect()
}

/// Without HEAPMPI_STATS the library says nothing.
fn check_quiet(out: &Output) -> Result<(), String> {
    let noisy: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("heapmpi"))
        .collect();
    if !noisy.is_empty() {
        return Err(format!(
            "heapmpi printed to stderr without HEAPMPI_STATS / heap-full:\n{}",
            noisy.join("\n")
        ));
    }
    if out.stdout.contains("heapmpi") {
        return Err("heapmpi printed to stdout".into());
    }
    Ok(())
}

/// Every rank reports `shared_allocs=<n>` with n > 0.
fn check_shared_allocs(out: &Output, nranks: usize) -> Result<(), String> {
    let shared = stats_numbers(&out.stderr, "shared_allocs")?;
    if shared.len() != nranks {
        return Err(format!(
            "expected {nranks} shared_allocs= values in the report, found {shared:?}"
        ));
    }
    if shared.contains(&0) {
        return Err(format!(
            "a rank made no shared allocation: shared_allocs={shared:?}"
        ));
    }
    Ok(())
}

/// HEAPMPI_STATS=1 report: every rank active and allocating from the
/// shared heap (so a passing program really ran on the shared heap).
fn check_active(out: &Output, nranks: usize) -> Result<(), String> {
    check_status_lines(out, nranks, HeapState::Active)?;
    check_shared_allocs(out, nranks)
}

/// Every rank printed `rank <r>: <suffix>` and ran on the shared heap.
fn check_lines_active(out: &Output, nranks: usize, suffix: &str) -> Result<(), String> {
    check_ok(out, &per_rank_lines(nranks, suffix))?;
    check_active(out, nranks)
}

/// The body of the tests that run one program on 2 ranks in every flavour
/// and heapmpi mode with HEAPMPI_STATS=1: every rank prints
/// `rank <r>: <suffix>` and allocates from the shared heap.
fn passes_on_shared_heap(test: &str, program: &str, args: &[&str], suffix: &str) {
    let mut fl = Failures::new();
    for (f, mode) in heapmpi_matrix() {
        let case = Case::new(program, f, mode, 2).args(args).env(&STATS);
        fl.run(case, |o| check_lines_active(o, 2, suffix));
    }
    fl.finish(test);
}

#[test]
fn share_pointers_across_ranks() {
    let mut fl = Failures::new();
    for (f, mode) in heapmpi_matrix() {
        for n in [2, 4] {
            let expected = share_pointers_expected(n);
            let case = Case::new("share_pointers", f, mode, n);
            fl.run(case, |o| {
                check_ok(o, &expected)?;
                check_quiet(o)
            });
            fl.run(case.env(&STATS), |o| {
                check_ok(o, &expected)?;
                check_active(o, n)
            });
        }
    }
    fl.finish("share_pointers_across_ranks");
}

#[test]
fn alloc_stress_threads() {
    let mut fl = Failures::new();
    for (f, mode) in heapmpi_matrix() {
        // 4 ranks oversubscribed on 2 cores: LD_PRELOAD only, for CI time.
        let ranks: &[usize] = if mode == Mode::Preload { &[2, 4] } else { &[2] };
        for &n in ranks {
            let case = Case::new("alloc_stress", f, mode, n).env(&STATS);
            fl.run(case, |o| check_lines_active(o, n, "ok"));
        }
    }
    fl.finish("alloc_stress_threads");
}

#[test]
fn realloc_across_init_and_finalize() {
    passes_on_shared_heap(
        "realloc_across_init_and_finalize",
        "realloc_boundary",
        &[],
        "realloc boundary ok",
    );
}

#[test]
fn fork_and_exec_after_init() {
    passes_on_shared_heap("fork_and_exec_after_init", "fork_exec", &[], "fork ok");
}

/// fork() gives the child a private copy of the address space: a child that
/// writes into a block its parent allocated before the fork must not change
/// the parent's block (the shared heap must not stay MAP_SHARED in the
/// child).
#[test]
fn fork_child_writes_stay_private() {
    passes_on_shared_heap(
        "fork_child_writes_stay_private",
        "fork_exec",
        &["child-writes"],
        "fork ok",
    );
}

#[test]
fn malloc_api_edge_cases() {
    passes_on_shared_heap("malloc_api_edge_cases", "alloc_api", &[], "alloc api ok");
}

#[test]
fn heap_full_falls_back_to_glibc() {
    let mut fl = Failures::new();
    let env = [("HEAPMPI_HEAP_SIZE", "4M"), ("HEAPMPI_STATS", "1")];
    for (f, mode) in heapmpi_matrix() {
        let n = 2;
        fl.run(Case::new("heap_full", f, mode, n).env(&env), |o| {
            check_ok(o, &per_rank_lines(n, "allocated 64 MiB ok"))?;
            check_status_lines(o, n, HeapState::Active)?;
            let fb = stats_numbers(&o.stderr, "fallbacks")?;
            if fb.len() != n || fb.contains(&0) {
                return Err(format!(
                    "expected fallbacks>0 for each of {n} ranks, got fallbacks={fb:?}"
                ));
            }
            let warnings = warning_lines(&o.stderr);
            if warnings.is_empty() || warnings.len() > n {
                return Err(format!(
                    "expected between 1 and {n} (at most one per rank) 'heapmpi: warning' \
                     lines, got {}:\n{}",
                    warnings.len(),
                    warnings.join("\n")
                ));
            }
            Ok(())
        });
    }
    fl.finish("heap_full_falls_back_to_glibc");
}

#[test]
fn heapmpi_disable_passes_through() {
    let mut fl = Failures::new();
    let disable = [("HEAPMPI_DISABLE", "1")];
    let disable_stats = [("HEAPMPI_DISABLE", "1"), ("HEAPMPI_STATS", "1")];
    for (f, mode) in heapmpi_matrix() {
        let n = 2;
        fl.run(
            Case::new("alloc_stress", f, mode, n).env(&disable_stats),
            |o| {
                check_ok(o, &per_rank_lines(n, "ok"))?;
                check_status_lines(o, n, HeapState::Inactive)?;
                let shared = stats_numbers(&o.stderr, "shared_allocs")?;
                if shared.iter().any(|&s| s != 0) {
                    return Err(format!("disabled, yet shared_allocs={shared:?}"));
                }
                Ok(())
            },
        );
        fl.run(
            Case::new("realloc_boundary", f, mode, n).env(&disable),
            |o| {
                check_ok(o, &per_rank_lines(n, "realloc boundary ok"))?;
                check_quiet(o)
            },
        );
    }
    fl.finish("heapmpi_disable_passes_through");
}

#[test]
fn single_rank_job_works() {
    let mut fl = Failures::new();
    for (f, mode) in heapmpi_matrix() {
        let case = Case::new("alloc_stress", f, mode, 1)
            .args(&["10000"])
            .env(&STATS);
        fl.run(case, |o| {
            check_ok(o, &per_rank_lines(1, "ok"))?;
            let st = status_lines(&o.stderr);
            if st.len() != 1 {
                return Err(format!("expected 1 status line, found {}", st.len()));
            }
            Ok(())
        });
    }
    fl.finish("single_rank_job_works");
}

/// The heap's memory, both ways: by default a memfd (the report says
/// `shm=memfd:heapmpi (anonymous)` on every rank, and the job adds nothing
/// to /dev/shm), with `HEAPMPI_SHM=posix` a /dev/shm object whose name the
/// report gives and which is gone after the run.
#[test]
fn shm_object_removed_after_normal_run() {
    let mut fl = Failures::new();
    const POSIX: [(&str, &str); 2] = [("HEAPMPI_STATS", "1"), ("HEAPMPI_SHM", "posix")];
    for (f, mode) in heapmpi_matrix() {
        let n = 2;
        fl.run(Case::new("share_pointers", f, mode, n).env(&STATS), |o| {
            check_ok(o, &share_pointers_expected(n))?;
            let v = stats_values(&o.stderr, "shm");
            if v.len() != n || v.iter().any(|s| s != "memfd:heapmpi") {
                return Err(format!(
                    "shm= of the reports: {v:?}; expected memfd:heapmpi on {n}"
                ));
            }
            Ok(())
        });
        fl.run(Case::new("share_pointers", f, mode, n).env(&POSIX), |o| {
            check_ok(o, &share_pointers_expected(n))?;
            let names = stats_shm_names(&o.stderr);
            if names.is_empty() {
                return Err("no shm=/heapmpi-<hex> in the HEAPMPI_STATS report".into());
            }
            let left: Vec<&String> = names
                .iter()
                .filter(|n| Path::new("/dev/shm").join(n).exists())
                .collect();
            if !left.is_empty() {
                return Err(format!("left behind in /dev/shm after the job: {left:?}"));
            }
            Ok(())
        });
    }
    fl.finish("shm_object_removed_after_normal_run");
}

#[test]
fn killed_rank_leaves_no_shm_object() {
    let mut fl = Failures::new();
    for (f, mode) in heapmpi_matrix() {
        let program = "sleep_after_init";
        for env in [&[][..], &[("HEAPMPI_SHM", "posix")][..]] {
            let case = format!(
                "{} SIGKILL one rank",
                Case::new(program, f, mode, 2).env(env).name()
            );
            match kill_one_rank(program, f, mode, env) {
                Ok(info) => fl.passed(&case, &info),
                Err(e) => fl.fail(&case, e),
            }
        }
    }
    fl.finish("killed_rank_leaves_no_shm_object");
}

/// Non-MPI programs behave exactly the same with the library preloaded.
#[test]
fn ordinary_programs_under_ld_preload() {
    let mut fl = Failures::new();
    let commands: [&[&str]; 4] = [
        &["python3", "-c", "print(sum(range(10)))"],
        &["ls", "/"],
        &["gcc", "--version"],
        &["sh", "-c", "echo hi | cat"],
    ];
    for f in available_flavours() {
        if let Err(e) = ensure_library(f) {
            fl.fail(&format!("build {}", f.name()), e);
            continue;
        }
        let lib = f.shared_lib();
        for argv in commands {
            let case = format!("LD_PRELOAD={} {}", lib.display(), argv.join(" "));
            require_tool(argv[0]);
            let run = |preload: Option<&Path>| {
                let mut cmd = Command::new(argv[0]);
                cmd.args(&argv[1..]);
                clean_env(&mut cmd);
                if let Some(l) = preload {
                    cmd.env("LD_PRELOAD", l);
                }
                run_command(cmd, Duration::from_secs(60))
            };
            let plain = match run(None) {
                Ok(o) => o,
                Err(e) => {
                    fl.fail(&case, format!("without LD_PRELOAD: {e}"));
                    continue;
                }
            };
            let pre = match run(Some(&lib)) {
                Ok(o) => o,
                Err(e) => {
                    fl.fail(&case, format!("with LD_PRELOAD: {e}"));
                    continue;
                }
            };
            let same = plain.status.code() == pre.status.code()
                && plain.status.success() == pre.status.success()
                && plain.stdout == pre.stdout
                && plain.stderr == pre.stderr;
            let res = if same {
                Ok(())
            } else {
                Err(format!(
                    "output differs from the run without LD_PRELOAD\n--- without ---\n{}",
                    plain.report()
                ))
            };
            fl.check(&case, &pre, res);
        }
    }
    fl.finish("ordinary_programs_under_ld_preload");
}

/// The C programs themselves are correct: they pass under stock MPI with no
/// heapmpi (share_pointers needs the shared heap and is left out).
#[test]
fn programs_pass_under_stock_mpi() {
    let mut fl = Failures::new();
    for f in available_flavours() {
        let n = 2;
        let cases: [(&str, &[&str], Vec<String>); 6] = [
            ("alloc_stress", &[], per_rank_lines(n, "ok")),
            (
                "realloc_boundary",
                &[],
                per_rank_lines(n, "realloc boundary ok"),
            ),
            ("fork_exec", &["child-writes"], per_rank_lines(n, "fork ok")),
            ("alloc_api", &[], per_rank_lines(n, "alloc api ok")),
            ("heap_full", &[], per_rank_lines(n, "allocated 64 MiB ok")),
            (
                "sleep_after_init",
                &["0.2"],
                vec!["ready".to_string(), "done".to_string()],
            ),
        ];
        for (program, args, expected) in cases {
            let case = Case::new(program, f, Mode::Stock, n).args(args);
            fl.run(case, |o| check_ok(o, &expected));
        }
    }
    fl.finish("programs_pass_under_stock_mpi");
}

/// The report parsing used above understands the library's format.
#[test]
fn stats_report_parsing() {
    let stderr = "\
heapmpi: warning: this rank's shared heap (4.0 MiB) is full; allocations that do not fit now come from private memory
heapmpi[0/2]: active local=0/2 base=0x292480000000 shm=/heapmpi-2b0d (unlinked) shared_allocs=30045 glibc_allocs=7203 fallbacks=6
heapmpi[1/2]: inactive shm=/heapmpi-2b0d shared_allocs=0 glibc_allocs=7 fallbacks=0
unrelated line shared_allocs=99
";
    let st = status_lines(stderr);
    assert_eq!(st.len(), 2);
    assert_eq!((st[0].rank, st[0].state), (Some(0), HeapState::Active));
    assert_eq!((st[1].rank, st[1].state), (Some(1), HeapState::Inactive));
    assert_eq!(
        stats_numbers(stderr, "shared_allocs").unwrap(),
        vec![30045, 0]
    );
    assert_eq!(stats_numbers(stderr, "fallbacks").unwrap(), vec![6, 0]);
    assert_eq!(stats_numbers(stderr, "allocs").unwrap(), Vec::<u64>::new());
    assert_eq!(
        stats_shm_names(stderr).into_iter().collect::<Vec<_>>(),
        vec!["heapmpi-2b0d"]
    );
    assert_eq!(warning_lines(stderr).len(), 1);
    assert_eq!(stats_rank("heapmpi[3]: active"), Some(3));
    assert_eq!(stats_rank("heapmpi[rank 5 pid 7]: active"), Some(5));
    assert_eq!(stats_rank("heapmpi[node0]: active"), None);
}

/// `wrappers/heapmpi-exec` as a launcher prefix (`mpirun -np 2 heapmpi-exec
/// ./app`): each rank finds its MPI's build (from `ldd`, or, for a program
/// started through a shell script, from the launcher's variables), preloads
/// it and execs the program, whose ranks then share the heap. Refuses, with
/// the launcher's job failing, when `HEAPMPI_MPI` names the other MPI.
#[test]
fn launcher_prefix_heapmpi_exec() {
    let mut fl = Failures::new();
    let exec = repo_root().join("wrappers/heapmpi-exec");
    let n = 2;
    for f in available_flavours() {
        if let Err(e) = ensure_library(f) {
            fl.fail(&format!("heapmpi-exec {}", f.name()), e);
            continue;
        }
        let prog = match compile("share_pointers", f, Mode::Stock) {
            Ok(p) => p,
            Err(e) => {
                fl.fail(&format!("heapmpi-exec {}: compile", f.name()), e);
                continue;
            }
        };
        let script = format!("exec {}", prog.display());
        let runs: [(&str, Vec<String>); 2] = [
            ("direct", vec![prog.display().to_string()]),
            (
                "through sh -c",
                vec!["/bin/sh".into(), "-c".into(), script.clone()],
            ),
        ];
        for (how, argv) in runs {
            // The ranks inherit the launcher's environment on one node, as
            // in every Case (`spawn_mpi`).
            let mut cmd = mpi_command(f, Mode::Stock, n, &exec, &[]);
            cmd.args(&argv).env("HEAPMPI_STATS", "1");
            let case = format!("heapmpi-exec {} np={n} {how}", f.name());
            fl.record(&case, run_command(cmd, job_timeout()), |o| {
                check_ok(o, &share_pointers_expected(n))?;
                check_status_lines(o, n, HeapState::Active)
            });
        }
        let other = if f.is_openmpi() { "mpich" } else { "openmpi" };
        let mut cmd = mpi_command(f, Mode::Stock, n, &exec, &[]);
        cmd.arg(&prog).env("HEAPMPI_MPI", other);
        let case = format!("heapmpi-exec {} np={n} HEAPMPI_MPI={other}", f.name());
        fl.record(&case, run_command(cmd, job_timeout()), |o| {
            let said = format!("heapmpi-exec: HEAPMPI_MPI={other} but");
            if o.status.success() || !o.stderr.contains(&said) {
                return Err(format!(
                    "expected a failed job and \"{said} ...\" on stderr"
                ));
            }
            Ok(())
        });
    }
    fl.finish("launcher_prefix_heapmpi_exec");
}

/// Python loads the MPI library privately (RTLD_LOCAL, through the mpi4py
/// extension); heapmpi must still intercept `MPI_Init_thread` and share the
/// heap. Debian's mpi4py is built for Open MPI and Debian's python3.
#[test]
fn python_mpi4py_ranks_share_the_heap() {
    let python = std::path::Path::new("/usr/bin/python3");
    let has_mpi4py = python.exists()
        && Command::new(python)
            .args(["-c", "import mpi4py"])
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
    assert!(
        has_mpi4py && available_flavours().contains(&Flavour::OpenMpi),
        "python_mpi4py_ranks_share_the_heap cannot run: no mpi4py for /usr/bin/python3 \
         (tests/run installs python3-mpi4py)"
    );
    ensure_library(Flavour::OpenMpi).unwrap();
    let mut fl = Failures::new();
    for n in [2, 4] {
        let mut cmd = Command::new(repo_root().join("wrappers/heapmpirun"));
        cmd.args(["-np", &n.to_string()])
            .arg(python)
            .arg(repo_root().join("tests/py/share_pointers.py"))
            .current_dir(repo_root());
        clean_env(&mut cmd);
        cmd.env("HEAPMPI_MPI", "openmpi").env("HEAPMPI_STATS", "1");
        let case = format!("python share_pointers openmpi preload np={n}");
        fl.record(&case, run_command(cmd, job_timeout()), |o| {
            check_ok(o, &["python ranks see rank 0's malloc: True".to_string()])?;
            check_status_lines(o, n, HeapState::Active)
        });
    }
    fl.finish("python_mpi4py_ranks_share_the_heap");
}

/// Like `killed_rank_leaves_no_shm_object`, but the rank is SIGKILLed while
/// the ranks exchange small, 64 KiB and 4 MiB messages, blocking and not,
/// from malloc'd buffers (`transfer_until_killed.c`): the surviving rank is
/// in the middle of a transfer with the dead one, yet the job must end and
/// leave no heapmpi object in /dev/shm. First the same program runs to its
/// end (2 s of traffic) under the stock MPI and under heapmpi, where every
/// rank must report an active shared heap: the kill interrupts transfers
/// that work.
#[test]
fn killed_rank_mid_transfer_ends_the_job_and_leaves_no_shm() {
    let mut fl = Failures::new();
    let program = "transfer_until_killed";
    let n = 2;
    let expected = ["ready".to_string(), "done".to_string()];
    for f in available_flavours() {
        let case = Case::new(program, f, Mode::Stock, n).args(&["2"]);
        fl.run(case, |o| check_ok(o, &expected));
    }
    for (f, mode) in heapmpi_matrix() {
        let case = Case::new(program, f, mode, n).args(&["2"]).env(&STATS);
        fl.run(case, |o| {
            check_ok(o, &expected)?;
            check_active(o, n)
        });
        let case = format!(
            "{} SIGKILL one rank mid-transfer",
            Case::new(program, f, mode, n).name()
        );
        match kill_one_rank(program, f, mode, &[]) {
            Ok(info) => fl.passed(&case, &info),
            Err(e) => fl.fail(&case, e),
        }
    }
    fl.finish("killed_rank_mid_transfer_ends_the_job_and_leaves_no_shm");
}

/// Jobs started by `MPI_Comm_spawn` (`tests/c/spawn_children.c`): parents
/// and children exchange messages over the inter-communicator, merge it
/// (`MPI_Intercomm_merge`) and run an Allreduce and a ring over the merged
/// communicator, with 1 parent and 2 children, 2 and 1, 2 and 2. A
/// communicator with members of two jobs stays the real MPI's: heapmpi
/// once ran its registration collective on it in the job that registers
/// communicators (2 ranks on the node) while the other job (1 rank) did
/// not, and the other side's next collective got that message
/// (`MPI_ERR_TRUNCATE`) and the job hung. Open MPI only: MPICH 4.0.2 with
/// the ucx netmod cannot spawn, stock included ("Error in spawn call").
/// The children inherit `LD_PRELOAD` (and run heapmpi among themselves);
/// parents' and children's lines are compared with stock's as sets, since
/// the launcher interleaves the two jobs' output.
#[test]
fn spawned_jobs_merge_with_their_parents() {
    const ENV: [(&str, &str); 1] = [("OMPI_MCA_rmaps_base_oversubscribe", "1")];
    let mut fl = Failures::new();
    for (parents, children) in [(1usize, "2"), (2, "1"), (2, "2")] {
        let f = Flavour::OpenMpi;
        if !available_flavours().contains(&f) {
            fl.fail("spawn_children", "Open MPI is not installed");
            continue;
        }
        let args = [children];
        let args = &args[..];
        let stock_case = Case::new("spawn_children", f, Mode::Stock, parents)
            .args(args)
            .env(&ENV);
        let stock = match run_mpi(&stock_case) {
            Ok(o) => o,
            Err(e) => {
                fl.fail(&stock_case.name(), e);
                continue;
            }
        };
        let nproc = parents + children.parse::<usize>().unwrap_or(0);
        let stock_ok = check_spawn_stock(&stock, nproc);
        let want = stock_ok.clone().unwrap_or_default();
        let passed = stock_ok.is_ok();
        fl.check(
            &format!("{} (reference run)", stock_case.name()),
            &stock,
            stock_ok.map(|_| ()),
        );
        if !passed {
            continue;
        }
        for mode in HEAPMPI_MODES {
            let case = Case::new("spawn_children", f, mode, parents)
                .args(args)
                .env(&ENV);
            fl.run(case, |o| {
                check_success(o)?;
                let got = spawn_verdicts(&o.stdout);
                if got != want {
                    return Err(format!("lines differ from stock's: {got:?} vs {want:?}"));
                }
                Ok(())
            });
        }
    }
    fl.finish("spawned_jobs_merge_with_their_parents");
}
