//! Deployment as HPC centres do it: an installed tree with modulefiles,
//! and the Spack recipe.
//!
//! - `wrappers/heapmpi-build openmpi mpich --no-build --prefix DIR`
//!   installs the two Debian builds as a tree (`bin/`, `lib/<mpi>/`,
//!   `share/heapmpi/`, `share/modulefiles/heapmpi/<version>{,.lua}`). In a
//!   clean shell, under Lmod (Debian's `lmod`) and under Environment
//!   Modules (its `modulecmd.tcl`, which `tests/run` unpacks from Debian's
//!   `environment-modules` into `target/modules`: the two packages conflict
//!   and cannot both be installed), `module load heapmpi` must put the
//!   tree's `bin` first in `PATH`, set `HEAPMPI_ROOT`, leave `LD_PRELOAD`
//!   alone; ranks started through the tree's `heapmpi-exec` by both MPIs'
//!   launchers must run accelerated; `module unload` must give back the
//!   environment exactly. The tree, copied elsewhere, must work from there
//!   (the modulefiles find it from their own path), and its `heapmpicc`
//!   must link a `--wrap` program.
//! - The Spack recipe (`spack/packages/heapmpi/package.py`) is run with a
//!   minimal stand-in for Spack's package API (`tests/spack/`): its
//!   directives, `install` (staged in the checkout, MPICH as the spec's
//!   MPI), `setup_run_environment` and its test method; the tree it
//!   installed must then run ranks accelerated.

