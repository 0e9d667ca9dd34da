//! The application suite: widely used MPI applications from Debian packages
//! (LAMMPS, HPC Challenge, Quantum ESPRESSO, OpenFOAM, CP2K, GROMACS), each
//! run stock and under heapmpi in the same invocation: alternating (ABBA),
//! `--app-reps` runs of each, `--app-ranks` ranks bound to cores. Reported:
//! the wall time of every launch, each application's own timer and figures
//! (HPCC: every component), and whether the physics every heapmpi run prints
//! is the physics stock prints (identical at 2 ranks; at more ranks within
//! the spread of the stock runs). Inputs: bench/apps/<name>/, see
//! bench/README.md.

use crate::opts::Opts;
use crate::profile;
use crate::progress::Progress;
use crate::runner::{self, Runner, Variant};
use crate::stats::Summary;
use crate::suite::{AppSpec, APPS};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

mod compare;
mod cp2k;
mod gromacs;
pub use compare::*;
mod hpcc;
mod lammps;
mod openfoam;
mod qe;
pub use cp2k::*;
pub use gromacs::*;
pub use hpcc::*;
pub use lammps::*;
pub use openfoam::*;
pub use qe::*;

/// Run sizes at default settings (chosen so the whole suite, 5 stock and 5
/// heapmpi runs each, stays within ~8 minutes on an idle 2-core machine).
pub const HPCC_N: usize = 1500;
pub const OPENFOAM_ITERS: usize = 50;
pub const GROMACS_STEPS: usize = 400;
/// GROMACS box (nm): 2 x 2 x 1 copies of spc216.gro's 1.86206 nm box
pub const GROMACS_BOX: [&str; 3] = ["3.72412", "3.72412", "1.86206"];

/// One figure an application reports.
#[derive(Clone, Debug, PartialEq)]
pub struct AppMetric {
    pub key: String,
    pub title: String,
    pub unit: String,
    pub higher_is_better: bool,
}

impl AppMetric {
    pub(crate) fn new(key: &str, title: &str, unit: &str, higher_is_better: bool) -> AppMetric {
        AppMetric {
            key: key.into(),
            title: title.into(),
            unit: unit.into(),
            higher_is_better,
        }
    }
}

/// The outcome of the physics comparison.
#[derive(Clone, Debug, Default)]
pub struct Verdict {
    /// true: identical required (2 ranks); false: within the stock spread
    pub exact: bool,
    /// every heapmpi run passes
    pub ok: bool,
    /// lines compared per run (of the reference stock run)
    pub lines: usize,
    pub stock_runs: usize,
    pub heap_runs: usize,
    /// every stock run prints the same as the first
    pub stock_identical: bool,
    /// every heapmpi run prints exactly what the first stock run prints
    pub heap_identical: bool,
    /// the first difference of a heapmpi run (the failing one when !ok)
    pub difference: Option<String>,
    /// the first difference between two stock runs
    pub stock_difference: Option<String>,
    /// largest relative deviation of a number, heapmpi vs the first stock
    /// run, and among the stock runs
    pub max_rel_heap: f64,
    pub max_rel_stock: f64,
}

#[derive(Debug, Default)]
pub struct AppResult {
    pub name: &'static str,
    pub title: &'static str,
    /// the case, one line
    pub what: String,
    pub physics: &'static str,
    pub mpi: String,
    pub ranks: usize,
    /// set when the application could not run at all: why
    pub skipped: Option<String>,
    /// in the order of the table; the first is the wall time
    pub metrics: Vec<AppMetric>,
    /// (metric key, variant) -> one value per successful run
    pub values: BTreeMap<(String, Variant), Vec<f64>>,
    pub verdict: Option<Verdict>,
    pub failures: Vec<String>,
    /// HEAPMPI_PROFILE of the heapmpi runs that wrote one
    pub profiles: Vec<profile::Shares>,
    /// HEAPMPI_PROFILE of the runs that passed every call to the real MPI
    /// (the stock transport, timed by heapmpi's profiler)
    pub real_profiles: Vec<profile::Shares>,
    /// how to run one heapmpi run again by hand
    pub repro: Option<String>,
    pub dir: PathBuf,
}

