//! Collective conformance: the C programs `tests/c/coll_*.c` and the
//! Fortran programs `tests/f/coll_*.f90` under real `mpirun`, compared with
//! the stock MPI.
//!
//! heapmpi runs the collectives of node-local communicators over its shared
//! heap (`src/coll/`), and hands the others to the real MPI. Either way the
//! results must be the stock MPI's. Each program prints only what MPI makes
//! deterministic (see the header of each program and `tests/c/coll_util.h`)
//! and exits non-zero when one of its own checks fails. For every program,
//! every available MPI flavour and every configuration (1 rank; 2 ranks;
//! 4 ranks; 4 ranks in pretend nodes of 2 with `HEAPMPI_TEST_NODE_SIZE=2`,
//! which makes ranks {0,1} and {2,3} two nodes, so `MPI_COMM_WORLD` spans
//! nodes and its collectives run hierarchically or go to the real MPI while
//! node-local communicators stay on the heap; 2 ranks in pretend nodes of
//! 1, where everything goes to the real MPI), the test:
//!
//! 1. runs the program under the stock MPI (no heapmpi; the pretend-node
//!    variable is set there too, for symmetry: the programs use it only to
//!    make the same per-node communicators): it must pass, or the program
//!    itself is wrong and the configuration is not compared;
//! 2. runs it under heapmpi (`LD_PRELOAD` and `--wrap` at 1 and 2 ranks;
//!    one way in for each larger configuration, alternating, see
//!    `mode_for`): it must pass and its stdout must be byte-identical to
//!    the stock run's. In the
//!    2-rank configuration the heapmpi runs have `HEAPMPI_STATS=1`: every
//!    rank must report an active shared heap, collectives run over the heap
//!    (`coll: heap=N` with N > 0: every program uses `MPI_COMM_WORLD`, which
//!    is node-local there), and no message header or request left at
//!    `MPI_Finalize`.
//!
//! More tests run the data-movement and reduction programs at 2 ranks with
//! `HEAPMPI_COLL_INLINE=0` and `=64` (payloads that the default carries
//! inline in the members' cells go through the in-place and staging paths
//! instead) and with `HEAPMPI_HEAP_SIZE=2M` (staging fails, the members
//! hand calls over to the real MPI), and the reduction and communicator
//! programs at 3 ranks in pretend nodes of 2 (one node with a lone rank).
//!
//! The 4-rank runs are oversubscribed on a 2-core machine, where stock MPICH
//! takes milliseconds per collective; the programs therefore run fewer cases
//! at 4 ranks than at 1 and 2 (each program's header says which).
//!
//! One test per program, so cargo runs them in parallel (two at a time on
//! two cores). Run: `cargo test --release --test coll` (builds the library
//! first through `wrappers/heapmpi-build`; `HEAPMPI_TEST_NO_BUILD=1` to use
//! the existing one). For manual runs of a program: `P2P_SECTION_TIMES=1`
//! prints per-section times on stderr, `COLL_TRACE=1` (coll_reduce,
//! coll_errors) every call before it is made, `COLL_CASE_TIMES=1`
//! (coll_move) the time of every case.

use heapmpi_testkit as common;

use common::*;

/// Every one of the `n` ranks' reports says it ran collectives over the
/// shared heap (`coll: heap=N`, N > 0).
fn check_coll_on_heap(o: &Output, n: usize) -> Result<(), String> {
    let v = stats_part(&o.stderr, "coll: heap=")?;
    if v.len() != n || v.contains(&0) {
        return Err(format!(
            "coll: heap= on the ranks' reports: {v:?}; expected {n} values, all > 0 \
             (the program's collectives on MPI_COMM_WORLD are node-local here)"
        ));
    }
    Ok(())
}

/// Runs one program over the whole matrix ([`MATRIX`]); `verdict` is the
/// word of its "rank N: <verdict> ok" lines.
fn conformance(test: &str, program: &str, verdict: &str) {
    matrix_conformance(test, program, verdict, check_coll_on_heap);
}

