//! Before the first run: where bench/ and the checkout are, which MPIs are
//! there to compare, the results directory, and one copy of each
//! libheapmpi for the whole run.

use crate::machine::sh;
use crate::opts::Opts;
use crate::runner::{self, Runner};
use std::fs;
use std::path::{Path, PathBuf};

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
