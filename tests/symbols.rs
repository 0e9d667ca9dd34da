//! The interposition boundary, checked against the files that define it:
//! `libheapmpi.so` exports exactly the `global:` list of
//! `linker-scripts/heapmpi.map` and a `PMPI_X` twin of each C `MPI_X` of it
//! (for PMPI tool stacking, see `src/mpi/next.rs`); every exported entry point has its
//! `__wrap_` twin and a `--wrap=` line in `linker-scripts/heapmpi.ld-opts`
//! (the Fortran bindings `ompi_*_f` and `pmpi_*` an `--export-dynamic-symbol=`
//! line instead);
//! every malloc-family symbol is also exported from `--wrap` executables.
//!
//! Run: `cargo test --release --test symbols`.

use heapmpi_testkit as common;

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

/// The MPI-4.0 routines heapmpi defines where the MPI has them
/// (`linker-scripts/mpi4.list`), with their `__wrap_` twins.
fn mpi4_globals() -> BTreeSet<String> {
    let text = std::fs::read_to_string(repo_root().join("linker-scripts/mpi4.list")).unwrap();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .flat_map(|n| [n.to_string(), format!("__wrap_{n}")])
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
        let mut want = want.clone();
        // Those of mpi4.list the MPI has, as build.rs picks them: a C
        // routine where its <mpi.h> declares it (MPICH 4.0 has no MPI-4.1
        // routines), MPICH's Fortran large-count procedures with the
        // MPI-4.0 large-count routines.
        let mpi4 = declares_mpi4(f);
        let mut declared = std::collections::BTreeMap::new();
        want.extend(mpi4_globals().into_iter().filter(|n| {
            let name = n.trim_start_matches("__wrap_").to_string();
            if !name.starts_with("MPI_") {
                return mpi4;
            }
            *declared
                .entry(name.clone())
                .or_insert_with(|| declares(f, &name))
        }));
        // The PMPI_ twin of every C entry point (build.rs, src/mpi/next.rs).
        let twins: Vec<String> = want
            .iter()
            .filter(|n| {
                n.strip_prefix("MPI_")
                    .and_then(|r| r.chars().next())
                    .is_some_and(|c| c.is_ascii_uppercase())
            })
            .map(|n| format!("P{n}"))
            .collect();
        want.extend(twins);
        assert_eq!(
            got,
            want,
            "{}: exports differ from heapmpi.map (+ mpi4.list where the MPI has it, \
             + the PMPI_ twins of the C entry points)",
            f.name()
        );
        checked += 1;
    }
    assert!(checked > 0 || available_flavours().is_empty());
}

#[test]
fn every_entry_point_has_a_wrap_twin_and_a_wrap_option() {
    let mut globals = map_globals();
    globals.extend(mpi4_globals());
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

/// Names listed one per line in a file of `linker-scripts/` (`#` comments).
fn listed(file: &str) -> BTreeSet<String> {
    std::fs::read_to_string(repo_root().join("linker-scripts").join(file))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// The `int MPI_*(...)` routines flavour `f`'s `<mpi.h>` declares that take
/// a communicator, request, window or message handle.
fn routines_with_handles(f: Flavour) -> BTreeSet<String> {
    let dir = std::env::temp_dir().join(format!("heapmpi-protos-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("protos-{}.c", f.name()));
    std::fs::write(&src, "#include <mpi.h>\n").unwrap();
    let out = Command::new(f.mpicc())
        .envs(f.tool_env())
        .arg("-E")
        .arg(&src)
        .output()
        .expect("mpicc -E");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{} -E failed", f.mpicc());
    let text = String::from_utf8_lossy(&out.stdout);
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut found = BTreeSet::new();
    let mut rest = flat.as_str();
    while let Some(p) = rest.find("int MPI_") {
        let after = &rest[p + 4..];
        let name_len = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        let tail = after[name_len..].trim_start();
        rest = &after[name_len..];
        let Some(params) = tail.strip_prefix('(') else {
            continue;
        };
        let params = &params[..params.find(')').unwrap_or(params.len())];
        let takes_handle = params
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| matches!(w, "MPI_Comm" | "MPI_Request" | "MPI_Win" | "MPI_Message"));
        if takes_handle {
            found.insert(name.to_string());
        }
    }
    found
}

/// Every routine of the MPI that takes a communicator, request, window or
/// message is classified: intercepted (`heapmpi.map`, `mpi4.list`) or left
/// to the real MPI for a stated reason (`real.list`), never both. A new MPI
/// that adds such a routine fails here until someone decides whether it
/// can bypass heapmpi's matching (as MPI_Send_c did on MPICH, where a
/// message it sent was never seen by heapmpi's MPI_Recv).
#[test]
fn every_routine_with_a_handle_is_classified() {
    let ours: BTreeSet<String> = map_globals()
        .into_iter()
        .chain(listed("mpi4.list"))
        .filter(|s| s.starts_with("MPI_"))
        .collect();
    let real = listed("real.list");
    let both: Vec<_> = ours.intersection(&real).collect();
    assert!(
        both.is_empty(),
        "both intercepted and in real.list: {both:?}"
    );
    let mut checked = 0;
    for f in available_flavours().into_iter().chain(
        WHEEL_FLAVOURS
            .into_iter()
            .filter(|f| std::path::Path::new(&f.mpicc()).exists()),
    ) {
        let routines = routines_with_handles(f);
        assert!(
            routines.len() > 100 && routines.contains("MPI_Send"),
            "{}: parsed only {} routines from <mpi.h>",
            f.name(),
            routines.len()
        );
        let unclassified: Vec<_> = routines
            .iter()
            .filter(|r| !ours.contains(*r) && !real.contains(*r))
            .collect();
        assert!(
            unclassified.is_empty(),
            "{}: routines neither intercepted (heapmpi.map, mpi4.list) nor in \
             linker-scripts/real.list: {unclassified:?}",
            f.name()
        );
        checked += 1;
    }
    assert!(checked > 0, "no MPI to check");
}