impl AppResult {
    pub fn summary(&self, key: &str, v: Variant) -> Option<Summary> {
        self.values
            .get(&(key.to_string(), v))
            .and_then(|x| Summary::of(x))
    }

    /// heapmpi's speedup over stock for a metric: stock / heapmpi for times,
    /// heapmpi / stock for rates (> 1: heapmpi faster), with the range the
    /// min-max spreads allow (worst, best).
    pub fn speedup(&self, m: &AppMetric) -> Option<(f64, f64, f64)> {
        let s = self.summary(&m.key, Variant::Stock)?;
        let h = self.summary(&m.key, Variant::Heapmpi)?;
        let r = |st: f64, hp: f64| {
            if m.higher_is_better {
                hp / st
            } else {
                st / hp
            }
        };
        let mid = r(s.median, h.median);
        let (a, b) = if m.higher_is_better {
            (r(s.max, h.min), r(s.min, h.max))
        } else {
            (r(s.min, h.max), r(s.max, h.min))
        };
        mid.is_finite().then_some((mid, a.min(b), a.max(b)))
    }

    /// Mean MPI share and accelerated share over the heapmpi runs that
    /// wrote a HEAPMPI_PROFILE file.
    pub fn shares(&self) -> (Option<f64>, Option<f64>) {
        (
            mean_of(&self.profiles, |p| p.mpi_share),
            mean_of(&self.profiles, |p| p.accel_share),
        )
    }

    /// The MPI share of the wall time with every call in the real MPI (the
    /// stock transport), from the profiled run that passed them all there.
    pub fn stock_mpi_share(&self) -> Option<f64> {
        mean_of(&self.real_profiles, |p| p.mpi_share)
    }

    /// The largest wall-time speedup any transport could give: stock's wall
    /// time with its MPI time taken out (Amdahl's bound, 1 / (1 - share)).
    /// Time a rank spends waiting for a slower one counts as MPI time, so
    /// the real ceiling is lower still.
    pub fn bound(&self) -> Option<f64> {
        self.stock_mpi_share()
            .filter(|s| (0.0..1.0).contains(s))
            .map(|s| 1.0 / (1.0 - s))
    }

    fn metric(&mut self, m: &AppMetric) {
        if !self.metrics.iter().any(|x| x.key == m.key) {
            self.metrics.push(m.clone());
        }
    }
}

/// The mean of `f` over the profiles that have it.
fn mean_of(p: &[profile::Shares], f: impl Fn(&profile::Shares) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = p.iter().filter_map(f).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// What one run printed: the physics to compare and the figures.
#[derive(Debug, Default)]
struct Extract {
    physics: Vec<String>,
    metrics: Vec<(AppMetric, f64)>,
}

/// How to run an application, once its inputs are ready.
struct Prepared {
    bin: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// copied into every run's fresh directory: (source, name there)
    files: Vec<(PathBuf, String)>,
    what: String,
}

struct Ctx<'a> {
    opts: &'a Opts,
    runner: &'a Runner,
    /// bench/apps
    src: PathBuf,
    /// results/app/<name>
    dir: PathBuf,
    ranks: usize,
}

pub fn which(cmd: &str) -> Option<PathBuf> {
    let p = std::env::var_os("PATH")?;
    std::env::split_paths(&p)
        .map(|d| d.join(cmd))
        .find(|p| p.is_file())
}

/// The MPI a binary is linked against, from ldd.
fn mpi_of(bin: &Path) -> Option<String> {
    let out = Command::new("ldd")
        .arg(bin)
        .env_remove("LD_PRELOAD")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mpich = text.contains("libmpich") || text.contains("libmpi.so.12");
    let ompi = text.contains("libmpi.so.40") || text.contains("libopen-pal");
    match (ompi, mpich) {
        (true, false) => Some("openmpi".into()),
        (false, true) => Some("mpich".into()),
        _ => None,
    }
}

/// The runs one application makes: the timed stock/heapmpi pairs, then
/// the two profiled heapmpi runs (see `run`).
pub fn runs_per_app(opts: &Opts) -> usize {
    opts.app_reps * 2 + 2
}