/// Bcast, Gather, Scatter, Allgather, Alltoall and their v variants: sizes
/// around the inline limit and up to 1 MiB, every root, buffers in and out
/// of the heap, MPI_IN_PLACE, derived datatypes with holes, 64 MiB once.
#[test]
fn coll_data_movement() {
    conformance("coll_data_movement", "coll_move", "move");
}

/// Reduce, Allreduce, Reduce_scatter_block, Reduce_scatter, Scan, Exscan:
/// every predefined operation on every type it applies to, user-defined
/// commutative and non-commutative operations, MPI_IN_PLACE, large counts,
/// floating point within tolerance and identical on every rank.
#[test]
fn coll_reductions() {
    conformance("coll_reductions", "coll_reduce", "reduce");
}

/// Floating-point reductions bit for bit as stock (`tests/c/coll_order.c`):
/// sums and products of doubles and floats whose last bits depend on the
/// order of combination, Allreduce, Reduce at every root, Scan, Exscan and
/// the reduce-scatters, counts around both MPIs' algorithm switch points,
/// on WORLD, a 3-rank split and WORLD reversed, at 1, 2 and 4 ranks (the
/// matrix) and at 3 ranks; on WORLD at 5 and 6 ranks (sizes whose
/// associations differ: recursive doubling's pairs, MPICH's binomial tree,
/// Open MPI's ring).
/// Under heapmpi these once came out as `x0 + (x1 + (x2 + x3))` and differed
/// from stock from 3 ranks up. Last, at 4 ranks, with algorithms forced
/// through each MPI's environment parameters (heapmpi then leaves such
/// reductions to the MPI).
#[test]
fn coll_reduction_order() {
    conformance("coll_reduction_order", "coll_order", "order");
    let mut fl = Failures::new();
    for n in [3, 5, 6] {
        for f in variant_flavours(&format!("coll_order np={n}")) {
            let args: &[&str] = if n > 4 { &["world"] } else { &[] };
            let stock_case = Case::new("coll_order", f, Mode::Stock, n).args(args);
            let Some(stock) = reference(&mut fl, &stock_case, n, "order") else {
                continue;
            };
            let case = Case::new("coll_order", f, mode_for(n), n).args(args);
            fl.run(case, |o| check_same_as_stock(o, &stock));
        }
    }
    // Algorithms chosen through the environment: heapmpi cannot know
    // their order and hands such reductions to the real MPI.
    for f in available_flavours() {
        let env: &[(&str, &str)] = if f.is_openmpi() {
            &[
                ("OMPI_MCA_coll_tuned_use_dynamic_rules", "1"),
                ("OMPI_MCA_coll_tuned_allreduce_algorithm", "4"),
                ("OMPI_MCA_coll_tuned_reduce_algorithm", "5"),
            ]
        } else {
            &[
                (
                    "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM",
                    "reduce_scatter_allgather",
                ),
                ("MPIR_CVAR_REDUCE_INTRA_ALGORITHM", "reduce_scatter_gather"),
            ]
        };
        let args: &[&str] = &["world"];
        let stock_case = Case::new("coll_order", f, Mode::Stock, 4)
            .args(args)
            .env(env);
        let Some(stock) = reference(&mut fl, &stock_case, 4, "order") else {
            continue;
        };
        let case = Case::new("coll_order", f, Mode::Preload, 4)
            .args(args)
            .env(env);
        fl.run(case, |o| check_same_as_stock(o, &stock));
    }
    fl.finish("coll_reduction_order");
}

/// Collectives on split (reordered), duplicated, single-rank, cross-node,
/// created, idup'd, self and inter-communicators; among point-to-point
/// traffic with wildcard receives; communicators created and freed by the
/// hundred.
#[test]
fn coll_communicators() {
    conformance("coll_communicators", "coll_comms", "comms");
}

