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
//! deterministic, gathered to rank 0), and every heapmpi run must print
//! exactly the same. The default run takes a few programs of each family
//! ([`always`]: the ones whose matching, communicators or leaders a second
//! node changes most), each on round-robin 2 x 2 both ways in and one other
//! layout through one way in (spread over the programs as `quick_pick`
//! spreads the single-node matrix's larger configurations);
//! `tests/run --full` takes every program, every layout, both ways in.
//! MPICH runs with one rank per node ([`MPICH_LAYOUTS`] says why).
//!
//! Left out where stock itself fails across these nodes (see [`left_out`]).
//!
//! Run: `HEAPMPI_TEST_NO_BUILD=1 MPICC=mpicc.openmpi cargo test --profile
//! ci-tests --target-dir target/openmpi --test cluster` (as root). By hand:
//! `tests/cluster/cluster start target/c 2`, then
//! `tests/cluster/cluster exec target/c node1 wrappers/heapmpirun --host
//! node1:2,node2:2 -np 4 ./app`, and `tests/cluster/cluster stop target/c`.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The cluster script.
fn script() -> PathBuf {
    repo_root().join("tests").join("cluster").join("cluster")
}

/// A running cluster; stopped (and checked empty) by [`Cluster::stop`], or
/// at least stopped when dropped.
struct Cluster {
    dir: PathBuf,
    nodes: usize,
    stopped: bool,
}

impl Cluster {
    /// Starts `nodes` nodes under `target/cluster/<tag>-<pid>`.
    fn start(tag: &str, nodes: usize) -> Result<Cluster, String> {
        let dir = repo_root()
            .join("target")
            .join("cluster")
            .join(format!("{tag}-{}", std::process::id()));
        let mut cmd = Command::new(script());
        cmd.arg("start").arg(&dir).arg(nodes.to_string());
        clean_env(&mut cmd);
        let out = run_command(cmd, Duration::from_secs(60))?;
        if !out.status.success() {
            return Err(format!("starting the cluster failed:\n{}", out.report()));
        }
        Ok(Cluster {
            dir,
            nodes,
            stopped: false,
        })
    }

    /// `cluster exec DIR NODE ARGV...`, with a clean environment.
    fn exec(&self, node: &str, argv: &[&str]) -> Command {
        let mut cmd = Command::new(script());
        cmd.arg("exec").arg(&self.dir).arg(node).args(argv);
        cmd.current_dir(repo_root());
        clean_env(&mut cmd);
        cmd
    }

    /// Stops the cluster: every process of every node is gone, and with
    /// them the namespaces, their mounts and interfaces.
    fn stop(mut self) -> Result<(), String> {
        self.stopped = true;
        let mut cmd = Command::new(script());
        cmd.arg("stop").arg(&self.dir);
        let out = run_command(cmd, Duration::from_secs(60))?;
        if !out.status.success() {
            return Err(format!("stopping the cluster failed:\n{}", out.report()));
        }
        if self.dir.exists() {
            return Err(format!("{} is still there after stop", self.dir.display()));
        }
        Ok(())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if !self.stopped {
            let _ = Command::new(script()).arg("stop").arg(&self.dir).status();
        }
    }
}

/// Where the ranks go.
#[derive(Clone, Copy, Debug)]
struct Layout {
    /// Ranks per node (`slots[i]` on node i + 1).
    slots: &'static [usize],
    /// Round-robin placement (else block).
    round_robin: bool,
}

const RR_2X2: Layout = Layout {
    slots: &[2, 2],
    round_robin: true,
};

/// Open MPI's layouts; the first is the one a default run takes both ways
/// in.
const LAYOUTS: [Layout; 4] = [
    RR_2X2,
    Layout {
        slots: &[2, 2],
        round_robin: false,
    },
    Layout {
        slots: &[2, 1, 1],
        round_robin: true,
    },
    Layout {
        slots: &[2, 1, 1],
        round_robin: false,
    },
];

