//! The cluster rig of `tests/cluster.rs`: a running cluster of
//! `tests/cluster/cluster` (start, commands on a node, stop with nothing
//! left), where ranks go (layouts and each MPI's launcher arguments for
//! them), and the command that runs a case there.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The cluster script.
pub fn script() -> PathBuf {
    repo_root().join("tests").join("cluster").join("cluster")
}

/// A running cluster; stopped (and checked empty) by [`Cluster::stop`], or
/// at least stopped when dropped.
pub struct Cluster {
    /// Its directory (`cluster start`'s DIR).
    pub dir: PathBuf,
    /// Its nodes: node1 ... node<nodes>.
    pub nodes: usize,
    stopped: bool,
}

impl Cluster {
    /// Starts `nodes` nodes under `target/cluster/<tag>-<pid>`.
    pub fn start(tag: &str, nodes: usize) -> Result<Cluster, String> {
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
    pub fn exec(&self, node: &str, argv: &[&str]) -> Command {
        let mut cmd = Command::new(script());
        cmd.arg("exec").arg(&self.dir).arg(node).args(argv);
        cmd.current_dir(repo_root());
        clean_env(&mut cmd);
        cmd
    }

    /// Stops the cluster: every process of every node is gone, and with
    /// them the namespaces, their mounts and interfaces.
    pub fn stop(mut self) -> Result<(), String> {
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
pub struct Layout {
    /// Ranks per node (`slots[i]` on node i + 1).
    pub slots: &'static [usize],
    /// Round-robin placement (else block).
    pub round_robin: bool,
}

pub const RR_2X2: Layout = Layout {
    slots: &[2, 2],
    round_robin: true,
};

/// Open MPI's layouts; the first is the one a default run takes both ways
/// in.
pub const LAYOUTS: [Layout; 4] = [
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
/// `MPIR_CVAR_NOLOCAL=1` change nothing. Nodes of one rank hang there
/// too, now and then (two in a `--full` run of `tests/cluster.rs`, with
/// heapmpi inactive on every rank). MPICH's own account (pmodels/mpich
/// pull request 6596, MPICH 4.2): a rank waiting in the PMI barrier of the
/// UCX netmod's finalize stops the others' `ucp_disconnect_nb` from
/// completing.
pub const MPICH_LAYOUTS: [Layout; 1] = [Layout {
    slots: &[1, 1],
    round_robin: true,
}];

/// The layouts flavour `f` runs on across these nodes.
pub fn layouts(f: Flavour) -> &'static [Layout] {
    if f.is_openmpi() {
        &LAYOUTS
    } else {
        &MPICH_LAYOUTS
    }
}

impl Layout {
    pub fn ranks(self) -> usize {
        self.slots.iter().sum()
    }

    pub fn name(self) -> String {
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
    pub fn launcher_args(self, f: Flavour) -> Vec<String> {
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

/// The launcher of `mode`: heapmpirun for the preload runs, the MPI's
/// own launcher for the others.
pub fn launcher_argv(f: Flavour, mode: Mode) -> Vec<String> {
    match mode {
        Mode::Preload => vec![repo_root()
            .join("wrappers")
            .join("heapmpirun")
            .display()
            .to_string()],
        Mode::Wrap | Mode::Stock => vec![f.launcher()],
    }
}

/// The command that runs `prog` on `cl` from node1, in `mode`.
pub fn cluster_command(
    cl: &Cluster,
    f: Flavour,
    mode: Mode,
    layout: Layout,
    prog: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Command {
    let n = layout.ranks().to_string();
    let mut argv = launcher_argv(f, mode);
    argv.extend(layout.launcher_args(f));
    // The nodes share this machine's cores, which each node's launcher
    // cannot see: a job of more ranks than cores oversubscribes them while
    // every node looks fully subscribed, and Open MPI, which yields in its
    // waits on a node it knows is oversubscribed, busy-polls instead.
    // Stock and heapmpi alike (it changes no output).
    let yields = f.is_openmpi() && layout.ranks() > cores();
    let mut env = env.to_vec();
    if yields {
        env.push(("OMPI_MCA_mpi_yield_when_idle", "1"));
    }
    if f.is_openmpi() {
        argv.extend(["-np".to_string(), n]);
        // Open MPI gives remote ranks only what -x names (heapmpirun adds
        // the HEAPMPI_* variables itself).
        for (k, _) in &env {
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
    launcher_env(&mut cmd, f, mode);
    for (k, v) in &env {
        cmd.env(k, v);
    }
    cmd
}

/// Runs `case` (its rank count is the layout's) on the cluster.
pub fn run_on(cl: &Cluster, case: &Case, layout: Layout) -> Result<Output, String> {
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

impl Layout {
    /// The node (1-based) of world rank `r`, as the launchers place it:
    /// block fills each node's slots in turn, round-robin deals one rank
    /// to each node that still has a slot.
    pub fn node_of_rank(self, r: usize) -> usize {
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

impl Cluster {
    /// The network namespace of `node` (its holder's).
    pub fn netns(&self, node: &str) -> Option<PathBuf> {
        let pid = std::fs::read_to_string(self.dir.join(format!("{node}.pid"))).ok()?;
        std::fs::read_link(format!("/proc/{}/ns/net", pid.trim())).ok()
    }

    /// The running processes of executable `exe` on `node`.
    pub fn processes(&self, node: &str, exe: &Path) -> Vec<i32> {
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
    pub fn dev_shm(&self, node: &str) -> Result<Vec<String>, String> {
        let o = run_command(self.exec(node, &["ls", "-A", "/dev/shm"]), job_timeout())?;
        check_success(&o)?;
        Ok(o.stdout.lines().map(str::to_string).collect())
    }
}
