//! Point-to-point conformance (issue 3): the C programs `tests/c/p2p_*.c`
//! under real `mpirun`, compared with the stock MPI.
//!
//! Each program prints only what MPI makes deterministic (see the header of
//! each program and `tests/c/p2p_util.h`) and exits non-zero when one of its
//! own checks fails. For every program, every available MPI flavour and
//! every configuration (2 ranks, 4 ranks, and 4 ranks in pretend nodes of 2
//! with `HEAPMPI_TEST_NODE_SIZE=2`, which makes ranks {0,1} and {2,3} two
//! nodes, so traffic between them goes to the real MPI), the test:
//!
//! 1. runs the program under the stock MPI (no heapmpi; the pretend-node
//!    variable is set there too, for symmetry; it changes nothing there):
//!    it must pass, or the program itself is wrong and the configuration is
//!    not compared;
//! 2. runs it under heapmpi (`LD_PRELOAD` and `--wrap` at 2 ranks; one way
//!    in for each 4-rank configuration, one each, see `mode_for`): it must
//!    pass and its stdout must be byte-identical to the stock run's. In the
//!    2-rank configuration the heapmpi runs have `HEAPMPI_STATS=1` and every
//!    rank must report an active shared heap.
//!
//! One test per program, so cargo runs them in parallel (two at a time on
//! two cores). Run: `cargo test --release --test p2p` (builds the library
//! first through `wrappers/heapmpi-build`; `HEAPMPI_TEST_NO_BUILD=1` to use
//! the existing one). `P2P_SECTION_TIMES=1` in the environment of a manual
//! run makes the programs print per-section times on stderr.

use heapmpi_testkit as common;

use common::*;

/// One configuration of the matrix.
struct Config {
    nranks: usize,
    /// Set on the stock and the heapmpi runs.
    env: &'static [(&'static str, &'static str)],
    /// The heapmpi runs also get HEAPMPI_STATS=1 and must report an active
    /// heap on every rank.
    stats: bool,
    /// Arguments for p2p_random (its seeds), different per configuration.
    random_seeds: &'static [&'static str],
    /// The ways in the heapmpi runs take (see `mode_for`).
    modes: &'static [Mode],
}

const PRETEND_NODES: [(&str, &str); 1] = [("HEAPMPI_TEST_NODE_SIZE", "2")];

const CONFIGS: [Config; 3] = [
    Config {
        nranks: 2,
        env: &[],
        stats: true,
        random_seeds: &["101", "102", "103"],
        modes: &HEAPMPI_MODES,
    },
    Config {
        nranks: 4,
        env: &[],
        stats: false,
        random_seeds: &["201", "202", "203"],
        modes: &[Mode::Preload],
    },
    Config {
        nranks: 4,
        env: &PRETEND_NODES,
        stats: false,
        random_seeds: &["301", "302", "303"],
        modes: &[Mode::Wrap],
    },
];

/// The ways in `program` takes configuration `i` of [`CONFIGS`] through
/// on `f`, one of the `flavours` it runs on, or `None` if this run leaves
/// it out: the 2-rank one both ways; a default run one of the two 4-rank
/// ones through one way on one MPI (see `quick_pick` and `larger_on`),
/// `--full` both, each in its own ways, on every MPI.
fn config_modes(program: &str, i: usize, flavours: &[Flavour], f: Flavour) -> Option<Vec<Mode>> {
    let (pick, quick_mode) = quick_pick(program, CONFIGS.len() - 1);
    match i {
        0 => Some(CONFIGS[0].modes.to_vec()),
        _ if full() => Some(CONFIGS[i].modes.to_vec()),
        _ if i - 1 == pick && larger_on(program, flavours, f) => Some(vec![quick_mode]),
        _ => None,
    }
}

/// Runs one program over the whole matrix; `verdict` is the word of its
/// "rank N: <verdict> ok" lines.
fn conformance(test: &str, program: &str, verdict: &str) {
    let mut fl = Failures::new();
    let flavours = available_flavours();
    for &f in &flavours {
        for (i, cfg) in CONFIGS.iter().enumerate() {
            let Some(modes) = config_modes(program, i, &flavours, f) else {
                continue;
            };
            let n = cfg.nranks;
            let args: &[&str] = if program == "p2p_random" {
                cfg.random_seeds
            } else {
                &[]
            };
            let stock_case = Case::new(program, f, Mode::Stock, n)
                .args(args)
                .env(cfg.env);
            let Some(stock) = reference(&mut fl, &stock_case, n, verdict) else {
                continue;
            };
            let mut env: Vec<(&str, &str)> = cfg.env.to_vec();
            if cfg.stats {
                env.extend_from_slice(&STATS);
            }
            for &mode in &modes {
                let case = Case::new(program, f, mode, n).args(args).env(&env);
                fl.run(case, |o| {
                    check_same_as_stock(o, &stock)?;
                    if cfg.stats {
                        check_status_lines(o, n, HeapState::Active)?;
                        check_nothing_left(o)?;
                        if program == "p2p_progress" {
                            check_progress_thread_ran(o)?;
                        }
                    }
                    Ok(())
                });
            }
        }
    }
    fl.finish(test);
}

