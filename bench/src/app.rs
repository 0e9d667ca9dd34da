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
use crate::runner::{self, Runner, Variant};
use crate::stats::Summary;
use crate::Progress;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One application of the suite.
#[derive(Debug)]
pub struct AppSpec {
    /// `--apps` name, also the directory in bench/apps/ and the results
    pub name: &'static str,
    pub title: &'static str,
    /// other names `--apps` accepts
    pub aliases: &'static [&'static str],
    /// Debian packages bench/run installs for it
    pub packages: &'static [&'static str],
    /// the MPI program, first one found on PATH
    pub binaries: &'static [&'static str],
    /// what the identical-results check compares
    pub physics: &'static str,
}

pub const APPS: &[AppSpec] = &[
    AppSpec {
        name: "lammps",
        title: "LAMMPS",
        aliases: &["lmp"],
        packages: &["lammps"],
        binaries: &["lmp", "lmp_stable", "lmp_mpi", "lmp_openmpi", "lmp_mpich"],
        physics: "the thermo table (every column, about 30 rows)",
    },
    AppSpec {
        name: "hpcc",
        title: "HPC Challenge",
        aliases: &["hpc-challenge"],
        packages: &["hpcc"],
        binaries: &["hpcc"],
        physics: "HPCC's verification lines (HPL, PTRANS residual checks PASSED/FAILED, \
                  RandomAccess errors found, MPIFFT max error)",
    },
    AppSpec {
        name: "qe",
        title: "Quantum ESPRESSO",
        aliases: &["quantum-espresso", "espresso", "pw", "pw.x"],
        packages: &["quantum-espresso", "quantum-espresso-data"],
        binaries: &["pw.x"],
        physics: "total energy and scf accuracy of every SCF iteration, the energy terms, \
                  forces, stress",
    },
    AppSpec {
        name: "openfoam",
        title: "OpenFOAM",
        aliases: &["foam", "simplefoam"],
        packages: &["openfoam", "openfoam-examples"],
        binaries: &["simpleFoam"],
        physics: "every solver's residuals and iterations, continuity errors, and every \
                  value of the final fields of every subdomain",
    },
    AppSpec {
        name: "cp2k",
        title: "CP2K",
        aliases: &["cp2k.psmp", "cp2k.popt"],
        packages: &["cp2k", "cp2k-data"],
        binaries: &["cp2k.psmp", "cp2k.popt"],
        physics: "every SCF step (convergence, total energy, change), the energy terms, \
                  the atomic forces",
    },
    AppSpec {
        name: "gromacs",
        title: "GROMACS",
        aliases: &["gmx", "gmx_mpi"],
        packages: &["gromacs", "gromacs-data"],
        binaries: &["gmx_mpi"],
        physics: "the energies every 50 steps and their averages (md.log)",
    },
];

