//! The MPIs users run besides Debian's two: Open MPI 5.0, MPICH 5.0 and
//! Intel MPI 2021, from their Python wheels ([`WHEEL_FLAVOURS`]:
//! `tests/run` installs each, at a pinned version, into a virtual
//! environment of its own under `target/wheels/<name>`; the wheels bring
//! `mpicc`, headers and a launcher; only Intel MPI's a Fortran compiler
//! wrapper).
//!
//! For each wheel MPI, heapmpi is built with `wrappers/heapmpi-build
//! --mpicc <the wheel's mpicc>`; each program below is built with the
//! wheel's `mpicc` (and through `heapmpicc` over it for `--wrap`), run
//! stock with the wheel's launcher, and under heapmpi both ways in: its
//! stdout must be the stock run's, and at 2 ranks (`HEAPMPI_STATS=1`)
//! every rank must report an active heap, the program's layer on the heap
//! and nothing left at `MPI_Finalize`. The preload runs go through
//! `wrappers/heapmpirun` with only the family in `HEAPMPI_MPI`: the build
//! (and the launcher) must be found from the MPI library the program
//! loads, since Open MPI 4.1 and 5.0 are both `libmpi.so.40` and MPICH 4
//! and 5 both `libmpi.so.12`: preloading Debian's build into a wheel's
//! program would load two MPI libraries into one process.
//!
//! The programs: the MPI-4 mixing program (classic routines against their
//! large-count twins, `MPI_Isendrecv`, one-sided `_c` calls on heap
//! windows), message order and matching, probes, derived datatypes, the
//! collectives' sweep, reductions and neighbourhood collectives, one-sided
//! calls, windows on every kind of communicator and the one-sided
//! regressions (`MPI_Win_shared_query` on a window without memory answers
//! differently in MPICH 4 and 5: heapmpi follows the version it runs on,
//! `src/version.rs`). A smaller matrix than Debian's (2 ranks; both ways
//! in under `tests/run --full`, one way in per program and MPI in a default
//! run, see [`configs`]) keeps the suite within CI's time.
//!
//! What differs from stock on these MPIs is left out, with the reason, in
//! [`left_out`].

use heapmpi_testkit as common;

use common::*;

/// The configuration: 2 ranks with the report (4 oversubscribed ranks
/// pass too, run by hand, but cost CI a minute and a half per MPI), both
/// ways in (`tests/run --full`), or one way in per program and MPI (a
/// default run: [`configs`]).
const CONFIGS: [MatrixConfig; 1] = [MatrixConfig {
    nranks: 2,
    env: &[],
    stats: true,
    modes: &HEAPMPI_MODES,
}];
const PRELOAD_ONLY: [MatrixConfig; 1] = [MatrixConfig {
    modes: &[Mode::Preload],
    ..CONFIGS[0]
}];
const WRAP_ONLY: [MatrixConfig; 1] = [MatrixConfig {
    modes: &[Mode::Wrap],
    ..CONFIGS[0]
}];

/// The configuration `program` runs in on wheel MPI `f`: a default run
/// takes one way in, alternating over the MPIs and spread over the
/// programs (`quick_pick`), so each MPI meets both ways in the suite.
fn configs(program: &str, f: Flavour) -> &'static [MatrixConfig] {
    if full() {
        return &CONFIGS;
    }
    let i = WHEEL_FLAVOURS.iter().position(|&w| w == f).unwrap_or(0);
    let (_, mode) = quick_pick(program, 1);
    let flip = i % 2 == 1;
    if (mode == Mode::Preload) != flip {
        &PRELOAD_ONLY
    } else {
        &WRAP_ONLY
    }
}