/// In `p2p_progress` the receivers sit in real calls (file I/O, window
/// fences, communicator creation) that wait for their senders, whose
/// synchronous sends wait for the receivers: only the receivers' progress
/// threads can match those, woken by the senders' doorbells. So the
/// counters must show both (`rings=`, `wakes=`).
fn check_progress_thread_ran(o: &Output) -> Result<(), String> {
    let rings: u64 = stats_numbers(&o.stderr, "rings")?.iter().sum();
    let wakes: u64 = stats_numbers(&o.stderr, "wakes")?.iter().sum();
    if rings == 0 || wakes == 0 {
        return Err(format!(
            "rings={rings} wakes={wakes} over the ranks: no progress thread served a receiver \
             sitting in the real MPI"
        ));
    }
    Ok(())
}

#[test]
fn p2p_order_and_matching() {
    conformance("p2p_order_and_matching", "p2p_order", "order");
}

#[test]
fn p2p_nonblocking_and_completion() {
    conformance(
        "p2p_nonblocking_and_completion",
        "p2p_nonblocking",
        "nonblocking",
    );
}

#[test]
fn p2p_probe_and_matched_probe() {
    conformance("p2p_probe_and_matched_probe", "p2p_probe", "probe");
}

#[test]
fn p2p_errors_return() {
    conformance("p2p_errors_return", "p2p_errors", "errors");
}

#[test]
fn p2p_derived_datatypes() {
    conformance("p2p_derived_datatypes", "p2p_datatypes", "datatypes");
}

#[test]
fn p2p_communicators() {
    conformance("p2p_communicators", "p2p_comms", "comms");
}

#[test]
fn p2p_persistent_requests() {
    conformance("p2p_persistent_requests", "p2p_persistent", "persistent");
}

#[test]
fn p2p_cancel() {
    conformance("p2p_cancel", "p2p_cancel", "cancel");
}

#[test]
fn p2p_large_messages() {
    conformance("p2p_large_messages", "p2p_large", "large");
}

/// Send buffers outside the shared heap (`p2p_private.c`): the matrix,
/// and at 2 ranks that the staged path was taken (`staged` counted on
/// every rank), so the program tests what it is for.
#[test]
fn p2p_private_send_buffers() {
    conformance("p2p_private_send_buffers", "p2p_private", "private");
    let mut fl = Failures::new();
    for f in variant_flavours("p2p_private_send_buffers (stats)") {
        let stock_case = Case::new("p2p_private", f, Mode::Stock, 2);
        let Some(stock) = reference(&mut fl, &stock_case, 2, "private") else {
            continue;
        };
        fl.run(
            Case::new("p2p_private", f, Mode::Preload, 2).env(&STATS),
            |o| {
                check_same_as_stock(o, &stock)?;
                // The p2p part's `staged=`, the first on the line (the
                // collectives' part has one too).
                let staged = stats_part(&o.stderr, " staged=")?;
                if staged.len() != 2 || staged.iter().any(|&s| s < 20) {
                    return Err(format!(
                        "expected staged >= 20 on both ranks, got {staged:?}"
                    ));
                }
                Ok(())
            },
        );
    }
    fl.finish("p2p_private_send_buffers (stats)");
}

