//! heapmpi: one-copy MPI point-to-point and collectives between ranks on
//! the same node, without recompiling the program.
//!
//! The library overrides the malloc family so that every node-local rank's
//! heap lives in one shared-memory region mapped at the same virtual address
//! in all of them, and intercepts MPI calls through the profiling interface
//! (`PMPI_*`). It is reached with `LD_PRELOAD` (`wrappers/heapmpirun`) or by
//! linking with `-Wl,--wrap` (`wrappers/heapmpicc`).
//!
//! Layout: [`ffi`] holds every exported C symbol (thin); [`heap`] the
//! allocator and the shared region; [`mpi`] start-up and shut-down;
//! [`comm`] which ranks of a communicator share the node, and their shared
//! control block; [`p2p`] point-to-point and [`coll`] collectives over it;
//! [`dt`] datatypes; [`sys`] every OS call; [`config`] and [`stats`] the
//! settings and counters.

#![warn(missing_docs, unsafe_op_in_unsafe_fn)]

pub mod blocks;
pub mod coll;
pub mod comm;
pub mod config;
pub mod dt;
pub mod ffi;
#[cfg(not(heapmpi_abi))]
pub mod fortran;
pub mod heap;
#[cfg(heapmpi_mpi4)]
pub mod large;
pub mod mpi;
pub mod op;
pub mod p2p;
pub mod profile;
pub mod raw;
pub mod req;
pub mod rma;
pub mod stats;
pub mod sys;
pub mod version;

/// heapmpi's own Rust allocations go straight to glibc (see
/// [`sys::glibc::GlibcAlloc`]).
#[global_allocator]
static GLOBAL: sys::glibc::GlibcAlloc = sys::glibc::GlibcAlloc;

extern "C" fn fork_prepare() {
    heap::fork::prepare();
}

extern "C" fn fork_parent() {
    heap::fork::parent();
}

extern "C" fn fork_child() {
    heap::fork::child();
}

/// Load-time set-up: snapshot the configuration, switch counting on if asked,
/// register for membarriers while the process has one thread, and register
/// the fork handler. Nothing here touches MPI or the heap.
#[ctor::ctor]
unsafe fn load() {
    sys::tls::claim();
    mpi::next::resolve();
    stats::enable(config::get().stats);
    heap::tcache::init();
    sys::wake::init_barrier_if_alone();
    // SAFETY: registering a plain function with no captured state.
    unsafe { libc::pthread_atfork(Some(fork_prepare), Some(fork_parent), Some(fork_child)) };
}