/// The nonblocking collectives (`tests/c/coll_nonblocking.c`): every size
/// and root of Ibcast (a derived type freed while pending), Ireduce and
/// Iallreduce of every operation heapmpi takes and some it leaves to the
/// real MPI, many requests outstanding and completed by every Wait/Test
/// form, mixed with blocking collectives and point-to-point (orders that
/// need progress while a member sits elsewhere), on duplicated, split and
/// self communicators, a member in the real `MPI_Comm_dup` while the others
/// wait, and errors. At 2 ranks some of them must have run on the heap.
#[test]
fn coll_nonblocking() {
    matrix_conformance(
        "coll_nonblocking",
        "coll_nonblocking",
        "nonblocking",
        |o, n| {
            check_coll_on_heap(o, n)?;
            let v = stats_numbers(&o.stderr, "nonblocking")?;
            if v.len() != n || v.contains(&0) {
                return Err(format!(
                    "nonblocking= on the ranks' reports: {v:?}; expected {n} values, all > 0"
                ));
            }
            Ok(())
        },
    );
}

/// A nonblocking collective as a communicator's first collective: on
/// MPI_COMM_WORLD straight after MPI_Init, and on new communicators made by
/// Comm_dup, Comm_split, Comm_create, Comm_create_group, Cart_create and
/// Comm_split_type (`tests/c/coll_nbfirst.c`), with no blocking
/// collective before the report. At 2 ranks every one of them ran on the
/// heap: the report's nonblocking= count equals the number the program
/// posted.
#[test]
fn coll_nonblocking_first() {
    matrix_conformance(
        "coll_nonblocking_first",
        "coll_nbfirst",
        "nbfirst",
        |o, n| {
            check_coll_on_heap(o, n)?;
            check_posted_on_heap(o, n)
        },
    );
}

/// MPI-4 persistent collectives (`tests/c/coll_persistent.c`): the eleven
/// routines heapmpi runs, started many times with new data, by Startall
/// and Start/Test, between other collectives, on WORLD, a duplicate and a
/// split; a derived type freed after the initialisation, a count beyond
/// the inline cells (read in place), a user-defined operation (the real
/// MPI's path), a start overtaken by a blocking collective. On every MPI whose
/// `<mpi.h>` declares the MPI-4 routines (MPICH here; Open MPI 4.1 has
/// none). At 2 ranks every start the program counts as eligible ran on
/// the heap: the report's nonblocking= equals its count; and nothing is
/// leaked (MPICH reports datatypes never freed at `MPI_Finalize`).
#[test]
fn coll_persistent() {
    let flavours: Vec<Flavour> = available_flavours()
        .into_iter()
        .filter(|&f| declares_mpi4(f))
        .collect();
    assert!(
        !flavours.is_empty(),
        "no installed MPI declares the MPI-4.0 routines (MPICH 4 does)"
    );
    matrix_conformance_on(
        &flavours,
        "coll_persistent",
        "coll_persistent",
        "persistent",
        |o, n| {
            check_coll_on_heap(o, n)?;
            // MPICH names the datatypes never freed at MPI_Finalize (a
            // duplicate a request held and did not free).
            if let Some(l) = o.stderr.lines().find(|l| l.contains("leaked")) {
                return Err(format!("leaked MPI objects: {l}"));
            }
            count_on_heap(o, n, "heap-eligible starts per rank: ")
        },
    );
}

/// Neighbor_allgather(v) and Neighbor_alltoall(v/w) on Cartesian grids
/// (periodic dimensions of 1 and 2, MPI_PROC_NULL edges), a graph with
/// repeated neighbours and self-loops, and directed distributed graphs,
/// on MPI_COMM_WORLD and the node's communicator: the stock MPI's bytes in
/// every receive block (`tests/c/coll_neighbor.c`).
#[test]
fn coll_neighborhood() {
    conformance("coll_neighborhood", "coll_neighbor", "neighbor");
}

