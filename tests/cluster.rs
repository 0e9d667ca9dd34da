//! Across real nodes: the conformance programs on a cluster of namespace
//! nodes (`tests/cluster/cluster`), compared with the stock MPI on the same
//! nodes.
//!
//! Each node has its own hostname, `/dev/shm`, `/tmp`, System V IPC and
//! network interface; the MPIs' launchers reach the other nodes through the
//! cluster's `rsh` (Open MPI's rsh agent, MPICH's ssh launcher), and the
//! ranks of different nodes talk over real TCP. So `MPI_COMM_TYPE_SHARED`
//! really splits, every node negotiates its own heap, and heapmpi's
//! routing sends everything between nodes to the real MPI.
//!
//! The layouts ([`LAYOUTS`]): 2 nodes of 2 ranks, and 3 nodes of 2 + 1 + 1
//! (a node with a lone rank, which has no heap to share), each with block
//! placement (a node's ranks consecutive) and round-robin placement
//! (`--map-by node`; MPICH's `-hosts a,b`: a node's ranks are not
//! consecutive, which pretend nodes never are). For every program and MPI
//! the stock run on the cluster is the reference (its stdout does not
//! depend on the placement: the programs print only what MPI makes
//! deterministic, gathered to rank 0; where stock's transport shows
//! through, [`Program::placed`], per layout), and every heapmpi run must print
//! exactly the same. The default run takes a few programs of each family
//! ([`always`]: the ones whose matching, communicators or leaders a second
//! node changes most), each on round-robin 2 x 2 both ways in and one other
//! layout through one way in (spread over the programs as `quick_pick`
//! spreads the single-node matrix's larger configurations);
//! `tests/run --full` takes every program, every layout, both ways in.
//! MPICH runs with one rank per node ([`MPICH_LAYOUTS`] says why), and in a
//! release run only, but for the test of a node that dies
//! ([`finishing_flavours`]).
//!
//! Left out where stock itself fails across these nodes (see [`left_out`]).
//!
//! Run: `HEAPMPI_TEST_NO_BUILD=1 MPICC=mpicc.openmpi cargo test --profile
//! ci-tests --target-dir target/openmpi --test cluster` (as root). By hand:
//! `tests/cluster/cluster start target/c 2`, then
//! `tests/cluster/cluster exec target/c node1 wrappers/heapmpirun --host
//! node1:2,node2:2 -np 4 ./app`, and `tests/cluster/cluster stop target/c`.

use heapmpi_testkit as common;
#[path = "cluster/rig.rs"]
mod rig;

use common::*;
use rig::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A conformance program: its name, the word of its "rank N: <verdict>
/// ok" lines, its arguments, whether a default run takes it (a release
/// run takes every one), and whether stock's output depends on which
/// ranks share a node.
struct Program {
    name: &'static str,
    verdict: &'static str,
    args: &'static [&'static str],
    quick: bool,
    /// Stock prints something its transport decides: `p2p_status` prints
    /// a completed send's status, which Open MPI fills in over TCP
    /// (source and tag) and leaves empty through its shared memory. Such
    /// a program's stock reference is run on each layout, not once per
    /// rank count.
    placed: bool,
}

/// A program only a release run (`--full`) takes across nodes.
const fn prog(name: &'static str, verdict: &'static str) -> Program {
    Program {
        name,
        verdict,
        args: &[],
        quick: false,
        placed: false,
    }
}

/// A program every run takes across nodes.
const fn always(name: &'static str, verdict: &'static str) -> Program {
    Program {
        quick: true,
        ..prog(name, verdict)
    }
}

/// Why stock `f` cannot run `program` across these nodes, if it cannot.
fn left_out(program: &str, f: Flavour) -> Option<&'static str> {
    // Open MPI 4.1 has no one-sided component for its TCP transport:
    // `MPI_Win_allocate` and `MPI_Win_create` fail with MPI_ERR_WIN across
    // nodes, stock.
    if f.is_openmpi() && program.starts_with("rma_") {
        return Some("stock Open MPI 4.1 creates no window across nodes over TCP");
    }
    if matches!(program, "rma_basic" | "rma_comms") {
        // rma_basic's section G and rma_comms's section B allocate a
        // shared window on MPI_COMM_WORLD, which MPI allows only when
        // every rank shares one node (stock MPICH then reports segment
        // sizes it cannot have: rma_comms failed so stock in each of
        // three release runs, and rma_basic crashes).
        return Some("it needs MPI_Win_allocate_shared on MPI_COMM_WORLD");
    }
    if matches!(program, "p2p_mpi4" | "coll_persistent") && !declares_mpi4(f) {
        return Some("the MPI declares no MPI-4.0 routines (Open MPI 4.1)");
    }
    None
}

