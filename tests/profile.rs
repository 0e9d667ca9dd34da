//! `HEAPMPI_PROFILE`: the job-wide table of where MPI time goes
//! (`src/profile.rs`). `tests/c/profile_calls.c` and
//! `tests/f/profile_fortran.f90` make a known set of calls; run with
//! `HEAPMPI_PROFILE=<file>` under every MPI, both ways in, the CSV must
//! give exactly their calls and bytes per routine, say how each call was
//! served (through the heap; to the real MPI with its reason), and every
//! row's shares must add up to its calls. With pretend nodes of two ranks
//! (`HEAPMPI_TEST_NODE_SIZE=2`) the one message between nodes goes to the
//! real MPI with the reason "remote".
//!
//! Run: `cargo test --release --test profile`.

use heapmpi_testkit as common;

use common::*;
use std::collections::BTreeMap;

/// One CSV row: calls, bytes, heap calls, and the real MPI's calls by
/// reason (passed, remote, unknown_comm, args, real_object).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Row {
    calls: u64,
    bytes: u64,
    heap: u64,
    passed: u64,
    remote: u64,
    unknown: u64,
    args: u64,
    real_object: u64,
}

fn parse(csv: &str) -> Result<BTreeMap<String, Row>, String> {
    let mut lines = csv.lines();
    let head = lines.next().ok_or("empty profile CSV")?;
    let cols: Vec<&str> = head.split(',').collect();
    let at = |name: &str| {
        cols.iter()
            .position(|c| *c == name)
            .ok_or(format!("no column {name}"))
    };
    let idx = [
        at("calls")?,
        at("bytes")?,
        at("heap_calls")?,
        at("passed")?,
        at("remote")?,
        at("unknown_comm")?,
        at("args")?,
        at("real_object")?,
    ];
    let routine = at("routine")?;
    let mut out = BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        if f.first() == Some(&"total") {
            continue;
        }
        let n = |i: usize| -> Result<u64, String> {
            f.get(idx[i])
                .ok_or(format!("short row {l}"))?
                .parse()
                .map_err(|e| format!("{l}: {e}"))
        };
        let r = Row {
            calls: n(0)?,
            bytes: n(1)?,
            heap: n(2)?,
            passed: n(3)?,
            remote: n(4)?,
            unknown: n(5)?,
            args: n(6)?,
            real_object: n(7)?,
        };
        if r.heap + r.passed + r.remote + r.unknown + r.args + r.real_object != r.calls {
            return Err(format!("shares of {l} do not add up to its calls"));
        }
        out.insert(f[routine].to_string(), r);
    }
    Ok(out)
}

/// Runs `program` at `n` ranks with the profile going to a file; returns
/// the parsed table.
fn profiled(
    fl: &mut Failures,
    program: &str,
    f: Flavour,
    mode: Mode,
    n: usize,
    extra: &[(&str, &str)],
    check: impl Fn(&BTreeMap<String, Row>) -> Result<(), String>,
) {
    let file = std::env::temp_dir().join(format!(
        "heapmpi-profile-{}-{program}-{}-{}-{}.csv",
        std::process::id(),
        f.name(),
        mode.name(),
        extra.len()
    ));
    let _ = std::fs::remove_file(&file);
    let path = file.to_string_lossy().into_owned();
    let mut env: Vec<(&str, &str)> = vec![("HEAPMPI_PROFILE", path.as_str())];
    env.extend_from_slice(extra);
    fl.run(Case::new(program, f, mode, n).env(&env), |o| {
        check_success(o)?;
        if !o.stderr.contains("heapmpi profile:") {
            return Err("no profile table on stderr".into());
        }
        let csv = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let _ = std::fs::remove_file(&file);
        let t = parse(&csv)?;
        check(&t).map_err(|e| format!("{e}\nprofile CSV:\n{csv}"))
    });
}

/// `want` rows (routine, calls, bytes, heap calls) are in `t` as given.
fn expect(t: &BTreeMap<String, Row>, want: &[(&str, u64, u64, u64)]) -> Result<(), String> {
    for &(name, calls, bytes, heap) in want {
        let r = t.get(name).ok_or(format!("no row for {name}"))?;
        if (r.calls, r.bytes, r.heap) != (calls, bytes, heap) {
            return Err(format!(
                "{name}: calls/bytes/heap {}/{}/{}, want {calls}/{bytes}/{heap} ({r:?})",
                r.calls, r.bytes, r.heap
            ));
        }
    }
    Ok(())
}