/// MPICH's: one rank per node. Stock MPICH 4.0.2 (`ch4:ucx`) hangs in
/// `MPI_Finalize` across these nodes as soon as a node has two ranks (about
/// three runs in four of the 4-rank programs, 2 + 2 block or round-robin;
/// a program of Init, Alltoall, Barrier and Finalize alone does it too): the
/// ranks of one node wait in a PMI read, the other node's spin in UCX's TCP
/// progress. `UCX_TLS=tcp,self`, `UCX_NET_DEVICES=eth0` and
/// `MPIR_CVAR_NOLOCAL=1` change nothing. Three nodes of one rank hang
/// there too, now and then; two nodes of one rank never did.
const MPICH_LAYOUTS: [Layout; 1] = [Layout {
    slots: &[1, 1],
    round_robin: true,
}];

/// Programs a default run leaves to `--full` on MPICH: stock MPICH takes
/// 15-30 s for them on 2 nodes through UCX's TCP transport on an idle
/// machine (`p2p_comms`, `coll_reduce`), and 90 s, past the programs'
/// watchdog, on a loaded one.
const SLOW_ON_MPICH: [&str; 2] = ["p2p_comms", "coll_reduce"];

/// The layouts flavour `f` runs on across these nodes.
fn layouts(f: Flavour) -> &'static [Layout] {
    if f.is_openmpi() {
        &LAYOUTS
    } else {
        &MPICH_LAYOUTS
    }
}

impl Layout {
    fn ranks(self) -> usize {
        self.slots.iter().sum()
    }

    fn name(self) -> String {
        let s: Vec<String> = self.slots.iter().map(|n| n.to_string()).collect();
        format!(
            "nodes {} {}",
            s.join("+"),
            if self.round_robin {
                "round-robin"
            } else {
                "block"
            }
        )
    }

    /// The launcher's arguments that place the ranks.
    fn launcher_args(self, f: Flavour) -> Vec<String> {
        let with_slots: Vec<String> = self
            .slots
            .iter()
            .enumerate()
            .map(|(i, n)| format!("node{}:{n}", i + 1))
            .collect();
        if f.is_openmpi() {
            vec![
                "--host".into(),
                with_slots.join(","),
                "--map-by".into(),
                if self.round_robin { "node" } else { "slot" }.into(),
                "--bind-to".into(),
                "none".into(),
            ]
        } else if self.round_robin {
            // Hydra deals one rank per host name in turn, wrapping around.
            let names: Vec<String> = (1..=self.slots.len()).map(|i| format!("node{i}")).collect();
            vec!["-hosts".into(), names.join(",")]
        } else {
            vec!["-hosts".into(), with_slots.join(",")]
        }
    }
}