pub fn find(name: &str) -> Option<&'static AppSpec> {
    let n = name.to_ascii_lowercase();
    APPS.iter()
        .find(|a| a.name == n || a.aliases.iter().any(|x| *x == n))
}

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
    fn new(key: &str, title: &str, unit: &str, higher_is_better: bool) -> AppMetric {
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
        let mean = |f: &dyn Fn(&profile::Shares) -> Option<f64>| {
            let v: Vec<f64> = self.profiles.iter().filter_map(f).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        (mean(&|p| p.mpi_share), mean(&|p| p.accel_share))
    }

    fn metric(&mut self, m: &AppMetric) {
        if !self.metrics.iter().any(|x| x.key == m.key) {
            self.metrics.push(m.clone());
        }
    }
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
        progress.total = progress.total.saturating_sub(opts.app_reps * 2 + 1);
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
    if !runner::have_command(runner::launcher(&mpi)) {
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
    // The timed repetitions, then one more heapmpi run with HEAPMPI_PROFILE
    // for the MPI and accelerated shares: profiling reads the clock twice
    // per MPI call (about 0.1 us a call), which would count against
    // heapmpi in every timed figure (HPCC's 8-byte ring latency read
    // 0.69 us against 0.36 when the timed runs were profiled). Its physics
    // is compared like every other run's.
    for rep in 0..=opts.app_reps {
        let profiled = rep == opts.app_reps;
        let order: &[Variant] = if profiled {
            &[Variant::Heapmpi]
        } else if rep % 2 == 0 {
            &[Variant::Stock, Variant::Heapmpi]
        } else {
            &[Variant::Heapmpi, Variant::Stock]
        };
        for &v in order {
            let name = if profiled {
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
                repros.push((name.clone(), repro(runner, &mpi, ranks, &p, &wd, &env)));
            }
            let rep_label = if profiled {
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
                    r.profiles.push(sh);
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
    parts.extend(runner::launch_args(mpi, ranks));
    if mpi == "openmpi" {
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

// ------------------------------------------------------------------ LAMMPS

/// fcc unit cells per edge of the LAMMPS box: 4^3 cells, 256 atoms.
pub const LAMMPS_CELLS: usize = 4;

fn prepare_lammps(ctx: &Ctx, bin: PathBuf) -> Result<Prepared, String> {
    let input = ctx.src.join("lammps/in.melt");
    if !input.is_file() {
        return Err(format!("{} missing", input.display()));
    }
    let steps = ctx.opts.app_steps;
    // About 30 thermo rows to compare, at least 100 steps apart.
    let every = (steps / 30 / 100 * 100).max(100);
    let cells = LAMMPS_CELLS;
    let var = |k: &str, v: String| ["-var".to_string(), k.to_string(), v];
    let mut args = vec!["-in".to_string(), input.to_string_lossy().into()];
    args.extend(var("cells", cells.to_string()));
    args.extend(var("steps", steps.to_string()));
    args.extend(var("every", every.to_string()));
    args.extend(["-log", "log.lammps", "-screen", "none"].map(String::from));
    Ok(Prepared {
        args,
        what: format!(
            "{} 3d Lennard-Jones melt (examples/melt on {cells}^3 fcc cells: {} atoms), \
             {steps} steps",
            bin.file_name().unwrap_or_default().to_string_lossy(),
            4 * cells * cells * cells
        ),
        bin,
        env: vec![],
        files: vec![],
    })
}

/// The thermo table(s) of a LAMMPS log: each header line starting with
/// "Step" and the rows up to "Loop time of".
pub fn thermo(log: &str) -> Vec<String> {
    let mut rows = vec![];
    let mut inside = false;
    for l in log.lines() {
        let t = l.trim();
        if t.starts_with("Step ") || t == "Step" {
            inside = true;
            rows.push(norm(t));
            continue;
        }
        if t.starts_with("Loop time of") {
            inside = false;
            continue;
        }
        if inside && !t.is_empty() {
            rows.push(norm(t));
        }
    }
    rows
}

/// Sum of "Loop time of X on N procs" of a log.
pub fn loop_time(log: &str) -> Option<f64> {
    let v: Vec<f64> = log
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Loop time of "))
        .filter_map(|r| r.split_whitespace().next()?.parse().ok())
        .collect();
    if v.is_empty() {
        None
    } else {
        Some(v.iter().sum())
    }
}

fn extract_lammps(log: &str) -> Result<Extract, String> {
    let physics = thermo(log);
    if physics.is_empty() {
        return Err("no thermo table in log.lammps".into());
    }
    let mut metrics = vec![];
    if let Some(t) = loop_time(log) {
        metrics.push((AppMetric::new("loop", "LAMMPS loop time", "s", false), t));
    }
    Ok(Extract { physics, metrics })
}

// ------------------------------------------------------------------ HPCC

fn prepare_hpcc(ctx: &Ctx, bin: PathBuf) -> Result<Prepared, String> {
    let (p, q) = grid(ctx.ranks);
    let text = template(
        &ctx.src.join("hpcc/hpccinf.txt"),
        &[
            ("N", HPCC_N.to_string()),
            ("P", p.to_string()),
            ("Q", q.to_string()),
        ],
    )?;
    let input = ctx.dir.join("hpccinf.txt");
    write(&input, &text)?;
    Ok(Prepared {
        bin,
        args: vec![],
        env: vec![],
        files: vec![(input, "hpccinf.txt".into())],
        what: format!(
            "hpcc 1.5, every test: HPL N={HPCC_N} NB=80 on a {p}x{q} grid, PTRANS, \
             RandomAccess, STREAM, FFT, DGEMM, latency/bandwidth"
        ),
    })
}

/// (HPCC summary key, title, unit, scale, higher is better): every
/// component HPCC reports in its summary.
pub const HPCC_METRICS: &[(&str, &str, &str, f64, bool)] = &[
    ("HPL_Tflops", "HPL", "Gflop/s", 1e3, true),
    ("PTRANS_GBs", "PTRANS", "GB/s", 1.0, true),
    (
        "MPIRandomAccess_GUPs",
        "MPIRandomAccess",
        "GUP/s",
        1.0,
        true,
    ),
    (
        "MPIRandomAccess_LCG_GUPs",
        "MPIRandomAccess LCG",
        "GUP/s",
        1.0,
        true,
    ),
    ("MPIFFT_Gflops", "MPIFFT", "Gflop/s", 1.0, true),
    (
        "NaturallyOrderedRingLatency_usec",
        "naturally ordered ring latency",
        "us",
        1.0,
        false,
    ),
    (
        "RandomlyOrderedRingLatency_usec",
        "randomly ordered ring latency",
        "us",
        1.0,
        false,
    ),
    (
        "NaturallyOrderedRingBandwidth_GBytes",
        "naturally ordered ring bandwidth",
        "GB/s",
        1.0,
        true,
    ),
    (
        "RandomlyOrderedRingBandwidth_GBytes",
        "randomly ordered ring bandwidth",
        "GB/s",
        1.0,
        true,
    ),
    (
        "MinPingPongLatency_usec",
        "ping-pong latency min",
        "us",
        1.0,
        false,
    ),
    (
        "AvgPingPongLatency_usec",
        "ping-pong latency avg",
        "us",
        1.0,
        false,
    ),
    (
        "MaxPingPongLatency_usec",
        "ping-pong latency max",
        "us",
        1.0,
        false,
    ),
    (
        "MinPingPongBandwidth_GBytes",
        "ping-pong bandwidth min",
        "GB/s",
        1.0,
        true,
    ),
    (
        "AvgPingPongBandwidth_GBytes",
        "ping-pong bandwidth avg",
        "GB/s",
        1.0,
        true,
    ),
    (
        "MaxPingPongBandwidth_GBytes",
        "ping-pong bandwidth max",
        "GB/s",
        1.0,
        true,
    ),
    ("StarDGEMM_Gflops", "StarDGEMM", "Gflop/s", 1.0, true),
    ("SingleDGEMM_Gflops", "SingleDGEMM", "Gflop/s", 1.0, true),
    ("StarSTREAM_Copy", "StarSTREAM Copy", "GB/s", 1.0, true),
    ("StarSTREAM_Scale", "StarSTREAM Scale", "GB/s", 1.0, true),
    ("StarSTREAM_Add", "StarSTREAM Add", "GB/s", 1.0, true),
    ("StarSTREAM_Triad", "StarSTREAM Triad", "GB/s", 1.0, true),
    ("SingleSTREAM_Copy", "SingleSTREAM Copy", "GB/s", 1.0, true),
    (
        "SingleSTREAM_Scale",
        "SingleSTREAM Scale",
        "GB/s",
        1.0,
        true,
    ),
    ("SingleSTREAM_Add", "SingleSTREAM Add", "GB/s", 1.0, true),
    (
        "SingleSTREAM_Triad",
        "SingleSTREAM Triad",
        "GB/s",
        1.0,
        true,
    ),
    (
        "StarRandomAccess_GUPs",
        "StarRandomAccess",
        "GUP/s",
        1.0,
        true,
    ),
    (
        "SingleRandomAccess_GUPs",
        "SingleRandomAccess",
        "GUP/s",
        1.0,
        true,
    ),
    (
        "StarRandomAccess_LCG_GUPs",
        "StarRandomAccess LCG",
        "GUP/s",
        1.0,
        true,
    ),
    (
        "SingleRandomAccess_LCG_GUPs",
        "SingleRandomAccess LCG",
        "GUP/s",
        1.0,
        true,
    ),
    ("StarFFT_Gflops", "StarFFT", "Gflop/s", 1.0, true),
    ("SingleFFT_Gflops", "SingleFFT", "Gflop/s", 1.0, true),
];

/// Summary keys that are verification results (compared, not timed).
const HPCC_CHECK_KEYS: &[&str] = &[
    "Success",
    "PTRANS_residual",
    "MPIRandomAccess_Errors",
    "MPIRandomAccess_LCG_Errors",
    "MPIFFT_maxErr",
];

fn hpcc_summary(text: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let mut inside = false;
    for l in text.lines() {
        let t = l.trim();
        if t.starts_with("Begin of Summary section") {
            inside = true;
        } else if t.starts_with("End of Summary section") {
            break;
        } else if inside {
            if let Some((k, v)) = t.split_once('=') {
                m.insert(k.trim().to_string(), v.trim().to_string());
            }
        }
    }
    m
}

/// HPCC's own verification: the residual checks (PASSED/FAILED), the
/// errors RandomAccess found, and the summary's verification values.
/// Timings on the same lines (PTRANS's TIME and GB/s columns) are dropped.
pub fn hpcc_verification(text: &str) -> Vec<String> {
    let mut v = vec![];
    for l in text.lines() {
        let t = l.trim();
        let verdict = t.contains("PASSED") || t.contains("FAILED");
        if t.starts_with("Found ") && t.contains(" errors in ") {
            v.push(norm(t));
        } else if verdict && t.starts_with("CPU") {
            // PTRANS prints a test's CPU row only when its CPU time is above
            // 0 (clock ticks): a fast transpose has none. Its verdict and
            // residual are those of the WALL row before it.
            continue;
        } else if verdict && t.starts_with("WALL") {
            // PTRANS: TIME M N MB NB P Q TIME CHECK GB/s RESID
            let f: Vec<&str> = t.split_whitespace().collect();
            let keep: Vec<&str> = f
                .iter()
                .enumerate()
                .filter(|(i, _)| *i <= 6 || *i == 8 || *i == 10)
                .map(|(_, s)| *s)
                .collect();
            v.push(format!("PTRANS {}", keep.join(" ")));
        } else if verdict || t.contains("residual checks") {
            v.push(norm(t));
        }
    }
    let s = hpcc_summary(text);
    for k in HPCC_CHECK_KEYS {
        if let Some(x) = s.get(*k) {
            v.push(format!("{k}={x}"));
        }
    }
    v
}

fn extract_hpcc(text: &str) -> Result<Extract, String> {
    let s = hpcc_summary(text);
    if s.is_empty() {
        return Err("no summary section in hpccoutf.txt".into());
    }
    let physics = hpcc_verification(text);
    if !physics.iter().any(|l| l.contains("PASSED")) {
        return Err("no PASSED/FAILED verification line in hpccoutf.txt".into());
    }
    let mut metrics = vec![];
    for (key, title, unit, scale, hib) in HPCC_METRICS {
        if let Some(x) = s.get(*key).and_then(|x| x.parse::<f64>().ok()) {
            if x.is_finite() && x > 0.0 {
                metrics.push((AppMetric::new(key, title, unit, *hib), x * scale));
            }
        }
    }
    Ok(Extract { physics, metrics })
}

// ------------------------------------------------------------------ QE

const QE_PSEUDO_DIRS: &[&str] = &[
    "/usr/share/espresso/pseudo",
    "/usr/share/quantum-espresso/pseudo",
];

fn prepare_qe(ctx: &Ctx, bin: PathBuf) -> Result<Prepared, String> {
    let Some(pseudo) = QE_PSEUDO_DIRS
        .iter()
        .find(|d| Path::new(d).join("Si.pz-vbc.UPF").is_file())
    else {
        return Err(
            "pseudopotential Si.pz-vbc.UPF not found in /usr/share/espresso/pseudo: \
                    Debian package quantum-espresso-data not installed"
                .into(),
        );
    };
    let text = template(
        &ctx.src.join("qe/si8.in"),
        &[("PSEUDO_DIR", pseudo.to_string())],
    )?;
    let input = ctx.dir.join("si8.in");
    write(&input, &text)?;
    Ok(Prepared {
        bin,
        args: vec!["-in".into(), "si8.in".into()],
        env: vec![],
        files: vec![(input, "si8.in".into())],
        what: "pw.x SCF + forces + stress: Si 8-atom cubic cell, LDA, ecutwfc 20 Ry, \
               2x2x2 k-points, FFT 30^3 over the ranks"
            .into(),
    })
}

/// Seconds from QE's "PWSCF : 6.65s CPU 41.80s WALL" (also "1m41.35s",
/// "1h 2m").
fn qe_wall(out: &str) -> Option<f64> {
    let l = out
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("PWSCF") && l.contains("WALL"))?;
    let mid = l.split("CPU").nth(1)?.split("WALL").next()?;
    let mut secs = 0.0;
    let mut num = String::new();
    for c in mid.chars() {
        match c {
            '0'..='9' | '.' => num.push(c),
            'h' | 'm' | 's' => {
                let x: f64 = num.parse().ok()?;
                secs += x * match c {
                    'h' => 3600.0,
                    'm' => 60.0,
                    _ => 1.0,
                };
                num.clear();
            }
            _ => {}
        }
    }
    Some(secs)
}

pub fn qe_physics(out: &str) -> Vec<String> {
    let mut v = vec![];
    let mut stress = 0;
    for l in out.lines() {
        let t = l.trim();
        if stress > 0 {
            v.push(norm(t));
            stress -= 1;
            continue;
        }
        if t.contains("total   stress") {
            v.push(norm(t));
            stress = 3;
        } else if t.contains("total energy")
            || t.contains("estimated scf accuracy")
            || t.contains("force =")
            || t.starts_with("Total force")
            || t.contains("contribution =")
            || t.contains("highest occupied")
            || t.contains("Fermi energy")
            || t.starts_with("convergence has been achieved")
        {
            v.push(norm(t));
        }
    }
    v
}

fn extract_qe(out: &str) -> Result<Extract, String> {
    let physics = qe_physics(out);
    if !physics.iter().any(|l| l.starts_with("! total energy")) {
        return Err("no final total energy ('!    total energy') in pw.x's output".into());
    }
    let mut metrics = vec![];
    if let Some(t) = qe_wall(out) {
        metrics.push((
            AppMetric::new("pwscf", "PWSCF wall (own timer)", "s", false),
            t,
        ));
    }
    Ok(Extract { physics, metrics })
}

// ------------------------------------------------------------------ OpenFOAM

const OPENFOAM_DIRS: &[&str] = &["/usr/share/openfoam", "/usr/lib/openfoam/openfoam"];
const PITZDAILY: &[&str] = &[
    "/usr/share/doc/openfoam-examples/examples/incompressible/simpleFoam/pitzDaily",
    "/usr/share/openfoam/tutorials/incompressible/simpleFoam/pitzDaily",
];

fn prepare_openfoam(ctx: &Ctx, spec: &AppSpec, bin: PathBuf) -> Result<Prepared, String> {
    let Some(project) = OPENFOAM_DIRS
        .iter()
        .find(|d| Path::new(d).join("etc/controlDict").is_file())
    else {
        return Err(not_installed(spec, "OpenFOAM's etc/controlDict"));
    };
    let Some(tutorial) = PITZDAILY
        .iter()
        .map(Path::new)
        .find(|d| d.join("system/blockMeshDict").is_file())
    else {
        return Err(
            "the pitzDaily tutorial (simpleFoam) not found: Debian package \
                    openfoam-examples not installed"
                .into(),
        );
    };
    let (Some(block_mesh), Some(decompose)) = (which("blockMesh"), which("decomposePar")) else {
        return Err(not_installed(spec, "blockMesh / decomposePar"));
    };
    let env = vec![("WM_PROJECT_DIR".to_string(), project.to_string())];
    // The case, meshed and decomposed once (serial), then copied into
    // every run's directory.
    let case = ctx.dir.join("case");
    let _ = fs::remove_dir_all(&case);
    copy(tutorial, &case)?;
    let vars = [
        ("ITERS", OPENFOAM_ITERS.to_string()),
        ("RANKS", ctx.ranks.to_string()),
    ];
    for f in ["controlDict", "decomposeParDict"] {
        let t = template(&ctx.src.join("openfoam").join(f), &vars)?;
        write(&case.join("system").join(f), &t)?;
    }
    for (tool, log) in [
        (&block_mesh, "openfoam-blockMesh"),
        (&decompose, "openfoam-decomposePar"),
    ] {
        let mut cmd = Command::new(tool);
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
        let o = ctx.runner.run_plain_in(cmd, log, &case);
        if !o.ok {
            return Err(format!(
                "{} failed ({}):\n{}",
                tool.display(),
                o.error,
                runner::tail(&format!("{}{}", o.stdout, o.stderr), 6)
            ));
        }
    }
    let mut files = vec![
        (case.join("system"), "system".to_string()),
        (case.join("constant"), "constant".to_string()),
    ];
    for k in 0..ctx.ranks {
        let p = format!("processor{k}");
        if !case.join(&p).is_dir() {
            return Err(format!("decomposePar made no {p} in {}", case.display()));
        }
        files.push((case.join(&p), p));
    }
    Ok(Prepared {
        bin,
        args: vec!["-parallel".into()],
        env,
        files,
        what: format!(
            "simpleFoam pitzDaily (12225 cells, k-epsilon), {OPENFOAM_ITERS} SIMPLE iterations, \
             decomposePar simple ({} 1 1)",
            ctx.ranks
        ),
    })
}

/// The solver lines of an OpenFOAM log (without the clock lines).
pub fn openfoam_log(out: &str) -> Vec<String> {
    out.lines()
        .map(str::trim)
        .filter(|t| {
            t.starts_with("Time = ")
                || t.contains("Solving for")
                || t.starts_with("time step continuity errors")
                || t.contains("solution converged")
        })
        .map(norm)
        .collect()
}

fn extract_openfoam(out: &str, wd: &Path, ranks: usize) -> Result<Extract, String> {
    let mut physics = openfoam_log(out);
    if !physics.iter().any(|l| l.contains("Solving for")) {
        return Err("no solver lines ('Solving for') in simpleFoam's output".into());
    }
    if !out.lines().any(|l| l.trim() == "End") {
        return Err("simpleFoam did not reach 'End'".into());
    }
    for k in 0..ranks {
        let pdir = wd.join(format!("processor{k}"));
        // the latest time directory
        let last = fs::read_dir(&pdir)
            .map_err(|e| format!("cannot read {}: {e}", pdir.display()))?
            .flatten()
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().to_string();
                n.parse::<f64>().ok().map(|t| (t, n))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let Some((t, tname)) = last.filter(|x| x.0 > 0.0) else {
            return Err(format!("no time directory written in {}", pdir.display()));
        };
        let _ = t;
        let tdir = pdir.join(&tname);
        let mut fields: Vec<PathBuf> = fs::read_dir(&tdir)
            .map_err(|e| format!("cannot read {}: {e}", tdir.display()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        fields.sort();
        for f in fields {
            let text =
                fs::read_to_string(&f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
            let fname = f
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            physics.push(format!("== processor{k}/{tname}/{fname}"));
            physics.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(norm),
            );
        }
    }
    Ok(Extract {
        physics,
        metrics: vec![],
    })
}

// ------------------------------------------------------------------ CP2K

const CP2K_DATA_DIRS: &[&str] = &["/usr/share/cp2k", "/usr/share/cp2k/data"];

fn prepare_cp2k(ctx: &Ctx, spec: &AppSpec, bin: PathBuf) -> Result<Prepared, String> {
    let data = std::env::var("CP2K_DATA_DIR")
        .ok()
        .into_iter()
        .chain(CP2K_DATA_DIRS.iter().map(|s| s.to_string()))
        .find(|d| {
            Path::new(d).join("BASIS_MOLOPT").is_file()
                && Path::new(d).join("GTH_POTENTIALS").is_file()
        });
    let Some(data) = data else {
        return Err(not_installed(spec, "CP2K's BASIS_MOLOPT / GTH_POTENTIALS"));
    };
    let input = ctx.src.join("cp2k/h2o.inp");
    if !input.is_file() {
        return Err(format!("{} missing", input.display()));
    }
    Ok(Prepared {
        bin,
        args: vec!["-i".into(), "h2o.inp".into(), "-o".into(), "h2o.out".into()],
        env: vec![("CP2K_DATA_DIR".into(), data)],
        files: vec![(input, "h2o.inp".into())],
        what: "cp2k.psmp Quickstep energy + forces: water dimer, PBE, DZVP-MOLOPT-SR-GTH, \
               280 Ry, 9 A box"
            .into(),
    })
}

/// The SCF and forces of a CP2K output, without the per-step timings.
pub fn cp2k_physics(out: &str) -> Vec<String> {
    let mut v = vec![];
    let mut scf = false;
    let mut forces = false;
    for l in out.lines() {
        let t = l.trim();
        if t.contains("SCF WAVEFUNCTION OPTIMIZATION") {
            scf = true;
        }
        if t.starts_with("ATOMIC FORCES in") {
            forces = true;
        }
        if scf {
            let f: Vec<&str> = t.split_whitespace().collect();
            if f.first().is_some_and(|x| x.parse::<u64>().is_ok()) {
                // a step line: drop its time column (F6.1: one decimal)
                let kept: Vec<&str> = f
                    .into_iter()
                    .filter(|x| {
                        let mut it = x.split('.');
                        !matches!((it.next(), it.next(), it.next()),
                            (Some(a), Some(b), None) if !a.is_empty()
                                && a.chars().all(|c| c.is_ascii_digit())
                                && b.len() == 1
                                && b.chars().all(|c| c.is_ascii_digit()))
                    })
                    .collect();
                v.push(kept.join(" "));
            } else if !t.is_empty() && !t.starts_with("----") {
                v.push(norm(t));
            }
            if t.starts_with("ENERGY| Total FORCE_EVAL") {
                scf = false;
            }
        } else if forces {
            if !t.is_empty() {
                v.push(norm(t));
            }
            if t.starts_with("SUM OF ATOMIC FORCES") {
                forces = false;
            }
        }
    }
    v
}

fn extract_cp2k(out: &str) -> Result<Extract, String> {
    let physics = cp2k_physics(out);
    if !physics
        .iter()
        .any(|l| l.starts_with("ENERGY| Total FORCE_EVAL"))
    {
        return Err("no 'ENERGY| Total FORCE_EVAL' line in h2o.out".into());
    }
    let mut metrics = vec![];
    // timing report: " CP2K   1  1.0   0.250   0.265   44.295   44.296"
    if let Some(t) = out
        .lines()
        .rev()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() == 7 && f[0] == "CP2K")
        .and_then(|f| f[6].parse::<f64>().ok())
    {
        metrics.push((
            AppMetric::new("cp2k", "CP2K total (own timer)", "s", false),
            t,
        ));
    }
    Ok(Extract { physics, metrics })
}

// ------------------------------------------------------------------ GROMACS

fn prepare_gromacs(ctx: &Ctx, bin: PathBuf) -> Result<Prepared, String> {
    // serial tools: gmx (or gmx_mpi as a singleton)
    let gmx = which("gmx").unwrap_or_else(|| bin.clone());
    let prep = ctx.dir.join("prep");
    let _ = fs::remove_dir_all(&prep);
    fs::create_dir_all(&prep).map_err(|e| format!("cannot create {}: {e}", prep.display()))?;
    let step = |args: &[&str], log: &str| -> Result<String, String> {
        let mut cmd = Command::new(&gmx);
        cmd.args(args).env("GMX_MAXBACKUP", "-1");
        let o = ctx.runner.run_plain_in(cmd, log, &prep);
        let text = format!("{}{}", o.stdout, o.stderr);
        if !o.ok {
            return Err(format!(
                "{} {} failed ({}):\n{}",
                gmx.display(),
                args.join(" "),
                o.error,
                runner::tail(&text, 8)
            ));
        }
        Ok(text)
    };
    let mut solvate = vec!["solvate", "-cs", "spc216.gro", "-box"];
    solvate.extend(GROMACS_BOX);
    solvate.extend(["-o", "water.gro"]);
    let text = step(&solvate, "gromacs-solvate")?;
    let nsol = text
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Number of solvent molecules:")
                .and_then(|r| r.trim().parse::<usize>().ok())
        })
        .ok_or("gmx solvate did not say how many water molecules it placed")?;
    let top = template(
        &ctx.src.join("gromacs/topol.top"),
        &[("NSOL", nsol.to_string())],
    )?;
    write(&prep.join("topol.top"), &top)?;
    let mdp = template(
        &ctx.src.join("gromacs/md.mdp"),
        &[("STEPS", GROMACS_STEPS.to_string())],
    )?;
    write(&prep.join("md.mdp"), &mdp)?;
    step(
        &[
            "grompp",
            "-f",
            "md.mdp",
            "-c",
            "water.gro",
            "-p",
            "topol.top",
            "-o",
            "md.tpr",
        ],
        "gromacs-grompp",
    )?;
    Ok(Prepared {
        bin,
        args: [
            "mdrun",
            "-s",
            "md.tpr",
            "-g",
            "md.log",
            "-ntomp",
            "1",
            "-npme",
            "0",
            "-dlb",
            "no",
            "-notunepme",
            "-reprod",
            "-nb",
            "cpu",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        env: vec![("GMX_MAXBACKUP".into(), "-1".into())],
        files: vec![(prep.join("md.tpr"), "md.tpr".into())],
        what: format!(
            "gmx_mpi mdrun: {nsol} SPC/E waters ({} atoms), PME, {GROMACS_STEPS} steps of 2 fs, \
             domain decomposition, -reprod -dlb no",
            nsol * 3
        ),
    })
}

/// The energy blocks of an md.log (every nstlog step and the averages),
/// with their step and time.
pub fn gromacs_physics(log: &str) -> Vec<String> {
    let mut v = vec![];
    let mut block = false;
    let mut step_next = false;
    for l in log.lines() {
        let t = l.trim();
        if step_next {
            v.push(norm(t));
            step_next = false;
            continue;
        }
        if t == "Step Time" || norm(t) == "Step Time" {
            v.push("Step Time".into());
            step_next = true;
            continue;
        }
        if t.starts_with("Energies (") {
            block = true;
            v.push(norm(t));
            continue;
        }
        if block {
            if t.is_empty() {
                block = false;
            } else {
                v.push(norm(t));
            }
        }
    }
    v
}

fn extract_gromacs(log: &str) -> Result<Extract, String> {
    let physics = gromacs_physics(log);
    if !physics.iter().any(|l| l.starts_with("Energies")) {
        return Err("no energies in md.log".into());
    }
    let mut metrics = vec![];
    // "       Time:       68.320       34.179      199.9"
    if let Some(t) = log
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() == 4 && f[0] == "Time:")
        .and_then(|f| f[2].parse::<f64>().ok())
    {
        metrics.push((
            AppMetric::new("mdrun", "mdrun wall (own timer)", "s", false),
            t,
        ));
    }
    Ok(Extract { physics, metrics })
}

// ------------------------------------------------------------------ compare

/// A token as a number, without the punctuation around it.
fn number(tok: &str) -> Option<f64> {
    let t = tok.trim_matches(|c: char| ",;:()[]".contains(c));
    if t.is_empty() || !t.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// Same lines, and the same words where they are not numbers.
fn same_shape(a: &[String], b: &[String]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            let (fx, fy): (Vec<&str>, Vec<&str>) = (
                x.split_whitespace().collect(),
                y.split_whitespace().collect(),
            );
            fx.len() == fy.len()
                && fx
                    .iter()
                    .zip(&fy)
                    .all(|(p, q)| p == q || (number(p).is_some() && number(q).is_some()))
        })
}

/// Largest relative difference between the numbers of two same-shaped outputs.
fn max_rel(a: &[String], b: &[String]) -> f64 {
    let mut m: f64 = 0.0;
    for (x, y) in a.iter().zip(b) {
        for (p, q) in x.split_whitespace().zip(y.split_whitespace()) {
            if let (Some(u), Some(v)) = (number(p), number(q)) {
                if u != v {
                    m = m.max((u - v).abs() / u.abs().max(v.abs()).max(1e-300));
                }
            }
        }
    }
    m
}

fn first_difference(name: &str, a: &[String], ref_name: &str, r: &[String]) -> String {
    let i = r
        .iter()
        .zip(a.iter())
        .position(|(x, y)| x != y)
        .unwrap_or(r.len().min(a.len()));
    format!(
        "{name} differs from {ref_name} at line {} of {}: '{}' vs '{}'{}",
        i + 1,
        r.len(),
        a.get(i).map(String::as_str).unwrap_or("<none>"),
        r.get(i).map(String::as_str).unwrap_or("<none>"),
        if a.len() != r.len() {
            format!(" ({} vs {} lines)", a.len(), r.len())
        } else {
            String::new()
        }
    )
}

/// Compare every run's physics with the first stock run's. `exact`: every
/// heapmpi run must print exactly that. Otherwise each number of a heapmpi
/// run must lie within the range the stock runs span (and every word that
/// is not a number be the same).
pub fn compare(runs: &[(String, Variant, Vec<String>)], exact: bool) -> Verdict {
    let stock: Vec<&(String, Variant, Vec<String>)> =
        runs.iter().filter(|r| r.1 == Variant::Stock).collect();
    let heap: Vec<&(String, Variant, Vec<String>)> =
        runs.iter().filter(|r| r.1 == Variant::Heapmpi).collect();
    let mut v = Verdict {
        exact,
        stock_runs: stock.len(),
        heap_runs: heap.len(),
        stock_identical: true,
        heap_identical: true,
        ..Default::default()
    };
    let Some(reference) = stock.first() else {
        v.ok = false;
        v.heap_identical = false;
        v.difference = Some("no stock run succeeded: nothing to compare with".into());
        return v;
    };
    let (ref_name, _, r) = reference;
    v.lines = r.len();
    for (name, _, s) in stock.iter().skip(1) {
        if s != r {
            v.stock_identical = false;
            if v.stock_difference.is_none() {
                v.stock_difference = Some(first_difference(name, s, ref_name, r));
            }
            if same_shape(s, r) {
                v.max_rel_stock = v.max_rel_stock.max(max_rel(s, r));
            }
        }
    }
    // the range of every number over the stock runs shaped like the first
    let shaped: Vec<&Vec<String>> = stock
        .iter()
        .map(|x| &x.2)
        .filter(|s| same_shape(s, r))
        .collect();
    v.ok = !heap.is_empty();
    for (name, _, h) in &heap {
        if h == r {
            continue;
        }
        v.heap_identical = false;
        let shape = same_shape(h, r);
        if shape {
            v.max_rel_heap = v.max_rel_heap.max(max_rel(h, r));
        }
        if exact || !shape {
            if v.ok || v.difference.is_none() {
                v.difference = Some(first_difference(name, h, ref_name, r));
            }
            v.ok = false;
            continue;
        }
        // within the stock spread?
        'lines: for (i, line) in h.iter().enumerate() {
            for (j, tok) in line.split_whitespace().enumerate() {
                let Some(x) = number(tok) else { continue };
                let vals: Vec<f64> = shaped
                    .iter()
                    .filter_map(|s| s[i].split_whitespace().nth(j).and_then(number))
                    .collect();
                let lo = vals.iter().cloned().fold(f64::INFINITY, f64::min);
                let hi = vals.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                if x < lo || x > hi {
                    if v.ok || v.difference.is_none() {
                        v.difference = Some(format!(
                            "{name} line {}: '{}': {x} outside the stock runs' range [{lo}, {hi}] \
                             (stock {ref_name}: '{}')",
                            i + 1,
                            line,
                            r[i]
                        ));
                    }
                    v.ok = false;
                    break 'lines;
                }
            }
        }
    }
    if v.ok && !v.heap_identical && v.difference.is_none() {
        // within the spread, yet not identical: say where
        if let Some((name, _, h)) = heap.iter().find(|x| x.2 != *r) {
            v.difference = Some(first_difference(name, h, ref_name, r));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "LAMMPS (7 Jan 2022)\nStep Temp E_pair E_mol TotEng Press \n       0            3   -6.7733681            0   -2.2744931   -3.7033504 \n      50    1.6842865   -4.8082494            0   -2.2824513    5.5666131 \nLoop time of 0.27803 on 2 procs for 250 steps with 4000 atoms\n\nPerformance: 1\nStep Temp\n 250 1.6 \nLoop time of 1.5 on 2 procs\n";

    #[test]
    fn thermo_rows() {
        let t = thermo(LOG);
        assert_eq!(t.len(), 5);
        assert_eq!(t[0], "Step Temp E_pair E_mol TotEng Press");
        assert_eq!(t[1], "0 3 -6.7733681 0 -2.2744931 -3.7033504");
        assert!((loop_time(LOG).unwrap() - 1.77803).abs() < 1e-9);
    }

    #[test]
    fn names_and_grid() {
        assert_eq!(find("pw.x").unwrap().name, "qe");
        assert_eq!(find("GMX").unwrap().name, "gromacs");
        assert!(find("nope").is_none());
        assert_eq!(grid(2), (1, 2));
        assert_eq!(grid(4), (2, 2));
        assert_eq!(grid(3), (1, 3));
        assert_eq!(grid(6), (2, 3));
    }

    const HPCC: &str = "Found 0 errors in 524288 locations (passed).\n\
TIME   M     N    MB  NB  P   Q     TIME   CHECK   GB/s   RESID\n\
WALL   500   500  80  80   1   2     0.04 PASSED    0.050  0.00\n\
CPU    500   500  80  80   1   2     0.00 PASSED    0.517  0.00\n\
    5 tests completed and passed residual checks.\n\
||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=        0.0072510 ...... PASSED\n\
Begin of Summary section.\nSuccess=1\nHPL_Tflops=0.000544117\nPTRANS_residual=0\n\
MaxPingPongLatency_usec=0.36\nEnd of Summary section.\n";

    #[test]
    fn hpcc_parse() {
        let v = hpcc_verification(HPCC);
        assert_eq!(v[0], "Found 0 errors in 524288 locations (passed).");
        assert_eq!(v[1], "PTRANS WALL 500 500 80 80 1 2 PASSED 0.00");
        assert_eq!(v[2], "5 tests completed and passed residual checks.");
        assert!(v[3].starts_with("||Ax-b||"));
        assert_eq!(v[4], "Success=1");
        assert_eq!(v[5], "PTRANS_residual=0");
        // a CPU row missing (CPU time 0) is no difference
        let no_cpu: String = HPCC
            .lines()
            .filter(|l| !l.starts_with("CPU"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(hpcc_verification(&no_cpu), v);
        let x = extract_hpcc(HPCC).unwrap();
        let hpl = x.metrics.iter().find(|m| m.0.key == "HPL_Tflops").unwrap();
        assert!((hpl.1 - 0.544117).abs() < 1e-9);
        let lat = x
            .metrics
            .iter()
            .find(|m| m.0.key.starts_with("MaxPing"))
            .unwrap();
        assert!(!lat.0.higher_is_better);
    }

    #[test]
    fn qe_parse() {
        let out = "     total energy              =     -63.32367433 Ry\n\
     estimated scf accuracy    <       0.06 Ry\n\
     total cpu time spent up to now is        1.2 secs\n\
!    total energy              =     -63.33809343 Ry\n\
     atom    1 type  1   force =     0.00697661    0.00458985    0.00458985\n\
     Total force =     0.034096     Total SCF correction =     0.000003\n\
          total   stress  (Ry/bohr**3)                   (kbar)     P=       -8.61\n\
  -0.00005852   0.00000000   0.00000000           -8.61        0.00        0.00\n\
   0.00000000  -0.00005852   0.00000000            0.00       -8.61        0.00\n\
   0.00000000   0.00000000  -0.00005852            0.00        0.00       -8.61\n\
     PWSCF        :      6.65s CPU  1m41.80s WALL\n";
        let p = qe_physics(out);
        assert_eq!(p.len(), 9);
        assert_eq!(p[2], "! total energy = -63.33809343 Ry");
        assert!((qe_wall(out).unwrap() - 101.8).abs() < 1e-9);
        assert!(extract_qe(out).is_ok());
    }

    #[test]
    fn cp2k_parse() {
        let out = "  SCF WAVEFUNCTION OPTIMIZATION\n\
  Step     Update method      Time    Convergence         Total energy    Change\n\
  ------------------------------------------------------------------------------\n\
     1 P_Mix/Diag. 0.40E+00    2.5     0.68561837       -16.9634186472 -1.70E+01\n\
    10 DIIS/Diag.  0.25E-05   14.8     0.00000190       -17.2196584865 -2.62E-09\n\
  Total energy:                                               -17.21965848654233\n\
 ENERGY| Total FORCE_EVAL ( QS ) energy [a.u.]:              -17.219658486542333\n\
 some timing 1.5\n\
 ATOMIC FORCES in [a.u.]\n\
      1      1      O           0.00000000     0.00000000    -0.02004098\n\
 SUM OF ATOMIC FORCES           0.00000000     0.00000000    -0.00474591     0.00474591\n\
 CP2K                                 1  1.0    0.250    0.265   44.295   44.296\n";
        let p = cp2k_physics(out);
        assert_eq!(
            p[2],
            "1 P_Mix/Diag. 0.40E+00 0.68561837 -16.9634186472 -1.70E+01"
        );
        assert_eq!(
            p[3],
            "10 DIIS/Diag. 0.25E-05 0.00000190 -17.2196584865 -2.62E-09"
        );
        assert!(p.iter().all(|l| !l.contains("timing")));
        assert!(p.last().unwrap().starts_with("SUM OF ATOMIC FORCES"));
        let x = extract_cp2k(out).unwrap();
        assert_eq!(x.metrics[0].1, 44.296);
    }

    #[test]
    fn gromacs_parse() {
        let log = "           Step           Time\n              0        0.00000\n\n\
   Energies (kJ/mol)\n        LJ (SR)   Coulomb (SR)\n    3.79644e+03   -2.32391e+04\n\n\
 Performance stuff\n               Core t (s)   Wall t (s)        (%)\n\
       Time:       68.320       34.179      199.9\n";
        let p = gromacs_physics(log);
        assert_eq!(
            p,
            [
                "Step Time",
                "0 0.00000",
                "Energies (kJ/mol)",
                "LJ (SR) Coulomb (SR)",
                "3.79644e+03 -2.32391e+04"
            ]
        );
        assert_eq!(extract_gromacs(log).unwrap().metrics[0].1, 34.179);
    }

    #[test]
    fn openfoam_parse() {
        let out = "Time = 1\n\nsmoothSolver:  Solving for Ux, Initial residual = 1, Final residual = 0.0538101, No Iterations 1\nExecutionTime = 0.24 s  ClockTime = 3 s\n";
        assert_eq!(openfoam_log(out).len(), 2);
    }

    fn runs(v: &[(&str, Variant, &[&str])]) -> Vec<(String, Variant, Vec<String>)> {
        v.iter()
            .map(|(n, var, l)| {
                (
                    n.to_string(),
                    *var,
                    l.iter().map(|s| s.to_string()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn compare_exact_and_spread() {
        use Variant::*;
        let same = runs(&[
            ("s1", Stock, &["E = 1.5", "x"]),
            ("h1", Heapmpi, &["E = 1.5", "x"]),
        ]);
        let v = compare(&same, true);
        assert!(v.ok && v.heap_identical && v.stock_identical && v.difference.is_none());
        let diff = runs(&[
            ("s1", Stock, &["E = 1.5", "x"]),
            ("h1", Heapmpi, &["E = 1.6", "x"]),
        ]);
        let v = compare(&diff, true);
        assert!(!v.ok);
        assert!(v.difference.unwrap().contains("line 1"));
        assert!((v.max_rel_heap - 0.1 / 1.6).abs() < 1e-12);
        // spread mode: within [1.5, 1.7] passes, outside fails
        let spread = runs(&[
            ("s1", Stock, &["E = 1.5,"]),
            ("s2", Stock, &["E = 1.7,"]),
            ("h1", Heapmpi, &["E = 1.6,"]),
        ]);
        let v = compare(&spread, false);
        assert!(v.ok && !v.heap_identical && !v.stock_identical);
        let out = runs(&[
            ("s1", Stock, &["E = 1.5"]),
            ("s2", Stock, &["E = 1.5"]),
            ("h1", Heapmpi, &["E = 1.6"]),
        ]);
        assert!(!compare(&out, false).ok);
        let words = runs(&[("s1", Stock, &["PASSED"]), ("h1", Heapmpi, &["FAILED"])]);
        assert!(!compare(&words, false).ok);
        assert!(!compare(&runs(&[("h1", Heapmpi, &["a"])]), true).ok);
    }
}