/// Why an application's program is missing, with what bench/run's apt-get
/// said about its packages ($HEAPMPI_BENCH_APT_LOGS/apt-<name>.log).
fn not_installed(spec: &AppSpec, what: &str) -> String {
    let mut s = format!(
        "{what} not found: Debian package(s) {} not installed",
        spec.packages.join(" ")
    );
    if let Some(dir) = std::env::var_os("HEAPMPI_BENCH_APT_LOGS") {
        let log = Path::new(&dir).join(format!("apt-{}.log", spec.name));
        if let Ok(text) = fs::read_to_string(&log) {
            let errs: Vec<&str> = text
                .lines()
                .filter(|l| l.starts_with("E:") || l.contains("rror"))
                .collect();
            let shown = if errs.is_empty() {
                runner::tail(&text, 4)
            } else {
                errs[errs.len().saturating_sub(4)..].join("\n")
            };
            if !shown.trim().is_empty() {
                s.push_str(&format!("; apt-get said:\n{shown}"));
            }
        }
    } else {
        s.push_str(" (bench/run installs them)");
    }
    s
}

/// Read `src`, replace every `@KEY@` by its value.
fn template(src: &Path, vars: &[(&str, String)]) -> Result<String, String> {
    let mut t =
        fs::read_to_string(src).map_err(|e| format!("cannot read {}: {e}", src.display()))?;
    for (k, v) in vars {
        t = t.replace(&format!("@{k}@"), v);
    }
    Ok(t)
}

fn write(p: &Path, text: &str) -> Result<(), String> {
    fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))
}

/// `cp -a src dst` (files and directories).
fn copy(src: &Path, dst: &Path) -> Result<(), String> {
    let st = Command::new("cp")
        .arg("-a")
        .arg(src)
        .arg(dst)
        .status()
        .map_err(|e| format!("cp: {e}"))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("cp -a {} {} failed", src.display(), dst.display()))
    }
}

/// Process grid P x Q for HPL/PTRANS: P <= Q, as square as possible.
pub fn grid(ranks: usize) -> (usize, usize) {
    let mut p = (ranks as f64).sqrt() as usize;
    while p > 1 && ranks % p != 0 {
        p -= 1;
    }
    let p = p.max(1);
    (p, ranks / p)
}

/// Collapse runs of whitespace.
fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The applications `--apps` selected, in suite order.
pub fn selected(opts: &Opts) -> Vec<&'static AppSpec> {
    if !opts.app {
        return vec![];
    }
    APPS.iter()
        .filter(|a| opts.apps.iter().any(|n| n == a.name))
        .collect()
}

/// Every selected application, one after the other.
pub fn run_all(
    opts: &Opts,
    runner: &Runner,
    bench: &Path,
    out: &Path,
    progress: &mut Progress,
) -> Vec<AppResult> {
    selected(opts)
        .into_iter()
        .map(|spec| run(spec, opts, runner, bench, out, progress))
        .collect()
}