/// The command that runs `prog` on `cl` from node1, in `mode`.
fn cluster_command(
    cl: &Cluster,
    f: Flavour,
    mode: Mode,
    layout: Layout,
    prog: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Command {
    let n = layout.ranks().to_string();
    let mut argv: Vec<String> = match mode {
        Mode::Preload => vec![repo_root()
            .join("wrappers")
            .join("heapmpirun")
            .display()
            .to_string()],
        Mode::Wrap | Mode::Stock => vec![f.launcher()],
    };
    argv.extend(layout.launcher_args(f));
    if f.is_openmpi() {
        argv.extend(["-np".to_string(), n]);
        // Open MPI gives remote ranks only what -x names (heapmpirun adds
        // the HEAPMPI_* variables itself).
        for (k, _) in env {
            if mode != Mode::Preload || !k.starts_with("HEAPMPI_") {
                argv.extend(["-x".to_string(), k.to_string()]);
            }
        }
    } else {
        // Hydra passes the whole environment on.
        argv.extend(["-n".to_string(), n]);
    }
    argv.push(prog.display().to_string());
    argv.extend(args.iter().map(|a| a.to_string()));
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let mut cmd = cl.exec("node1", &argv);
    match mode {
        Mode::Preload => {
            cmd.env("HEAPMPI_MPI", f.family());
        }
        Mode::Wrap | Mode::Stock => {
            if f.is_openmpi() {
                cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1");
                cmd.env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
            }
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Runs `case` (its rank count is the layout's) on the cluster.
fn run_on(cl: &Cluster, case: &Case, layout: Layout) -> Result<Output, String> {
    if case.mode != Mode::Stock {
        ensure_library(case.flavour)?;
    }
    let prog = compile(case.program, case.flavour, case.mode)?;
    let cmd = cluster_command(
        cl,
        case.flavour,
        case.mode,
        layout,
        &prog,
        case.args,
        case.env,
    );
    run_command(cmd, job_timeout())
}

/// A conformance program: its name, the word of its "rank N: <verdict>
/// ok" lines, its arguments, and whether a default run takes it (a
/// release run takes every one).
struct Program {
    name: &'static str,
    verdict: &'static str,
    args: &'static [&'static str],
    quick: bool,
}

/// A program only a release run (`--full`) takes across nodes.
const fn prog(name: &'static str, verdict: &'static str) -> Program {
    Program {
        name,
        verdict,
        args: &[],
        quick: false,
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
    if program == "rma_basic" {
        // Its section G allocates a shared window on MPI_COMM_WORLD, which
        // MPI allows only when every rank shares one node (stock MPICH
        // then reports sizes it cannot have and crashes).
        return Some("it needs MPI_Win_allocate_shared on MPI_COMM_WORLD");
    }
    if matches!(program, "p2p_mpi4" | "coll_persistent") && !declares_mpi4(f) {
        return Some("the MPI declares no MPI-4.0 routines (Open MPI 4.1)");
    }
    None
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
        for f in available_flavours() {
            if !full() && !f.is_openmpi() && SLOW_ON_MPICH.contains(&p.name) {
                continue;
            }
            let layouts = layouts(f);
            let (pick, quick_mode) = quick_pick(p.name, layouts.len() - 1);
            if let Some(why) = left_out(p.name, f) {
                eprintln!("left out: {} on {} across nodes: {why}", p.name, f.name());
                continue;
            }
            // The stock reference on the cluster, per rank count (the same
            // for every layout of that count).
            let mut stock_by_n: Vec<(usize, Option<Output>)> = Vec::new();
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
                let stock = match stock_by_n.iter().find(|(m, _)| *m == n) {
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
                        stock_by_n.push((n, s.clone()));
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
            prog("p2p_status", "status"),
            prog("p2p_handles", "handles"),
            Program {
                name: "p2p_random",
                verdict: "random",
                args: &["501", "502"],
                quick: false,
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

impl Layout {
    /// The node (1-based) of world rank `r`, as the launchers place it:
    /// block fills each node's slots in turn, round-robin deals one rank
    /// to each node that still has a slot.
    fn node_of_rank(self, r: usize) -> usize {
        let mut left: Vec<usize> = self.slots.to_vec();
        let mut node = 0;
        for i in 0..=r {
            if self.round_robin {
                if i > 0 {
                    node = (node + 1) % left.len();
                }
                while left[node] == 0 {
                    node = (node + 1) % left.len();
                }
            } else {
                while left[node] == 0 {
                    node += 1;
                }
            }
            left[node] -= 1;
        }
        node + 1
    }
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
    for f in available_flavours() {
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

impl Cluster {
    /// The network namespace of `node` (its holder's).
    fn netns(&self, node: &str) -> Option<PathBuf> {
        let pid = std::fs::read_to_string(self.dir.join(format!("{node}.pid"))).ok()?;
        std::fs::read_link(format!("/proc/{}/ns/net", pid.trim())).ok()
    }

    /// The running processes of executable `exe` on `node`.
    fn processes(&self, node: &str, exe: &Path) -> Vec<i32> {
        let Some(ns) = self.netns(node) else {
            return Vec::new();
        };
        all_pids()
            .into_iter()
            .filter(|&p| proc_exe(p).as_deref() == Some(exe))
            .filter(|&p| std::fs::read_link(format!("/proc/{p}/ns/net")).ok() == Some(ns.clone()))
            .collect()
    }

    /// What `ls /dev/shm` shows on `node`.
    fn dev_shm(&self, node: &str) -> Result<Vec<String>, String> {
        let o = run_command(self.exec(node, &["ls", "-A", "/dev/shm"]), job_timeout())?;
        check_success(&o)?;
        Ok(o.stdout.lines().map(str::to_string).collect())
    }
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
