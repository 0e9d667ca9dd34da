//! Before the first run: where bench/ and the checkout are, which MPIs are
//! there to compare, the results directory, one copy of each libheapmpi
//! for the whole run, and the namespace nodes of `--nodes`.

use crate::machine::sh;
use crate::opts::Opts;
use crate::runner::{self, Nodes, Runner};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// bench/ (this crate's directory): $HEAPMPI_BENCH_DIR, else the directory
/// the crate was built in.
pub fn bench_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("HEAPMPI_BENCH_DIR") {
        return PathBuf::from(d);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The heapmpi checkout bench/ is in.
pub fn root(bench: &Path) -> Result<PathBuf, String> {
    let root = bench
        .parent()
        .ok_or("bench directory has no parent")?
        .to_path_buf();
    if !root.join("wrappers/heapmpirun").exists() {
        return Err(format!(
            "{} does not look like a heapmpi checkout (no wrappers/heapmpirun)",
            root.display()
        ));
    }
    Ok(root)
}

/// The MPIs of `--mpi` (or the default ones) that are installed: one
/// requested by name and missing is an error, a default one is skipped.
pub fn mpis(opts: &Opts, root: &Path) -> Result<Vec<String>, String> {
    let mut mpis = vec![];
    for m in &opts.mpis {
        let (cc, launcher) = (runner::mpicc(root, m), runner::launcher(root, m));
        let ok = runner::have_tool(&cc) && runner::have_tool(&launcher);
        if ok {
            mpis.push(m.clone());
        } else if opts.mpis_given {
            let hint = if runner::WHEELS.contains(&m.as_str()) {
                " (tests/run installs the wheels into target/wheels and builds heapmpi for them)"
            } else {
                ""
            };
            return Err(format!(
                "{m} requested but {cc} / {launcher} not found{hint}"
            ));
        } else {
            eprintln!("heapmpi-bench: {m} not installed ({cc}), skipping it");
        }
    }
    if mpis.is_empty() {
        return Err("no MPI installed (mpicc.openmpi / mpicc.mpich)".into());
    }
    Ok(mpis)
}

/// Create the results directory (`--out`, else bench/results/<timestamp>
/// with bench/results/latest pointing at it) and its logs/.
pub fn results_dir(opts: &Opts, bench: &Path) -> Result<PathBuf, String> {
    let stamp = sh("date", &["+%Y%m%d-%H%M%S"]);
    let (out, link) = match &opts.out {
        Some(d) => (d.clone(), false),
        None => (bench.join("results").join(&stamp), true),
    };
    let logs = out.join("logs");
    fs::create_dir_all(&logs).map_err(|e| format!("cannot create {}: {e}", logs.display()))?;
    if link {
        let l = bench.join("results/latest");
        let _ = fs::remove_file(&l);
        let _ = std::os::unix::fs::symlink(&stamp, &l);
    }
    Ok(out)
}

/// One copy of each libheapmpi for the whole run: a rebuild of target/
/// while we run (others work in this checkout) cannot mix two builds.
/// Debian's two always (the applications are linked to them), and the
/// MPIs compared. Each copy is preloaded from `runner.libs`; returns the
/// report's line for each library.
pub fn copy_libs(
    opts: &Opts,
    root: &Path,
    out: &Path,
    runner: &mut Runner,
) -> Vec<(String, String)> {
    let mut env = vec![];
    let mut copied_mpis: Vec<String> = vec!["openmpi".into(), "mpich".into()];
    copied_mpis.extend(
        opts.mpis
            .iter()
            .filter(|m| !copied_mpis.contains(m))
            .cloned()
            .collect::<Vec<_>>(),
    );
    for m in &copied_mpis {
        let lib = root.join(format!("target/{m}/release/libheapmpi.so"));
        let Ok(meta) = fs::metadata(&lib) else {
            continue;
        };
        let dst = out.join("lib").join(m).join("libheapmpi.so");
        let copied = fs::create_dir_all(dst.parent().unwrap_or(out))
            .and_then(|_| fs::copy(&lib, &dst))
            .is_ok();
        let built = sh("date", &["-Iseconds", "-r", &lib.to_string_lossy()]);
        env.push((
            format!("libheapmpi ({m})"),
            format!(
                "{} bytes, built {built}{}",
                meta.len(),
                if copied {
                    format!(", preloaded from lib/{m}/ (a copy)")
                } else {
                    String::new()
                }
            ),
        ));
        if copied {
            runner.libs.insert(m.to_string(), dst);
        }
    }
    env
}

/// `--nodes N` (N > 1): namespace nodes on this machine that every MPI job
/// goes across; stopped when the guard is dropped (at the end of the run,
/// or on an error).
pub struct NodesGuard {
    script: PathBuf,
    dir: PathBuf,
}

impl Drop for NodesGuard {
    fn drop(&mut self) {
        let st = Command::new(&self.script)
            .arg("stop")
            .arg(&self.dir)
            .status();
        if !st.is_ok_and(|s| s.success()) {
            eprintln!(
                "heapmpi-bench: stopping the nodes in {} failed (tests/cluster/cluster stop {0})",
                self.dir.display()
            );
        }
    }
}

/// A line of the report's environment: what, and its value.
pub type EnvLine = (String, String);

/// Starts the nodes `--nodes` asks for and points `runner` at them; a line
/// for the report's environment.
pub fn start_nodes(
    opts: &Opts,
    root: &Path,
    bench: &Path,
    runner: &mut Runner,
) -> Result<Option<(NodesGuard, EnvLine)>, String> {
    if opts.nodes < 2 {
        return Ok(None);
    }
    let script = root.join("tests/cluster/cluster");
    let dir = bench.join("target/cluster");
    let st = Command::new(&script)
        .arg("start")
        .arg(&dir)
        .arg(opts.nodes.to_string())
        .status()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !st.success() {
        return Err(format!(
            "--nodes {}: {} start {} failed (it needs root, unshare, nsenter and ip: \
             tests/cluster/cluster install-deps)",
            opts.nodes,
            script.display(),
            dir.display()
        ));
    }
    runner.nodes = Some(Nodes {
        dir: dir.clone(),
        count: opts.nodes,
        round_robin: opts.round_robin,
    });
    let line = (
        "nodes".to_string(),
        format!(
            "{} namespace nodes on this machine (own hostname, /dev/shm, IPC, network; \
             TCP between them), ranks {}, unbound",
            opts.nodes,
            placement(opts)
        ),
    );
    Ok(Some((NodesGuard { script, dir }, line)))
}

/// How a job's ranks are placed on `--nodes`, for the report.
pub fn placement(opts: &Opts) -> &'static str {
    if opts.round_robin {
        "dealt to the nodes in turn (round-robin: a node's ranks not consecutive)"
    } else {
        "spread in blocks (a node's ranks consecutive)"
    }
}
