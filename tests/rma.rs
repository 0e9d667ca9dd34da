//! One-sided (RMA) conformance: the C programs `tests/c/rma_*.c` and the
//! Fortran programs `tests/f/rma_*.f90` (`use mpi`, `mpif.h`, `use
//! mpi_f08`: heapmpi's own Fortran bindings, `src/fortran/rma.rs`) under
//! real `mpirun`, compared with the stock MPI.
//!
//! heapmpi runs the windows of node-local communicators over its shared
//! heap (`src/rma/`: puts, gets and accumulates as loads and stores,
//! fences as the node's flag barrier, passive-target locks by atomics in
//! the heap), and
//! hands the others to the real MPI. Either way the results must be the
//! stock MPI's. Each program prints only what MPI makes deterministic
//! (checksums of window memory after each synchronisation, fetched values
//! where no other origin races, error classes; see the header of each
//! program) and exits non-zero when one of its own checks fails. For every
//! program, every available MPI flavour and every configuration (1 rank;
//! 2 ranks; 4 ranks; 4 ranks in pretend nodes of 2 with
//! `HEAPMPI_TEST_NODE_SIZE=2`, which makes ranks {0,1} and {2,3} two nodes,
//! so windows on `MPI_COMM_WORLD` span nodes and go to the real MPI while
//! windows on a node's pair of ranks can stay on the heap; 2 ranks in
//! pretend nodes of 1, where every window goes to the real MPI), the test:
//!
//! 1. runs the program under the stock MPI (no heapmpi; the pretend-node
//!    variable is set there too, for symmetry): it must pass, or the
//!    program itself is wrong and the configuration is not compared;
//! 2. runs it under heapmpi (`LD_PRELOAD` and `--wrap` at 1 and 2 ranks;
//!    one way in for each larger configuration, alternating, see
//!    `mode_for`): it must pass and its stdout must be byte-identical to
//!    the stock run's. In the
//!    2-rank configuration the heapmpi runs have `HEAPMPI_STATS=1`: every
//!    rank must report an active shared heap, windows over the heap
//!    (`rma: windows heap=N` with N > 0: every program makes windows on
//!    `MPI_COMM_WORLD`, which is node-local there), and no message header or
//!    request left at `MPI_Finalize`.
//!
//! One more test runs `rma_basic` at 2 ranks with `HEAPMPI_RMA=0` (every
//! window to the real MPI: `rma: windows heap=0` on every rank) and with
//! `HEAPMPI_HEAP_SIZE=2M` (the large windows' memory, from `malloc` and
//! `MPI_Alloc_mem`, comes from outside the heap; the small ones still fit).
//!
//! The stock MPIs have bugs here, which the programs work around (each
//! program's header says how): stock Open MPI 4.1.4 cannot create a window
//! with `Win_create` or `Win_create_dynamic` on one process, crashes in
//! 8-byte `Compare_and_swap` on `Win_allocate` windows (and on `Win_create`
//! windows when the target is the caller), ignores `MPI_LAND`/`LOR`/`LXOR`
//! in accumulates on `Win_create` windows and fetches garbage in
//! `Get_accumulate` with non-contiguous datatypes there.
//!
//! The 4-rank runs are oversubscribed on a 2-core machine, where stock MPICH
//! takes milliseconds per fence and passive-target synchronisation; the
//! programs therefore run fewer cases at 4 ranks than at 1 and 2.
//!
//! One test per program, so cargo runs them in parallel (two at a time on
//! two cores). Run: `cargo test --release --test rma` (builds the library
//! first through `wrappers/heapmpi-build`; `HEAPMPI_TEST_NO_BUILD=1` to use
//! the existing one). For manual runs of a program: `P2P_SECTION_TIMES=1`
//! prints per-section times on stderr, `RMA_TRACE=1` (rma_basic,
//! rma_errors) every phase or call before it is made.

use heapmpi_testkit as common;

use common::*;

/// The `rma: windows heap=N` of every rank's report line, in order.
fn rma_windows_on_heap(o: &Output) -> Result<Vec<u64>, String> {
    stats_part(&o.stderr, "rma: windows heap=")
}

/// Every one of the `n` ranks' reports says it made windows over the
/// shared heap (`rma: windows heap=N`, N > 0).
fn check_rma_on_heap(o: &Output, n: usize) -> Result<(), String> {
    let v = rma_windows_on_heap(o)?;
    if v.len() != n || v.contains(&0) {
        return Err(format!(
            "rma: windows heap= on the ranks' reports: {v:?}; expected {n} values, all > 0 \
             (the program's windows on MPI_COMM_WORLD are node-local here)"
        ));
    }
    Ok(())
}

/// Every one of the `n` ranks' reports says no window went over the heap.
fn check_rma_not_on_heap(o: &Output, n: usize) -> Result<(), String> {
    let v = rma_windows_on_heap(o)?;
    if v.len() != n || v.iter().any(|&x| x != 0) {
        return Err(format!(
            "rma: windows heap= on the ranks' reports: {v:?}; expected {n} values, all 0 \
             (HEAPMPI_RMA=0 sends every window to the real MPI)"
        ));
    }
    Ok(())
}