/// The neighbourhood collectives through the Fortran bindings (`use mpi`,
/// `tests/f/coll_neighbor_f.f90`: a halo exchange on a 2-D grid, 120 calls):
/// the stock MPI's results, and at 2 ranks every one of the 120 calls on
/// the heap (the program makes no other collective call before its
/// report's two gathers).
#[test]
fn coll_neighborhood_fortran() {
    matrix_conformance(
        "coll_neighborhood_fortran",
        "coll_neighbor_f",
        "neighbor",
        |o, n| {
            let v = stats_part(&o.stderr, "coll: heap=")?;
            if v.len() != n || v.iter().any(|&x| x < 120) {
                return Err(format!(
                    "coll: heap= on the ranks' reports: {v:?}; expected {n} values of at \
                     least 120 (every neighbourhood call through the heap)"
                ));
            }
            Ok(())
        },
    );
}

/// Two threads per rank under MPI_THREAD_MULTIPLE, each running collectives
/// on its own duplicate of MPI_COMM_WORLD.
#[test]
fn coll_thread_multiple() {
    conformance("coll_thread_multiple", "coll_threads", "threads");
}

/// Invalid roots, operations, datatypes, counts and communicators under
/// MPI_ERRORS_RETURN, and (operation, type) pairs outside the standard:
/// the stock MPI's error classes and results.
#[test]
fn coll_errors_return() {
    conformance("coll_errors_return", "coll_errors", "errors");
}

/// The 16 blocking collectives through the Fortran bindings, with `use mpi`
/// (`tests/f/coll_fortran.f90`, the body in `coll_fortran_body.inc`): under
/// Open MPI heapmpi's own bindings (`src/fortran/coll.rs`: handles,
/// MPI_BOTTOM, MPI_IN_PLACE converted), under MPICH the C functions. Exact
/// results on the Fortran types, MAXLOC/MINLOC, user operations (one
/// non-commutative), MPI_IN_PLACE, MPI_BOTTOM, guard words, error classes.
#[test]
fn coll_fortran_use_mpi() {
    conformance("coll_fortran_use_mpi", "coll_fortran", "fortran");
}

/// The same program with `include 'mpif.h'` (`tests/f/coll_mpif.f90`).
#[test]
fn coll_fortran_mpif_h() {
    conformance("coll_fortran_mpif_h", "coll_mpif", "fortran");
}

/// Its `use mpi_f08` twin (`tests/f/coll_f08.f90`): typed handles, the
/// mpi_f08 form of the user functions.
#[test]
fn coll_fortran_use_mpi_f08() {
    conformance("coll_fortran_use_mpi_f08", "coll_f08", "f08");
}

/// A run of a program under heapmpi: its mode and environment.
type Run<'a> = (Mode, &'a [(&'a str, &'a str)]);

/// Runs each `(program, verdict)` at `n` ranks stock (with `stock_env`),
/// then as each of `runs`, on the MPIs of this variant (every one in a
/// release run, see `variant_flavours`); each heapmpi run must print what
/// the stock run printed and pass `check`.
fn against_stock(
    test: &str,
    programs: &[(&str, &str)],
    n: usize,
    stock_env: &[(&str, &str)],
    runs: &[Run],
    check: impl Fn(&Output) -> Result<(), String>,
) {
    let mut fl = Failures::new();
    for &(program, verdict) in programs {
        for f in variant_flavours(&format!("{test} {program}")) {
            let stock_case = Case::new(program, f, Mode::Stock, n).env(stock_env);
            let Some(stock) = reference(&mut fl, &stock_case, n, verdict) else {
                continue;
            };
            for &(mode, env) in runs {
                let case = Case::new(program, f, mode, n).env(env);
                fl.run(case, |o| {
                    check_same_as_stock(o, &stock)?;
                    check(o)
                });
            }
        }
    }
    fl.finish(test);
}

/// Settings under which other paths carry what the defaults carry: no
/// inline data in the members' cells at all (every payload is read in place
/// or staged), 64 bytes inline, and a 2 MiB heap per rank (the large
/// buffers come from the system allocator, outside the heap, and staging
/// them fails: every member hands the call over to the real MPI half-way).
const VARIANTS: [&[(&str, &str)]; 3] = [
    &[("HEAPMPI_COLL_INLINE", "0"), ("HEAPMPI_STATS", "1")],
    &[("HEAPMPI_COLL_INLINE", "64"), ("HEAPMPI_STATS", "1")],
    &[("HEAPMPI_HEAP_SIZE", "2M"), ("HEAPMPI_STATS", "1")],
];

