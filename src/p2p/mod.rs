//! Point-to-point between node-local ranks through the shared heap.
//!
//! - [`queue`]: message headers and mailboxes in shared memory;
//! - [`fastbox`]: per-pair rings of small messages in shared memory;
//! - [`engine`]: requests, matching, the immediate / single-copy /
//!   synergistic protocols, progress;
//! - [`api`]: MPI semantics and routing (what goes to the real MPI);
//! - [`status`]: filling statuses as the real MPI's setters do.

pub mod api;
pub mod engine;
pub mod fastbox;
pub mod progress;
pub mod queue;
pub mod status;
pub mod status_rules;

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use crate::comm;
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
    // What the real MPI writes into statuses, learned on self-messages over
    // a duplicate of the node communicator (collective over the node's
    // ranks, all of which get here: the decisions above are the node's).
    // MPICH takes another path for `MPI_COMM_SELF` than for communicators
    // with peers, and writes statuses differently there.
    // SAFETY: reading an MPI constant; `node` is valid; the duplicate is
    // freed below.
    let mut learn_comm = unsafe { ffi::RSMPI_COMM_NULL };
    if unsafe { ffi::PMPI_Comm_dup(node, &mut learn_comm) } == 0 {
        // SAFETY: our duplicate.
        unsafe { ffi::PMPI_Comm_set_errhandler(learn_comm, ffi::RSMPI_ERRORS_RETURN) };
        status_rules::learn(learn_comm);
        // SAFETY: our duplicate, no longer used.
        unsafe { ffi::PMPI_Comm_free(&mut learn_comm) };
    }
    if !comm::active() {
        return;
    }
    status::learn();
    // The engine caches communicator infos: drop one when it is deleted.
    comm::on_free(engine::forget_comm);
    comm::on_free(api::forget_comm_buffer);
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
    }
    let tune = engine::Tuning {
        immediate_max: cfg.immediate_max,
        // HEAPMPI_CHECK keeps other ranks' blocks read-only: receivers
        // copy alone, no sender writes into a receiver's buffer.
        synergy_min: if crate::heap::check::on() {
            usize::MAX
        } else {
            cfg.synergy_min
        },
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
    // After the thread level is known: Open MPI's tool interface sets the
    // library's thread level to the one it is initialised with.
    api::remember_thread_level(provided);
    engine::start(
        mailboxes,
        nlocal as u32,
        r.local_rank as u32,
        tune,
        wild,
        multi,
    );
    // SAFETY: our mailbox, in the committed control area of the region,
    // mapped for the life of the process.
    let mine = unsafe { &*mailboxes.add(r.local_rank) };
    if !progress::start(mine) {
        crate::eprint_noalloc!(
            "heapmpi: warning: could not start the progress thread; a rank that waits inside \
             the real MPI may leave a local sender waiting"
        );
    }
}

/// What is still out at `MPI_Finalize` (0 and 0 in a correct program).
#[derive(Clone, Copy, Debug, Default)]
pub struct Leftovers {
    /// Message headers sent and not yet returned by their receivers.
    pub headers: u64,
    /// Request slots still live (requests never completed or freed).
    pub requests: u64,
}

/// Before `MPI_Finalize`: finish freed requests (briefly: a freed receive
/// whose message never comes stays), wait until the node's ranks are done
/// with each other's headers, and count what is left.
pub fn before_finalize(node: ffi::MPI_Comm) -> Leftovers {
    if !engine::enabled() {
        return Leftovers::default();
    }
    let deadline = crate::sys::monotonic_ns() + 200_000_000;
    loop {
        let mut e = engine::lock();
        e.progress();
        e.flush_held();
        if !e.has_orphans() || crate::sys::monotonic_ns() > deadline {
            break;
        }
        drop(e);
        std::thread::yield_now();
    }
    // SAFETY: every local rank calls this from MPI_Finalize (collective).
    unsafe { ffi::PMPI_Barrier(node) };
    // Every local rank is in MPI_Finalize: none can wait for us any more.
    progress::stop();
    let mut e = engine::lock();
    e.progress();
    Leftovers {
        headers: e.headers_live(),
        requests: e.requests_live(),
    }
}
