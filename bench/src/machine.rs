//! The machine and the build a run describes at the head of its report:
//! date, command, host, CPU, load, heapmpi's commit and each MPI's version.

use crate::opts::Opts;
use crate::runner;
use std::fs;
use std::path::Path;
use std::process::Command;

/// Run a command and return its stdout, trimmed (empty if it cannot run).
pub fn sh(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// The load averages over 1, 5 and 15 minutes.
pub fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// The commit of the checkout a run measures.
#[derive(Clone, Debug, PartialEq)]
pub struct Commit {
    /// `git rev-parse --short HEAD`
    pub short: String,
    /// `git status --porcelain` lists a change: the tree is not the commit
    pub dirty: bool,
}

/// The checkout's commit and whether its tree has uncommitted changes;
/// `None` outside a git checkout.
pub fn commit(root: &Path) -> Option<Commit> {
    let root = root.to_string_lossy();
    let dirty = !sh("git", &["-C", &root, "status", "--porcelain"]).is_empty();
    let short = sh("git", &["-C", &root, "rev-parse", "--short", "HEAD"]);
    (!short.is_empty()).then_some(Commit { short, dirty })
}

/// The report's first lines, (what, value), as the run starts; `commit` as
/// [`commit`] found it.
pub fn describe(opts: &Opts, root: &Path, commit: &Option<Commit>) -> Vec<(String, String)> {
    let mut env = vec![
        ("date".to_string(), sh("date", &["-Iseconds"])),
        (
            "command".to_string(),
            format!("bench/run {}", opts.command_line)
                .trim()
                .to_string(),
        ),
        ("host".to_string(), sh("uname", &["-srm"])),
        (
            "cpu".to_string(),
            format!(
                "{} ({} CPUs)",
                fs::read_to_string("/proc/cpuinfo")
                    .ok()
                    .and_then(|c| c
                        .lines()
                        .find(|l| l.starts_with("model name"))
                        .and_then(|l| l.split_once(':'))
                        .map(|(_, v)| v.trim().to_string()))
                    .unwrap_or_default(),
                runner::cpu_count()
            ),
        ),
        ("load average at start".to_string(), loadavg()),
    ];
    env.push((
        "heapmpi commit".to_string(),
        match commit {
            None => "unknown (not a git checkout)".to_string(),
            Some(c) if c.dirty => format!("{} (with uncommitted changes)", c.short),
            Some(c) => c.short.clone(),
        },
    ));
    for m in &opts.mpis {
        let v = match m.as_str() {
            _ if runner::WHEELS.contains(&m.as_str()) => wheel_version(root, m),
            "openmpi" => sh("mpirun.openmpi", &["--version"])
                .lines()
                .next()
                .unwrap_or("")
                .to_string(),
            _ => sh("mpichversion", &[])
                .lines()
                .next()
                .unwrap_or("")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        };
        env.push((runner::mpi_title(m).to_string(), v));
    }
    env
}

/// "<package> <version> (Python wheel, target/wheels/<mpi>)", from the
/// wheel's metadata directory.
fn wheel_version(root: &Path, mpi: &str) -> String {
    let pkg = match mpi {
        "openmpi5" => "openmpi-",
        "mpich5" | "mpiabi" => "mpich-",
        _ => "impi_rt-",
    };
    let dir =
        runner::wheel_prefix(root, mpi).unwrap_or_else(|| root.join("target/wheels").join(mpi));
    let found = fs::read_dir(dir.join("lib"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|py| fs::read_dir(py.path().join("site-packages")).ok())
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with(pkg) && n.ends_with(".dist-info"));
    let v = found
        .map(|n| n.trim_end_matches(".dist-info").replacen('-', " ", 1))
        .unwrap_or_else(|| pkg.trim_end_matches('-').to_string());
    format!("{v} (Python wheel, {})", dir.display())
}