/// Runs one program over the whole matrix ([`MATRIX`]); `verdict` is the
/// word of its "rank N: <verdict> ok" lines.
fn conformance(test: &str, program: &str, verdict: &str) {
    matrix_conformance(test, program, verdict, check_rma_on_heap);
}

/// Every RMA call (Put, Get, Accumulate, Get_accumulate, Fetch_and_op,
/// Compare_and_swap, the request-based ones), every window flavour
/// (Win_create over MPI_Alloc_mem, malloc, global and stack memory,
/// Win_allocate, Win_allocate_shared with loads and stores through
/// Win_shared_query, Win_create_dynamic with attach and detach), every
/// synchronisation (fence with asserts, PSCW in rings, pairs and a star,
/// locks, Lock_all, flushes, Win_sync), derived datatypes, sizes from 0 B to
/// 4 MiB, every predefined operation on 12 types, disp units, windows of
/// size 0, attributes, names, info, error handlers.
#[test]
fn rma_basic() {
    conformance("rma_basic", "rma_basic", "rma");
}

/// Erroneous RMA calls under MPI_ERRORS_RETURN (no epoch, wrong epoch,
/// invalid ranks, displacements, counts, datatypes and operations, lock and
/// PSCW misuse, the wrong window flavour): the stock MPI's error classes,
/// then correct epochs on the same windows.
#[test]
fn rma_errors_return() {
    conformance("rma_errors_return", "rma_errors", "errors");
}

/// Atomicity of concurrent accumulates and read-modify-writes from every
/// rank (`tests/c/rma_atomic.c`).
#[test]
fn rma_atomic() {
    conformance("rma_atomic", "rma_atomic", "atomic");
}

/// A global-arrays-style workload over passive-target RMA
/// (`tests/c/rma_ga.c`).
#[test]
fn rma_ga() {
    conformance("rma_ga", "rma_ga", "ga");
}

/// `rma_basic` at 2 ranks (LD_PRELOAD) with `HEAPMPI_RMA=0`, where every
/// window goes to the real MPI (`rma: windows heap=0` on every rank), and
/// with `HEAPMPI_HEAP_SIZE=2M`, where the large buffers of `malloc` and
/// `MPI_Alloc_mem` (1 and 4 MiB windows, the 1 MiB dynamic region) come
/// from outside the heap while the small windows still fit in it
/// (`rma: windows heap=N`, N > 0). Stdout must equal the stock run's.
#[test]
fn rma_basic_without_rma_and_with_a_small_heap() {
    let test = "rma_basic_without_rma_and_with_a_small_heap";
    let (program, verdict, n) = ("rma_basic", "rma", 2);
    let no_rma = [("HEAPMPI_RMA", "0"), ("HEAPMPI_STATS", "1")];
    let small_heap = [("HEAPMPI_HEAP_SIZE", "2M"), ("HEAPMPI_STATS", "1")];
    let mut fl = Failures::new();
    for f in variant_flavours("rma_basic without rma") {
        let stock_case = Case::new(program, f, Mode::Stock, n);
        let Some(stock) = reference(&mut fl, &stock_case, n, verdict) else {
            continue;
        };
        fl.run(Case::new(program, f, Mode::Preload, n).env(&no_rma), |o| {
            check_same_as_stock(o, &stock)?;
            check_status_lines(o, n, HeapState::Active)?;
            check_rma_not_on_heap(o, n)?;
            check_nothing_left(o)
        });
    }
    for f in variant_flavours("rma_basic HEAPMPI_HEAP_SIZE=2M") {
        let stock_case = Case::new(program, f, Mode::Stock, n);
        let Some(stock) = reference(&mut fl, &stock_case, n, verdict) else {
            continue;
        };
        fl.run(
            Case::new(program, f, Mode::Preload, n).env(&small_heap),
            |o| {
                check_same_as_stock(o, &stock)?;
                check_status_lines(o, n, HeapState::Active)?;
                check_rma_on_heap(o, n)?;
                check_nothing_left(o)
            },
        );
    }
    fl.finish(test);
}

/// One-sided communication through the Fortran bindings with `use mpi`
/// (`tests/f/rma_fortran.f90`, the body in `rma_fortran_body.inc`):
/// Win_allocate, Win_allocate_shared with Win_shared_query, Win_create over
/// MPI_Alloc_mem memory and over a Fortran array, Win_create_dynamic; fence,
/// PSCW (Win_wait and a Win_test loop), locks, Lock_all, flushes, Win_sync;
/// Put, Get, Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap and
/// the R forms; the window flavours through Win_get_attr. Under Open MPI
/// heapmpi's own bindings (`src/fortran/rma.rs`) serve every call, under
/// MPICH the C functions (and heapmpi's Win_get_attr); at 2 ranks the
/// windows must run on the heap (`rma: windows heap=N`, N > 0).
#[test]
fn rma_fortran_use_mpi() {
    conformance("rma_fortran_use_mpi", "rma_fortran", "fortran");
}