#[test]
fn profile_counts_what_the_program_does() {
    let mut fl = Failures::new();
    for f in available_flavours() {
        for mode in HEAPMPI_MODES {
            for n in [2usize, 4] {
                let k = n as u64;
                let half = k / 2;
                let far = (n >= 4) as u64;
                profiled(&mut fl, "profile_calls", f, mode, n, &[], |t| {
                    expect(
                        t,
                        &[
                            // 10 sends of 800 B per sender (heap), one of
                            // 20 B to MPI_PROC_NULL (real MPI, "args"), at 4
                            // ranks one of 12 B from rank 0 to rank 2.
                            (
                                "MPI_Send",
                                11 * half + far,
                                8020 * half + 12 * far,
                                10 * half + far,
                            ),
                            (
                                "MPI_Recv",
                                10 * half + far,
                                8000 * half + 12 * far,
                                10 * half + far,
                            ),
                            ("MPI_Isend", 3 * k, 84 * k, 3 * k),
                            ("MPI_Irecv", 3 * k, 84 * k, 3 * k),
                            ("MPI_Waitall", 3 * k, 0, 3 * k),
                            ("MPI_Allreduce", 5 * k, 40000 * k, 5 * k),
                            ("MPI_Bcast", 4 * k, 160 * k, 4 * k),
                            ("MPI_Barrier", 2 * k, 0, 2 * k),
                            ("MPI_Put", 3 * k, 48 * k, 3 * k),
                        ],
                    )?;
                    let s = t["MPI_Send"];
                    if s.args != half {
                        return Err(format!(
                            "MPI_Send to MPI_PROC_NULL: args {}, want {half}",
                            s.args
                        ));
                    }
                    // The v and w all-to-alls: the sums of the send counts
                    // (in place: the receive counts), however each call was
                    // served.
                    let a2av = 2 * (2 * k * (k + 1)) + 16 * k;
                    let a2aw = 4 * k.div_ceil(2) + 8 * (k / 2);
                    for (name, calls, bytes) in [
                        ("MPI_Alltoallv", 3, a2av),
                        ("MPI_Ialltoallv", 1, 2 * k * (k + 1)),
                        ("MPI_Alltoallw", 1, a2aw),
                        ("MPI_Neighbor_alltoall", 1, 8),
                        ("MPI_Neighbor_alltoallv", 1, 32),
                    ] {
                        let r = t.get(name).ok_or(format!("no row for {name}"))?;
                        if (r.calls, r.bytes) != (calls * k, bytes * k) {
                            return Err(format!(
                                "{name}: calls/bytes {}/{}, want {}/{}",
                                r.calls,
                                r.bytes,
                                calls * k,
                                bytes * k
                            ));
                        }
                    }
                    for name in ["MPI_Win_fence", "MPI_Win_allocate", "MPI_Win_free"] {
                        let r = t.get(name).ok_or(format!("no row for {name}"))?;
                        let want = if name == "MPI_Win_fence" { 2 * k } else { k };
                        if r.calls != want {
                            return Err(format!("{name}: {} calls, want {want}", r.calls));
                        }
                    }
                    Ok(())
                });
            }
            // Pretend nodes of two ranks: the message from rank 0 to rank 2
            // goes to the real MPI, "remote"; the pairs stay on the heap.
            profiled(
                &mut fl,
                "profile_calls",
                f,
                mode,
                4,
                &[("HEAPMPI_TEST_NODE_SIZE", "2")],
                |t| {
                    expect(
                        t,
                        &[("MPI_Send", 23, 16052, 20), ("MPI_Recv", 21, 16012, 20)],
                    )?;
                    let (s, r) = (t["MPI_Send"], t["MPI_Recv"]);
                    if (s.remote, s.args, r.remote) != (1, 2, 1) {
                        return Err(format!("reasons: send {s:?}, recv {r:?}"));
                    }
                    Ok(())
                },
            );
            // Fortran (`use mpi`): heapmpi's own bindings under Open MPI,
            // the C entry points under MPICH; the same rows either way.
            profiled(&mut fl, "profile_fortran", f, mode, 2, &[], |t| {
                expect(
                    t,
                    &[
                        ("MPI_Send", 4, 160, 4),
                        ("MPI_Recv", 4, 160, 4),
                        ("MPI_Allreduce", 6, 240, 6),
                    ],
                )
            });
        }
    }
    fl.finish("profile_counts_what_the_program_does");
}

/// Without `HEAPMPI_PROFILE` nothing is printed.
#[test]
fn profile_off_prints_nothing() {
    let mut fl = Failures::new();
    for f in available_flavours() {
        fl.run(Case::new("profile_calls", f, Mode::Preload, 2), |o| {
            check_success(o)?;
            if o.stderr.contains("heapmpi profile") {
                return Err("a profile was printed without HEAPMPI_PROFILE".into());
            }
            Ok(())
        });
    }
    fl.finish("profile_off_prints_nothing");
}
