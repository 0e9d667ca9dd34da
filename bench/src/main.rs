//! heapmpi-bench: OSU-style comparison of stock MPI against heapmpi.
//!
//! Builds libheapmpi and the C benchmark programs, measures the machine's
//! own limits, runs every benchmark stock and under heapmpi (alternating,
//! same binary) for each MPI and repetition, runs the application suite
//! (LAMMPS, HPC Challenge, Quantum ESPRESSO, OpenFOAM, CP2K, GROMACS) both
//! ways, and writes tables, CSV and plots. See bench/README.md.

mod app;
mod benches;
mod opts;
mod plot;
mod profile;
mod report;
mod runner;
mod stats;
mod suite;

use benches::{sweep_sizes, Bench, Iters, Sizes, Style};
use opts::Opts;
use runner::{Outcome, Runner, Variant};
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// One run's parsed output: size -> values.
pub type Table = BTreeMap<u64, Vec<f64>>;

/// Everything measured in one invocation.
#[derive(Default)]
pub struct Results {
    /// (bench, mpi, variant) -> one table per repetition that succeeded
    pub runs: BTreeMap<(&'static str, String, Variant), Vec<Table>>,
    /// ranks used per benchmark
    pub ranks: BTreeMap<&'static str, usize>,
    /// human-readable failures (runs that failed, validation errors)
    pub failures: Vec<String>,
    /// heapmpi runs in which not every rank reported `active`
    pub heap_not_active: Vec<String>,
    pub limits: Option<Limits>,
    /// the application suite, in suite order
    pub apps: Vec<app::AppResult>,
    /// validation: (what, passed)
    pub checks: Vec<(String, bool)>,
    /// validation runs left out on purpose, and why
    pub check_notes: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// (size, one core GB/s, two cores GB/s)
    pub memcpy: Vec<(u64, f64, f64)>,
    pub cacheline_best_ns: f64,
    pub cacheline_median_ns: f64,
}

/// Progress lines on stderr: which run, how far, how long.
pub struct Progress {
    total: usize,
    done: usize,
    start: Instant,
    run_secs: f64,
}

impl Progress {
    pub fn begin(&mut self, what: &str) {
        self.done += 1;
        let el = self.start.elapsed().as_secs_f64();
        let eta = if self.done > 1 {
            let avg = self.run_secs / (self.done - 1) as f64;
            format!(
                ", eta ~{}",
                fmt_dur(avg * (self.total + 1).saturating_sub(self.done) as f64)
            )
        } else {
            String::new()
        };
        eprint!(
            "[{:>3}/{:<3} {}{}] {} ... ",
            self.done,
            self.total,
            fmt_dur(el),
            eta,
            what
        );
        let _ = std::io::stderr().flush();
    }
    pub fn end(&mut self, o: &Outcome, note: &str) {
        self.run_secs += o.secs;
        if o.ok {
            eprintln!("{:.1} s{}", o.secs, note);
        } else {
            eprintln!(
                "FAILED ({}) after {:.1} s, see {}",
                o.error,
                o.secs,
                o.log.display()
            );
        }
    }
}

/// Write to stdout, ignoring a closed pipe (`bench/run | head`).
macro_rules! out {
    ($($t:tt)*) => {{
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}

pub fn fmt_dur(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // bench/run asks which Debian packages the selected applications need
    let packages = args.iter().any(|a| a == "--app-packages");
    args.retain(|a| a != "--app-packages");
    if packages {
        return match Opts::parse(&args) {
            Ok(o) => {
                for a in app::selected(&o) {
                    out!("{} {}\n", a.name, a.packages.join(" "));
                }
                ExitCode::SUCCESS
            }
            // bench/run's driver call reports bad options itself
            Err(_) => ExitCode::SUCCESS,
        };
    }
    let opts = match Opts::parse(&args) {
        Ok(o) => o,
        Err(e) if e.is_empty() => {
            out!("{}\nbenchmarks:\n", opts::USAGE);
            for b in benches::BENCHES {
                out!("  {:<8} {}\n", b.name, b.what);
            }
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("heapmpi-bench: {e}\n\n{}", opts::USAGE);
            return ExitCode::from(2);
        }
    };
    match run(opts) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("heapmpi-bench: error: {e}");
            ExitCode::from(1)
        }
    }
}

/// bench/ (this crate's directory): $HEAPMPI_BENCH_DIR, else the directory
/// the crate was built in.
fn bench_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("HEAPMPI_BENCH_DIR") {
        return PathBuf::from(d);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sh(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn run(mut opts: Opts) -> Result<ExitCode, String> {
    let t_start = Instant::now();
    let bench = bench_dir();
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

    // Which MPIs.
    let mut mpis = vec![];
    for m in &opts.mpis {
        let (cc, launcher) = (runner::mpicc(&root, m), runner::launcher(&root, m));
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
    opts.mpis = mpis;

    // Results directory.
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
    let mut runner = Runner {
        root: root.clone(),
        logs: logs.clone(),
        timeout: opts.timeout,
        libs: BTreeMap::new(),
    };

    // Environment, for the report.
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
    let dirty = if sh(
        "git",
        &["-C", &root.to_string_lossy(), "status", "--porcelain"],
    )
    .is_empty()
    {
        ""
    } else {
        " (with uncommitted changes)"
    };
    let commit = sh(
        "git",
        &[
            "-C",
            &root.to_string_lossy(),
            "rev-parse",
            "--short",
            "HEAD",
        ],
    );
    env.push((
        "heapmpi commit".to_string(),
        if commit.is_empty() {
            "unknown (not a git checkout)".to_string()
        } else {
            format!("{commit}{dirty}")
        },
    ));
    for m in &opts.mpis {
        let v = match m.as_str() {
            _ if runner::WHEELS.contains(&m.as_str()) => wheel_version(&root, m),
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

    eprintln!("heapmpi-bench: results in {}", out.display());

    // Build.
    let bin_dir = bench.join("target/c");
    build(&opts, &root, &bench, &bin_dir, &logs)?;

    // One copy of each libheapmpi for the whole run: a rebuild of target/
    // while we run (others work in this checkout) cannot mix two builds.
    // Debian's two always (the applications are linked to them), and the
    // MPIs compared.
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
        let copied = fs::create_dir_all(dst.parent().unwrap_or(&out))
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
    let runner = runner;

    // Plan, for the progress lines.
    let n_jobs: usize = opts.benches.len() * opts.mpis.len();
    let mut total = 0;
    if opts.check {
        total += check_runs(&opts).0.len();
    }
    if !opts.check_only {
        total += n_jobs * opts.reps * 2;
        if opts.limits {
            total += 1;
        }
        if opts.app {
            total += app::selected(&opts).len() * app::runs_per_app(&opts);
        }
    }
    let mut progress = Progress {
        total,
        done: 0,
        start: Instant::now(),
        run_secs: 0.0,
    };
    let mut res = Results::default();

    // Validation.
    if opts.check {
        check(&opts, &runner, &bin_dir, &mut progress, &mut res);
        let failed: Vec<&(String, bool)> = res.checks.iter().filter(|c| !c.1).collect();
        if !failed.is_empty() {
            eprintln!("\nVALIDATION FAILED:");
            for f in &failed {
                eprintln!("  {}", f.0);
            }
            for f in &res.failures {
                eprintln!("  {f}");
            }
            write_text(&out.join("report.txt"), &report::validation_text(&res));
            return Ok(ExitCode::from(1));
        }
        eprintln!(
            "validation passed: {} runs, every received byte checked",
            res.checks.len()
        );
    }
    if opts.check_only {
        let text = report::validation_text(&res);
        out!("{text}");
        write_text(&out.join("report.txt"), &text);
        return Ok(ExitCode::SUCCESS);
    }

    // Machine limits.
    if opts.limits {
        progress.begin("machine limits (memcpy 1/2 cores, cache-line ping-pong)");
        let mut cmd = Command::new(bin_dir.join("limits"));
        if opts.quick {
            cmd.args(["-r", "2", "-t", "5"]);
        }
        let o = runner.run_plain(cmd, "limits");
        progress.end(&o, "");
        if o.ok {
            res.limits = Some(parse_limits(&o.stdout));
        } else {
            res.failures.push(format!("limits: {}", o.error));
        }
    }

    // Timing runs: repetition-major, stock/heapmpi alternating (ABBA) so that
    // slow drifts of the machine hit both alike.
    for rep in 0..opts.reps {
        for b in &opts.benches {
            for mpi in &opts.mpis {
                let order = if rep % 2 == 0 {
                    [Variant::Stock, Variant::Heapmpi]
                } else {
                    [Variant::Heapmpi, Variant::Stock]
                };
                for v in order {
                    timing_run(
                        &opts,
                        &runner,
                        &bin_dir,
                        b,
                        mpi,
                        v,
                        rep,
                        &mut progress,
                        &mut res,
                    );
                }
            }
        }
    }

    // Applications.
    if opts.app {
        res.apps = app::run_all(&opts, &runner, &bench, &out, &mut progress);
        for a in &res.apps {
            res.failures
                .extend(a.failures.iter().map(|f| format!("{}: {f}", a.title)));
            if let Some(v) = &a.verdict {
                if !v.ok {
                    res.failures.push(format!(
                        "{}: physics of heapmpi {} stock's: {}\n  reproduce: {}",
                        a.title,
                        if v.exact {
                            "differs from"
                        } else {
                            "outside the spread of"
                        },
                        v.difference.as_deref().unwrap_or("-"),
                        a.repro.as_deref().unwrap_or("-")
                    ));
                }
            }
        }
    }

    env.push(("load average at end".to_string(), loadavg()));
    env.push((
        "total time".to_string(),
        fmt_dur(t_start.elapsed().as_secs_f64()),
    ));

    // Report.
    let text = report::text(&opts, &res, &env);
    out!("\n{text}");
    write_text(&out.join("report.txt"), &text);
    report::write_csv(&opts, &res, &out).map_err(|e| format!("writing CSV: {e}"))?;
    if opts.plots {
        let notes: Vec<String> = env
            .iter()
            .filter(|(k, _)| {
                k == "date"
                    || k == "cpu"
                    || k == "Open MPI"
                    || k == "MPICH"
                    || k == "heapmpi commit"
            })
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        match plot::apps(&opts, &res, &out, &notes).and_then(|mut a| {
            plot::all(&opts, &res, &out, &notes).map(|b| {
                a.extend(b);
                a
            })
        }) {
            Ok(files) => {
                out!("plots:\n");
                for f in files {
                    out!("  {}\n", f.display());
                }
            }
            Err(e) => {
                eprintln!("heapmpi-bench: plots skipped: {e}");
            }
        }
    }
    out!("results: {}\n", out.display());
    out!("total time: {}\n", fmt_dur(t_start.elapsed().as_secs_f64()));
    if res.failures.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("heapmpi-bench: {} failure(s):", res.failures.len());
        for f in &res.failures {
            eprintln!("  {f}");
        }
        Ok(ExitCode::from(1))
    }
}

fn write_text(p: &Path, s: &str) {
    if let Err(e) = fs::write(p, s) {
        eprintln!("heapmpi-bench: cannot write {}: {e}", p.display());
    }
}

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

fn build(
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

/// Time-budget scale of malloc_bench (1 = 50 ms per pattern and size).
pub const MALLOC_SCALE: f64 = 1.0;

fn program_args(opts: &Opts, b: &Bench, validate: bool) -> Vec<String> {
    let mut a: Vec<String> = b.mode_args.iter().map(|s| s.to_string()).collect();
    let list = |v: Vec<u64>| {
        v.iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    match b.style {
        Style::TimeScale => {
            // malloc_bench: one argument, the scale of its time budget (each
            // pattern and size runs for 50 ms x scale, so glibc's slow batch
            // pattern at >= 4 KiB cannot stretch the run).
            a.push(format!(
                "{}",
                if validate {
                    0.01
                } else {
                    MALLOC_SCALE * opts.iter_scale
                }
            ));
            return a;
        }
        Style::Batches => {
            a.extend(["-s".into(), list(opts.sizes_for(b))]);
            if validate {
                // every update checked; the program caps the count
                a.extend(["-c".into(), "-f".into(), "0.05".into()]);
            } else if b.ranks > 0 {
                // the same number of updates in all, whatever the ranks
                let f = opts.iter_scale * 2.0 / b.ranks as f64;
                a.extend(["-f".into(), format!("{f}")]);
            }
            return a;
        }
        Style::Osu => {}
    }
    if validate {
        let within = |v: &[u64]| -> Vec<u64> {
            v.iter()
                .copied()
                .filter(|&s| s >= opts.size_min && s <= opts.size_max)
                .collect()
        };
        match b.sizes {
            Sizes::Sweep => a.extend(["-s".into(), list(sweep_sizes())]),
            // every size the benchmark runs (not only --quick's) and its
            // ±1 neighbours
            Sizes::Coll => {
                a.extend([
                    "-s".into(),
                    list(within(&benches::coll_sizes())),
                    "-O".into(),
                ]);
            }
            Sizes::CollFew => {
                a.extend([
                    "-s".into(),
                    list(within(benches::COLL_FEW_CHECK_SIZES)),
                    "-O".into(),
                ]);
            }
            Sizes::Rma => {
                a.extend([
                    "-s".into(),
                    list(within(&benches::rma_sizes())),
                    "-O".into(),
                ]);
            }
            Sizes::RmaFew => {
                a.extend([
                    "-s".into(),
                    list(within(benches::RMA_FEW_SIZES)),
                    "-O".into(),
                ]);
            }
            Sizes::Nbc => {
                a.extend(["-s".into(), list(within(benches::NBC_SIZES)), "-O".into()]);
            }
            _ => {
                // every size of the range plus its odd neighbours
                let lo = opts.size_min.max(b.min_size);
                a.extend(["-m".into(), format!("{lo}:{}", opts.size_max), "-O".into()]);
            }
        }
        // few iterations; one-sided fewer still (40 at small sizes, 4 above
        // 8 KiB: every iteration fills, reads back and checks its own slot,
        // and the target checks every slot and guard byte afterwards)
        let f = if b.is_rma() { "0.004" } else { "0.01" };
        a.extend(["-c".into(), "-f".into(), f.into()]);
        if let Iters::Fixed { .. } = b.iters {
            // oversubscribed: every call may wait for a time slice
            a.extend(["-i".into(), "4".into(), "-x".into(), "1".into()]);
        }
        if b.side_by_side() {
            // rank 0 names each collective (operation) and size on stderr
            // before it runs: a hang shows where in the log
            a.push("-v".into());
        }
        return a;
    }
    a.push("-s".into());
    a.push(list(opts.sizes_for(b)));
    match b.iters {
        Iters::Osu => {
            if opts.iter_scale != 1.0 {
                a.extend(["-f".into(), format!("{}", opts.iter_scale)]);
            }
        }
        Iters::Fixed { iters, skip } => {
            let n = |x: u32| ((x as f64 * opts.iter_scale).round() as u64).max(1);
            a.extend([
                "-i".into(),
                n(iters).to_string(),
                "-x".into(),
                n(skip).to_string(),
            ]);
        }
    }
    a
}

fn bench_ranks(opts: &Opts, b: &Bench) -> usize {
    if b.name == "mbw_mr" {
        opts.mbw_ranks
    } else if b.ranks > 0 {
        b.ranks
    } else {
        2
    }
}

#[allow(clippy::too_many_arguments)]
fn timing_run(
    opts: &Opts,
    runner: &Runner,
    bin_dir: &Path,
    b: &'static Bench,
    mpi: &str,
    v: Variant,
    rep: usize,
    progress: &mut Progress,
    res: &mut Results,
) {
    let ranks = bench_ranks(opts, b);
    res.ranks.insert(b.name, ranks);
    let prog = bin_dir.join(mpi).join(b.program);
    let args = program_args(opts, b, false);
    progress.begin(&format!(
        "rep {}/{}  {:<7} {:<8} {:<7}",
        rep + 1,
        opts.reps,
        b.name,
        mpi,
        v.name()
    ));
    let log = format!("{}-{}-{}-r{}", b.name, mpi, v.name(), rep + 1);
    let o = runner.run(mpi, v, ranks, &prog, &args, &log, None);
    let mut note = String::new();
    if v == Variant::Heapmpi && o.ok {
        if let Some(why) = o.inactive_note(ranks) {
            note = format!("  (heapmpi active in {}/{} ranks!)", o.active_ranks, ranks);
            res.heap_not_active.push(format!("{log}: {why}"));
        }
    }
    progress.end(&o, &note);
    if !o.ok {
        res.failures.push(format!(
            "{log}: {}\n{}",
            o.error,
            runner::tail(&o.stderr, 8)
        ));
        return;
    }
    let t = runner::parse_table(&o.stdout);
    if t.is_empty() {
        res.failures.push(format!(
            "{log}: no data in the output ({})",
            o.log.display()
        ));
        return;
    }
    res.runs
        .entry((b.name, mpi.to_string(), v))
        .or_default()
        .push(t);
}

/// Validation runs: every benchmark at 2 ranks, mbw_mr also at 4 ranks
/// (two pairs at once: matching and per-pair queues get exercised), and the
/// oversubscribed collectives (coll4) at 3 and 4 ranks instead (a rank
/// count that is not a power of two, and more members than cores); each
/// for every MPI, stock and heapmpi. Returns the runs as (bench, ranks,
/// mpi, variant), and notes on the runs left out.
#[allow(clippy::type_complexity)]
fn check_runs(opts: &Opts) -> (Vec<(&'static Bench, usize, String, Variant)>, Vec<String>) {
    let mut jobs: Vec<(&'static Bench, usize)> = vec![];
    for b in &opts.benches {
        if b.is_coll() && b.ranks > 2 {
            jobs.push((b, 3));
            jobs.push((b, b.ranks));
        } else {
            jobs.push((b, 2));
        }
    }
    if let Some(b) = opts.benches.iter().find(|b| b.name == "mbw_mr") {
        jobs.push((b, 4));
    }
    let mut runs = vec![];
    let mut notes = vec![];
    for (b, ranks) in jobs {
        for mpi in &opts.mpis {
            for v in [Variant::Stock, Variant::Heapmpi] {
                // Stock MPICH (ch4) busy-polls: oversubscribed, each call
                // waits for time slices (~10 ms), and its validation would
                // take minutes. The checker itself is proven by the other
                // stock runs.
                if b.is_coll()
                    && mpi == "mpich"
                    && v == Variant::Stock
                    && ranks > runner::cpu_count()
                {
                    notes.push(format!(
                        "check {} mpich stock {ranks} ranks: not run (stock MPICH busy-polls when \
                         oversubscribed, ~10 ms a call; the checker is proven by the other stock runs)",
                        b.name
                    ));
                    continue;
                }
                runs.push((b, ranks, mpi.clone(), v));
            }
        }
    }
    (runs, notes)
}

fn check(opts: &Opts, runner: &Runner, bin_dir: &Path, progress: &mut Progress, res: &mut Results) {
    let (runs, notes) = check_runs(opts);
    res.check_notes = notes;
    for (b, ranks, mpi, v) in runs {
        let what = format!(
            "check {:<7} {:<8} {:<7} {} ranks",
            b.name,
            mpi,
            v.name(),
            ranks
        );
        progress.begin(&what);
        let prog = bin_dir.join(&mpi).join(b.program);
        let args = program_args(opts, b, true);
        let log = format!("check-{}-{}-{}-{}ranks", b.name, mpi, v.name(), ranks);
        let o = runner.run(&mpi, v, ranks, &prog, &args, &log, None);
        let mut passed = o.ok;
        let mut why = String::new();
        if !o.ok {
            why = o.error.clone();
        } else if b.style != Style::TimeScale && !o.stdout.contains("# validation passed") {
            passed = false;
            why = "no '# validation passed' line".into();
        }
        if passed && v == Variant::Heapmpi {
            if let Some(note) = o.inactive_note(ranks) {
                passed = false;
                why = note;
            }
        }
        let note = if o.ok && !passed {
            format!("  FAILED: {why}")
        } else {
            String::new()
        };
        progress.end(&o, &note);
        if !passed {
            let errs: Vec<&str> = o
                .stderr
                .lines()
                .chain(o.stdout.lines())
                .filter(|l| l.contains("VALIDATION") || l.contains("validation FAILED"))
                .take(10)
                .collect();
            res.failures.push(format!(
                "{log}: {why}\n{}\n(see {}; command in {})",
                if errs.is_empty() {
                    runner::tail(&o.stderr, 8)
                } else {
                    errs.join("\n")
                },
                o.log.display(),
                o.log.with_extension("cmd").display()
            ));
        }
        res.checks.push((
            format!("{what}: {}", if passed { "ok" } else { why.as_str() }),
            passed,
        ));
    }
}

fn parse_limits(out: &str) -> Limits {
    let mut l = Limits::default();
    for line in out.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["memcpy", s, a, b] => {
                if let (Ok(s), Ok(a), Ok(b)) =
                    (s.parse::<u64>(), a.parse::<f64>(), b.parse::<f64>())
                {
                    l.memcpy.push((s, a / 1e3, b / 1e3));
                }
            }
            ["cacheline", best, med] => {
                l.cacheline_best_ns = best.parse().unwrap_or(0.0);
                l.cacheline_median_ns = med.parse().unwrap_or(0.0);
            }
            _ => {}
        }
    }
    l
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse() {
        let l = parse_limits("# x\nmemcpy 1024 45000 90000\ncacheline 51.0 60.5\n");
        assert_eq!(l.memcpy, vec![(1024, 45.0, 90.0)]);
        assert_eq!(l.cacheline_best_ns, 51.0);
    }

    #[test]
    fn args() {
        let o = Opts::parse(&["--quick".into()]).unwrap();
        let b = benches::find("bw").unwrap();
        let a = program_args(&o, b, false);
        assert_eq!(a[0], "bw");
        assert_eq!(a[1], "-s");
        assert!(a[2].starts_with("1,64,"));
        let c = program_args(&o, b, true);
        assert!(c.contains(&"-c".to_string()) && c.contains(&"1:4194304".to_string()));
        let coll = benches::find("coll").unwrap();
        let a = program_args(&o, coll, false);
        assert_eq!(a[..3], ["all", "-s", "8,1000,65536,1048576"]);
        let c = program_args(&o, coll, true);
        assert!(c.contains(&"-O".to_string()) && c[2].starts_with("3,4,8,16,"));
        let rma = benches::find("rma").unwrap();
        assert_eq!(
            program_args(&o, rma, false)[..3],
            ["all", "-s", "8,1000,65536,1048576"]
        );
        let c = program_args(&o, rma, true);
        assert!(c[2].starts_with("1,2,3,4,8,") && c.contains(&"0.004".to_string()));
        let a = program_args(&o, benches::find("rma_create").unwrap(), false);
        assert_eq!(
            a[..5],
            ["all", "-W", "create", "-s", "8,1000,4096,65536,1048576"]
        );
        let coll4 = benches::find("coll4").unwrap();
        let a = program_args(&Opts::parse(&[]).unwrap(), coll4, false);
        assert_eq!(a[3..], ["-i", "20", "-x", "2"]);
        let a = program_args(&o, coll4, false);
        assert_eq!(a[3..], ["-i", "1", "-x", "1"]);
        let nbc = benches::find("nbc").unwrap();
        let a = program_args(&o, nbc, false);
        assert_eq!(a[..4], ["nbc", "-e", "-s", "8,1024,1032,65536,1048576"]);
        let a = program_args(&Opts::parse(&[]).unwrap(), nbc, false);
        assert_eq!(a.len(), 4); // OMB's iteration counts
        let c = program_args(&o, nbc, true);
        assert!(c[3].starts_with("4,8,100,1000,1016,1024,1025,1032,"));
        assert!(["-O", "-c", "-v"]
            .iter()
            .all(|x| c.contains(&x.to_string())));
    }
}