/// The MPIs a run takes across nodes where a program must finish: both
/// in a release run (`--full`), Open MPI alone in a default run. Stock
/// MPICH 4.0.2 hangs now and then in `MPI_Finalize` across these nodes
/// even with one rank per node (1 `sbatch` job in 6 under `srun --mpi=pmi2`,
/// after printing everything; see [`MPICH_LAYOUTS`]), and a default run
/// must not fail by luck. The test of a node that dies runs both: its
/// ranks never reach `MPI_Finalize`.
fn finishing_flavours() -> Vec<Flavour> {
    available_flavours()
        .into_iter()
        .filter(|f| f.is_openmpi() || full())
        .collect()
}

/// Runs `programs` over the layouts on one cluster of 3 nodes; `test`
/// names the test in reports.
fn matrix(test: &str, programs: &[Program]) {
    let mut fl = Failures::new();
    let cl = match Cluster::start(test, 3) {
        Ok(c) => c,
        Err(e) => {
            fl.fail(test, e);
            fl.finish(test);
            return;
        }
    };
    for p in programs.iter().filter(|p| p.quick || full()) {
        for f in finishing_flavours() {
            let layouts = layouts(f);
            let (pick, quick_mode) = quick_pick(p.name, layouts.len() - 1);
            if let Some(why) = left_out(p.name, f) {
                eprintln!("left out: {} on {} across nodes: {why}", p.name, f.name());
                continue;
            }
            // The stock reference on the cluster, per rank count (the same
            // for every layout of that count), or per layout for a program
            // whose stock output depends on the placement.
            let mut stock_by: Vec<(String, Option<Output>)> = Vec::new();
            for (li, &layout) in layouts.iter().enumerate() {
                let quick = [quick_mode];
                let modes: &[Mode] = if full() || li == 0 {
                    &HEAPMPI_MODES
                } else if li - 1 == pick {
                    &quick
                } else {
                    continue;
                };
                let n = layout.ranks();
                let key = if p.placed {
                    layout.name()
                } else {
                    n.to_string()
                };
                let stock = match stock_by.iter().find(|(k, _)| *k == key) {
                    Some((_, s)) => s.clone(),
                    None => {
                        let case = Case::new(p.name, f, Mode::Stock, n).args(p.args);
                        let name = format!("{} on {}", case.name(), layout.name());
                        let out = run_on(&cl, &case, layout);
                        let s = match out {
                            Err(e) => {
                                fl.fail(&name, e);
                                None
                            }
                            Ok(o) => {
                                let ok = check_stock(&o, n, p.verdict);
                                let passed = ok.is_ok();
                                fl.check(&format!("{name} (reference run)"), &o, ok);
                                passed.then_some(o)
                            }
                        };
                        stock_by.push((key, s.clone()));
                        s
                    }
                };
                let Some(stock) = stock else { continue };
                for &mode in modes {
                    let case = Case::new(p.name, f, mode, n).args(p.args).env(&STATS);
                    let name = format!("{} on {}", case.name(), layout.name());
                    fl.record(&name, run_on(&cl, &case, layout), |o| {
                        check_same_as_stock(o, &stock)?;
                        check_nodes(o, layout)
                    });
                }
            }
        }
    }
    if let Err(e) = cl.stop() {
        fl.fail(&format!("{test}: stopping the cluster"), e);
    }
    fl.finish(test);
}

