//! The interposition boundary, checked against the files that define it:
//! `libheapmpi.so` exports exactly the `global:` list of
//! `linker-scripts/heapmpi.map`; every exported entry point has its
//! `__wrap_` twin and a `--wrap=` line in `linker-scripts/heapmpi.ld-opts`
//! (the Fortran bindings `ompi_*_f` and `pmpi_*` an `--export-dynamic-symbol=`
//! line instead);
//! every malloc-family symbol is also exported from `--wrap` executables.
//!
//! Run: `cargo test --release --test symbols`.

mod common;

use common::*;
use std::collections::BTreeSet;
use std::process::Command;

fn map_globals() -> BTreeSet<String> {
    let text = std::fs::read_to_string(repo_root().join("linker-scripts/heapmpi.map")).unwrap();
    let body = text
        .split("global:")
        .nth(1)
        .unwrap()
        .split("local:")
        .next()
        .unwrap();
    body.split(|c: char| c == ';' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn ld_opts() -> Vec<String> {
    std::fs::read_to_string(repo_root().join("linker-scripts/heapmpi.ld-opts"))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

fn dynamic_exports(lib: &std::path::Path) -> BTreeSet<String> {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(lib)
        .output()
        .expect("nm");
    assert!(out.status.success(), "nm failed on {}", lib.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .map(|s| s.split('@').next().unwrap().to_string())
        .collect()
}

const MALLOC_FAMILY: [&str; 11] = [
    "malloc",
    "free",
    "calloc",
    "realloc",
    "reallocarray",
    "posix_memalign",
    "aligned_alloc",
    "memalign",
    "valloc",
    "pvalloc",
    "malloc_usable_size",
];

#[test]
fn exports_match_the_version_script() {
    let want = map_globals();
    assert!(want.contains("malloc") && want.contains("__wrap_MPI_Init"));
    let mut checked = 0;
    for f in available_flavours() {
        ensure_library(f).unwrap();
        let got = dynamic_exports(&f.shared_lib());
        assert_eq!(got, want, "{}: exports differ from heapmpi.map", f.name());
        checked += 1;
    }
    assert!(checked > 0 || available_flavours().is_empty());
}

#[test]
fn every_entry_point_has_a_wrap_twin_and_a_wrap_option() {
    let globals = map_globals();
    let opts = ld_opts();
    let plain: Vec<&String> = globals
        .iter()
        .filter(|s| !s.starts_with("__wrap_"))
        .collect();
    for s in &plain {
        if s.starts_with("ompi_") || s.starts_with("pmpi_") {
            // Open MPI's `use mpi_f08` module (a shared library) calls these
            // Fortran bindings: no --wrap reaches its calls, so executables
            // linked with --wrap export heapmpi's definitions instead.
            assert!(
                opts.contains(&format!("--export-dynamic-symbol={s}")),
                "{s} is not exported from --wrap executables"
            );
            continue;
        }
        assert!(
            globals.contains(&format!("__wrap_{s}")),
            "{s} has no __wrap_ twin"
        );
        assert!(
            opts.contains(&format!("--wrap={s}")),
            "{s} has no --wrap= line"
        );
    }
    for s in MALLOC_FAMILY {
        assert!(globals.contains(s), "{s} not exported");
        assert!(
            opts.contains(&format!("--export-dynamic-symbol={s}")),
            "{s}: executables linked with --wrap must export it, so libc's internal calls reach heapmpi"
        );
    }
    for o in &opts {
        let sym = o
            .trim_start_matches("--wrap=")
            .trim_start_matches("--export-dynamic-symbol=")
            .trim_start_matches("--undefined=");
        assert!(
            globals.contains(sym),
            "ld-opts names {sym}, which heapmpi does not define"
        );
    }
}

#[test]
fn wrap_executables_export_the_malloc_family() {
    let mut checked = 0;
    for f in available_flavours() {
        let exe = compile("share_pointers", f, Mode::Wrap).unwrap();
        let got = dynamic_exports(&exe);
        for s in MALLOC_FAMILY {
            assert!(
                got.contains(s),
                "{}: {} does not export {s}",
                f.name(),
                exe.display()
            );
        }
        checked += 1;
    }
    assert!(checked > 0 || available_flavours().is_empty());
}
