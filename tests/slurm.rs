//! Slurm, for real: the test starts a single-node Slurm cluster on this
//! machine (Debian's slurm-wlm 22.05: munged, slurmctld and slurmd on
//! localhost; `tests/slurm/cluster` with `tests/slurm/slurm.conf.in`: no
//! cgroups, `proctrack/linuxproc`, `task/none`, no accounting, everything
//! in a scratch directory under `target/slurm/`) and runs conformance
//! programs of the other suites (`p2p_order`, `coll_reduce`, `rma_ga`)
//! on 2 ranks, for Debian's Open MPI and MPICH:
//!
//! - `srun_direct_launch`: `srun --mpi=pmix` (Open MPI) and
//!   `srun --mpi=pmi2` (MPICH) start the ranks themselves: stock (the
//!   reference), through `wrappers/heapmpi-exec`, and the `--wrap` build.
//!   The heapmpi runs print exactly the stock run's stdout, and every rank's
//!   `HEAPMPI_STATS` report says the heap is active and the program's layer
//!   (point-to-point, collectives, windows) ran over it. `HEAPMPI_STATS=1`
//!   is only in `srun`'s own environment: Slurm's propagation brings it to
//!   the ranks.
//! - `sbatch_script`: an `sbatch` script such as a user would write,
//!   submitted with `sbatch --wait`, runs each program with the MPI's
//!   `mpirun`/`mpiexec` stock and through `heapmpi-exec`, and with
//!   `srun heapmpi-exec`, inside its allocation, each into files of its
//!   own. The stock run is the reference (it passes and prints no report:
//!   heapmpi is not there); the heapmpi runs get the same checks as above.
//!   `HEAPMPI_STATS=1` is only in `sbatch`'s environment: Slurm gives it to
//!   the script, the launchers to the ranks (`mpirun` without `-x`).
//!
//! A cluster that cannot be started fails the test (`tests/run` installs
//! the packages). One cluster at a time: the tests take turns (a mutex,
//! and a lock file, `target/slurm/lock`, for other test processes); each
//! stops its cluster at the end and fails if a process of it (daemons,
//! `slurmstepd`, ranks) survives. The scratch directory is removed when
//! the test passes; when it fails it is kept (logs, the batch script and
//! its outputs) until the next run, which also stops a cluster that a
//! killed test process left running.
//!
//! Run: `HEAPMPI_TEST_NO_BUILD=1 MPICC=mpicc.openmpi cargo test --release
//! --target-dir target/openmpi --test slurm`. By hand:
//! `eval "$(tests/slurm/cluster start /tmp/c)"`, then `srun`, `sbatch`,
//! and `tests/slurm/cluster stop /tmp/c`.

use heapmpi_testkit as common;

use common::*;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::os::unix::io::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One cluster at a time in this test process.
static ONE_CLUSTER: Mutex<()> = Mutex::new(());

/// A conformance program of the other suites, the word of its
/// "rank N: <verdict> ok" lines, and the check that its layer ran over
/// the heap on every rank.
struct Program {
    name: &'static str,
    verdict: &'static str,
    on_heap: fn(&Output) -> Result<(), String>,
}

const PROGRAMS: [Program; 3] = [
    Program {
        name: "p2p_order",
        verdict: "order",
        on_heap: p2p_on_heap,
    },
    Program {
        name: "coll_reduce",
        verdict: "reduce",
        on_heap: coll_on_heap,
    },
    Program {
        name: "rma_ga",
        verdict: "ga",
        on_heap: rma_on_heap,
    },
];

const NRANKS: usize = 2;

/// The number after `key` on both ranks' report lines, all > 0.
fn positive_on_every_rank(o: &Output, key: &str, what: &str) -> Result<(), String> {
    let v = stats_part(&o.stderr, key)?;
    if v.len() != NRANKS || v.contains(&0) {
        return Err(format!(
            "`{key}` on the ranks' reports: {v:?}; expected {NRANKS} values, all > 0 ({what})"
        ));
    }
    Ok(())
}

