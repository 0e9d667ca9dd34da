//! Stock reference runs, computed once per `tests/run` and shared.
//!
//! A conformance case compares heapmpi's stdout with the stock MPI's for
//! the same program, flavour, rank count, arguments and environment. The
//! stock run does not depend on the way in nor on heapmpi's own settings
//! (no heapmpi is loaded), so a program's run serves every heapmpi variant
//! of it (fast-box sizes, statistics, inline sizes, ...) in every suite.
//! `HEAPMPI_TEST_NODE_SIZE` is the exception: the programs read it too
//! (`p2p_util.h` colours its communicators by pretend node). Each key is run once per
//! test process ([`cached`]), and, when `tests/run` names a directory in
//! `HEAPMPI_TEST_REFS`, once per whole run: the first test binary that
//! needs a reference stores it there (stdout and exit status), the others
//! read it. The programs print only what MPI makes deterministic, so one
//! passing stock run stands for all; a failing or timed-out stock run is
//! never stored (each test that needs it runs it again and reports it).

use std::fmt::Write as _;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::OnceLock;
use std::time::Duration;

use super::{once, Case, Cells, Mode, Output};

/// The key of a stock run: everything that can change its stdout.
pub fn key(case: &Case) -> String {
    let mut k = format!("{}-{}-np{}", case.program, case.flavour.name(), case.nranks);
    for a in case.args {
        let _ = write!(k, " {a}");
    }
    let mut env: Vec<_> = case
        .env
        .iter()
        .filter(|(k, _)| !k.starts_with("HEAPMPI_") || *k == "HEAPMPI_TEST_NODE_SIZE")
        .collect();
    env.sort();
    for (n, v) in env {
        let _ = write!(k, " {n}={v}");
    }
    k
}

/// The run-wide directory of shared references (and of the marks of
/// programs built, [`super::compile`]), if `tests/run` made one.
pub fn run_dir() -> Option<PathBuf> {
    std::env::var_os("HEAPMPI_TEST_REFS")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

/// A file name for `key` (hex of its bytes' FNV-1a hash plus a readable
/// prefix; the whole key is stored inside and compared on reading).
fn file_of(key: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let prefix: String = key
        .chars()
        .take(40)
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("{prefix}-{h:016x}.ref")
}

/// A stored reference: the key line, the exit code line, then stdout.
fn load(key: &str) -> Option<Output> {
    let path = run_dir()?.join(file_of(key));
    let text = std::fs::read_to_string(&path).ok()?;
    let (k, rest) = text.split_once('\n')?;
    let (code, stdout) = rest.split_once('\n')?;
    if k != key {
        return None;
    }
    let code: i32 = code.parse().ok()?;
    Some(Output {
        desc: format!("stock reference shared by this run ({})", path.display()),
        status: ExitStatus::from_raw(code << 8),
        stdout: stdout.to_string(),
        stderr: String::new(),
        timed_out: false,
        elapsed: Duration::ZERO,
    })
}

/// Stores a passing reference: written to a temporary name and renamed, so
/// a reader never sees half a file.
fn store(key: &str, out: &Output) {
    let Some(d) = run_dir() else { return };
    let _ = std::fs::create_dir_all(&d);
    let path = d.join(file_of(key));
    let tmp = d.join(format!("{}.{}.tmp", file_of(key), std::process::id()));
    let text = format!("{key}\n{}\n{}", out.status.code().unwrap_or(-1), out.stdout);
    if std::fs::write(&tmp, text).is_ok() {
        let _ = std::fs::rename(&tmp, &path);
    }
}

/// The stock run of `case` (its mode must be [`Mode::Stock`]), from this
/// process's cache, the run's directory, or run now by `run`. `passed`
/// says whether a fresh run may be shared.
pub fn cached(
    case: &Case,
    run: impl FnOnce() -> Result<Output, String>,
    passed: impl Fn(&Output) -> bool,
) -> Result<Output, String> {
    assert_eq!(case.mode, Mode::Stock, "only stock runs are references");
    static CELLS: Cells<String, Result<Output, String>> = OnceLock::new();
    let k = key(case);
    once(&CELLS, k.clone(), || {
        if let Some(o) = load(&k) {
            return Ok(o);
        }
        let res = run();
        if let Ok(o) = &res {
            if !o.timed_out && passed(o) {
                store(&k, o);
            }
        }
        res
    })
}