/// A program's reason to be left out on a flavour, if it has one.
fn left_out(program: &str, f: Flavour) -> Option<&'static str> {
    match (program, f) {
        // Stock Open MPI 5.0.11 (osc/rdma over ob1) gets Get_accumulate
        // of long long with MPI_BAND wrong at 2 ranks (section D).
        ("rma_basic", Flavour::OpenMpi5) => Some("stock fails Get_accumulate BAND"),
        // Stock Intel MPI 2021.18 crashes (SIGSEGV) in section A.
        ("rma_basic", Flavour::Impi) => Some("stock crashes"),
        // Stock Intel MPI 2021.18 leaves blocks of Neighbor_alltoallv on a
        // periodic ring of 2 unwritten, which the program's checks catch;
        // heapmpi hands such ambiguous neighbourhoods of an MPI it does not
        // know to the real MPI, and its output is stock's, failures
        // included.
        ("coll_neighbor", Flavour::Impi) => Some("stock fails the program's checks"),
        // Open MPI 5.0.11's <mpi.h> declares none of the large-count
        // routines (its library exports them); MPICH 5 does.
        ("p2p_mpi4", f) if !declares_mpi4(f) => Some("<mpi.h> declares no MPI-4 routine"),
        // Stock Open MPI 5.0.11 crashes (SIGSEGV) in it at 2 ranks;
        // heapmpi's run passes.
        ("coll_persistent", Flavour::OpenMpi5) => Some("stock crashes"),
        ("coll_persistent", f) if !declares(f, "MPI_Allreduce_init") => {
            Some("<mpi.h> declares no persistent collective")
        }
        ("p2p_isendrecv", f) if !declares(f, "MPI_Isendrecv") => {
            Some("<mpi.h> declares no MPI_Isendrecv")
        }
        ("p2p_getstatus", f) if !declares(f, "MPI_Request_get_status_all") => {
            Some("<mpi.h> declares no MPI-4.1 MPI_Request_get_status_all")
        }
        ("p2p_buffers", f) if !declares(f, "MPI_Comm_attach_buffer") => {
            Some("<mpi.h> declares no MPI-4.1 MPI_Comm_attach_buffer")
        }
        _ => None,
    }
}

/// The layer's own count of work done on the heap, in the report of every
/// rank: every value must be positive. For point-to-point, the messages
/// sent by every protocol added up.
fn on_heap(key: &'static str) -> impl Fn(&Output, usize) -> Result<(), String> {
    move |o, n| {
        let v: Vec<u64> = if key == "p2p" {
            let mut sum = vec![0u64; n];
            for k in ["p2p: immediate=", "fastbox=", "single=", "synergistic="] {
                for (s, x) in sum.iter_mut().zip(stats_part(&o.stderr, k)?) {
                    *s += x;
                }
            }
            sum
        } else {
            stats_part(&o.stderr, key)?
        };
        if v.len() != n || v.contains(&0) {
            return Err(format!(
                "'{key}' of the ranks' reports: {v:?}; expected {n} values, all > 0"
            ));
        }
        Ok(())
    }
}

fn run(test: &str, program: &str, verdict: &str, key: &'static str) {
    for f in WHEEL_FLAVOURS {
        if let Some(why) = left_out(program, f) {
            eprintln!("{test}: {program} left out on {}: {why}", f.name());
            continue;
        }
        matrix_on(
            &[f],
            configs(program, f),
            test,
            program,
            verdict,
            on_heap(key),
        );
    }
}

#[test]
fn wheels_p2p_mixed_with_mpi4_routines() {
    run(
        "wheels_p2p_mixed_with_mpi4_routines",
        "p2p_mpi4",
        "mpi4",
        "p2p",
    );
}

/// MPI_Isendrecv(_replace) against the classic routines wherever the
/// header declares them: under Open MPI 5 (no `_c` routines in its
/// header) an MPI_Isendrecv once bypassed heapmpi and the job hung.
#[test]
fn wheels_p2p_isendrecv() {
    run("wheels_p2p_isendrecv", "p2p_isendrecv", "isendrecv", "p2p");
}

/// MPI-4.1's MPI_Request_get_status_all/_any/_some over arrays mixing
/// heapmpi's requests with the real MPI's, wherever the header declares
/// them (MPICH 5, Intel MPI): the real calls reject heapmpi's requests,
/// which made mpi4py's suite fail, then hang, under MPICH 5.
#[test]
fn wheels_p2p_get_status_all_any_some() {
    run(
        "wheels_p2p_get_status_all_any_some",
        "p2p_getstatus",
        "getstatus",
        "p2p",
    );
}

/// MPI-4.1's buffers attached to a communicator or a session, and
/// MPI_BUFFER_AUTOMATIC, under MPI_Bsend (MPICH 5, Intel MPI): heapmpi
/// knew only the process's buffer and refused sends stock MPICH 5 makes.
#[test]
fn wheels_p2p_communicator_and_session_buffers() {
    run(
        "wheels_p2p_communicator_and_session_buffers",
        "p2p_buffers",
        "buffers",
        "p2p",
    );
}

#[test]
fn wheels_p2p_order_and_probes() {
    run("wheels_p2p_order", "p2p_order", "order", "p2p");
    run("wheels_p2p_probe", "p2p_probe", "probe", "p2p");
}