/// The same program with `include 'mpif.h'` (`tests/f/rma_mpif.f90`).
#[test]
fn rma_fortran_mpif_h() {
    conformance("rma_fortran_mpif_h", "rma_mpif", "fortran");
}

/// MPICH's `use mpi_f08` large-count specifics that call `PMPI_*_c`
/// (`tests/f/rma_f08_large.f90`): `MPI_Win_allocate(_shared)` with an
/// `MPI_ADDRESS_KIND` displacement unit, `MPI_Win_shared_query` with one
/// out, `MPI_Buffer_detach` with an `MPI_COUNT_KIND` size. heapmpi defines
/// them (`src/fortran/large.rs`): at 2 ranks the windows must run on the
/// heap, and a `MPI_Bsend` after such a detach must fail with
/// `MPI_ERR_BUFFER` as stock (heapmpi used to think the buffer attached).
/// MPICH only (Open MPI 4.1's `mpi_f08` has no large-count specifics); it
/// must be installed.
#[test]
fn rma_fortran_f08_large_count() {
    let flavours: Vec<Flavour> = available_flavours()
        .into_iter()
        .filter(|&f| f == Flavour::Mpich)
        .collect();
    assert!(
        !flavours.is_empty(),
        "MPICH (whose mpi_f08 has the large-count specifics) is not installed"
    );
    matrix_conformance_on(
        &flavours,
        "rma_fortran_f08_large_count",
        "rma_f08_large",
        "f08large",
        check_rma_on_heap,
    );
}

/// Its `use mpi_f08` twin (`tests/f/rma_f08.f90`): typed handles, every
/// base a TYPE(C_PTR). Under MPICH its allocation, free, Win_shared_query,
/// Win_get_attr and synchronisation procedures are heapmpi's own
/// (`mpi_win_fence_f08_`, ...: MPICH's call `PMPI_*`), so fences and locks
/// of a heap window run in heapmpi.
#[test]
fn rma_fortran_use_mpi_f08() {
    conformance("rma_fortran_use_mpi_f08", "rma_f08", "fortran");
}

/// One-sided calls that once differed from stock (`tests/c/rma_regress.c`):
/// MAXLOC of `MPI_LONG_DOUBLE_INT` through a vector type, MINLOC of every
/// pair type, `MPI_Fetch_and_op` of `MPI_CHAR` with `MPI_SUM`,
/// `MPI_Win_shared_query` of empty segments (with and without
/// `alloc_shared_noncontig`), windows on `MPI_COMM_SELF`, zero-count
/// accumulates of a pair outside the standard's table, `MPI_WIN_BASE` of
/// shared segments of odd sizes, null buffers of zero-size types, window
/// creations on overlapping communicators while half of the ranks lag.
#[test]
fn rma_regressions() {
    conformance("rma_regressions", "rma_regress", "regress");
}

/// Every accumulate kernel (`tests/c/rma_sweep.c`): every predefined type
/// of the C header (the C and Fortran types, every pair type) x every
/// predefined operation (MPI_NO_OP with the fetching calls) x Accumulate,
/// Get_accumulate, Raccumulate, Rget_accumulate and Fetch_and_op x one
/// element, contiguous, vectors with gaps on both sides or on the target
/// only, and derived types of derived types x the four window flavours x
/// lock_all, lock and fence epochs. The MPI decides which combinations are
/// valid (the refused ones print their error class); the results are
/// checked against values computed by the program, and printed as
/// checksums of the data components (never padding). The combinations on
/// which a stock MPI is wrong, hangs or crashes are left out there (the
/// program's `stock_bug` says which and why).
///
/// Under MPICH, 106 (type, operation) pairs that its `MPI_Reduce_local`
/// refuses are performed by its accumulates (`MPI_BYTE` with MAX..LXOR,
/// `MPI_C_BOOL`/`MPI_LOGICAL` with MAX..BXOR, the bitwise operations on
/// the real types, MAX..BXOR on the pairs): heapmpi gives what stock gives
/// by asking MPICH's own accumulate (`src/rma/oracle.rs`).
#[test]
fn rma_sweep() {
    matrix_conformance("rma_sweep", "rma_sweep", "sweep", check_rma_on_heap);
}

/// Windows on every kind of communicator (`tests/c/rma_comms.c`):
/// MPI_COMM_SELF, a duplicate of MPI_COMM_WORLD, splits into halves and
/// into single ranks, a one-rank communicator of Comm_create, the
/// MPI_COMM_TYPE_SHARED communicator; Win_allocate, Win_allocate_shared and
/// Win_create on each, with put/get/accumulate/fetch-and-op round trips
/// under fence and locks; shared windows where the odd ranks or all ranks
/// contribute no memory, and what Win_shared_query says about every
/// segment and MPI_PROC_NULL (which differs between the MPIs: compared with
/// the same MPI's stock run).
#[test]
fn rma_comms() {
    conformance("rma_comms", "rma_comms", "comms");
}