fn p2p_on_heap(o: &Output) -> Result<(), String> {
    positive_on_every_rank(o, "p2p: immediate=", "messages through the heap's queues")?;
    check_nothing_left(o)
}

fn coll_on_heap(o: &Output) -> Result<(), String> {
    positive_on_every_rank(o, "coll: heap=", "collectives over the heap")
}

fn rma_on_heap(o: &Output) -> Result<(), String> {
    positive_on_every_rank(o, "rma: windows heap=", "windows over the heap")
}

/// `srun`'s MPI plugin for the flavour: PMIx for Open MPI 4.1 (Debian
/// builds it against PMIx 4.2, as Slurm's `mpi_pmix_v4`); PMI-2 for MPICH
/// 4.0 (its built-in PMI client speaks the PMI-1 wire protocol, which
/// Slurm's `mpi_pmi2` serves as well, over the `PMI_FD` it sets).
fn mpi_plugin(f: Flavour) -> &'static str {
    if f.is_openmpi() {
        "--mpi=pmix"
    } else {
        "--mpi=pmi2"
    }
}

fn heapmpi_exec() -> PathBuf {
    repo_root().join("wrappers").join("heapmpi-exec")
}

// ---------------------------------------------------------------------------
// The cluster
// ---------------------------------------------------------------------------

/// A running cluster of `tests/slurm/cluster`; stopped when dropped.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    stopped: bool,
    /// Held (flock) while the cluster runs.
    _lock: std::fs::File,
}