#[test]
fn wheels_p2p_derived_datatypes() {
    run(
        "wheels_p2p_derived_datatypes",
        "p2p_datatypes",
        "datatypes",
        "p2p",
    );
    // Derived datatypes moved by their layouts (`dt::plan`), which read
    // each MPI's combiners and its MPI_ORDER_C.
    run("wheels_p2p_strided", "p2p_strided", "strided", " strided=");
}

#[test]
fn wheels_collectives() {
    run("wheels_coll_sweep", "coll_sweep", "csweep", "coll: heap=");
    run("wheels_coll_reduce", "coll_reduce", "reduce", "coll: heap=");
    run(
        "wheels_coll_neighbor",
        "coll_neighbor",
        "neighbor",
        "coll: heap=",
    );
    run(
        "wheels_coll_nonblocking",
        "coll_nonblocking",
        "nonblocking",
        "nonblocking=",
    );
    // heapmpi knows how every MPI here pairs ambiguous neighbourhoods in
    // the nonblocking forms (`comm::topo::stock_pairing_nonblocking`):
    // every call the program posts runs on the heap.
    for f in WHEEL_FLAVOURS {
        matrix_on(
            &[f],
            configs("coll_nbneighbor", f),
            "wheels_coll_nbneighbor",
            "coll_nbneighbor",
            "nbneighbor",
            |o: &Output, n: usize| count_on_heap(o, n, "nonblocking calls per rank: "),
        );
    }
    // The v and w forms pair no neighbourhood: every call on the heap.
    for f in WHEEL_FLAVOURS {
        matrix_on(
            &[f],
            configs("coll_nbvector", f),
            "wheels_coll_nbvector",
            "coll_nbvector",
            "nbvector",
            |o: &Output, n: usize| count_on_heap(o, n, "nonblocking calls per rank: "),
        );
    }
    run(
        "wheels_coll_persistent",
        "coll_persistent",
        "persistent",
        "nonblocking=",
    );
}

#[test]
fn wheels_one_sided() {
    run("wheels_rma_basic", "rma_basic", "rma", "rma: windows heap=");
    run(
        "wheels_rma_regress",
        "rma_regress",
        "regress",
        "rma: windows heap=",
    );
    run(
        "wheels_rma_comms",
        "rma_comms",
        "comms",
        "rma: windows heap=",
    );
}

/// `heapmpirun --heapmpi-dry-run` picks the wheel's build and launcher for a
/// program built with the wheel's `mpicc`, Debian's for Debian's, from the
/// program alone (no `HEAPMPI_MPI`).
#[test]
fn wheels_heapmpirun_picks_build_and_launcher() {
    let mut fl = Failures::new();
    for f in WHEEL_FLAVOURS.into_iter().chain(FLAVOURS) {
        let case = format!("heapmpirun dry run {}", f.name());
        let prog = match ensure_library(f).and_then(|_| compile("share_pointers", f, Mode::Stock)) {
            Ok(p) => p,
            Err(e) => {
                fl.fail(&case, e);
                continue;
            }
        };
        let mut cmd = std::process::Command::new(repo_root().join("wrappers").join("heapmpirun"));
        cmd.arg("--heapmpi-dry-run").args(["-np", "2"]).arg(&prog);
        clean_env(&mut cmd);
        fl.record(&case, run_command(cmd, job_timeout()), |o| {
            let lib = f.shared_lib().canonicalize().map_err(|e| e.to_string())?;
            let line = o.stdout.lines().nth(1).unwrap_or("");
            // -x LD_PRELOAD=<lib> (Open MPI), -genv LD_PRELOAD <lib> (MPICH)
            if !line
                .split([' ', '='])
                .any(|t| t == lib.display().to_string())
            {
                return Err(format!("not preloading {}: {line}", lib.display()));
            }
            // The wheel's own launcher (mpirun; mpiexec or mpiexec.hydra),
            // Debian's for Debian's MPIs.
            let launcher_ok = |t: &str| match f.prefix() {
                Some(p) => t.starts_with(&p.join("bin").display().to_string()),
                None => t.ends_with(&f.launcher()),
            };
            let first = line.split_whitespace().find(|t| !t.contains('='));
            if !first.is_some_and(launcher_ok) {
                return Err(format!("not launched by {}'s launcher: {line}", f.name()));
            }
            Ok(())
        });
    }
    fl.finish("wheels_heapmpirun_picks_build_and_launcher");
}

