//! Point-to-point between node-local ranks through the shared heap.
//!
//! - [`queue`]: message headers and mailboxes in shared memory;
//! - [`engine`]: requests, matching, the immediate / single-copy /
//!   synergistic protocols, progress;
//! - [`api`]: MPI semantics and routing (what goes to the real MPI);
//! - [`comm`]: per-communicator locality, cached as attributes;
//! - [`dt`]: datatype layout and packing;
//! - [`handle`]: heapmpi's own request and message handles;
//! - [`status`]: filling statuses as the real MPI's setters do.

pub mod api;
pub mod comm;
pub mod dt;
pub mod engine;
pub mod handle;
pub mod queue;
pub mod status;

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use crate::config;
use crate::heap::region::{self, Region};

/// Settings every rank of the job agreed on (an all-reduce in `MPI_Init`):
/// the ranks of a node must use one protocol whatever their environments.
#[derive(Clone, Copy, Debug)]
pub struct Agreed {
    /// Point-to-point through heapmpi (`HEAPMPI_P2P`).
    pub p2p: bool,
    /// Lock-free global queues (`HEAPMPI_QUEUE`).
    pub lockfree: bool,
}

/// Starts the engine after the shared region is up (called on every rank
/// of the node, from `MPI_Init`). Every local rank reaches the same
/// decision: the switches were agreed and the region is common. (The fast
/// box settings may differ between ranks: each box carries its own size.)
pub fn start(r: &Region, node: ffi::MPI_Comm, agreed: Agreed) {
    let cfg = config::get();
    let nlocal = r.layout.nlocal;
    if !agreed.p2p
        || region::MAILBOX_OFFSET + nlocal * region::MAILBOX_SIZE > region::HEADER_SIZE
        || nlocal > u16::MAX as usize
    {
        return;
    }
    if !comm::init_keyval() {
        return;
    }
    dt::init();
    status::learn();
    // SAFETY: the MPI constants are initialised; the out-pointers are valid.
    unsafe {
        let mut ub: *mut c_int = core::ptr::null_mut();
        let mut flag: c_int = 0;
        ffi::PMPI_Comm_get_attr(
            ffi::RSMPI_COMM_WORLD,
            ffi::MPI_TAG_UB as c_int,
            (&mut ub as *mut *mut c_int).cast::<c_void>(),
            &mut flag,
        );
        if flag != 0 && !ub.is_null() {
            api::set_tag_ub(*ub);
        }
        comm::register_fixed(ffi::RSMPI_COMM_WORLD, node, comm::WORLD_ID);
        comm::register_fixed(ffi::RSMPI_COMM_SELF, node, comm::SELF_ID);
    }
    let tune = engine::Tuning {
        immediate_max: cfg.immediate_max,
        synergy_min: cfg.synergy_min,
        block: cfg.block_size,
        eager_max: cfg.eager_max,
        lockfree: agreed.lockfree,
        fastbox_size: cfg.fastbox_size,
        fastbox_max: cfg.fastbox_max,
    };
    // SAFETY: reading MPI constants.
    let wild = unsafe {
        engine::Wild {
            any_source: ffi::RSMPI_ANY_SOURCE,
            any_tag: ffi::RSMPI_ANY_TAG,
        }
    };
    let mailboxes = (r.base + region::MAILBOX_OFFSET) as *const queue::Mailbox;
    let mut provided: c_int = 0;
    // SAFETY: MPI is initialised; a valid out-pointer; reading a constant.
    let multi = unsafe {
        ffi::PMPI_Query_thread(&mut provided) != 0 || provided == ffi::RSMPI_THREAD_MULTIPLE
    };
    engine::start(
        mailboxes,
        nlocal as u32,
        r.local_rank as u32,
        tune,
        wild,
        multi,
    );
}

/// Before `MPI_Finalize`: wait until the node's ranks are done with each
/// other's headers, so the count of headers still out is exact.
pub fn before_finalize(node: ffi::MPI_Comm) -> u64 {
    if !engine::enabled() {
        return 0;
    }
    {
        let mut e = engine::lock();
        e.progress();
        e.flush_held();
    }
    // SAFETY: every local rank calls this from MPI_Finalize (collective).
    unsafe { ffi::PMPI_Barrier(node) };
    let mut e = engine::lock();
    e.progress();
    e.headers_live()
}
