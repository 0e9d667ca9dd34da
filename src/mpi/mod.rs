//! heapmpi's side of `MPI_Init` and `MPI_Finalize`.
//!
//! After the real `PMPI_Init*` succeeds: agree with the other ranks on
//! whether heapmpi runs at all (so a rank with a different environment can
//! never leave the others waiting in a collective), find the node-local ranks
//! (`MPI_COMM_TYPE_SHARED`, or pretend nodes for tests), set the shared
//! region up over them ([`crate::heap::region::establish`]), switch the
//! allocator over, and make sure a failure is reported once per job.
//! Before the real `PMPI_Finalize`: print the `HEAPMPI_STATS` report.
//!
//! Only `PMPI_*` entry points are called here, directly (the MPI library is
//! linked into heapmpi), never through `dlsym`.

use core::ffi::{c_char, c_int, c_void};
use core::fmt::Write as _;
use std::sync::OnceLock;

use mpi_sys as ffi;

use crate::config;
use crate::heap::{self, arena::Backing, region};
use crate::stats;
use crate::sys::out::LineBuf;

pub mod next;

pub use crate::raw::Comm;

/// What `MPI_Init` found and did; set once.
pub struct InitOutcome {
    /// Rank in `MPI_COMM_WORLD`.
    pub world_rank: i32,
    /// Size of `MPI_COMM_WORLD`.
    pub world_size: i32,
    /// Rank among the node-local ranks (0 if unknown).
    pub local_rank: i32,
    /// Number of node-local ranks (1 if unknown).
    pub nlocal: i32,
    /// The node-local communicator, if one was made.
    pub node_comm: Option<Comm>,
    /// The region, or why there is none.
    pub heap: Result<region::Region, region::Inactive>,
}

static OUTCOME: OnceLock<InitOutcome> = OnceLock::new();

/// What `MPI_Init` did, once it has run.
pub fn outcome() -> Option<&'static InitOutcome> {
    OUTCOME.get()
}

/// The node-local ranks as a [`region::NodeComm`].
struct MpiNode {
    comm: ffi::MPI_Comm,
    rank: usize,
    size: usize,
}

impl region::NodeComm for MpiNode {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn bcast(&self, buf: &mut [u8], root: usize) -> bool {
        // SAFETY: `buf` is valid for `len` bytes; every local rank calls this
        // with the same length and root (the protocol is symmetric).
        unsafe {
            ffi::PMPI_Bcast(
                buf.as_mut_ptr().cast(),
                buf.len() as c_int,
                ffi::RSMPI_UINT8_T,
                root as c_int,
                self.comm,
            ) == 0
        }
    }
    fn all(&self, ok: bool) -> bool {
        // Every local rank makes this call at the same point.
        crate::comm::all_agree(self.comm, ok)
    }
}

/// All-reduce of a few `i32`s over `MPI_COMM_WORLD`.
fn world_allreduce(vals: &mut [i32], op: ffi::MPI_Op) -> bool {
    let send = vals.to_vec();
    // SAFETY: both buffers hold `vals.len()` ints; called on every rank.
    unsafe {
        ffi::PMPI_Allreduce(
            send.as_ptr() as *const c_void,
            vals.as_mut_ptr() as *mut c_void,
            vals.len() as c_int,
            ffi::RSMPI_INT32_T,
            op,
            ffi::RSMPI_COMM_WORLD,
        ) == 0
    }
}