/// Runs a program at 2 ranks under each of `VARIANTS` (LD_PRELOAD),
/// compared with the stock run; collectives must still run over the heap.
fn variants(test: &str, program: &str, verdict: &str) {
    let runs = VARIANTS.map(|env| (Mode::Preload, env));
    against_stock(test, &[(program, verdict)], 2, &[], &runs, |o| {
        check_coll_on_heap(o, 2)
    });
}

#[test]
fn coll_data_movement_inline_and_heap_variants() {
    variants(
        "coll_data_movement_inline_and_heap_variants",
        "coll_move",
        "move",
    );
}

#[test]
fn coll_reductions_inline_and_heap_variants() {
    variants(
        "coll_reductions_inline_and_heap_variants",
        "coll_reduce",
        "reduce",
    );
}

/// Nonblocking broadcasts, reductions, gathers, scatters and all-to-alls
/// whose payload is larger than the inline cells (`tests/c/coll_nblarge.c`):
/// 70001 bytes and 2 MiB + 7 per block, from malloc'd buffers (read in
/// place), static arrays (staged), in place, a derived type freed while
/// pending, many pending at once. At 2 ranks every one ran on the heap
/// (nonblocking= equals the program's count). Then with a 2 MiB heap,
/// where the 2 MiB payloads cannot be staged and move through the cells in
/// chunks (stage_failed > 0), at 2 and 4 ranks: output equal to stock.
#[test]
fn coll_nonblocking_large() {
    matrix_conformance(
        "coll_nonblocking_large",
        "coll_nblarge",
        "nblarge",
        |o, n| {
            check_coll_on_heap(o, n)?;
            check_posted_on_heap(o, n)
        },
    );
    with_a_full_heap("coll_nonblocking_large", "coll_nblarge", "nblarge");
}

/// The nonblocking "v" collectives (`tests/c/coll_nbvector.c`): Igatherv,
/// Iscatterv, Iallgatherv and Ialltoallv with counts differing per member
/// and pair (zeros included), reversed displacements with gaps, small,
/// 80 KB and 2.2 MiB blocks, in place, a resized type freed while pending,
/// among an Ibcast and an Iallreduce, on WORLD, a duplicate and a split.
/// At 2 ranks every call on a communicator of two ran on the heap
/// (nonblocking= equals the program's count). Then with a 2 MiB heap,
/// where the large blocks cannot be staged and are read through
/// cross-memory attach (stage_failed > 0), at 2 and 4 ranks.
#[test]
fn coll_nonblocking_vector() {
    matrix_conformance(
        "coll_nonblocking_vector",
        "coll_nbvector",
        "nbvector",
        |o, n| {
            check_coll_on_heap(o, n)?;
            check_posted_on_heap(o, n)
        },
    );
    with_a_full_heap("coll_nonblocking_vector", "coll_nbvector", "nbvector");
}

/// The nonblocking neighbourhood collectives (`tests/c/coll_nbneighbor.c`):
/// Ineighbor_allgather(v) and _alltoall(v/w) as the first collectives of a
/// periodic ring, a 2-D grid, a graph and a distributed graph, at 3, 1000
/// and 300001 ints per block, a resized receive type and (alltoallw) a
/// vector type for every other block freed while pending, with ambiguous
/// neighbourhoods at 2 and 4 ranks (paired as each MPI pairs its
/// nonblocking forms). At 2 ranks every call heapmpi takes ran on the heap
/// (nonblocking= equals the program's count).
#[test]
fn coll_nonblocking_neighborhood() {
    matrix_conformance(
        "coll_nonblocking_neighborhood",
        "coll_nbneighbor",
        "nbneighbor",
        |o, n| {
            check_coll_on_heap(o, n)?;
            check_posted_on_heap(o, n)
        },
    );
}