/// A scratch directory for this test process: `target/slurm/<pid>-<tag>`,
/// or under the system's temporary directory if that path is too long for
/// the Unix sockets Slurm and munge make in it (108 bytes at most; the
/// deepest, `spool/slurmd.localhost/stepd.slurm.pmix.<job>.<step>`, adds
/// 45 with a 5-digit job id).
fn scratch(tag: &str) -> PathBuf {
    let name = format!("{}-{tag}", std::process::id());
    let mut d = repo_root().join("target").join("slurm").join(&name);
    if d.as_os_str().len() > 56 {
        d = std::env::temp_dir().join(format!("heapmpi-slurm-{name}"));
    }
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Removes the directories that test processes no longer running left in
/// `target/slurm` (and under the temporary directory): kept for their logs
/// when a test failed, or with a cluster still running in them when a test
/// process was killed (that cluster is stopped first). Called with the
/// lock held, so no other test's cluster runs.
fn prune_stale() {
    let me = std::process::id();
    let places = [
        (repo_root().join("target").join("slurm"), ""),
        (std::env::temp_dir(), "heapmpi-slurm-"),
    ];
    for (parent, prefix) in places {
        let Ok(rd) = std::fs::read_dir(&parent) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(rest) = name.strip_prefix(prefix) else {
                continue;
            };
            let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
                continue;
            };
            if pid == me || Path::new(&format!("/proc/{pid}")).exists() || !e.path().is_dir() {
                continue;
            }
            let mut stop = clean_command(cluster_script());
            stop.arg("stop").arg(e.path());
            let _ = run_command(stop, Duration::from_secs(60));
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

fn cluster_script() -> PathBuf {
    repo_root().join("tests").join("slurm").join("cluster")
}

/// A command in the checkout with a clean environment: no HEAPMPI_*, no
/// LD_PRELOAD, and none of the variables of a Slurm job or step this test
/// may itself run in (they would name another cluster's job, or the PMI
/// server of another step).
fn clean_command(program: impl AsRef<OsStr>) -> Command {
    let mut c = Command::new(program);
    c.current_dir(repo_root());
    clean_env(&mut c);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if ["SLURM_", "SBATCH_", "SRUN_", "SALLOC_", "PMIX_", "PMI_"]
            .iter()
            .any(|p| k.starts_with(p))
        {
            c.env_remove(&k);
        }
    }
    c
}

impl Cluster {
    fn start(tag: &str) -> Result<Cluster, String> {
        let lock_path = repo_root().join("target").join("slurm").join("lock");
        std::fs::create_dir_all(lock_path.parent().unwrap()).unwrap();
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| format!("{}: {e}", lock_path.display()))?;
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(format!(
                "flock {}: {}",
                lock_path.display(),
                std::io::Error::last_os_error()
            ));
        }
        prune_stale();
        let dir = scratch(tag);
        let mut cmd = clean_command(cluster_script());
        cmd.arg("start").arg(&dir);
        let t = Instant::now();
        let out = run_command(cmd, Duration::from_secs(90))?;
        if !out.status.success() {
            return Err(format!(
                "the Slurm cluster did not start (tests/run installs slurmctld, slurmd, \
                 slurm-client and munge):\n{}",
                out.report()
            ));
        }
        let conf = dir.join("slurm.conf");
        if out.stdout.trim() != format!("export SLURM_CONF={}", conf.display()) {
            return Err(format!(
                "unexpected output of `cluster start`:\n{}",
                out.report()
            ));
        }
        eprintln!(
            "Slurm cluster up in {:.1} s ({})",
            t.elapsed().as_secs_f64(),
            dir.display()
        );
        Ok(Cluster {
            dir,
            conf,
            stopped: false,
            _lock: lock,
        })
    }

    /// A client command (srun, sbatch, ...) of this cluster.
    fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut c = clean_command(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    /// `srun -n 2 --mpi=... ARGS` with `env` in srun's environment.
    fn srun(&self, f: Flavour, args: &[&OsStr], env: &[(&str, &str)]) -> Result<Output, String> {
        let mut cmd = self.command("srun");
        cmd.args([
            "-n",
            &NRANKS.to_string(),
            mpi_plugin(f),
            "--kill-on-bad-exit=1",
        ])
        .args(args)
        .envs(env.iter().copied());
        run_command(cmd, job_timeout())
    }

    /// Stops the cluster; Err if that failed or left a process of it
    /// behind (one that holds a file of the scratch directory, or has this
    /// cluster's SLURM_CONF in its environment: ranks, mpirun, daemons).
    fn stop(&mut self) -> Result<(), String> {
        self.stopped = true;
        let mut cmd = clean_command(cluster_script());
        cmd.arg("stop").arg(&self.dir);
        let out = run_command(cmd, Duration::from_secs(60))?;
        if !out.status.success() {
            return Err(format!("`cluster stop` failed:\n{}", out.report()));
        }
        let left = self.processes();
        if !left.is_empty() {
            for (pid, _) in &left {
                unsafe {
                    libc::kill(*pid, libc::SIGKILL);
                }
            }
            return Err(format!(
                "processes of the cluster survived `cluster stop` (now killed):\n{}",
                left.iter()
                    .map(|(p, c)| format!("  {p} {c}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
        Ok(())
    }

    /// Processes that belong to this cluster: they hold a file of its
    /// directory or have its SLURM_CONF in their environment.
    fn processes(&self) -> Vec<(i32, String)> {
        let me = std::process::id() as i32;
        let needle = format!("SLURM_CONF={}", self.conf.display());
        all_pids()
            .into_iter()
            .filter(|&p| p != me)
            .filter(|&p| {
                let env = std::fs::read(format!("/proc/{p}/environ")).unwrap_or_default();
                let in_env = env.split(|&b| b == 0).any(|v| v == needle.as_bytes());
                let holds = std::fs::read_dir(format!("/proc/{p}/fd")).is_ok_and(|d| {
                    d.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                        .any(|t| t.starts_with(&self.dir))
                });
                in_env || holds
            })
            .map(|p| {
                let cmd = std::fs::read(format!("/proc/{p}/cmdline"))
                    .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                    .unwrap_or_default();
                (p, cmd)
            })
            .collect()
    }

    /// The last lines of the daemons' logs, for a failure report.
    fn logs(&self) -> String {
        let mut s = String::new();
        for f in ["log/slurmctld.log", "log/slurmd.log", "munge/munged.log"] {
            let text = std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let _ = writeln!(s, "--- {f} (last 20 lines)");
            for l in &lines[lines.len().saturating_sub(20)..] {
                let _ = writeln!(s, "{l}");
            }
        }
        s
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if !self.stopped {
            if let Err(e) = self.stop() {
                eprintln!("{e}");
            }
        }
    }
}

/// Builds heapmpi for the flavours (unless HEAPMPI_TEST_NO_BUILD=1) and
/// compiles every program of [`PROGRAMS`] for them in `modes`, two
/// compilers at a time (`compile` keeps the results for the runs).
fn prepare(flavours: &[Flavour], modes: &[Mode]) {
    for &f in flavours {
        ensure_library(f).unwrap_or_else(|e| panic!("{e}"));
    }
    let jobs: Vec<(Flavour, Mode, &Program)> = flavours
        .iter()
        .flat_map(|&f| {
            modes
                .iter()
                .flat_map(move |&m| PROGRAMS.iter().map(move |p| (f, m, p)))
        })
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(f, m, p)) = jobs.get(i) else {
                    break;
                };
                // A failure is reported by the case that needs the program.
                let _ = compile(p.name, f, m);
            });
        }
    });
}