/// Whether the job profiles (`HEAPMPI_PROFILE` on any rank, agreed at
/// init). Relaxed: written at init, read at finalize by the same thread's
/// program order, or after MPI's own synchronisation.
static PROFILE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Runs after a successful `PMPI_Init`/`PMPI_Init_thread` on this rank.
pub fn after_init() {
    let cfg = config::get();
    let (mut world_rank, mut world_size) = (0, 1);
    // SAFETY: MPI is initialised; the out-pointers are valid ints.
    unsafe {
        ffi::PMPI_Comm_rank(ffi::RSMPI_COMM_WORLD, &mut world_rank);
        ffi::PMPI_Comm_size(ffi::RSMPI_COMM_WORLD, &mut world_size);
    }
    let mut out = InitOutcome {
        world_rank,
        world_size,
        local_rank: 0,
        nlocal: 1,
        node_comm: None,
        heap: Err(region::Inactive::MpiFailed),
    };

    // Agree on the switches first: if every rank is disabled, heapmpi steps
    // aside at once; if only some are (HEAPMPI_DISABLE given to one node of
    // the job), their nodes run without a heap below, as a node whose heap
    // could not be set up, while taking part in every collective decision.
    // If any rank keeps point-to-point (or collectives, or one-sided) off
    // or wants the locked queue, all do (the ranks of a node must speak one
    // protocol).
    let tns = cfg.test_node_size.unwrap_or(0).min(i32::MAX as usize) as i32;
    let mut sw = [
        cfg.disable as i32,
        tns,
        !cfg.p2p as i32,
        !cfg.queue_lockfree as i32,
        !cfg.coll as i32,
        !cfg.rma as i32,
        cfg.profile.is_some() as i32,
        !cfg.disable as i32,
        // HEAPMPI_CHECK: a rank checks the canaries of other ranks' blocks
        // it frees, so all have them or none.
        cfg.check as i32,
    ];
    // SAFETY: reading an MPI constant initialised by mpi-sys's C shim.
    let agreed = world_allreduce(&mut sw, unsafe { ffi::RSMPI_MAX });
    // The profile's report is collective at MPI_Finalize: every rank takes
    // part if any asked for it (rank 0 writes the CSV only if it was given
    // a file name).
    if agreed && sw[6] != 0 {
        PROFILE.store(true, std::sync::atomic::Ordering::Relaxed);
        crate::profile::start();
    }
    if world_rank == 0 {
        for p in &cfg.problems {
            crate::eprint_noalloc!("heapmpi: warning: {p}");
        }
        if let Some((file, name, n)) = next::bypassing_tool() {
            crate::eprint_noalloc!(
                "heapmpi: warning: {file} defines {name}{} but comes after heapmpi in the \
                 search order, so the program's calls never reach it; preload heapmpi last \
                 (LD_PRELOAD=<tool>:libheapmpi.so, as heapmpi-exec does)",
                if n > 1 {
                    format!(" and {} more MPI routines heapmpi serves", n - 1)
                } else {
                    String::new()
                }
            );
        }
    }
    if !agreed {
        finish(out);
        return;
    }
    if sw[0] != 0 && sw[7] == 0 {
        out.heap = Err(region::Inactive::Disabled);
        finish(out);
        return;
    }

    // SAFETY: reading an MPI constant initialised by mpi-sys's C shim.
    let mut node: ffi::MPI_Comm = unsafe { ffi::RSMPI_COMM_NULL };
    // SAFETY: MPI is initialised; `node` receives a new communicator.
    let rc = unsafe {
        if sw[1] > 0 {
            ffi::PMPI_Comm_split(
                ffi::RSMPI_COMM_WORLD,
                world_rank / sw[1],
                world_rank,
                &mut node,
            )
        } else {
            ffi::PMPI_Comm_split_type(
                ffi::RSMPI_COMM_WORLD,
                ffi::RSMPI_COMM_TYPE_SHARED as c_int,
                world_rank,
                ffi::RSMPI_INFO_NULL,
                &mut node,
            )
        }
    };
    if rc == 0 {
        let (mut lr, mut ln) = (0, 1);
        // SAFETY: `node` is a valid communicator.
        unsafe {
            ffi::PMPI_Comm_rank(node, &mut lr);
            ffi::PMPI_Comm_size(node, &mut ln);
        }
        out.local_rank = lr;
        out.nlocal = ln;
        crate::sys::set_local_ranks(ln as usize);
        // Ranks that the real MPI was told share cores wait as its do.
        crate::sys::set_yield_asked(
            std::env::var("OMPI_MCA_mpi_yield_when_idle")
                .is_ok_and(|v| crate::sys::yield_value_is_on(&v)),
        );
        out.node_comm = Some(Comm(node));
        // Some rank of the job is disabled: the node's ranks agree whether
        // one of them is (they share one heap or none).
        let node_disabled = sw[0] != 0 && {
            let mine = cfg.disable as i32;
            let mut any: i32 = mine;
            // SAFETY: `node` is a valid communicator; both buffers hold one
            // int.
            let rc = unsafe {
                ffi::PMPI_Allreduce(
                    &mine as *const i32 as *const c_void,
                    &mut any as *mut i32 as *mut c_void,
                    1,
                    ffi::RSMPI_INT32_T,
                    ffi::RSMPI_MAX,
                    node,
                )
            };
            rc != 0 || any != 0
        };
        out.heap = if node_disabled {
            Err(region::Inactive::Disabled)
        } else if ln <= 1 {
            Err(region::Inactive::SingleRank)
        } else {
            let comm = MpiNode {
                comm: node,
                rank: lr as usize,
                size: ln as usize,
            };
            region::establish(&comm, cfg.heap_size, cfg.test_addr_conflicts, cfg.shm_memfd)
        };
    }

    if let Ok(r) = &out.heap {
        let (lo, hi) = r.my_part();
        let tool = crate::sys::owner::malloc_owner();
        if sw[8] != 0 {
            heap::check::enable(world_rank);
        }
        if let (Some(tool), 0) = (tool, world_rank) {
            crate::eprint_noalloc!(
                "heapmpi: {tool} owns malloc: the program's memory stays in its allocator \
                 (its reports cover it as they do without heapmpi); messages between a \
                 node's ranks still go through the shared heap, from private buffers"
            );
        }
        heap::setup::activate(
            r.base,
            r.base + r.layout.total,
            lo,
            hi,
            Backing::Shm {
                fd: r.fd,
                file_base: r.base,
            },
            tool.is_none(),
        );
        if sw[8] != 0 {
            guard_parts(r, out.node_comm, world_rank);
        }
        if let Some(Comm(node)) = out.node_comm.filter(|c| crate::comm::start(c.0)) {
            crate::coll::start(sw[4] == 0, cfg.coll_inline, cfg.coll_radix);
            crate::rma::start(sw[5] == 0);
            crate::p2p::start(
                r,
                node,
                crate::p2p::Agreed {
                    p2p: sw[2] == 0,
                    lockfree: sw[3] == 0,
                },
            );
            // Nonblocking collectives may be a communicator's first: new
            // node-local communicators come with their block, and
            // MPI_COMM_WORLD gets its state now if it lives on one node.
            crate::comm::set_eager_blocks(crate::coll::eager_cell());
            // SAFETY: reading an MPI constant.
            crate::coll::prepare(unsafe { ffi::RSMPI_COMM_WORLD });
        }
    }

    // One warning per job: the lowest world rank whose node failed (or had
    // to shrink its heap) speaks.
    let notable = match &out.heap {
        Err(e) => e.is_failure(),
        Ok(r) => r.shrunk_from.is_some() && r.local_rank == 0,
    };
    // The same all-reduce decides whether communicators are registered
    // (`comm`): registration is collective over each new
    // communicator, so every rank must take part as soon as any rank keeps
    // communicator infos, whatever its own node did (a lone rank on its
    // node, a node whose heap could not be set up).
    let infos_here = crate::comm::active();
    let mut first = [
        if notable { world_rank } else { i32::MAX },
        -(infos_here as i32),
        infos_here as i32,
    ];
    // SAFETY: reading an MPI constant.
    let agreed = world_allreduce(&mut first, unsafe { ffi::RSMPI_MIN });
    // Relaxed: written once here, before the program makes any other MPI
    // call; later readers learned of initialisation through MPI.
    crate::comm::set_registering(agreed && first[1] < 0);
    if agreed && first[2] == 1 {
        crate::comm::set_world_complete();
    }
    if agreed && first[0] == world_rank {
        match &out.heap {
            Err(e) => crate::eprint_noalloc!(
                "heapmpi: warning: shared heap unavailable ({e}) on the node of rank {world_rank}; \
                 running without acceleration there"
            ),
            Ok(r) => crate::eprint_noalloc!(
                "heapmpi: warning: the address-space limit (ulimit -v) allows a shared heap of \
                 only {} per rank instead of {} on the node of rank {world_rank}; larger \
                 allocations come from private memory",
                stats::Bytes(r.layout.part_size as u64),
                stats::Bytes(r.shrunk_from.unwrap_or(0) as u64)
            ),
        }
    }
    finish(out);
}