/// `heapmpirun` and `heapmpi-exec` find their tree (and so the builds)
/// however they are called: by a relative path from inside `wrappers/`,
/// through `..`, and through a symlink elsewhere (an installed `bin/`).
/// They work the path out without a process when it is a plain absolute
/// one; the other forms must give the same tree.
#[test]
fn wrappers_find_their_tree_from_any_path() {
    let mut fl = Failures::new();
    let f = Flavour::OpenMpi;
    let prog = match ensure_library(f).and_then(|_| compile("share_pointers", f, Mode::Stock)) {
        Ok(p) => p,
        Err(e) => {
            fl.fail("setup", e);
            fl.finish("wrappers_find_their_tree_from_any_path");
            return;
        }
    };
    let want = f.shared_lib().canonicalize().unwrap_or_default();
    let wrappers = repo_root().join("wrappers");
    let links = repo_root()
        .join("target")
        .join(format!("wrapper-links-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&links);
    let _ = std::fs::create_dir_all(&links);
    for tool in ["heapmpirun", "heapmpi-exec"] {
        let _ = std::os::unix::fs::symlink(wrappers.join(tool), links.join(tool));
        let forms: [(String, std::path::PathBuf); 3] = [
            (format!("./{tool}"), wrappers.clone()),
            (format!("../wrappers/{tool}"), repo_root().join("target")),
            (links.join(tool).display().to_string(), std::env::temp_dir()),
        ];
        for (path, cwd) in forms {
            let case = format!("{path} from {}", cwd.display());
            let mut cmd = std::process::Command::new(&path);
            cmd.current_dir(&cwd).arg("--heapmpi-dry-run");
            if tool == "heapmpirun" {
                cmd.args(["-np", "2"]);
            }
            cmd.arg(&prog);
            clean_env(&mut cmd);
            fl.record(&case, run_command(cmd, job_timeout()), |o| {
                check_success(o)?;
                let line = o.stdout.lines().nth(1).unwrap_or("");
                let named = line
                    .split([' ', '='])
                    .filter(|t| t.ends_with("libheapmpi.so"))
                    .filter_map(|t| std::path::Path::new(t).canonicalize().ok())
                    .any(|p| p == want);
                if !named {
                    return Err(format!("not preloading {}: {line}", want.display()));
                }
                Ok(())
            });
        }
    }
    let _ = std::fs::remove_dir_all(&links);
    fl.finish("wrappers_find_their_tree_from_any_path");
}

/// Sets `path`'s modification time to `when`, as `touch -d` reads it
/// ("-1 minute", "+10 seconds").
fn set_mtime(path: &std::path::Path, when: &str) -> Result<(), String> {
    let st = std::process::Command::new("touch")
        .args(["-d", when])
        .arg(path)
        .status()
        .map_err(|e| e.to_string())?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("touch -d '{when}' {} failed", path.display()))
    }
}