/// Every rank's report: a rank that shares its node with another has an
/// active heap, a lone rank has none (nothing to share), and the number
/// of ranks each report names as its node's matches the layout.
fn check_nodes(o: &Output, layout: Layout) -> Result<(), String> {
    let lines = status_lines(&o.stderr);
    if lines.len() != layout.ranks() {
        return Err(format!(
            "{} status lines for {} ranks",
            lines.len(),
            layout.ranks()
        ));
    }
    let active = lines
        .iter()
        .filter(|l| l.state == HeapState::Active)
        .count();
    let sharing: usize = layout.slots.iter().filter(|&&n| n > 1).sum();

    if active != sharing {
        return Err(format!(
            "{active} ranks report an active heap; the layout has {sharing} ranks \
             sharing a node"
        ));
    }
    if sharing == 0 {
        // Every rank alone on its node: no heap, no point-to-point engine
        // to report on.
        return Ok(());
    }
    check_nothing_left(o)
}

/// Point-to-point across nodes: ordering and matching (the wildcard
/// receives whose senders are remote and local at once), nonblocking
/// completion, probes, communicators, persistent requests, cancel, large
/// messages, status fields, handles, random traffic, MPI-4 routines.
#[test]
fn cluster_point_to_point() {
    matrix(
        "cluster_point_to_point",
        &[
            always("p2p_order", "order"),
            prog("p2p_nonblocking", "nonblocking"),
            always("p2p_probe", "probe"),
            always("p2p_comms", "comms"),
            prog("p2p_persistent", "persistent"),
            prog("p2p_cancel", "cancel"),
            prog("p2p_large", "large"),
            Program {
                placed: true,
                ..prog("p2p_status", "status")
            },
            prog("p2p_handles", "handles"),
            Program {
                args: &["501", "502"],
                ..prog("p2p_random", "random")
            },
            prog("p2p_mpi4", "mpi4"),
            prog("p2p_fortran", "fortran"),
        ],
    );
}

/// Collectives across nodes: blocking (through the nodes' leaders),
/// nonblocking, persistent and neighbourhood collectives, and
/// communicators made and split across nodes.
#[test]
fn cluster_collectives() {
    matrix(
        "cluster_collectives",
        &[
            prog("coll_move", "move"),
            always("coll_reduce", "reduce"),
            always("coll_comms", "comms"),
            prog("coll_nonblocking", "nonblocking"),
            prog("coll_persistent", "persistent"),
            prog("coll_neighbor", "neighbor"),
            prog("coll_sweep", "csweep"),
            prog("coll_fortran", "fortran"),
        ],
    );
}

/// One-sided across nodes (MPICH: Open MPI 4.1 has no window across
/// nodes over TCP), and what only a second node exercises
/// (`tests/c/xnode_mix.c`).
#[test]
fn cluster_one_sided_and_mixed() {
    matrix(
        "cluster_one_sided_and_mixed",
        &[
            prog("rma_basic", "rma"),
            prog("rma_atomic", "atomic"),
            always("rma_ga", "ga"),
            prog("rma_comms", "comms"),
            always("xnode_mix", "xnode"),
        ],
    );
}