/// `HEAPMPI_CHECK`: the parts of the node's region are protected as
/// `heap::guard` says; every local rank learns the others' world ranks for
/// its messages. If the protections cannot be set, one warning and the
/// canaries only.
fn guard_parts(r: &region::Region, node: Option<Comm>, world_rank: i32) {
    let Some(Comm(node)) = node else {
        return;
    };
    let mut world = vec![-1i32; r.layout.nlocal];
    // SAFETY: `node` is the node's communicator of `nlocal` ranks; one
    // int in, `nlocal` out.
    let rc = unsafe {
        ffi::PMPI_Allgather(
            &world_rank as *const i32 as *const c_void,
            1,
            ffi::RSMPI_INT32_T,
            world.as_mut_ptr() as *mut c_void,
            1,
            ffi::RSMPI_INT32_T,
            node,
        )
    };
    let parts = r.base + region::HEADER_SIZE;
    if rc == 0 && heap::setup::guard_parts(parts, r.layout.part_size, r.local_rank, &world) {
        crate::profile::hook_for_guards();
    } else if world_rank == 0 {
        crate::eprint_noalloc!(
            "heapmpi: warning: HEAPMPI_CHECK could not protect the ranks' parts of the shared \
             heap from each other; only the canaries after blocks are checked"
        );
    }
}