/// `heapmpirun` keeps the MPI library a build loads in `.heapmpi-mpilib`
/// beside it (asking the loader cost every launch milliseconds), and must
/// trust that answer only while it holds: written under the same
/// `LD_LIBRARY_PATH`, newer than the build. A copy of Debian's two builds
/// in a tree of its own (`HEAPMPI_ROOT`), a program of Debian's Open MPI,
/// dry runs; the kept answer is then replaced by a lie (the Open MPI
/// build loads MPICH's library): under another `LD_LIBRARY_PATH`, or
/// older than the build, it must be ignored and rewritten; valid, it must
/// be believed (heapmpirun then finds no build for the program and says
/// so), which shows the launch really skips the loader.
#[test]
fn heapmpirun_keeps_a_builds_mpi_library_only_while_it_holds() {
    let mut fl = Failures::new();
    let case = "kept MPI library";
    let setup = || -> Result<(std::path::PathBuf, std::path::PathBuf), String> {
        for f in FLAVOURS {
            ensure_library(f)?;
        }
        let prog = compile("share_pointers", Flavour::OpenMpi, Mode::Stock)?;
        let tree = repo_root()
            .join("target")
            .join(format!("mpilib-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tree);
        for f in FLAVOURS {
            let dir = tree.join("target").join(f.name()).join("release");
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            let so = dir.join("libheapmpi.so");
            std::fs::copy(f.shared_lib(), &so).map_err(|e| e.to_string())?;
            // A build made a minute ago: every answer kept from now on is
            // newer than it, even where file times are coarse.
            set_mtime(&so, "-1 minute")?;
        }
        Ok((tree, prog))
    };
    let (tree, prog) = match setup() {
        Ok(v) => v,
        Err(e) => {
            fl.fail(case, e);
            fl.finish("heapmpirun_keeps_a_builds_mpi_library_only_while_it_holds");
            return;
        }
    };
    let ompi_dir = tree.join("target/openmpi/release");
    let ompi_so = ompi_dir.join("libheapmpi.so");
    let ompi_kept = ompi_dir.join(".heapmpi-mpilib");
    let mpich_kept = tree.join("target/mpich/release/.heapmpi-mpilib");
    let dry = |ld_path: Option<&str>| {
        let mut cmd = std::process::Command::new(repo_root().join("wrappers").join("heapmpirun"));
        cmd.arg("--heapmpi-dry-run").args(["-np", "2"]).arg(&prog);
        clean_env(&mut cmd);
        cmd.env("HEAPMPI_ROOT", &tree);
        match ld_path {
            Some(p) => cmd.env("LD_LIBRARY_PATH", p),
            None => cmd.env_remove("LD_LIBRARY_PATH"),
        };
        run_command(cmd, job_timeout())
    };
    let picks_ompi = |o: &Output| -> Result<(), String> {
        check_success(o)?;
        let want = ompi_so.display().to_string();
        if !o.stdout.lines().nth(1).unwrap_or("").contains(&want) {
            return Err(format!("not preloading {want}: {}", o.stdout));
        }
        Ok(())
    };
    let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap_or_default();
    // The lie: the Open MPI build's kept answer names MPICH's library.
    let mpich_lib = || read(&mpich_kept).lines().nth(1).unwrap_or("").to_string();
    let lie = |key: &str| {
        std::fs::write(&ompi_kept, format!("{key}\n{}\n", mpich_lib())).map_err(|e| e.to_string())
    };

    // Cold: asks the loader, keeps the answer (MPICH's build is asked too,
    // walking the tree, or not; keep its answer for the lie).
    fl.record("cold launch", dry(None), |o| {
        picks_ompi(o)?;
        let kept = read(&ompi_kept);
        if kept.lines().next() != Some("LD_LIBRARY_PATH=") || !kept.contains("libmpi.so.40") {
            return Err(format!("kept {kept:?}"));
        }
        Ok(())
    });
    if !mpich_kept.exists() {
        let mut cmd = std::process::Command::new("bash");
        cmd.arg("-c")
            .arg(". \"$1\" && build_mpi_library \"$2\"")
            .arg("bash")
            .arg(repo_root().join("wrappers/heapmpi-lib.sh"))
            .arg(tree.join("target/mpich/release/libheapmpi.so"));
        clean_env(&mut cmd);
        cmd.env_remove("LD_LIBRARY_PATH");
        fl.record(
            "MPICH build's answer",
            run_command(cmd, job_timeout()),
            check_success,
        );
    }
    if !mpich_lib().contains("mpich") {
        fl.fail(
            case,
            format!("no MPICH library kept: {:?}", read(&mpich_kept)),
        );
    } else {
        // Under another LD_LIBRARY_PATH: ignored, asked again, rewritten.
        let other = "/nonexistent/heapmpi-test";
        let r = lie("LD_LIBRARY_PATH=").and_then(|_| dry(Some(other)));
        fl.record("another LD_LIBRARY_PATH", r, |o| {
            picks_ompi(o)?;
            let kept = read(&ompi_kept);
            if kept.lines().next() != Some(&format!("LD_LIBRARY_PATH={other}")[..])
                || kept.contains("mpich")
            {
                return Err(format!("not rewritten: {kept:?}"));
            }
            Ok(())
        });
        // Valid: believed.
        let r = lie("LD_LIBRARY_PATH=").and_then(|_| dry(None));
        fl.record("valid lie", r, |o| {
            if o.status.success() || !o.stderr.contains("no heapmpi build") {
                return Err(format!(
                    "the kept answer was not used: rc {:?}, {}{}",
                    o.status.code(),
                    o.stdout,
                    o.stderr
                ));
            }
            Ok(())
        });
        // Older than the build (a rebuild): ignored, asked again.
        let r = lie("LD_LIBRARY_PATH=").and_then(|_| {
            set_mtime(&ompi_so, "+10 seconds")?;
            dry(None)
        });
        fl.record("build newer than its kept answer", r, |o| {
            picks_ompi(o)?;
            if read(&ompi_kept).contains("mpich") {
                return Err(format!("not rewritten: {:?}", read(&ompi_kept)));
            }
            Ok(())
        });
    }
    let _ = std::fs::remove_dir_all(&tree);
    fl.finish("heapmpirun_keeps_a_builds_mpi_library_only_while_it_holds");
}