/// The cluster itself: nodes with their own hostnames and `/dev/shm`, a
/// network between them, and nothing left after `stop`.
#[test]
fn cluster_nodes_are_separate_and_stop_clean() {
    let test = "cluster_nodes_are_separate_and_stop_clean";
    let mut fl = Failures::new();
    let cl = match Cluster::start(test, 3) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    let holders: Vec<i32> = (1..=cl.nodes)
        .map(|i| format!("node{i}"))
        .chain(["switch".to_string()])
        .filter_map(|n| std::fs::read_to_string(cl.dir.join(format!("{n}.pid"))).ok())
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let script = "hostname; echo mark > /dev/shm/heapmpi-cluster-mark; \
                  ls /dev/shm | wc -l; ls /tmp | wc -l";
    let o = run_command(cl.exec("node1", &["sh", "-c", script]), job_timeout());
    fl.record("node1: hostname, a file in its /dev/shm", o, |o| {
        check_success(o)?;
        let l: Vec<&str> = o.stdout.lines().collect();
        if l != ["node1", "1", "0"] {
            return Err(format!("expected node1, 1, 0; got {l:?}"));
        }
        Ok(())
    });
    let script = "hostname; ls /dev/shm | wc -l; \
                  { exec 3<>/dev/tcp/node1/9; } 2>&1 | grep -q refused && echo 1";
    let o = run_command(cl.exec("node2", &["bash", "-c", script]), job_timeout());
    fl.record(
        "node2: its own hostname and /dev/shm, node1 reachable",
        o,
        |o| {
            let l: Vec<&str> = o.stdout.lines().collect();
            if l != ["node2", "0", "1"] {
                return Err(format!(
                    "expected node2, 0 (node1's file not seen), 1 (node1 answers: \
                 connection refused); got {l:?}"
                ));
            }
            Ok(())
        },
    );
    if Path::new("/dev/shm/heapmpi-cluster-mark").exists() {
        fl.fail("the machine's /dev/shm", "a node's file reached it");
    } else {
        fl.passed("the machine's /dev/shm", "untouched");
    }
    match cl.stop() {
        Err(e) => fl.fail("stop", e),
        Ok(()) => {
            std::thread::sleep(Duration::from_millis(100));
            let alive: Vec<&i32> = holders.iter().filter(|&&p| !process_gone(p)).collect();
            if holders.len() != 4 || !alive.is_empty() {
                fl.fail(
                    "stop",
                    format!("holders {holders:?}: still running {alive:?}"),
                );
            } else {
                fl.passed("stop", "every node's processes gone");
            }
        }
    }
    fl.finish(test);
}

/// `HEAPMPI_DISABLE=1` on node2 only (set by a script each rank starts
/// through, as a site's per-node environment would): node2's ranks run
/// without a heap, node1's still share theirs, every collective still
/// agrees across nodes, and the output is stock's. Open MPI on 2 + 2
/// (both placements, one way in each); MPICH on 1 + 1.
#[test]
fn cluster_a_node_that_cannot_accelerate() {
    let test = "cluster_a_node_that_cannot_accelerate";
    let mut fl = Failures::new();
    let cl = match Cluster::start(test, 2) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    let script = "if [ \"$(hostname)\" = node2 ]; then export HEAPMPI_DISABLE=1; fi; \
                  exec \"$@\"";
    for f in finishing_flavours() {
        let programs = [
            if f.is_openmpi() {
                ("coll_reduce", "reduce")
            } else {
                ("coll_comms", "comms")
            },
            ("p2p_order", "order"),
        ];
        let runs: Vec<(Layout, Mode)> = if f.is_openmpi() {
            vec![(LAYOUTS[0], Mode::Preload), (LAYOUTS[1], Mode::Wrap)]
        } else {
            vec![(MPICH_LAYOUTS[0], Mode::Preload)]
        };
        for (program, verdict) in programs {
            let n = runs[0].0.ranks();
            let stock_case = Case::new(program, f, Mode::Stock, n);
            let name = format!("{} on {}", stock_case.name(), runs[0].0.name());
            let stock = match run_on(&cl, &stock_case, runs[0].0) {
                Err(e) => {
                    fl.fail(&name, e);
                    continue;
                }
                Ok(o) => {
                    let ok = check_stock(&o, n, verdict);
                    let passed = ok.is_ok();
                    fl.check(&format!("{name} (reference run)"), &o, ok);
                    if !passed {
                        continue;
                    }
                    o
                }
            };
            for &(layout, mode) in &runs {
                let case = Case::new(program, f, mode, n).env(&STATS);
                let name = format!(
                    "{} on {}, HEAPMPI_DISABLE=1 on node2",
                    case.name(),
                    layout.name()
                );
                let res = (|| {
                    if mode != Mode::Stock {
                        ensure_library(f)?;
                    }
                    let prog = compile(program, f, mode)?;
                    let prog = prog.display().to_string();
                    let args = ["-c", script, "sh", prog.as_str()];
                    let cmd = cluster_command(&cl, f, mode, layout, Path::new("sh"), &args, &STATS);
                    run_command(cmd, job_timeout())
                })();
                fl.record(&name, res, |o| {
                    check_same_as_stock(o, &stock)?;
                    let lines = status_lines(&o.stderr);
                    for r in 0..n {
                        let node = layout.node_of_rank(r);
                        let sharing = layout.slots[node - 1] > 1;
                        let want = if node == 1 && sharing {
                            HeapState::Active
                        } else {
                            HeapState::Inactive
                        };
                        let l = lines
                            .iter()
                            .find(|l| l.rank == Some(r))
                            .ok_or_else(|| format!("no status line of rank {r}"))?;
                        if l.state != want || (node == 2 && !l.line.contains("HEAPMPI_DISABLE")) {
                            return Err(format!(
                                "rank {r} (node{node}): expected {want:?}{}, got: {}",
                                if node == 2 { " by HEAPMPI_DISABLE" } else { "" },
                                l.line
                            ));
                        }
                    }
                    Ok(())
                });
            }
        }
    }
    if let Err(e) = cl.stop() {
        fl.fail("stopping the cluster", e);
    }
    fl.finish(test);
}

