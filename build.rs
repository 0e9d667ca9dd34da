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
    println!("cargo:rerun-if-changed={map}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=MPICC");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={map}");
    println!("cargo:rustc-check-cfg=cfg(heapmpi_openmpi)");
    println!("cargo:rustc-check-cfg=cfg(heapmpi_mpich)");
    match flavour() {
        Some(f) => println!("cargo:rustc-cfg=heapmpi_{f}"),
        None => println!(
            "cargo:warning=could not tell which MPI <mpi.h> belongs to (MPICC={}); \
             building for Open MPI's conventions",
            std::env::var("MPICC").unwrap_or_else(|_| "mpicc".into())
        ),
    }
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