fn finish(out: InitOutcome) {
    let _ = OUTCOME.set(out);
}

/// After a Fortran `MPI_Init`/`MPI_Init_thread` binding of the MPI itself
/// ran (Open MPI's call `PMPI_Init*` directly): heapmpi's start-up, once.
pub fn after_fortran_init() {
    let mut init: c_int = 0;
    // SAFETY: a valid out-pointer; callable at any time.
    unsafe { ffi::PMPI_Initialized(&mut init) };
    if init != 0 && outcome().is_none() {
        after_init();
    }
}

/// Runs before the real `PMPI_Finalize` (once, whichever binding got
/// there first).
pub fn before_finalize() {
    static DONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    // Relaxed: MPI_Finalize is called once, by one thread.
    if DONE.swap(true, std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    if PROFILE.load(std::sync::atomic::Ordering::Relaxed) {
        crate::profile::finish(config::get().profile.as_deref().unwrap_or(""));
    }
    let left = match outcome().and_then(|o| o.node_comm) {
        Some(Comm(node)) => crate::p2p::before_finalize(node),
        None => crate::p2p::Leftovers::default(),
    };
    if config::get().stats {
        report(left);
    }
    crate::rma::before_finalize();
    if let Some(o) = outcome() {
        if let Some(Comm(mut c)) = o.node_comm {
            // SAFETY: the node communicator was created by `after_init` and
            // is not used after this point.
            unsafe { ffi::PMPI_Comm_free(&mut c) };
        }
    }
}

/// Writes this rank's `HEAPMPI_STATS` line to stderr.
pub fn report(left: crate::p2p::Leftovers) {
    let mut line = LineBuf::new();
    let _ = write_report(&mut line);
    if crate::p2p::engine::enabled() {
        let _ = stats::write_p2p(&mut line, left.headers, left.requests);
    } else {
        let _ = line.write_str(" p2p: off");
    }
    let _ = stats::write_coll(&mut line);
    let _ = stats::write_rma(&mut line);
    let _ = line.write_str("\n");
    line.emit();
}

fn write_report(w: &mut LineBuf) -> core::fmt::Result {
    let Some(o) = outcome() else {
        write!(
            w,
            "heapmpi[?]: inactive ({}) ",
            region::Inactive::NotInitialized
        )?;
        return stats::write_counters(w);
    };
    write!(w, "heapmpi[{}/{}]: ", o.world_rank, o.world_size)?;
    match &o.heap {
        Ok(r) if heap::is_active() => {
            let (lo, hi) = r.my_part();
            let (in_use, committed) = heap::setup::arena_usage();
            write!(
                w,
                "active local={}/{} base={:#x} region={} part=[{:#x},{:#x}) part_size={} \
                 arena_in_use={} committed={} shm={} ({}) rounds={} ",
                o.local_rank,
                o.nlocal,
                r.base,
                stats::Bytes(r.layout.total as u64),
                lo,
                hi,
                stats::Bytes((hi - lo) as u64),
                stats::Bytes(in_use as u64),
                stats::Bytes(committed as u64),
                r.name.as_str(),
                if r.name.as_str().starts_with("memfd:") {
                    "anonymous"
                } else {
                    "unlinked"
                },
                r.rounds
            )?;
        }
        Ok(_) => write!(w, "inactive (forked child) ")?,
        Err(e) => write!(w, "inactive ({e}) local={}/{} ", o.local_rank, o.nlocal)?,
    }
    stats::write_counters(w)
}

/// `MPI_Init`.
///
/// # Safety
/// As `MPI_Init`.
pub unsafe fn init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    // SAFETY: forwarded from the caller.
    let rc = unsafe { ffi::PMPI_Init(argc, argv) };
    if rc == 0 {
        after_init();
    }
    rc
}