/// Builds and compiles what the test needs ([`prepare`]), starts a
/// cluster in `target/slurm/<pid>-<tag>` (a failure to start fails the
/// test), runs `body`, stops the cluster (leftovers fail the test),
/// reports. Everything with the turn held: no compiler runs beside
/// another test's jobs.
fn with_cluster(
    test: &str,
    tag: &str,
    modes: &[Mode],
    body: impl FnOnce(&Cluster, &[Flavour], &mut Failures),
) {
    let _turn = ONE_CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let t = Instant::now();
    let flavours = available_flavours();
    prepare(&flavours, modes);
    eprintln!(
        "{test}: built and compiled in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let mut cluster = Cluster::start(tag).unwrap_or_else(|e| panic!("{test}: {e}"));
    let mut fl = Failures::new();
    body(&cluster, &flavours, &mut fl);
    let failed = fl.failed();
    if failed {
        eprintln!("{}", cluster.logs());
    }
    match cluster.stop() {
        Ok(()) => fl.passed("cluster stop", "nothing left"),
        Err(e) => fl.fail("cluster stop", e),
    }
    if !fl.failed() {
        let _ = std::fs::remove_dir_all(&cluster.dir);
    } else {
        eprintln!(
            "{test}: the cluster's directory is kept: {}",
            cluster.dir.display()
        );
    }
    eprintln!("{test}: {:.1} s", t.elapsed().as_secs_f64());
    fl.finish(test);
}

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------

/// A heapmpi run of `p`: stock's stdout, exit 0, every rank active, the
/// layer over the heap.
fn check_heapmpi(o: &Output, stock: &Output, p: &Program) -> Result<(), String> {
    check_same_as_stock(o, stock)?;
    check_status_lines(o, NRANKS, HeapState::Active)?;
    (p.on_heap)(o)
}

/// A stock run printed no heapmpi report although HEAPMPI_STATS=1 is set
/// (heapmpi is not in the process).
fn no_report(o: &Output) -> Result<(), String> {
    let lines = stats_lines(&o.stderr);
    if !lines.is_empty() {
        return Err(format!("a stock run printed heapmpi reports: {lines:?}"));
    }
    Ok(())
}

/// The stock reference of `p` under `srun` (None if it failed: recorded).
fn srun_stock(c: &Cluster, fl: &mut Failures, f: Flavour, p: &Program) -> Option<Output> {
    let case = format!("{} {} srun stock (reference)", p.name, f.name());
    let prog = match compile(p.name, f, Mode::Stock) {
        Ok(prog) => prog,
        Err(e) => {
            fl.fail(&case, e);
            return None;
        }
    };
    let out = c.srun(f, &[prog.as_os_str()], &STATS);
    let mut stock = None;
    fl.record(&case, out, |o| {
        check_stock(o, NRANKS, p.verdict).map_err(|e| {
            format!("{e}\nthe program fails under srun with the stock MPI: not heapmpi's doing")
        })?;
        no_report(o)?;
        stock = Some(o.clone());
        Ok(())
    });
    stock
}

// ---------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------

/// `srun -n 2 --mpi=pmix|pmi2`: stock, `heapmpi-exec`, `--wrap` build.
#[test]
fn srun_direct_launch() {
    let modes = [Mode::Stock, Mode::Wrap];
    with_cluster("srun_direct_launch", "srun", &modes, |c, flavours, fl| {
        for &f in flavours {
            for p in &PROGRAMS {
                let Some(stock) = srun_stock(c, fl, f, p) else {
                    continue;
                };
                let prog = compile(p.name, f, Mode::Stock).unwrap();
                let exec = heapmpi_exec();
                fl.record(
                    &format!("{} {} srun heapmpi-exec", p.name, f.name()),
                    c.srun(f, &[exec.as_os_str(), prog.as_os_str()], &STATS),
                    |o| check_heapmpi(o, &stock, p),
                );
                let case = format!("{} {} srun --wrap build", p.name, f.name());
                match compile(p.name, f, Mode::Wrap) {
                    Ok(wrapped) => {
                        fl.record(&case, c.srun(f, &[wrapped.as_os_str()], &STATS), |o| {
                            check_heapmpi(o, &stock, p)
                        })
                    }
                    Err(e) => fl.fail(&case, e),
                }
            }
        }
    });
}

/// The launch lines of the batch script for one program: the MPI's own
/// launcher stock and through heapmpi-exec, then srun through
/// heapmpi-exec; each is a `run NAME COMMAND...` of the script.
fn batch_runs(f: Flavour, prog: &Path) -> [(&'static str, String); 3] {
    let exec = heapmpi_exec();
    let launcher = f.launcher();
    [
        ("mpirun-stock", format!("{launcher} {}", prog.display())),
        (
            "mpirun-heapmpi-exec",
            format!("{launcher} {} {}", exec.display(), prog.display()),
        ),
        (
            "srun-heapmpi-exec",
            format!(
                "srun {} {} {}",
                mpi_plugin(f),
                exec.display(),
                prog.display()
            ),
        ),
    ]
}

/// What one `run` of the batch script left: `NAME.{out,err,rc}` in `dir`
/// (`NAME.rc`: exit status, start and end time in seconds).
fn batch_output(dir: &Path, name: &str, command: &str) -> Result<Output, String> {
    let read = |ext: &str| std::fs::read_to_string(dir.join(format!("{name}.{ext}")));
    let rc = read("rc").map_err(|e| format!("{name}.rc: {e}: the job never finished this run"))?;
    let bad = || format!("{name}.rc holds {rc:?}, not `status start end`");
    let f: Vec<&str> = rc.split_whitespace().collect();
    let [status, t0, t1] = f[..] else {
        return Err(bad());
    };
    let status: i32 = status.parse().map_err(|_| bad())?;
    let secs = |t: &str| t.parse::<f64>().map_err(|_| bad());
    Ok(Output {
        desc: format!("(in the batch script) {command}"),
        status: ExitStatus::from_raw((status & 0xff) << 8),
        stdout: read("out").unwrap_or_default(),
        stderr: read("err").unwrap_or_default(),
        timed_out: false,
        elapsed: Duration::from_secs_f64((secs(t1)? - secs(t0)?).max(0.0)),
    })
}

/// An `sbatch` script runs every program with `mpirun`/`mpiexec` (stock
/// and through `heapmpi-exec`) and with `srun heapmpi-exec`; the stock run
/// inside the allocation is the reference.
#[test]
fn sbatch_script() {
    with_cluster(
        "sbatch_script",
        "sbatch",
        &[Mode::Stock],
        |c, flavours, fl| {
            for &f in flavours {
                let dir = c.dir.join("jobs").join(f.name());
                std::fs::create_dir_all(&dir).unwrap();
                // The script a user would write (with heapmpi's wrappers on
                // PATH, `heapmpi-exec`): `#SBATCH` options, then launches.
                let mut script = format!(
                    "#!/bin/bash\n\
                 #SBATCH --job-name=heapmpi-{name}\n\
                 #SBATCH --ntasks={NRANKS}\n\
                 #SBATCH --time=5\n\
                 #SBATCH --output={dir}/job.out\n\
                 #SBATCH --error={dir}/job.err\n\
                 # Each launch into NAME.out and NAME.err; its exit status, start\n\
                 # and end time into NAME.rc.\n\
                 run() {{\n\
                 \x20   local name=$1 t0=$EPOCHREALTIME; shift\n\
                 \x20   \"$@\" >\"$name.out\" 2>\"$name.err\"\n\
                 \x20   echo \"$? $t0 $EPOCHREALTIME\" >\"$name.rc\"\n\
                 }}\n\
                 cd {dir}\n",
                    name = f.name(),
                    dir = dir.display(),
                );
                let mut expected = Vec::new();
                for p in &PROGRAMS {
                    let prog = match compile(p.name, f, Mode::Stock) {
                        Ok(prog) => prog,
                        Err(e) => {
                            fl.fail(&format!("{} {} sbatch", p.name, f.name()), e);
                            continue;
                        }
                    };
                    let runs = batch_runs(f, &prog);
                    for (how, line) in &runs {
                        let _ = writeln!(script, "run {}.{how} {line}", p.name);
                    }
                    expected.push((p, runs));
                }
                let path = dir.join("job.sh");
                std::fs::write(&path, &script).unwrap();
                // HEAPMPI_STATS=1 (and, for Open MPI's mpirun as root, its
                // consent) only in sbatch's environment: Slurm passes it to the
                // script, the launchers to the ranks.
                let mut cmd = c.command("sbatch");
                cmd.arg("--wait")
                    .arg(&path)
                    .envs(STATS)
                    .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                    .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
                let job_case = format!("{} sbatch --wait job.sh", f.name());
                let log = |n: &str| std::fs::read_to_string(dir.join(n)).unwrap_or_default();
                match run_command(cmd, Duration::from_secs(300)) {
                    Ok(o) if o.status.success() => {
                        fl.passed(&job_case, &format!("{:.1} s", o.elapsed.as_secs_f64()))
                    }
                    Ok(o) => {
                        fl.fail(
                            &job_case,
                            format!(
                                "sbatch --wait failed\n{}\n--- job.out\n{}\n--- job.err\n{}",
                                o.report(),
                                log("job.out"),
                                log("job.err")
                            ),
                        );
                        continue;
                    }
                    Err(e) => {
                        fl.fail(&job_case, e);
                        continue;
                    }
                }
                for (p, [stock_run, heap_runs @ ..]) in expected {
                    let (how, line) = stock_run;
                    let case = format!("{} {} sbatch: {how} (reference)", p.name, f.name());
                    let mut stock = None;
                    fl.record(
                        &case,
                        batch_output(&dir, &format!("{}.{how}", p.name), &line),
                        |o| {
                            check_stock(o, NRANKS, p.verdict).map_err(|e| {
                                format!(
                                "{e}\nthe program fails with the stock MPI: not heapmpi's doing"
                            )
                            })?;
                            no_report(o)?;
                            stock = Some(o.clone());
                            Ok(())
                        },
                    );
                    let Some(stock) = stock else {
                        continue;
                    };
                    for (how, line) in heap_runs {
                        let case = format!("{} {} sbatch: {how}", p.name, f.name());
                        fl.record(
                            &case,
                            batch_output(&dir, &format!("{}.{how}", p.name), &line),
                            |o| check_heapmpi(o, &stock, p),
                        );
                    }
                }
            }
        },
    );
}