fn run(
    spec: &'static AppSpec,
    opts: &Opts,
    runner: &Runner,
    bench: &Path,
    out: &Path,
    progress: &mut Progress,
) -> AppResult {
    let ranks = opts.app_ranks;
    let dir = out.join("app").join(spec.name);
    let mut r = AppResult {
        name: spec.name,
        title: spec.title,
        physics: spec.physics,
        ranks,
        dir: dir.clone(),
        ..Default::default()
    };
    let mut skip = |mut r: AppResult, why: String| {
        eprintln!("heapmpi-bench: {}: cannot run: {why}", spec.title);
        // the runs this application would have made
        progress.skip(runs_per_app(opts));
        r.skipped = Some(why);
        r
    };
    let Some(bin) = spec.binaries.iter().find_map(|b| which(b)) else {
        return skip(r, not_installed(spec, spec.binaries[0]));
    };
    let Some(mpi) = mpi_of(&bin) else {
        return skip(
            r,
            format!("cannot tell which MPI {} is linked against", bin.display()),
        );
    };
    if !runner::have_tool(&runner::launcher(&runner.root, &mpi)) {
        return skip(
            r,
            format!(
                "{} is linked against {mpi}, whose launcher is missing",
                bin.display()
            ),
        );
    }
    r.mpi = mpi.clone();
    if let Err(e) = fs::create_dir_all(&dir) {
        return skip(r, format!("cannot create {}: {e}", dir.display()));
    }
    let ctx = Ctx {
        opts,
        runner,
        src: bench.join("apps"),
        dir: dir.clone(),
        ranks,
    };
    let prepared = match spec.name {
        "lammps" => prepare_lammps(&ctx, bin),
        "hpcc" => prepare_hpcc(&ctx, bin),
        "qe" => prepare_qe(&ctx, bin),
        "openfoam" => prepare_openfoam(&ctx, spec, bin),
        "cp2k" => prepare_cp2k(&ctx, spec, bin),
        "gromacs" => prepare_gromacs(&ctx, bin),
        other => Err(format!("no recipe for application '{other}'")),
    };
    let p = match prepared {
        Ok(p) => p,
        Err(e) => return skip(r, e),
    };
    r.what = p.what.clone();
    let wall = AppMetric::new("wall", "wall time", "s", false);
    r.metric(&wall);

    let mut physics: Vec<(String, Variant, Vec<String>)> = vec![];
    // (run, command that repeats it)
    let mut repros: Vec<(String, String)> = vec![];
    // The timed repetitions, then two more runs with HEAPMPI_PROFILE: one
    // under heapmpi (its MPI and accelerated shares) and one with heapmpi
    // passing every call to the real MPI (`HEAPMPI_P2P=0 HEAPMPI_COLL=0
    // HEAPMPI_RMA=0`: the stock transport timed by the same profiler, so
    // stock's MPI share and the bound it sets). Profiling reads the clock
    // twice per MPI call (about 0.1 us a call), which would count against
    // heapmpi in every timed figure (HPCC's 8-byte ring latency read 0.69
    // us against 0.36 when the timed runs were profiled). Their physics is
    // compared like every other heapmpi run's.
    for rep in 0..=opts.app_reps {
        let profiled = rep == opts.app_reps;
        let order: &[Variant] = if profiled {
            &[Variant::Heapmpi, Variant::Heapmpi]
        } else if rep % 2 == 0 {
            &[Variant::Stock, Variant::Heapmpi]
        } else {
            &[Variant::Heapmpi, Variant::Stock]
        };
        for (k, &v) in order.iter().enumerate() {
            // The second profiled run passes everything to the real MPI.
            let real = profiled && k == 1;
            let name = if real {
                format!("{}-real-profile", spec.name)
            } else if profiled {
                format!("{}-{}-profile", spec.name, v.name())
            } else {
                format!("{}-{}-r{}", spec.name, v.name(), rep + 1)
            };
            let wd = dir.join(&name);
            let _ = fs::remove_dir_all(&wd);
            if let Err(e) = fs::create_dir_all(&wd) {
                r.failures
                    .push(format!("{name}: cannot create {}: {e}", wd.display()));
                continue;
            }
            if let Some(e) = p
                .files
                .iter()
                .find_map(|(src, to)| copy(src, &wd.join(to)).err())
            {
                r.failures.push(format!("{name}: {e}"));
                continue;
            }
            // one thread per rank: 2 ranks on the 2 cores they are bound to
            let mut env = vec![("OMP_NUM_THREADS".to_string(), "1".to_string())];
            env.extend(p.env.iter().cloned());
            if v == Variant::Heapmpi {
                if profiled {
                    env.push(profile::env(&wd));
                }
                if real {
                    env.extend(profile::REAL_MPI.iter().map(|&(k, v)| (k.into(), v.into())));
                }
                repros.push((name.clone(), repro(runner, &mpi, ranks, &p, &wd, &env)));
            }
            let rep_label = if real {
                "profile, real MPI".to_string()
            } else if profiled {
                "profile".to_string()
            } else {
                format!("rep {}/{}", rep + 1, opts.app_reps)
            };
            progress.begin(&format!(
                "{rep_label:<9} {:<8} {} ranks {:<7}",
                spec.name,
                ranks,
                v.name()
            ));
            let o = runner.run_env(&mpi, v, ranks, &p.bin, &p.args, &name, Some(&wd), &env);
            let mut note = String::new();
            if v == Variant::Heapmpi && o.ok {
                if let Some(why) = o.inactive_note(ranks) {
                    note = format!("  ({why}!)");
                    r.failures.push(format!("{name}: {why}"));
                }
            }
            progress.end(&o, &note);
            if !o.ok {
                let mut text = o.stderr.clone();
                text.push_str(&o.stdout);
                let lines: Vec<&str> = text
                    .lines()
                    .filter(|l| !l.starts_with("heapmpi[") && !l.trim().is_empty())
                    .collect();
                r.failures.push(format!(
                    "{name}: {} (logs: {}, run directory {})\n{}",
                    o.error,
                    o.log.display(),
                    wd.display(),
                    lines[lines.len().saturating_sub(8)..].join("\n")
                ));
                continue;
            }
            let x = match extract(spec.name, &wd, &o.stdout, ranks) {
                Ok(x) => x,
                Err(e) => {
                    r.failures.push(format!(
                        "{name}: {e} (run directory {}, output {})",
                        wd.display(),
                        o.log.display()
                    ));
                    continue;
                }
            };
            if profiled {
                if let Some(sh) = profile::read(&wd) {
                    if real {
                        r.real_profiles.push(sh);
                    } else {
                        r.profiles.push(sh);
                    }
                }
            } else {
                r.values
                    .entry((wall.key.clone(), v))
                    .or_default()
                    .push(o.secs);
                for (m, val) in x.metrics {
                    r.metric(&m);
                    r.values.entry((m.key.clone(), v)).or_default().push(val);
                }
            }
            physics.push((name, v, x.physics));
        }
    }
    if !physics.is_empty() {
        let v = compare(&physics, ranks <= 2);
        // the run that differs, else the first heapmpi run
        let differing = v
            .difference
            .as_deref()
            .and_then(|d| repros.iter().find(|(n, _)| d.starts_with(&format!("{n} "))));
        r.repro = differing.or(repros.first()).map(|x| x.1.clone());
        r.verdict = Some(v);
    }
    r
}

