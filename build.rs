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
    println!("cargo:rustc-check-cfg=cfg(heapmpi_abi)");
    println!("cargo:rustc-check-cfg=cfg(heapmpi_mpi4)");
    println!("cargo:rustc-check-cfg=cfg(heapmpi_mpi4_base)");
    // The MPI-4.0 routines heapmpi intercepts (`linker-scripts/mpi4.list`)
    // exist only in an MPI that declares them: their entry points are
    // compiled and exported only then, the version script extended with
    // their names and `__wrap_` twins. Two sets, because Open MPI 5.0's
    // <mpi.h> declares the MPI-4.0 routines without large counts
    // (`MPI_Isendrecv`, the persistent collectives) but none of the `_c`
    // ones, while its library exports both: `cfg(heapmpi_mpi4_base)` for
    // the first (an MPI_Isendrecv that bypassed heapmpi's matching hung
    // against an MPI_Sendrecv under Open MPI 5), `cfg(heapmpi_mpi4)` for
    // the large-count ones (MPICH 4 and 5).
    let words = header_words();
    let abi = flavour() == Some("abi");
    let mpi4 = words.contains("MPI_Isendrecv_replace_c");
    let mpi4_base = words.contains("MPI_Isendrecv");
    // MPI-4.1's nondestructive array tests (MPICH 5, Intel MPI 2021.1x).
    let mpi41 = words.contains("MPI_Request_get_status_all");
    println!("cargo:rustc-check-cfg=cfg(heapmpi_mpi41)");
    if mpi41 {
        println!("cargo:rustc-cfg=heapmpi_mpi41");
    }
    // MPI-4.1's buffers attached to communicators and sessions (MPICH 5,
    // Intel MPI 2021.1x): heapmpi records their sizes for its buffered
    // sends (`p2p::api::bsend`).
    println!("cargo:rustc-check-cfg=cfg(heapmpi_mpi41_buffers)");
    if words.contains("MPI_Comm_attach_buffer") {
        println!("cargo:rustc-cfg=heapmpi_mpi41_buffers");
    }
    // MPI-5.0's handle-to-integer conversions (MPICH 5, Intel MPI).
    println!("cargo:rustc-check-cfg=cfg(heapmpi_toint)");
    if words.contains("MPI_Request_toint") {
        println!("cargo:rustc-cfg=heapmpi_toint");
    }
    if mpi4 {
        println!("cargo:rustc-cfg=heapmpi_mpi4");
    }
    if mpi4_base {
        println!("cargo:rustc-cfg=heapmpi_mpi4_base");
    }
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let base = std::fs::read_to_string(&map).expect("linker-scripts/heapmpi.map");
    let mut extra = String::new();
    // Every C entry point heapmpi defines (`MPI_X`), MPI-4.0 ones included
    // where the MPI has them.
    let mut entries: Vec<String> = globals(&base)
        .into_iter()
        .filter(|n| is_c_entry(n))
        .collect();
    if mpi4 || mpi4_base || mpi41 {
        let list = std::fs::read_to_string(&mpi4_list).expect("linker-scripts/mpi4.list");
        extra.push_str("    /* linker-scripts/mpi4.list */\n");
        for name in list
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            // A C routine where <mpi.h> declares it (Open MPI 5.0's
            // declares none of the `_c` ones its library exports); MPICH's
            // Fortran large-count procedures with `mpi4` (none in the
            // standard ABI build, which has no Fortran bindings).
            .filter(|n| {
                if n.starts_with("MPI_") {
                    words.contains(*n)
                } else {
                    mpi4 && !abi
                }
            })
        {
            extra.push_str(&format!("    {name}; __wrap_{name};\n"));
            if is_c_entry(name) {
                entries.push(name.to_string());
            }
        }
    }
    let stacking = stacking(&dir, &out_dir, &entries);
    if stacking {
        extra.push_str("    /* PMPI_ twins of the C entry points (build.rs: stacking) */\n");
        for name in &entries {
            extra.push_str(&format!("    P{name};\n"));
        }
    }
    let (head, tail) = base
        .split_once("  local:")
        .expect("heapmpi.map has a local: section");
    // The standard ABI build has no Fortran bindings (`src/lib.rs`): the
    // linker refuses a version script naming symbols that are not defined.
    let head = if abi {
        without_fortran(head)
    } else {
        head.to_string()
    };
    let script = format!("{out_dir}/heapmpi.map");
    // The tables of `src/mpi/next.rs` are exported names for the assembly
    // (rustc exports every `#[no_mangle]` item): kept out of the dynamic
    // symbol table by name.
    std::fs::write(
        &script,
        format!("{head}{extra}  local:\n    heapmpi_real_fn; heapmpi_entry_fn;{tail}"),
    )
    .expect("write the version script");
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
    // The standard ABI build reaches every MPI routine through the tables
    // of `src/mpi/next.rs`, so `--as-needed` would drop `libmpi_abi.so`
    // from its dependencies; the wrappers tell which MPI a build serves by
    // that entry (`mpi_library_of`). Loaded into a program of the ABI, the
    // entry is the program's own copy (the loader matches it by soname).
    if abi {
        println!(
            "cargo:rustc-cdylib-link-arg=-Wl,--push-state,--no-as-needed,-lmpi_abi,--pop-state"
        );
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

/// The identifiers `<mpi.h>` declares (the MPI compiler wrapper's
/// preprocessor output, split into words); empty when it cannot run.
fn header_words() -> std::collections::HashSet<String> {
    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".into());
    let Ok(out_dir) = std::env::var("OUT_DIR") else {
        return Default::default();
    };
    let src = format!("{out_dir}/probe_mpi4.c");
    if std::fs::write(&src, "#include <mpi.h>\n").is_err() {
        return Default::default();
    }
    Command::new(&mpicc)
        .args(["-E", &src])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| w.starts_with("MPI_"))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
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

/// `openmpi`, `mpich` or `abi` (the MPI-5 standard ABI's `<mpi.h>`, as
/// MPICH 5's `mpicc_abi` compiles: one build for every MPI implementing
/// it), from the macros `<mpi.h>` defines.
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
    if text
        .lines()
        .any(|l| l.starts_with("#define MPI_ABI_VERSION "))
    {
        Some("abi")
    } else if text.lines().any(|l| l.starts_with("#define OPEN_MPI ")) {
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

/// A version script's text without the Fortran bindings' names
/// (`mpi_send_`, `pmpi_send__`, `ompi_send_f`, `__wrap_mpi_send_`: every
/// name in lower case).
fn without_fortran(map: &str) -> String {
    let fortran = |w: &str| {
        let w = w.trim_start_matches("__wrap_");
        w.starts_with("mpi_") || w.starts_with("pmpi_") || w.starts_with("ompi_")
    };
    let mut out = String::new();
    let mut in_comment = false;
    for line in map.lines() {
        let t = line.trim();
        if in_comment || t.starts_with("/*") {
            in_comment = !t.ends_with("*/");
            out.push_str(line);
            out.push('\n');
            continue;
        }
        if t.is_empty() || t.ends_with(':') || t.starts_with('{') {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let kept: Vec<&str> = t
            .split(';')
            .map(str::trim)
            .filter(|w| !w.is_empty() && !fortran(w))
            .collect();
        if !kept.is_empty() {
            out.push_str("    ");
            out.push_str(&kept.join("; "));
            out.push_str(";\n");
        }
    }
    out
}

/// The names of the `global:` section of a version script.
fn globals(map: &str) -> Vec<String> {
    let body = map
        .split("global:")
        .nth(1)
        .and_then(|b| b.split("local:").next())
        .unwrap_or("");
    let body: String = body
        .split("/*")
        .map(|part| part.split_once("*/").map_or(part, |(_, rest)| rest))
        .collect();
    body.split(|c: char| c == ';' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// A C MPI entry point (`MPI_Send`, not `mpi_send_` or `__wrap_MPI_Send`).
fn is_c_entry(name: &str) -> bool {
    name.strip_prefix("MPI_")
        .and_then(|r| r.chars().next())
        .is_some_and(|c| c.is_ascii_uppercase())
}

/// Every `PMPI_` name the sources spell: the real MPI routines heapmpi
/// calls.
fn referenced_pmpi(dir: &str) -> std::collections::BTreeSet<String> {
    fn walk(p: &std::path::Path, out: &mut std::collections::BTreeSet<String>) {
        let Ok(rd) = std::fs::read_dir(p) else { return };
        for e in rd.flatten() {
            let path = e.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                for w in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                    if w.len() > 5 && w.starts_with("PMPI_") {
                        out.insert(w.to_string());
                    }
                }
            }
        }
    }
    let mut out = std::collections::BTreeSet::new();
    walk(&std::path::Path::new(dir).join("src"), &mut out);
    out
}

/// PMPI tool stacking for `libheapmpi.so` (see `src/mpi/next.rs`).
///
/// - Each C entry point `MPI_X` gets a `PMPI_X` twin, a jump through the
///   table `heapmpi_entry_fn` that `next::resolve` fills with heapmpi's own
///   `MPI_X` (never through an interposable name, which would find a
///   tool's `MPI_X` first), so a profiler preloaded before heapmpi, whose
///   `MPI_X` calls `PMPI_X`, reaches heapmpi.
/// - heapmpi's own calls of `PMPI_X` must then never reach that twin, nor
///   a tool's `PMPI_X` before heapmpi: `--wrap=PMPI_X` sends them to a
///   hidden `__wrap_PMPI_X`, which jumps through the table
///   `heapmpi_real_fn` that `next::resolve` fills at load time with
///   `dlsym(RTLD_NEXT, "PMPI_X")`: the next definition after heapmpi in
///   the search order (the MPI library, or a tool placed after heapmpi).
///
/// Only the shared library gets these (`rustc-cdylib-link-arg`): the
/// static one of the `--wrap` way in keeps its direct references, which
/// the program's link resolves against the MPI library.
///
/// Writes `real_names.rs` (the table's names, the entry points) for
/// `src/mpi/next.rs` in every case; returns whether the shared library is
/// stacked (x86-64 only, where the jumps are written).
fn stacking(dir: &str, out_dir: &str, entries: &[String]) -> bool {
    let mut real: std::collections::BTreeSet<String> = referenced_pmpi(dir);
    real.extend(entries.iter().map(|n| format!("P{n}")));
    let real: Vec<String> = real.into_iter().collect();
    let mut rs =
        String::from("/// The real routines heapmpi calls, in the order of `heapmpi_real_fn`.\n");
    rs.push_str(&format!(
        "pub static REAL_NAMES: [&core::ffi::CStr; {}] = [\n",
        real.len()
    ));
    for n in &real {
        rs.push_str(&format!("    c\"{n}\",\n"));
    }
    rs.push_str("];\n/// The C entry points heapmpi defines.\n");
    rs.push_str(&format!(
        "pub static ENTRIES: [&core::ffi::CStr; {}] = [\n",
        entries.len()
    ));
    for n in entries {
        rs.push_str(&format!("    c\"{n}\",\n"));
    }
    rs.push_str("];\n");
    std::fs::write(format!("{out_dir}/real_names.rs"), rs).expect("write real_names.rs");

    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("x86_64") {
        println!(
            "cargo:warning=PMPI tool stacking is written for x86-64 only: \
             this build does not answer PMPI_ names"
        );
        return false;
    }
    let mut s =
        String::from("/* Generated by build.rs: PMPI tool stacking (src/mpi/next.rs). */\n.text\n");
    for (i, n) in entries.iter().enumerate() {
        s.push_str(&format!(
            ".globl P{n}\n.type P{n},@function\n.p2align 4\nP{n}:\n\tmovq heapmpi_entry_fn@GOTPCREL(%rip), %r11\n\tjmp *{}(%r11)\n.size P{n},.-P{n}\n",
            8 * i
        ));
    }
    for (i, n) in real.iter().enumerate() {
        s.push_str(&format!(
            ".globl __wrap_{n}\n.hidden __wrap_{n}\n.type __wrap_{n},@function\n.p2align 4\n__wrap_{n}:\n\tmovq heapmpi_real_fn@GOTPCREL(%rip), %r11\n\tjmp *{}(%r11)\n.size __wrap_{n},.-__wrap_{n}\n",
            8 * i
        ));
    }
    s.push_str(".section .note.GNU-stack,\"\",@progbits\n");
    let asm = format!("{out_dir}/stacking.s");
    let obj = format!("{out_dir}/stacking.o");
    std::fs::write(&asm, s).expect("write stacking.s");
    let cc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".into());
    let ok = Command::new(&cc)
        .args(["-c", &asm, "-o", &obj])
        .status()
        .is_ok_and(|st| st.success());
    assert!(ok, "{cc} -c {asm} failed");
    println!("cargo:rustc-cdylib-link-arg={obj}");
    for n in &real {
        println!("cargo:rustc-cdylib-link-arg=-Wl,--wrap={n}");
    }
    // The sources name the real routines heapmpi calls.
    println!("cargo:rerun-if-changed={dir}/src");
    true
}