/// Derived datatypes of 2 GiB and more (`p2p_bigtype.c`, with its big
/// sections: 4 to 6.5 GB of memory for some seconds, so 2 ranks only and
/// one way in per MPI):
/// stdout as stock's, the BigMPI-style struct types sent as the bytes
/// they are, and the gapped vector by its layout (`dt::plan`): nothing is
/// staged (packed).
#[test]
fn p2p_big_datatypes() {
    let mut fl = Failures::new();
    let args: &[&str] = &["big"];
    for f in available_flavours() {
        let stock_case = Case::new("p2p_bigtype", f, Mode::Stock, 2).args(args);
        let Some(stock) = reference(&mut fl, &stock_case, 2, "bigtype") else {
            continue;
        };
        // One way in per MPI (the two alternate): each run moves 4 GiB.
        let mode = mode_for(f as usize);
        {
            let case = Case::new("p2p_bigtype", f, mode, 2).args(args).env(&STATS);
            fl.run(case, |o| {
                check_same_as_stock(o, &stock)?;
                check_status_lines(o, 2, HeapState::Active)?;
                check_nothing_left(o)?;
                // The point-to-point part's count (the first on the line);
                // rank 1 sends nothing; the lines come in any order.
                let mut staged = stats_part(&o.stderr, " staged=")?;
                let mut strided = stats_part(&o.stderr, " strided=")?;
                staged.sort_unstable();
                strided.sort_unstable();
                if staged != [0, 0] || strided != [0, 1] {
                    return Err(format!(
                        "staged sends per rank {staged:?}, strided {strided:?}: rank 0 should \
                         have sent the gapped vector by its layout, and the struct types as \
                         the bytes they are, packing nothing"
                    ));
                }
                Ok(())
            });
        }
    }
    fl.finish("p2p_big_datatypes");
}

/// Derived datatypes too large to go inline, moved by their layouts
/// (`p2p_strided.c`, `dt::plan`), at 2 ranks, both ways in: stdout as
/// stock's, and both ranks' sends went by layout (the report's
/// `strided=`), so the program tests the path it is written for.
#[test]
fn p2p_strided_layouts() {
    let mut fl = Failures::new();
    for f in available_flavours() {
        let stock_case = Case::new("p2p_strided", f, Mode::Stock, 2);
        let Some(stock) = reference(&mut fl, &stock_case, 2, "strided") else {
            continue;
        };
        for mode in HEAPMPI_MODES {
            let case = Case::new("p2p_strided", f, mode, 2).env(&STATS);
            fl.run(case, |o| {
                check_same_as_stock(o, &stock)?;
                check_status_lines(o, 2, HeapState::Active)?;
                check_nothing_left(o)?;
                let strided = stats_part(&o.stderr, " strided=")?;
                // Rank 0 sends 9 cases one way and 8 both ways (one of
                // them persistent, 3 rounds) and from the stack (packed):
                // at least 10 by layout on each rank.
                if strided.iter().any(|&n| n < 10) {
                    return Err(format!(
                        "sends by layout per rank {strided:?}, want >= 10 each"
                    ));
                }
                Ok(())
            });
        }
    }
    fl.finish("p2p_strided_layouts");
}

#[test]
fn p2p_thread_multiple() {
    conformance("p2p_thread_multiple", "p2p_threads", "threads");
}

#[test]
fn p2p_progress_inside_real_calls() {
    conformance("p2p_progress_inside_real_calls", "p2p_progress", "progress");
}

#[test]
fn p2p_status_fields_as_stock() {
    conformance("p2p_status_fields_as_stock", "p2p_status", "status");
}

#[test]
fn p2p_freed_types_comms_and_buffers() {
    conformance(
        "p2p_freed_types_comms_and_buffers",
        "p2p_lifetime",
        "lifetime",
    );
}

#[test]
fn p2p_handles_conversions_and_frees() {
    conformance(
        "p2p_handles_conversions_and_frees",
        "p2p_handles",
        "handles",
    );
}

#[test]
fn p2p_fortran_use_mpi() {
    conformance("p2p_fortran_use_mpi", "p2p_fortran", "fortran");
}

#[test]
fn p2p_fortran_mpif_h() {
    conformance("p2p_fortran_mpif_h", "p2p_mpif", "fortran");
}

#[test]
fn p2p_fortran_use_mpi_f08() {
    conformance("p2p_fortran_use_mpi_f08", "p2p_f08", "f08");
}

#[test]
fn p2p_c_main_with_fortran_library() {
    conformance("p2p_c_main_with_fortran_library", "p2p_cfort", "cfort");
}

#[test]
fn p2p_wildcard_probes_of_self_messages() {
    conformance(
        "p2p_wildcard_probes_of_self_messages",
        "p2p_selfprobe",
        "selfprobe",
    );
}

#[test]
fn p2p_fork_and_keep_communicating() {
    conformance("p2p_fork_and_keep_communicating", "p2p_fork", "fork");
}

#[test]
fn p2p_flood_before_receives() {
    conformance("p2p_flood_before_receives", "p2p_flood", "flood");
}

#[test]
fn p2p_random_traffic() {
    conformance("p2p_random_traffic", "p2p_random", "random");
}