/// Every rank of node2 killed with SIGKILL in the middle of point-to-point
/// traffic, of collectives and (MPICH: Open MPI 4.1 has no window across
/// nodes) of one-sided epochs (`tests/c/transfer_until_killed.c`): the job
/// ends with the MPI's own error (no survivor on node1 keeps it alive
/// past the launcher's cleanup), and nothing of heapmpi is left on any
/// node (no rank process, nothing in any node's `/dev/shm`).
#[test]
fn cluster_a_node_dies() {
    let test = "cluster_a_node_dies";
    let mut fl = Failures::new();
    let cl = match Cluster::start(test, 2) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    let program = "transfer_until_killed";
    let mut i = 0;
    for f in available_flavours() {
        let layout = if f.is_openmpi() {
            LAYOUTS[0]
        } else {
            MPICH_LAYOUTS[0]
        };
        let kinds: &[&str] = if f.is_openmpi() {
            &["p2p", "coll"]
        } else {
            &["p2p", "coll", "rma"]
        };
        for kind in kinds {
            let mode = mode_for(i);
            i += 1;
            let case = Case::new(program, f, mode, layout.ranks()).env(&STATS);
            let name = format!("{} {kind} on {}: node2 killed", case.name(), layout.name());
            match kill_node2(&cl, &case, layout, kind) {
                Ok(info) => fl.passed(&name, &info),
                Err(e) => fl.fail(&name, e),
            }
        }
    }
    if let Err(e) = cl.stop() {
        fl.fail("stopping the cluster", e);
    }
    fl.finish(test);
}