/// Runs `program` with a 2 MiB heap per rank at 2 and 4 ranks (LD_PRELOAD)
/// against stock: its large buffers cannot be staged, and some rank must
/// say so (`stage_failed=` > 0), or the fallback was not exercised.
fn with_a_full_heap(test: &str, program: &str, verdict: &str) {
    let full = [("HEAPMPI_HEAP_SIZE", "2M"), ("HEAPMPI_STATS", "1")];
    for n in [2, 4] {
        against_stock(
            &format!("{test} (2 MiB heap, {n} ranks)"),
            &[(program, verdict)],
            n,
            &[],
            &[(Mode::Preload, &full[..])],
            |o| {
                let failed = stats_numbers(&o.stderr, "stage_failed")?;
                if failed.len() != n || failed.iter().all(|&x| x == 0) {
                    return Err(format!(
                        "stage_failed= on the ranks' reports: {failed:?}; its large buffers \
                         must have failed to stage under a 2 MiB heap"
                    ));
                }
                Ok(())
            },
        );
    }
}

/// [`count_on_heap`] of "nonblocking calls per rank: ".
fn check_posted_on_heap(o: &Output, n: usize) -> Result<(), String> {
    count_on_heap(o, n, "nonblocking calls per rank: ")
}

/// The nonblocking collectives under `VARIANTS`: with no inline data
/// nearly every broadcast and reduction moves as a large operation (offers
/// read in place or staged); with a 2 MiB heap staging fails, and those
/// operations, which cannot go to the real MPI half-way, move through the
/// cells in chunks instead. Output equal to stock; in the 2 MiB run some
/// rank must have failed to stage (`stage_failed=` > 0), or the chunks
/// were not exercised.
#[test]
fn coll_nonblocking_inline_and_heap_variants() {
    let mut fl = Failures::new();
    for f in variant_flavours("coll_nonblocking_inline_and_heap_variants") {
        let n = 2;
        let stock_case = Case::new("coll_nonblocking", f, Mode::Stock, n);
        let Some(stock) = reference(&mut fl, &stock_case, n, "nonblocking") else {
            continue;
        };
        for env in VARIANTS {
            let full_heap = env.iter().any(|&(k, _)| k == "HEAPMPI_HEAP_SIZE");
            let case = Case::new("coll_nonblocking", f, Mode::Preload, n).env(env);
            fl.run(case, |o| {
                check_same_as_stock(o, &stock)?;
                check_coll_on_heap(o, n)?;
                let failed = stats_numbers(&o.stderr, "stage_failed")?;
                if full_heap && failed.iter().all(|&x| x == 0) {
                    return Err(format!(
                        "stage_failed= on the ranks' reports: {failed:?}; with a 2 MiB heap \
                         some large nonblocking operation must have failed to stage"
                    ));
                }
                Ok(())
            });
        }
    }
    fl.finish("coll_nonblocking_inline_and_heap_variants");
}

/// Uneven pretend nodes: 3 ranks in nodes of 2, so one node holds a lone
/// rank. Reduce and Allreduce on `MPI_COMM_WORLD` span the nodes (node
/// phase, then leaders through the real MPI), the per-node communicators
/// are one node-local pair and one single rank.
#[test]
fn coll_uneven_pretend_nodes() {
    let runs = [(Mode::Wrap, &PRETEND_NODES[..])];
    against_stock(
        "coll_uneven_pretend_nodes",
        &[("coll_reduce", "reduce"), ("coll_comms", "comms")],
        3,
        &PRETEND_NODES,
        &runs,
        |_| Ok(()),
    );
}