/// Fast-box settings under which the two paths between a pair of ranks
/// meet all the time: a box so small that it is mostly full (the messages
/// after it take the global queue and the receiver merges both by sequence
/// number), and no fast box at all (the global queue alone).
const FAST_BOX_VARIANTS: [&[(&str, &str)]; 2] = [
    &[
        ("HEAPMPI_FASTBOX_SIZE", "1K"),
        ("HEAPMPI_FASTBOX_MAX", "224"),
    ],
    &[("HEAPMPI_FASTBOX_SIZE", "0")],
];

/// Runs a program at 2 and 4 ranks under each of `FAST_BOX_VARIANTS`
/// (LD_PRELOAD), compared with the stock run; a default run takes one of
/// the two rank counts per program (see `quick_pick`).
fn fast_box_variants(test: &str, program: &str, verdict: &str, args: &[&str]) {
    let mut fl = Failures::new();
    let counts: &[usize] = if full() {
        &[2, 4]
    } else if quick_pick(program, 2).0 == 0 {
        &[2]
    } else {
        &[4]
    };
    for f in variant_flavours(test) {
        for &n in counts {
            let stock_case = Case::new(program, f, Mode::Stock, n).args(args);
            let Some(stock) = reference(&mut fl, &stock_case, n, verdict) else {
                continue;
            };
            for env in FAST_BOX_VARIANTS {
                let case = Case::new(program, f, Mode::Preload, n).args(args).env(env);
                fl.run(case, |o| check_same_as_stock(o, &stock));
            }
        }
    }
    fl.finish(test);
}

#[test]
fn p2p_order_with_tiny_or_no_fast_box() {
    fast_box_variants(
        "p2p_order_with_tiny_or_no_fast_box",
        "p2p_order",
        "order",
        &[],
    );
}

#[test]
fn p2p_flood_with_tiny_or_no_fast_box() {
    fast_box_variants(
        "p2p_flood_with_tiny_or_no_fast_box",
        "p2p_flood",
        "flood",
        &[],
    );
}

#[test]
fn p2p_random_with_tiny_or_no_fast_box() {
    fast_box_variants(
        "p2p_random_with_tiny_or_no_fast_box",
        "p2p_random",
        "random",
        &["401", "402"],
    );
}

/// Freed requests that the real MPI carries (a wildcard receive on a
/// communicator spanning pretend nodes, a persistent receive from the other
/// node) complete and release their slots: nothing is left at
/// `MPI_Finalize`.
#[test]
fn p2p_freed_requests_leave_nothing() {
    let mut fl = Failures::new();
    let env = [("HEAPMPI_TEST_NODE_SIZE", "2"), ("HEAPMPI_STATS", "1")];
    for (i, f) in available_flavours().into_iter().enumerate() {
        fl.run(Case::new("p2p_handles", f, mode_for(i), 4).env(&env), |o| {
            check_success(o)?;
            check_nothing_left(o)
        });
    }
    fl.finish("p2p_freed_requests_leave_nothing");
}

/// What all ranks do collectively (registering a new communicator) is
/// decided by what all ranks agreed, never by one node's local state: the
/// communicator-heavy program gives the stock output with uneven pretend
/// nodes (3 and 5 ranks in nodes of 2, so one node has a lone rank that
/// runs no engine), with a node whose shared heap cannot be set up (ranks 2
/// and 3 of 4 are refused every address), and with `HEAPMPI_P2P=0`.
#[test]
fn p2p_uneven_and_failed_nodes() {
    let mut fl = Failures::new();
    let nodes = [("HEAPMPI_TEST_NODE_SIZE", "2"), ("HEAPMPI_STATS", "1")];
    let p2p_off = [("HEAPMPI_P2P", "0"), ("HEAPMPI_STATS", "1")];
    for n in [3, 4, 5] {
        for f in variant_flavours(&format!("p2p_uneven_and_failed_nodes np={n}")) {
            let stock_case = Case::new("p2p_comms", f, Mode::Stock, n);
            let Some(stock) = reference(&mut fl, &stock_case, n, "comms") else {
                continue;
            };
            let mode = mode_for(n);
            if n != 4 {
                let case = Case::new("p2p_comms", f, mode, n).env(&nodes);
                fl.run(case, |o| check_same_as_stock(o, &stock));
                continue;
            }
            let case = Case::new("p2p_comms", f, mode, n).env(&p2p_off);
            fl.run(case, |o| check_same_as_stock(o, &stock));
            // The node of ranks 2 and 3 fails its heap set-up.
            let case = Case::new("p2p_comms", f, mode, n).env(&nodes);
            let name = format!("{} with ranks 2 and 3 refused every address", case.name());
            let script = "r=${OMPI_COMM_WORLD_RANK:-$PMI_RANK}; \
                          if [ \"$r\" -ge 2 ]; then \
                          export HEAPMPI_TEST_ADDR_CONFLICTS=1000; fi; exec \"$@\"";
            let out = run_mpi_per_rank(&case, script);
            fl.record(&name, out, |o| {
                check_same_as_stock(o, &stock)?;
                let states: Vec<bool> = status_lines(&o.stderr)
                    .iter()
                    .map(|s| s.state == HeapState::Active)
                    .collect();
                if states.len() != n || states.iter().filter(|&&a| a).count() != 2 {
                    return Err(format!(
                        "expected 2 of {n} ranks with an active heap, got {states:?}"
                    ));
                }
                Ok(())
            });
        }
    }
    fl.finish("p2p_uneven_and_failed_nodes");
}