use heapmpi_testkit as common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
/// The two tests take turns. The recipe's install builds in the
/// checkout's `target/mpich` with `LIBCLANG_PATH` set, which cargo sees as
/// a change and answers with a rebuild there; the tree test copies that
/// very library, and must never copy it half-written.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A fresh directory under `target/deploy` for this test process.
fn scratch(tag: &str) -> PathBuf {
    let d = repo_root()
        .join("target")
        .join("deploy")
        .join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A command run by bash in an empty environment (but for `PATH`,
/// `HOME`), as a login shell of a new user would start.
fn clean_bash(script: &str) -> Command {
    let mut c = Command::new("env");
    c.args([
        "-i",
        "HOME=/root",
        "PATH=/usr/local/bin:/usr/bin:/bin",
        "bash",
        "--noprofile",
        "--norc",
        "-c",
        script,
    ]);
    c.current_dir(repo_root());
    c
}

/// How each module system's `module` command is defined in the script.
fn module_command(system: &str) -> Result<String, String> {
    match system {
        "lmod" => {
            let lmod = require_tool_path("/usr/share/lmod/lmod/libexec/lmod")?;
            Ok(format!(
                "module() {{ eval \"$({} bash \"$@\")\"; }}",
                lmod.display()
            ))
        }
        _ => {
            let tcl = repo_root().join("target/modules/usr/lib/x86_64-linux-gnu/modulecmd.tcl");
            require_tool_path(&tcl.display().to_string())?;
            require_tool("tclsh");
            Ok(format!(
                "module() {{ eval \"$(tclsh {} bash \"$@\")\"; }}",
                tcl.display()
            ))
        }
    }
}

/// A file the test needs: missing, the test fails (tests/run installs it).
fn require_tool_path(p: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(p);
    if p.exists() {
        Ok(p)
    } else {
        Err(format!(
            "{} missing: this test cannot run (tests/run installs it)",
            p.display()
        ))
    }
}

/// The environment of a shell, minus what a module system keeps for its
/// own bookkeeping (the loaded list, Lmod's module table) and bash's `_`.
const ENV_DUMP: &str = "env | grep -Ev \
    '^(_|_LMFILES_|LOADEDMODULES|MODULEPATH|MODULEPATH_modshare|_ModuleTable[0-9A-Za-z_]*|__LMOD_REF_COUNT_[A-Z_]*|LMOD_[A-Z_]*|__MODULES_[A-Z_]*)=' \
    | sort";

/// Loads the tree's module under `system`, runs both MPIs' `share_pointers`
/// through its `heapmpi-exec`, unloads, and checks the environment.
fn module_round_trip(
    system: &str,
    tree: &Path,
    progs: &[(Flavour, PathBuf)],
) -> Result<(), String> {
    let module = module_command(system)?;
    let mut script = format!(
        "set -e\n{module}\nbefore=$({ENV_DUMP})\n\
         module use {mf}\nmodule load heapmpi\n\
         echo \"HEAPMPI_ROOT=$HEAPMPI_ROOT\"\necho \"PATH=$PATH\"\n\
         echo \"LD_PRELOAD=${{LD_PRELOAD-unset}}\"\n\
         echo \"exec=$(type -P heapmpi-exec)\"\n",
        mf = tree.join("share/modulefiles").display()
    );
    for (f, prog) in progs {
        let launch = if f.is_openmpi() {
            format!(
                "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 {} --oversubscribe -x HEAPMPI_STATS=1 -np 2",
                f.launcher()
            )
        } else {
            format!("{} -genv HEAPMPI_STATS 1 -n 2", f.launcher())
        };
        script += &format!(
            "echo \"run {name}\"\n{launch} heapmpi-exec {prog} 2>&1\n",
            name = f.name(),
            prog = prog.display()
        );
    }
    script += &format!(
        "module unload heapmpi\nmodule unuse {mf}\nafter=$({ENV_DUMP})\n\
         if [ \"$before\" = \"$after\" ]; then echo RESTORED; else \
         diff <(echo \"$before\") <(echo \"$after\"); fi\n",
        mf = tree.join("share/modulefiles").display()
    );
    let o = run_command(clean_bash(&script), job_timeout())?;
    if !o.status.success() {
        return Err(format!("the script failed:\n{}", o.report()));
    }
    let out = &o.stdout;
    let root = tree.display().to_string();
    let want = [
        format!("HEAPMPI_ROOT={root}"),
        format!("PATH={root}/bin:"),
        "LD_PRELOAD=unset".to_string(),
        format!("exec={root}/bin/heapmpi-exec"),
        "RESTORED".to_string(),
    ];
    for w in &want {
        if !out.lines().any(|l| l.starts_with(w.as_str())) {
            return Err(format!(
                "{system}: no line starting with `{w}`:\n{}",
                o.report()
            ));
        }
    }
    for (f, _) in progs {
        let part = out
            .split(&format!("run {}\n", f.name()))
            .nth(1)
            .unwrap_or("")
            .split("\nrun ")
            .next()
            .unwrap_or("");
        let active = part
            .lines()
            .filter(|l| l.contains("] active ") || l.contains("]: active "))
            .count();
        let verified = part.lines().filter(|l| l.contains(": verified ")).count();
        if active != 2 || verified != 2 {
            return Err(format!(
                "{system}: {}: {active} ranks report an active heap, {verified} verified (want 2 and 2):\n{}",
                f.name(),
                o.report()
            ));
        }
    }
    Ok(())
}

/// The stock `share_pointers` of both Debian MPIs.
fn programs() -> Vec<(Flavour, PathBuf)> {
    FLAVOURS
        .into_iter()
        .map(|f| {
            ensure_library(f).unwrap();
            (f, compile("share_pointers", f, Mode::Stock).unwrap())
        })
        .collect()
}

/// Installs the Debian builds as a tree; loads and unloads it under Lmod
/// and Environment Modules; runs ranks through it; moves it; links with
/// its heapmpicc.
#[test]
fn install_tree_and_modulefiles() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let progs = programs();
    let dir = scratch("tree");
    let tree = dir.join("heapmpi");
    let mut fl = Failures::new();
    let mut cmd = Command::new(repo_root().join("wrappers/heapmpi-build"));
    cmd.args(["openmpi", "mpich", "--no-build", "--prefix"])
        .arg(&tree)
        .current_dir(repo_root());
    clean_env(&mut cmd);
    fl.record(
        "heapmpi-build --prefix",
        run_command(cmd, job_timeout()),
        |o| {
            check_success(o)?;
            for p in [
                "bin/heapmpirun",
                "bin/heapmpi-exec",
                "bin/heapmpicc",
                "lib/openmpi/libheapmpi.so",
                "lib/openmpi/libheapmpi.a",
                "lib/mpich/libheapmpi.so",
                "lib/mpich/libheapmpi.a",
                "share/heapmpi/heapmpi.ld-opts",
            ] {
                if !tree.join(p).exists() {
                    return Err(format!("{p} not installed"));
                }
            }
            Ok(())
        },
    );
    for system in ["lmod", "environment-modules"] {
        let case = format!("module load/unload under {system}");
        match module_round_trip(system, &tree, &progs) {
            Ok(()) => fl.passed(&case, ""),
            Err(e) => fl.fail(&case, e),
        }
    }
    // Moved as a whole, the tree works from its new place.
    let moved = dir.join("elsewhere");
    let _ = std::fs::rename(&tree, &moved);
    match module_round_trip("lmod", &moved, &progs) {
        Ok(()) => fl.passed("moved tree", ""),
        Err(e) => fl.fail("moved tree", e),
    }
    // Its heapmpicc links a --wrap program against its own archive.
    let exe = dir.join("share_pointers_wrap");
    let mut cc = Command::new(moved.join("bin/heapmpicc"));
    cc.env("MPICC", "mpicc.mpich")
        .args(CFLAGS)
        .arg("-I")
        .arg(c_dir())
        .arg("-o")
        .arg(&exe)
        .arg(c_source("share_pointers"));
    clean_env(&mut cc);
    cc.env("HEAPMPI_VERBOSE", "1");
    fl.record(
        "heapmpicc of the tree",
        run_command(cc, job_timeout()),
        |o| {
            check_success(o)?;
            let archive = moved.join("lib/mpich/libheapmpi.a");
            if !o.stderr.contains(&archive.display().to_string()) {
                return Err(format!("not linked with {}", archive.display()));
            }
            Ok(())
        },
    );
    let mut run = mpi_command(Flavour::Mpich, Mode::Stock, 2, &exe, &[]);
    run.envs(STATS);
    fl.record(
        "--wrap program of the tree",
        run_command(run, job_timeout()),
        |o| {
            check_success(o)?;
            check_status_lines(o, 2, HeapState::Active)
        },
    );
    let _ = std::fs::remove_dir_all(&dir);
    fl.finish("install_tree_and_modulefiles");
}

/// Runs the Spack recipe with the stand-in (MPICH as the spec's MPI), then
/// ranks through the tree it installed.
#[test]
fn spack_recipe_installs_a_working_tree() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let progs = programs();
    let dir = scratch("spack");
    let prefix = dir.join("prefix");
    let mut fl = Failures::new();
    let llvm = ["/usr/lib/llvm-14", "/usr/lib/llvm-15", "/usr/lib/llvm-16"]
        .into_iter()
        .find(|p| Path::new(p).join("lib").exists())
        .unwrap_or("/usr/lib/llvm-14");
    let mut cmd = Command::new(require_tool("python3"));
    cmd.arg(repo_root().join("tests/spack/run_recipe.py"))
        .arg(repo_root())
        .args(["mpich", "/usr", "mpicc.mpich", llvm])
        .arg(&prefix)
        .current_dir(repo_root());
    clean_env(&mut cmd);
    fl.record(
        "recipe: install, run environment, test",
        run_command(cmd, Duration::from_secs(1800)),
        |o| {
            check_success(o)?;
            let root = prefix.display().to_string();
            for w in [
                format!("prepend_path PATH {root}/bin"),
                format!("set HEAPMPI_ROOT {root}"),
                "test test_heapmpi_exec_picks_this_build passed".to_string(),
            ] {
                if !o.stdout.lines().any(|l| l == w) {
                    return Err(format!("no line `{w}`"));
                }
            }
            if std::fs::read_dir(prefix.join("share/modulefiles/heapmpi")).map_or(0, |d| d.count())
                != 2
            {
                return Err("the tree lacks its two modulefiles".into());
            }
            Ok(())
        },
    );
    let (f, prog) = progs.iter().find(|(f, _)| *f == Flavour::Mpich).unwrap();
    let mut run = mpi_command(*f, Mode::Stock, 2, &prefix.join("bin/heapmpi-exec"), &[]);
    run.arg(prog).env("HEAPMPI_STATS", "1");
    fl.record(
        "ranks through the Spack-installed heapmpi-exec",
        run_command(run, job_timeout()),
        |o| {
            check_success(o)?;
            check_status_lines(o, 2, HeapState::Active)
        },
    );
    let _ = std::fs::remove_dir_all(&dir);
    fl.finish("spack_recipe_installs_a_working_tree");
}