/// A shell command that repeats one heapmpi run by hand.
fn repro(
    runner: &Runner,
    mpi: &str,
    ranks: usize,
    p: &Prepared,
    wd: &Path,
    env: &[(String, String)],
) -> String {
    let q = |s: &str| {
        if s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=:,+@".contains(c))
        {
            s.to_string()
        } else {
            format!("'{}'", s.replace('\'', "'\\''"))
        }
    };
    let mut parts: Vec<String> = vec![format!("cd {} &&", q(&wd.to_string_lossy()))];
    for (k, v) in env {
        if k != "HEAPMPI_PROFILE" {
            parts.push(format!("{k}={}", q(v)));
        }
    }
    if let Some(lib) = runner.libs.get(mpi) {
        parts.push(format!("HEAPMPI_LIB={}", q(&lib.to_string_lossy())));
    }
    parts.push("HEAPMPI_STATS=1".into());
    parts.push(q(&runner
        .root
        .join("wrappers/heapmpirun")
        .to_string_lossy()));
    parts.extend(runner::launch_args(mpi, ranks, runner.nodes.is_some()));
    if runner::is_openmpi(mpi) {
        for (k, _) in env {
            if k != "HEAPMPI_PROFILE" {
                parts.push(format!("-x {k}"));
            }
        }
    }
    parts.push(q(&p.bin.to_string_lossy()));
    parts.extend(p.args.iter().map(|a| q(a)));
    parts.join(" ")
}

fn extract(name: &str, wd: &Path, stdout: &str, ranks: usize) -> Result<Extract, String> {
    let read =
        |f: &str| fs::read_to_string(wd.join(f)).map_err(|e| format!("cannot read {f}: {e}"));
    match name {
        "lammps" => extract_lammps(&read("log.lammps")?),
        "hpcc" => extract_hpcc(&read("hpccoutf.txt")?),
        "qe" => extract_qe(stdout),
        "openfoam" => extract_openfoam(stdout, wd, ranks),
        "cp2k" => extract_cp2k(&read("h2o.out")?),
        "gromacs" => extract_gromacs(&read("md.log")?),
        other => Err(format!("no recipe for application '{other}'")),
    }
}

#[cfg(test)]
mod tests;
