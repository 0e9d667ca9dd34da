//! Builds what the runs need: libheapmpi for each MPI compared
//! (wrappers/heapmpi-build, not with --no-build), the C benchmark programs
//! for each MPI (bench/target/c/<mpi>/) and the machine-limits program, each
//! only when its source is newer than the binary.

use crate::benches;
use crate::opts::Opts;
use crate::runner;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn newer(src: &Path, bin: &Path) -> bool {
    let m = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    match (m(src), m(bin)) {
        (Some(s), Some(b)) => s > b,
        _ => true,
    }
}

fn compile(
    cc: &str,
    extra: &[&str],
    src: &Path,
    bin: &Path,
    logs: &Path,
    env: &[(String, String)],
) -> Result<(), String> {
    if !newer(src, bin) {
        return Ok(());
    }
    let mut cmd = Command::new(cc);
    cmd.envs(env.iter().cloned());
    cmd.args(["-std=c11", "-O2", "-Wall", "-Wextra"])
        .args(extra)
        .arg("-o")
        .arg(bin)
        .arg(src);
    let out = cmd.output().map_err(|e| format!("cannot run {cc}: {e}"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    let name = bin
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    let tag = cc.rsplit('/').take(3).collect::<Vec<_>>().join("-");
    let _ = fs::write(logs.join(format!("build-{tag}-{name}.log")), err.as_bytes());
    if !out.status.success() {
        return Err(format!("{cc} {}: failed:\n{err}", src.display()));
    }
    if !err.trim().is_empty() {
        eprintln!(
            "heapmpi-bench: warnings from {cc} {}:\n{err}",
            src.display()
        );
    }
    Ok(())
}

pub fn build(
    opts: &Opts,
    root: &Path,
    bench: &Path,
    bin_dir: &Path,
    logs: &Path,
) -> Result<(), String> {
    if opts.build {
        eprintln!(
            "heapmpi-bench: building libheapmpi for {} (wrappers/heapmpi-build) ...",
            opts.mpis.join(", ")
        );
        let t0 = Instant::now();
        let log = logs.join("build-heapmpi.log");
        let f = fs::File::create(&log).map_err(|e| e.to_string())?;
        // Debian's MPIs by name in one call; each wheel's by its mpicc.
        let debian: Vec<&String> = opts
            .mpis
            .iter()
            .filter(|m| !runner::WHEELS.contains(&m.as_str()))
            .collect();
        // (heapmpi-build's arguments, its environment) per call.
        type Call = (Vec<String>, Vec<(String, String)>);
        let mut calls: Vec<Call> = vec![];
        if !debian.is_empty() {
            calls.push((debian.iter().map(|m| m.to_string()).collect(), vec![]));
        }
        for m in opts
            .mpis
            .iter()
            .filter(|m| runner::WHEELS.contains(&m.as_str()))
        {
            let args = vec![
                "--mpicc".to_string(),
                runner::mpicc(root, m),
                "--name".to_string(),
                m.clone(),
            ];
            calls.push((args, runner::mpi_env(root, m)));
        }
        let mut ok = true;
        for (args, env) in calls {
            let status = Command::new(root.join("wrappers/heapmpi-build"))
                .args(&args)
                .envs(env)
                .current_dir(root)
                .stdout(f.try_clone().map_err(|e| e.to_string())?)
                .stderr(f.try_clone().map_err(|e| e.to_string())?)
                .status()
                .map_err(|e| format!("cannot run heapmpi-build: {e}"))?;
            ok &= status.success();
        }
        let text = fs::read_to_string(&log).unwrap_or_default();
        if !ok {
            return Err(format!(
                "heapmpi-build failed:\n{}",
                runner::tail(&text, 30)
            ));
        }
        eprintln!(
            "heapmpi-bench: libheapmpi ready ({:.0} s)",
            t0.elapsed().as_secs_f64()
        );
    }
    for m in &opts.mpis {
        let lib = root.join(format!("target/{m}/release/libheapmpi.so"));
        if !lib.exists() {
            return Err(format!(
                "{} missing (run without --no-build)",
                lib.display()
            ));
        }
    }
    for m in opts.mpis.iter().filter(|_| !opts.benches.is_empty()) {
        let d = bin_dir.join(m);
        fs::create_dir_all(&d).map_err(|e| e.to_string())?;
        for p in benches::PROGRAMS {
            let src = bench.join(format!("c/{p}.c"));
            compile(
                &runner::mpicc(root, m),
                &[],
                &src,
                &d.join(p),
                logs,
                &runner::mpi_env(root, m),
            )?;
        }
    }
    if opts.limits {
        let cc = if runner::have_command("cc") {
            "cc"
        } else {
            "gcc"
        };
        compile(
            cc,
            &["-pthread"],
            &bench.join("c/limits.c"),
            &bin_dir.join("limits"),
            logs,
            &[],
        )?;
    }
    Ok(())
}