/// 100 000 messages per rank from 4 threads under MPI_THREAD_MULTIPLE:
/// nothing lost, duplicated, overtaken or corrupted (`p2p_thread_stress.c`).
#[test]
fn p2p_thread_multiple_stress() {
    conformance(
        "p2p_thread_multiple_stress",
        "p2p_thread_stress",
        "threadstress",
    );
}

/// The MPI-4.0 point-to-point and one-sided routines mixed with their
/// classic twins (`tests/c/p2p_mpi4.c`): every send of one family against
/// every receive of the other, probes, order across both, `MPI_Isendrecv`
/// against `MPI_Sendrecv`, the one-sided `_c` calls on heap windows, and
/// (2 ranks, `P2P_MPI4_LARGE=1`) a 2 GiB + 25 B message with
/// `MPI_Send_c`/`MPI_Recv_c`. Before heapmpi intercepted them, a message
/// sent with `MPI_Send_c` under MPICH was never seen by heapmpi's
/// `MPI_Recv`, and the job hung. Runs on every MPI whose `<mpi.h>` has
/// them (MPICH here; Open MPI 4.1 has none), over the point-to-point
/// configurations (the 2 GiB message through one way in per MPI in a
/// default run, both with `--full`); at least one such MPI must be
/// installed.
#[test]
fn p2p_mixed_with_mpi4_routines() {
    let (test, program, verdict) = ("p2p_mixed_with_mpi4_routines", "p2p_mpi4", "mpi4");
    let large = [("P2P_MPI4_LARGE", "1")];
    let mut fl = Failures::new();
    let flavours: Vec<Flavour> = available_flavours()
        .into_iter()
        .filter(|&f| declares_mpi4(f))
        .collect();
    assert!(
        !flavours.is_empty(),
        "no installed MPI declares the MPI-4.0 routines (MPICH 4 does)"
    );
    for &f in &flavours {
        for (i, cfg) in CONFIGS.iter().enumerate() {
            let Some(modes) = config_modes(program, i, &flavours, f) else {
                continue;
            };
            let n = cfg.nranks;
            for &mode in &modes {
                // The 2 GiB message (4-6 GB of memory for seconds) goes
                // with the statistics configuration; in a default run
                // through one way in per MPI (the two alternate), the
                // other way running the rest of the program (the way that
                // does not move p2p_bigtype's 4 GiB).
                let big = cfg.stats && (full() || mode == mode_for(f as usize + 1));
                let mut env: Vec<(&str, &str)> = cfg.env.to_vec();
                if big {
                    env.extend_from_slice(&large);
                }
                let stock_case = Case::new(program, f, Mode::Stock, n).env(&env);
                let Some(stock) = reference(&mut fl, &stock_case, n, verdict) else {
                    continue;
                };
                if cfg.stats {
                    env.extend_from_slice(&STATS);
                }
                let case = Case::new(program, f, mode, n).env(&env);
                fl.run(case, |o| {
                    check_same_as_stock(o, &stock)?;
                    if cfg.stats {
                        check_status_lines(o, n, HeapState::Active)?;
                        check_nothing_left(o)?;
                    }
                    if big {
                        // The 2 GiB message went through the heap.
                        let syn = stats_values(&o.stderr, "synergistic");
                        if !syn.iter().any(|v| {
                            v.split('/').nth(1).is_some_and(|b| {
                                b.trim_end_matches('B')
                                    .parse::<u64>()
                                    .is_ok_and(|x| x > 1 << 31)
                            })
                        }) {
                            return Err(format!(
                                "no rank reports the 2 GiB message through the heap: {syn:?}"
                            ));
                        }
                    }
                    Ok(())
                });
            }
        }
    }
    fl.finish(test);
}