/// Collectives across pretend nodes with a 2 MiB heap per rank: the large
/// buffers cannot be staged, so node phases of the hierarchical
/// collectives (Bcast, Allreduce, Allgather, ...) give up on the heap and
/// run over the node's own communicator instead, while the other node may
/// have used its heap. The output must still equal stock, and some node
/// phase must have given up (`coll: ... gave_up=N`, N > 0 on some rank),
/// or this test would not cover that path.
#[test]
fn coll_spanning_with_a_full_heap() {
    let n = 4;
    let env = [
        ("HEAPMPI_TEST_NODE_SIZE", "2"),
        ("HEAPMPI_HEAP_SIZE", "2M"),
        ("HEAPMPI_STATS", "1"),
    ];
    let runs = [(Mode::Preload, &env[..])];
    against_stock(
        "coll_spanning_with_a_full_heap",
        &[("coll_move", "move")],
        n,
        &PRETEND_NODES,
        &runs,
        |o| {
            let v = stats_numbers(&o.stderr, "gave_up")?;
            if v.len() != n || v.iter().all(|&g| g == 0) {
                return Err(format!(
                    "coll: gave_up= on the ranks' reports: {v:?}; expected {n} values, \
                     some > 0 (the full heap must make a node phase give up)"
                ));
            }
            Ok(())
        },
    );
}

/// Trees: the barrier (with more ranks than cores) and the small
/// commutative Reduce/Allreduce on more members than radix + 1 go up a
/// tree of radix `HEAPMPI_COLL_RADIX` (default 4, so at 4 ranks the
/// reductions stay flat). Radix 2 (two levels) and 1 (a chain) make members
/// fold their children's partial results and pass them on; every result
/// must still equal stock, for every root.
#[test]
fn coll_trees_of_radix_2_and_1() {
    let env = |radix| [("HEAPMPI_COLL_RADIX", radix), ("HEAPMPI_STATS", "1")];
    let (two, one) = (env("2"), env("1"));
    let runs = [(Mode::Preload, &two[..]), (Mode::Preload, &one[..])];
    against_stock(
        "coll_trees_of_radix_2_and_1",
        &[("coll_reduce", "reduce"), ("coll_comms", "comms")],
        4,
        &[],
        &runs,
        |o| check_coll_on_heap(o, 4),
    );
}

/// Every reduction kernel (`tests/c/coll_sweep.c`): every predefined type
/// of the C header (the C and Fortran types, every pair type) x every
/// predefined reduction operation x Reduce (rotating root), Allreduce,
/// Reduce_scatter_block, Scan and Exscan x counts 1, 5 (MPI_IN_PLACE) and
/// 1000, a vector with gaps and a contiguous type of a vector. The MPI
/// decides which combinations are valid (the refused ones print their
/// error class); the results are exact, checked against the rank-order
/// reference and printed as checksums of the data components (never
/// padding). The combinations on which a stock MPI is wrong or crashes are
/// left out there (the program's `stock_bug` says which and why).
#[test]
fn coll_sweep() {
    conformance("coll_sweep", "coll_sweep", "csweep");
}

/// `MPI_Dist_graph_create` with the parent's nonblocking tag counter at
/// every point around Open MPI's window (`tests/c/comm_distgraph.c`,
/// `src/comm/quirks.rs`). Stock Open MPI 4.1 hangs on it in most runs (7
/// of 8 here; heapmpi without the workaround 6 of 8), so it runs under
/// heapmpi only: 4 ranks, three times per way in on Open MPI (eight rounds
/// of the sweep each), once per way in on MPICH, which has no such window
/// (one round: its oversubscribed collectives take milliseconds).
#[test]
fn dist_graph_create_never_meets_open_mpis_tag_window() {
    let mut fl = Failures::new();
    let n = 4;
    for (f, mode) in heapmpi_matrix() {
        let (runs, rounds) = if f == Flavour::OpenMpi {
            (3, 8)
        } else {
            (1, 1)
        };
        let arg = rounds.to_string();
        let args = [arg.as_str()];
        // Each round: 12 parents, 2 graphs on each.
        let mut expected = per_rank_lines(n, &format!("graphs per rank: {}", rounds * 24));
        expected.extend(per_rank_lines(n, "distgraph ok"));
        for _ in 0..runs {
            fl.run(Case::new("comm_distgraph", f, mode, n).args(&args), |o| {
                check_ok(o, &expected)
            });
        }
    }
    fl.finish("dist_graph_create_never_meets_open_mpis_tag_window");
}
