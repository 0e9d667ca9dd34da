//! Links the cdylib with heapmpi's own symbol version script, so the
//! exported symbol set is spelled out in one reviewed file
//! (`linker-scripts/heapmpi.map`) rather than implied by attributes, and
//! tells the code which MPI it is built against (`cfg(heapmpi_openmpi)` or
//! `cfg(heapmpi_mpich)`): the same compiler wrapper `mpi-sys` uses
//! (`$MPICC`, else `mpicc`) preprocesses `<mpi.h>`, and the macros it
//! defines name the MPI. A few things have no common C spelling, such as
//! the handle conversions MPICH defines as macros and the Fortran
//! bindings' `MPI_BOTTOM`.

use std::io::Write;
use std::process::Command;

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let map = format!("{dir}/linker-scripts/heapmpi.map");
    let mpi4_list = format!("{dir}/linker-scripts/mpi4.list");
    println!("cargo:rerun-if-changed={map}");
    println!("cargo:rerun-if-changed={mpi4_list}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=MPICC");
    println!("cargo:rustc-check-cfg=cfg(heapmpi_openmpi)");
    println!("cargo:rustc-check-cfg=cfg(heapmpi_mpich)");
    println!("cargo:rustc-check-cfg=cfg(heapmpi_mpi4)");
    // The MPI-4.0 routines heapmpi intercepts (`linker-scripts/mpi4.list`)
    // exist only in an MPI that declares them: their entry points are
    // compiled (`cfg(heapmpi_mpi4)`) and exported only then, the version
    // script extended with their names and `__wrap_` twins.
    let mpi4 = declares_mpi4();
    let script = if mpi4 {
        println!("cargo:rustc-cfg=heapmpi_mpi4");
        let base = std::fs::read_to_string(&map).expect("linker-scripts/heapmpi.map");
        let list = std::fs::read_to_string(&mpi4_list).expect("linker-scripts/mpi4.list");
        let mut extra = String::from("    /* linker-scripts/mpi4.list */\n");
        for name in list
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            extra.push_str(&format!("    {name}; __wrap_{name};\n"));
        }
        let (head, tail) = base
            .split_once("  local:")
            .expect("heapmpi.map has a local: section");
        let out = format!(
            "{}/heapmpi.map",
            std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")
        );
        std::fs::write(&out, format!("{head}{extra}  local:{tail}"))
            .expect("write the version script");
        out
    } else {
        map
    };
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={script}");
    // A preloaded library is loaded into every process of the job's
    // ranks, children included (`system()` runs `sh` with the same
    // LD_PRELOAD): it must find the MPI library it links against without
    // the program's own RPATH. An MPI outside the default search path (a
    // pip wheel's `<venv>/lib`, a module's prefix) gets its directory as
    // the library's RUNPATH, as the MPI's own `mpicc` gives programs.
    for dir in mpi_lib_dirs() {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-rpath,{dir}");
    }
    match flavour() {
        Some(f) => println!("cargo:rustc-cfg=heapmpi_{f}"),
        None => println!(
            "cargo:warning=could not tell which MPI <mpi.h> belongs to (MPICC={}); \
             building for Open MPI's conventions",
            std::env::var("MPICC").unwrap_or_else(|_| "mpicc".into())
        ),
    }
}

/// Whether `<mpi.h>` declares the MPI-4.0 large-count routines (MPICH
/// from 4.0, Open MPI from 5.0; not Open MPI 4.1).
fn declares_mpi4() -> bool {
    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".into());
    let Ok(out_dir) = std::env::var("OUT_DIR") else {
        return false;
    };
    let src = format!("{out_dir}/probe_mpi4.c");
    if std::fs::write(&src, "#include <mpi.h>\n").is_err() {
        return false;
    }
    Command::new(&mpicc)
        .args(["-E", &src])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == "MPI_Isendrecv_replace_c")
        })
        .unwrap_or(false)
}

/// The `-L` directories of the MPI compiler wrapper's link line (`-show`,
/// which Open MPI's and MPICH's wrappers both accept), but for the
/// system's own library directories.
fn mpi_lib_dirs() -> Vec<String> {
    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".into());
    let Ok(out) = Command::new(&mpicc).arg("-show").output() else {
        return vec![];
    };
    let system = ["/lib", "/usr/lib", "/lib64", "/usr/lib64"];
    let mut dirs: Vec<String> = vec![];
    for w in String::from_utf8_lossy(&out.stdout).split_whitespace() {
        // Intel MPI's wrapper quotes its directories.
        let w = w.replace('"', "");
        let Some(d) = w.strip_prefix("-L") else {
            continue;
        };
        let d = d.trim_end_matches('/');
        let in_system = system
            .iter()
            .any(|s| d == *s || d == format!("{s}/x86_64-linux-gnu"));
        if !d.is_empty() && !in_system && !dirs.iter().any(|x| x == d) {
            dirs.push(d.to_string());
        }
    }
    dirs
}

/// `openmpi` or `mpich`, from the macros `<mpi.h>` defines.
fn flavour() -> Option<&'static str> {
    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".into());
    let out_dir = std::env::var("OUT_DIR").ok()?;
    let src = format!("{out_dir}/probe_mpi.c");
    std::fs::File::create(&src)
        .and_then(|mut f| f.write_all(b"#include <mpi.h>\n"))
        .ok()?;
    let out = Command::new(&mpicc)
        .args(["-E", "-dM", &src])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    if text.lines().any(|l| l.starts_with("#define OPEN_MPI ")) {
        Some("openmpi")
    } else if text
        .lines()
        .any(|l| l.starts_with("#define MPICH_VERSION "))
    {
        Some("mpich")
    } else {
        None
    }
}