/// `MPI_Init_thread`.
///
/// # Safety
/// As `MPI_Init_thread`.
pub unsafe fn init_thread(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    // SAFETY: forwarded from the caller.
    let rc = unsafe { ffi::PMPI_Init_thread(argc, argv, required, provided) };
    if rc == 0 {
        after_init();
    }
    rc
}

/// `MPI_Finalize`.
///
/// # Safety
/// As `MPI_Finalize`.
pub unsafe fn finalize() -> c_int {
    before_finalize();
    if outcome().is_some_and(|o| o.nlocal < o.world_size) {
        // Across nodes, every rank meets every other in the real MPI before
        // it finalizes. Without it MPICH over UCX hung in MPI_Finalize in
        // half the runs of 2 nodes x 2 ranks (stock: none of 8): ranks
        // whose last collectives went through the heap and the node leaders
        // reach finalize at different moments, one node's ranks flush their
        // endpoints and block in the launcher's barrier, which does not
        // progress UCX, while the other node's still wait for the replies
        // to their flush (with the barrier: none of 10; a program of
        // MPI_Alltoall and MPI_Barrier alone, which stock MPICH hangs on
        // in 4 runs of 8, 1 of 8: the UCX race itself remains). Every rank of
        // MPI_COMM_WORLD runs heapmpi (`after_init` splits it), so all of
        // them make this call; MPI_Finalize is collective anyway.
        // SAFETY: a predefined communicator, MPI still initialized.
        unsafe { ffi::PMPI_Barrier(ffi::RSMPI_COMM_WORLD) };
    }
    // SAFETY: forwarded from the caller. The shared heap stays mapped: the
    // program may free memory after finalize.
    let rc = unsafe { ffi::PMPI_Finalize() };
    heap::setup::hide_unused_from_valgrind();
    rc
}