/// Runs `case` (transfer_until_killed, traffic `kind`) on `layout`, kills
/// node2's ranks once it is under way, and checks the end.
fn kill_node2(cl: &Cluster, case: &Case, layout: Layout, kind: &str) -> Result<String, String> {
    ensure_library(case.flavour)?;
    let prog = compile(case.program, case.flavour, case.mode)?;
    let exe = prog
        .canonicalize()
        .map_err(|e| format!("{}: {e}", prog.display()))?;
    let args = ["60", kind];
    let cmd = cluster_command(cl, case.flavour, case.mode, layout, &exe, &args, case.env);
    let mut job = Job::spawn(cmd)?;
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    while !job.stdout_so_far().lines().any(|l| l.trim() == "ready") {
        if !job.running() || std::time::Instant::now() > deadline {
            job.kill_tree();
            let o = job.wait(Duration::ZERO);
            return Err(format!("no 'ready' (or the job ended):\n{}", o.report()));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let victims = cl.processes("node2", &exe);
    let want = layout.slots[1];
    if victims.len() != want {
        job.kill_tree();
        return Err(format!(
            "expected {want} rank processes on node2, found {victims:?}"
        ));
    }
    for &p in &victims {
        // SAFETY: plain kill(2) of a process we just found.
        unsafe { libc::kill(p, libc::SIGKILL) };
    }
    let o = job.wait(job_timeout());
    if o.timed_out {
        return Err(format!(
            "the job outlived its node2 by {:?}:\n{}",
            job_timeout(),
            o.report()
        ));
    }
    if o.status.success() {
        return Err(format!("the job exited 0 without node2:\n{}", o.report()));
    }
    std::thread::sleep(Duration::from_millis(300));
    let mut left = Vec::new();
    for node in ["node1", "node2"] {
        let procs = cl.processes(node, &exe);
        if !procs.is_empty() {
            left.push(format!("{node}: rank processes {procs:?}"));
        }
        let shm: Vec<String> = cl
            .dev_shm(node)?
            .into_iter()
            .filter(|f| f.contains("heapmpi"))
            .collect();
        if !shm.is_empty() {
            left.push(format!("{node}: /dev/shm {shm:?}"));
        }
    }
    if !left.is_empty() {
        return Err(format!("left behind: {}\n{}", left.join("; "), o.report()));
    }
    Ok(format!(
        "ended ({}) {:.1} s after start, nothing left",
        describe_status(o.status),
        o.elapsed.as_secs_f64()
    ))
}

/// A Slurm cluster on the namespace nodes (`tests/slurm/cluster start DIR
/// NODES`: slurmctld on node1, one slurmd per node with its own
/// `NodeName`); stopped when dropped.
struct Slurm {
    dir: PathBuf,
    stopped: bool,
}

impl Slurm {
    fn script() -> PathBuf {
        repo_root().join("tests").join("slurm").join("cluster")
    }

    /// Its directory must be seen by every node (not under /tmp, which
    /// each node has its own of) and short enough for the Unix sockets
    /// Slurm makes there (108 bytes; the deepest adds 45).
    fn start(cl: &Cluster) -> Result<Slurm, String> {
        let name = format!("slurm-{}", std::process::id());
        let mut dir = repo_root().join("target").join("cluster").join(&name);
        if dir.as_os_str().len() > 56 {
            dir = PathBuf::from("/var/tmp").join(format!("heapmpi-{name}"));
        }
        let _ = std::fs::remove_dir_all(&dir);
        let mut cmd = Command::new(Slurm::script());
        cmd.arg("start").arg(&dir).arg(&cl.dir);
        clean_env(&mut cmd);
        let out = run_command(cmd, Duration::from_secs(120))?;
        if !out.status.success() {
            return Err(format!(
                "the Slurm cluster did not start:\n{}",
                out.report()
            ));
        }
        Ok(Slurm {
            dir,
            stopped: false,
        })
    }

    /// `CMD...` on node1 as a client of this cluster.
    fn on_node1(&self, cl: &Cluster, argv: &[&str]) -> Command {
        let conf = format!("SLURM_CONF={}", self.dir.join("slurm.conf").display());
        let mut all = vec!["env", conf.as_str()];
        all.extend_from_slice(argv);
        cl.exec("node1", &all)
    }

    fn stop(mut self) -> Result<(), String> {
        self.stopped = true;
        let mut cmd = Command::new(Slurm::script());
        cmd.arg("stop").arg(&self.dir);
        let out = run_command(cmd, Duration::from_secs(60))?;
        if !out.status.success() {
            return Err(format!(
                "stopping the Slurm cluster failed:\n{}",
                out.report()
            ));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        Ok(())
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        if !self.stopped {
            let _ = Command::new(Slurm::script())
                .arg("stop")
                .arg(&self.dir)
                .status();
        }
    }
}

/// Slurm across two nodes: `srun -N 2` starts the ranks itself (Open MPI:
/// 4 ranks, `--distribution=cyclic` so a node's ranks are not
/// consecutive, `--mpi=pmix`; MPICH: 2 ranks, `--mpi=pmi2`), stock,
/// through `heapmpi-exec` and as the `--wrap` build; and a batch script
/// submitted with `sbatch -N 2 --wait` runs `srun heapmpi-exec` inside its
/// allocation. Every heapmpi run prints stock's stdout, with each node's
/// heap where two ranks share it. `HEAPMPI_STATS=1` is only in `srun`'s
/// (and `sbatch`'s) environment: Slurm brings it to the ranks.
#[test]
fn cluster_srun_and_sbatch_across_nodes() {
    let test = "cluster_srun_and_sbatch_across_nodes";
    let mut fl = Failures::new();
    let cl = Cluster::start(test, 2).unwrap_or_else(|e| panic!("{e}"));
    let slurm = match Slurm::start(&cl) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    let exec = repo_root().join("wrappers").join("heapmpi-exec");
    let exec = exec.display().to_string();
    for f in finishing_flavours() {
        let (layout, n, plugin, extra): (Layout, &str, &str, &[&str]) = if f.is_openmpi() {
            (RR_2X2, "4", "--mpi=pmix", &["--distribution=cyclic"])
        } else {
            (MPICH_LAYOUTS[0], "2", "--mpi=pmi2", &[])
        };
        let program = "p2p_order";
        let srun = |prog: &str, wrapped: bool| -> Vec<String> {
            let mut v: Vec<String> = ["srun", "-N", "2", "-n", n, plugin, "--kill-on-bad-exit=1"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            v.extend(extra.iter().map(|s| s.to_string()));
            if wrapped {
                v.push(exec.clone());
            }
            v.push(prog.to_string());
            v
        };
        let run = |argv: Vec<String>| -> Result<Output, String> {
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            let mut cmd = slurm.on_node1(&cl, &argv);
            cmd.envs(STATS);
            run_command(cmd, job_timeout())
        };
        let stock_prog = match compile(program, f, Mode::Stock) {
            Ok(p) => p.display().to_string(),
            Err(e) => {
                fl.fail(program, e);
                continue;
            }
        };
        let name = format!("{program} {} srun -N 2 -n {n} stock", f.name());
        let stock = match run(srun(&stock_prog, false)) {
            Err(e) => {
                fl.fail(&name, e);
                continue;
            }
            Ok(o) => {
                let ok = check_stock(&o, layout.ranks(), "order");
                let passed = ok.is_ok();
                fl.check(&name, &o, ok);
                if !passed {
                    continue;
                }
                o
            }
        };
        let wrap_prog = ensure_library(f)
            .and_then(|()| compile(program, f, Mode::Wrap))
            .map(|p| p.display().to_string());
        let mut runs = vec![("heapmpi-exec", Ok(srun(&stock_prog, true)))];
        runs.push(("--wrap build", wrap_prog.map(|p| srun(&p, false))));
        for (how, argv) in runs {
            let name = format!("{program} {} srun -N 2 -n {n} {how}", f.name());
            fl.record(&name, argv.and_then(run), |o| {
                check_same_as_stock(o, &stock)?;
                check_nodes(o, layout)
            });
        }
        // The batch script, as a user would write it.
        let out = slurm.dir.join(format!("batch-{}.out", f.name()));
        let script = slurm.dir.join(format!("batch-{}.sh", f.name()));
        // Inside the allocation srun takes its nodes from the job.
        let body = format!(
            "#!/bin/sh\n#SBATCH -N 2\n#SBATCH -n {n}\nexec srun {plugin} {} {exec} {stock_prog}\n",
            extra.join(" ")
        );
        let name = format!("{program} {} sbatch -N 2 --wait", f.name());
        if let Err(e) = std::fs::write(&script, body) {
            fl.fail(&name, e.to_string());
            continue;
        }
        let script_s = script.display().to_string();
        let out_s = format!("--output={}", out.display());
        let mut cmd = slurm.on_node1(&cl, &["sbatch", "--wait", "-N", "2", &out_s, &script_s]);
        cmd.envs(STATS);
        fl.record(&name, run_command(cmd, job_timeout()), |o| {
            check_success(o)?;
            let text =
                std::fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()))?;
            // The job's output file holds the ranks' stdout and stderr.
            let mine: String = text
                .lines()
                .filter(|l| !l.starts_with("heapmpi["))
                .map(|l| format!("{l}\n"))
                .collect();
            if mine != stock.stdout {
                return Err(format!(
                    "the batch job's output is not stock's:\n{text}\n--- stock ---\n{}",
                    stock.stdout
                ));
            }
            let active = status_lines(&text)
                .iter()
                .filter(|l| l.state == HeapState::Active)
                .count();
            let want: usize = layout.slots.iter().filter(|&&k| k > 1).sum();
            if active != want {
                return Err(format!(
                    "{active} ranks report an active heap, expected {want}"
                ));
            }
            Ok(())
        });
    }
    if let Err(e) = slurm.stop() {
        fl.fail("stopping the Slurm cluster", e);
    }
    if let Err(e) = cl.stop() {
        fl.fail("stopping the cluster", e);
    }
    fl.finish(test);
}

/// `MPI_Comm_spawn` placing its children on the other node
/// (`tests/c/spawn_children.c --host node2`: the info key `host`, and each
/// child checks that it runs there): two parents share node1's heap, the
/// two children share node2's, and the parents and children talk over
/// the inter-communicator and its merge, which span both nodes and go to
/// the real MPI. Open MPI, 2 parents on node1 of `--host
/// node1:2,node2:2`, both ways in. Left out on MPICH: Debian's MPICH
/// 4.0.2 (`ch4:ucx`) cannot spawn at all, stock, even on one node ("Error
/// in spawn call"; `tests/foundation.rs` runs spawning on Open MPI for
/// the same reason). The verdict lines are stock's, and the reports show
/// one heap of two on each node.
#[test]
fn cluster_spawn_children_on_the_other_node() {
    let test = "cluster_spawn_children_on_the_other_node";
    let mut fl = Failures::new();
    let cl = Cluster::start(test, 2).unwrap_or_else(|e| panic!("{e}"));
    for f in finishing_flavours() {
        if !f.is_openmpi() {
            eprintln!("left out: spawning on {}: it cannot spawn, stock", f.name());
            continue;
        }
        // Parents (all on node1) and children (all on node2).
        let (parents, children) = (2, 2);
        let nchild = children.to_string();
        let args = [nchild.as_str(), "--host", "node2"];
        let run = |mode: Mode| -> Result<Output, String> {
            if mode != Mode::Stock {
                ensure_library(f)?;
            }
            let prog = compile("spawn_children", f, mode)?;
            let mut argv = launcher_argv(f, mode);
            let hosts = format!("node1:{parents},node2:{children}");
            argv.extend(
                ["--host", &hosts, "--map-by", "slot", "--bind-to", "none"].map(String::from),
            );
            argv.extend(["-np".to_string(), parents.to_string()]);
            argv.extend(["-x", "HEAPMPI_STATS"].map(String::from));
            argv.push(prog.display().to_string());
            argv.extend(args.iter().map(|a| a.to_string()));
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            let mut cmd = cl.exec("node1", &argv);
            launcher_env(&mut cmd, f, mode);
            cmd.envs(STATS);
            run_command(cmd, job_timeout())
        };
        let name = format!(
            "spawn_children {} stock {parents} parents on node1, {children} children on node2",
            f.name()
        );
        let nproc = parents + children;
        let stock = match run(Mode::Stock) {
            Err(e) => {
                fl.fail(&name, e);
                continue;
            }
            Ok(o) => {
                let ok = check_spawn_stock(&o, nproc);
                let lines = ok.clone().unwrap_or_default();
                let passed = ok.is_ok();
                fl.check(&format!("{name} (reference run)"), &o, ok.map(|_| ()));
                if !passed {
                    continue;
                }
                lines
            }
        };
        for mode in HEAPMPI_MODES {
            let name = format!(
                "spawn_children {} {} {parents} parents on node1, {children} children on node2",
                f.name(),
                mode.name()
            );
            fl.record(&name, run(mode), |o| {
                check_success(o)?;
                let got = spawn_verdicts(&o.stdout);
                if got != stock {
                    return Err(format!("lines differ from stock's: {got:?} vs {stock:?}"));
                }
                // Every process's report (Open MPI brings the spawned
                // job's stderr back too): two heaps of two (node1's
                // parents, node2's children: local=0/2 and 1/2 twice).
                let lines = status_lines(&o.stderr);
                let mut locals: Vec<String> = lines
                    .iter()
                    .filter(|l| l.state == HeapState::Active)
                    .filter_map(|l| l.line.split_whitespace().find(|w| w.starts_with("local=")))
                    .map(str::to_string)
                    .collect();
                locals.sort();
                let want = ["local=0/2", "local=0/2", "local=1/2", "local=1/2"];
                if lines.len() != nproc || locals != want {
                    return Err(format!(
                        "expected {nproc} reports, the active ones {want:?}; got {} reports, \
                         active {locals:?}",
                        lines.len()
                    ));
                }
                Ok(())
            });
        }
    }
    if let Err(e) = cl.stop() {
        fl.fail("stopping the cluster", e);
    }
    fl.finish(test);
}
