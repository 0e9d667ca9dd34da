//! Who is local, per communicator: state that point-to-point (and the
//! collectives and one-sided operations built next to it) share.
//!
//! Every intra-communicator created through a call heapmpi intercepts
//! (`MPI_COMM_WORLD` and `MPI_COMM_SELF` at init; `Comm_dup`, `Comm_split`,
//! `Comm_create`, ... afterwards, see [`created`]) gets a
//! [`CommInfo`] cached as an MPI attribute: an id agreed by all its members
//! (messages carry it, since handles differ between processes) and, for each
//! rank in it, the node-local index of that process or [`NOT_LOCAL`]. The
//! attribute's delete callback frees it, so `MPI_Comm_free` needs no
//! interception. A communicator without the attribute (an inter-communicator,
//! or one made by a call heapmpi does not see, such as `MPI_Comm_idup`) is
//! unknown to heapmpi on every member alike, and all its traffic goes to the
//! real MPI.

use core::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

use mpi_sys as ffi;

use crate::heap;
use crate::raw::RawHandle;

/// `CommInfo::local` entry for a process on another node.
pub const NOT_LOCAL: u32 = u32::MAX;

/// What heapmpi knows about one communicator.
pub struct CommInfo {
    /// Agreed id, carried by every message on the communicator.
    pub id: u64,
    /// This process's rank in it.
    pub rank: i32,
    /// Its size.
    pub size: i32,
    /// For each rank: node-local index (rank in the node communicator), or
    /// [`NOT_LOCAL`].
    pub local: Box<[u32]>,
    /// How many ranks are on other nodes.
    pub n_remote: u32,
    /// Every member keeps infos (agreed at creation; for `MPI_COMM_WORLD`
    /// at init). Spanning nodes, heapmpi may take a collective only then:
    /// a member without infos always makes the real call.
    /// Relaxed: written before the communicator is used (creation, init).
    pub complete: AtomicBool,
    /// Node-level state, made by the first collective call that needs it
    /// (see [`node::Node::create`]); `None` inside when the communicator
    /// gets none.
    pub node: std::sync::OnceLock<Option<node::Node>>,
    /// A second control block for the nonblocking collectives of a
    /// communicator inside one node, made at its creation
    /// ([`set_eager_blocks`]) or else with [`CommInfo::node`] (their
    /// steps complete in their own order, which the blocking collectives'
    /// steps must not be mixed with; see `coll::nb`).
    pub nb: std::sync::OnceLock<Option<node::Node>>,
    /// This rank's neighbourhood in the communicator's process topology,
    /// gathered by the first neighbourhood collective (see
    /// [`topo::gather`]); `None` inside when it has none heapmpi can use.
    pub topo: std::sync::OnceLock<Option<topo::Neighbors>>,
    /// Where this member stands in the chain of channels of
    /// [`CommInfo::nb`] (`node::Node::channel`: one per persistent
    /// collective initialised on it, `coll::nb::persist`).
    pub chain: node::Chain,
    /// Its nonblocking tag counter was moved past the window of the
    /// library's `MPI_Dist_graph_create` tags ([`quirks`]).
    pub dist_graph_tags_clear: AtomicBool,
}

impl CommInfo {
    /// Node-local index of `rank`, if it shares this node.
    #[inline]
    pub fn local_index(&self, rank: i32) -> Option<u32> {
        let l = *self.local.get(rank as usize)?;
        (l != NOT_LOCAL).then_some(l)
    }
}

/// Id of `MPI_COMM_WORLD` (agreed ids have the top bit set).
pub const WORLD_ID: u64 = 1;
/// Id of `MPI_COMM_SELF`.
pub const SELF_ID: u64 = 2;

/// The attribute key (`MPI_KEYVAL_INVALID` until init). Written once at init
/// by the thread that calls `MPI_Init`, before any communication; Relaxed is
/// enough because every later reader learned of initialisation through MPI
/// (which synchronises).
static KEYVAL: AtomicI32 = AtomicI32::new(i32::MIN);

extern "C" fn copy_attr(
    _old: ffi::MPI_Comm,
    _key: c_int,
    _extra: *mut c_void,
    _in: *mut c_void,
    _out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // Never copied: a duplicate gets its own info from `comm_created`.
    // SAFETY: MPI passes a valid flag pointer.
    unsafe { *flag = 0 };
    0
}

extern "C" fn delete_attr(
    comm: ffi::MPI_Comm,
    _key: c_int,
    val: *mut c_void,
    _extra: *mut c_void,
) -> c_int {
    // A copy, so no hook runs under the list's lock.
    let hooks = FREE_HOOKS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for hook in hooks {
        hook(comm.0.to_bits());
    }
    // SAFETY: `val` is the Box<CommInfo> leaked by `attach`, deleted once
    // (MPI calls the delete callback exactly once per attribute).
    drop(unsafe { Box::from_raw(val as *mut CommInfo) });
    0
}

/// Functions told the handle bits of a communicator whose info is being
/// deleted (its `MPI_Comm_free`), so that caches of it drop the entry; a
/// layer that caches infos subscribes with [`on_free`].
static FREE_HOOKS: std::sync::Mutex<Vec<fn(usize)>> = std::sync::Mutex::new(Vec::new());

/// Subscribes `hook` to the deletion of communicator infos (see
/// `FREE_HOOKS`). Called once per subscriber, at init.
pub fn on_free(hook: fn(usize)) {
    let mut hooks = FREE_HOOKS.lock().unwrap_or_else(|e| e.into_inner());
    if !hooks.contains(&hook) {
        hooks.push(hook);
    }
}

/// Creates the keyval; called once at init.
fn init_keyval() -> bool {
    let mut k: c_int = 0;
    // SAFETY: valid callbacks and out-pointer.
    let rc = unsafe {
        ffi::PMPI_Comm_create_keyval(
            Some(copy_attr),
            Some(delete_attr),
            &mut k,
            core::ptr::null_mut(),
        )
    };
    if rc == 0 {
        KEYVAL.store(k, Ordering::Relaxed);
    }
    rc == 0
}

/// Whether this rank keeps communicator infos (its node's ranks agreed in
/// [`start`]). Written once at init, before any communication: Relaxed.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Whether this rank keeps communicator infos.
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// The node communicator infos are built against (set by [`start`]).
static NODE: std::sync::OnceLock<crate::raw::Comm> = std::sync::OnceLock::new();

/// Some rank of the job keeps infos, so every rank takes part in
/// registering new communicators (registration is collective over each).
/// Written once at init (see [`set_registering`]), before any
/// communication: Relaxed.
static REGISTERING: AtomicBool = AtomicBool::new(false);

/// Records the job's decision on registering new communicators (agreed in
/// `MPI_Init`: on as soon as any rank keeps infos).
pub fn set_registering(on: bool) {
    REGISTERING.store(on, Ordering::Relaxed);
}

/// After a call that creates a communicator returned `rc` and wrote
/// `*newcomm`: registers it when the job registers communicators
/// (collective over its members, like the call itself). A rank that keeps
/// no infos still takes part in the agreement, so the members never
/// disagree on the collective they make. Returns `rc`.
///
/// # Safety
/// `newcomm` is the creating call's out-pointer.
pub unsafe fn created(rc: c_int, newcomm: *mut ffi::MPI_Comm) -> c_int {
    if rc != 0 || !REGISTERING.load(Ordering::Relaxed) || newcomm.is_null() {
        return rc;
    }
    // SAFETY: the creating call succeeded, so `*newcomm` is written.
    let c = unsafe { *newcomm };
    // SAFETY: reading an MPI constant.
    if c == unsafe { ffi::RSMPI_COMM_NULL } {
        return rc;
    }
    let node = NODE.get().filter(|_| active()).map(|n| n.0);
    register_new(c, node);
    rc
}

/// Whether `ok` holds on every member of `comm` (one all-reduce of an int:
/// collective, every member calls it at the same point). False also when
/// the all-reduce fails.
pub fn all_agree(comm: ffi::MPI_Comm, ok: bool) -> bool {
    let (mine, mut all): (c_int, c_int) = (ok as c_int, 0);
    // SAFETY: one int each way over `comm`; per the contract, every member
    // makes the same call.
    let rc = unsafe {
        ffi::PMPI_Allreduce(
            (&mine as *const c_int).cast(),
            (&mut all as *mut c_int).cast(),
            1,
            ffi::RSMPI_INT32_T,
            ffi::RSMPI_MIN,
            comm,
        )
    };
    rc == 0 && all == 1
}

/// Rank 0's `v` on every member of `comm` (collective: every member calls
/// it at the same point). False when the broadcast fails.
pub fn bcast_u64(comm: ffi::MPI_Comm, v: &mut u64) -> bool {
    // SAFETY: one u64 from rank 0 to every member; per the contract, every
    // member makes the same call.
    let rc = unsafe { ffi::PMPI_Bcast((v as *mut u64).cast(), 1, ffi::RSMPI_UINT64_T, 0, comm) };
    rc == 0
}

/// Every member's `mine` (all of the same length), in rank order
/// (collective, like [`bcast_u64`]). `None` when the all-gather fails.
pub fn allgather_u64(comm: ffi::MPI_Comm, mine: &[u64]) -> Option<Vec<u64>> {
    let mut size: c_int = 0;
    // SAFETY: a valid communicator and out-pointer.
    if unsafe { ffi::PMPI_Comm_size(comm, &mut size) } != 0 {
        return None;
    }
    let k = mine.len();
    let mut all = vec![0u64; k * size as usize];
    // SAFETY: `k` u64 from every member into room for all of them; per the
    // contract, every member makes the same call.
    let rc = unsafe {
        ffi::PMPI_Allgather(
            mine.as_ptr().cast(),
            k as c_int,
            ffi::RSMPI_UINT64_T,
            all.as_mut_ptr().cast(),
            k as c_int,
            ffi::RSMPI_UINT64_T,
            comm,
        )
    };
    (rc == 0).then_some(all)
}

/// Sets the layer up once the shared heap is active on this node (called
/// on every rank of the node, from `MPI_Init`): the keyval, the datatype
/// layer, and the infos of `MPI_COMM_WORLD` and `MPI_COMM_SELF`. The
/// node's ranks keep infos together or not at all (point-to-point and the
/// collectives route by them, and a rank without them would leave its
/// peers waiting). Returns whether the layer is on.
pub fn start(node: ffi::MPI_Comm) -> bool {
    // Every local rank gets here (the decision to start is the node's).
    if !all_agree(node, init_keyval()) {
        return false;
    }
    crate::dt::init();
    let _ = NODE.set(crate::raw::Comm(node));
    // SAFETY: reading MPI constants.
    unsafe {
        register_fixed(ffi::RSMPI_COMM_WORLD, node, WORLD_ID);
        register_fixed(ffi::RSMPI_COMM_SELF, node, SELF_ID);
    }
    ACTIVE.store(true, Ordering::Relaxed);
    true
}

/// The cached info of `comm`, if heapmpi knows it.
pub fn lookup(comm: ffi::MPI_Comm) -> Option<&'static CommInfo> {
    let k = KEYVAL.load(Ordering::Relaxed);
    if k == i32::MIN {
        return None;
    }
    let mut val: *mut c_void = core::ptr::null_mut();
    let mut flag: c_int = 0;
    // SAFETY: out-pointers valid; `comm` was checked non-null by the caller
    // (an invalid handle is the caller's error, as with the real call).
    let rc = unsafe {
        ffi::PMPI_Comm_get_attr(comm, k, (&mut val as *mut *mut c_void).cast(), &mut flag)
    };
    if rc != 0 || flag == 0 || val.is_null() {
        return None;
    }
    // SAFETY: our attribute values are leaked Box<CommInfo>s that live until
    // the delete callback, which runs at MPI_Comm_free; MPI forbids using a
    // handle after freeing it, and pending operations keep only the id.
    Some(unsafe { &*(val as *const CommInfo) })
}

/// Whether every member of intra-communicator `comm` belongs to this
/// process's `MPI_COMM_WORLD`.
fn within_world(comm: ffi::MPI_Comm) -> bool {
    let (mut size, mut wsize) = (0, 0);
    // SAFETY: `comm` is a valid intra-communicator; out-pointers are valid;
    // the groups are freed below.
    unsafe {
        if ffi::PMPI_Comm_size(comm, &mut size) != 0
            || ffi::PMPI_Comm_size(ffi::RSMPI_COMM_WORLD, &mut wsize) != 0
        {
            return false;
        }
        if size > wsize {
            return false;
        }
        let mut g = ffi::RSMPI_GROUP_NULL;
        let mut wg = ffi::RSMPI_GROUP_NULL;
        ffi::PMPI_Comm_group(comm, &mut g);
        ffi::PMPI_Comm_group(ffi::RSMPI_COMM_WORLD, &mut wg);
        let ranks: Vec<c_int> = (0..size).collect();
        let mut out = vec![0 as c_int; size as usize];
        let rc = ffi::PMPI_Group_translate_ranks(g, size, ranks.as_ptr(), wg, out.as_mut_ptr());
        ffi::PMPI_Group_free(&mut g);
        ffi::PMPI_Group_free(&mut wg);
        rc == 0 && out.iter().all(|&r| r != ffi::RSMPI_UNDEFINED && r >= 0)
    }
}

/// Builds `comm`'s info: each rank translated into the node communicator's
/// group (`node`).
fn build(comm: ffi::MPI_Comm, node: ffi::MPI_Comm, id: u64) -> Option<CommInfo> {
    let (mut rank, mut size) = (0, 0);
    // SAFETY: `comm` and `node` are valid intra-communicators; out-pointers
    // are valid; the groups are freed below.
    unsafe {
        if ffi::PMPI_Comm_rank(comm, &mut rank) != 0 || ffi::PMPI_Comm_size(comm, &mut size) != 0 {
            return None;
        }
        let mut g = ffi::RSMPI_GROUP_NULL;
        let mut ng = ffi::RSMPI_GROUP_NULL;
        ffi::PMPI_Comm_group(comm, &mut g);
        ffi::PMPI_Comm_group(node, &mut ng);
        let ranks: Vec<c_int> = (0..size).collect();
        let mut out = vec![0 as c_int; size as usize];
        let rc = ffi::PMPI_Group_translate_ranks(g, size, ranks.as_ptr(), ng, out.as_mut_ptr());
        ffi::PMPI_Group_free(&mut g);
        ffi::PMPI_Group_free(&mut ng);
        if rc != 0 {
            return None;
        }
        let undefined = ffi::RSMPI_UNDEFINED;
        let local: Box<[u32]> = out
            .iter()
            .map(|&r| {
                if r == undefined || r < 0 {
                    NOT_LOCAL
                } else {
                    r as u32
                }
            })
            .collect();
        let n_remote = local.iter().filter(|&&l| l == NOT_LOCAL).count() as u32;
        Some(CommInfo {
            id,
            rank,
            size,
            local,
            n_remote,
            // Until agreed: on its own node every member keeps infos.
            complete: AtomicBool::new(n_remote == 0),
            node: std::sync::OnceLock::new(),
            nb: std::sync::OnceLock::new(),
            topo: std::sync::OnceLock::new(),
            chain: node::Chain::new(),
            dist_graph_tags_clear: AtomicBool::new(false),
        })
    }
}

fn attach(comm: ffi::MPI_Comm, info: CommInfo) {
    let k = KEYVAL.load(Ordering::Relaxed);
    let p = Box::into_raw(Box::new(info));
    // SAFETY: valid communicator and keyval; the value is freed by
    // `delete_attr`.
    let rc = unsafe { ffi::PMPI_Comm_set_attr(comm, k, p.cast()) };
    if rc != 0 {
        // SAFETY: not attached, still ours.
        drop(unsafe { Box::from_raw(p) });
    }
}

/// Records that every rank of the job keeps infos (agreed in `MPI_Init`,
/// after [`start`]): `MPI_COMM_WORLD`'s info becomes complete.
pub fn set_world_complete() {
    // SAFETY: reading an MPI constant.
    let Some(info) = lookup(unsafe { ffi::RSMPI_COMM_WORLD }) else {
        return;
    };
    // Relaxed: MPI_Init has not returned; the program learns of the
    // communicator through it.
    info.complete.store(true, Ordering::Relaxed);
}

/// Registers a predefined communicator with a fixed id (init only).
fn register_fixed(comm: ffi::MPI_Comm, node: ffi::MPI_Comm, id: u64) {
    if let Some(info) = build(comm, node, id) {
        attach(comm, info);
    }
}

/// The processes a collective's per-peer arrays cover on `comm`: its size,
/// or the remote group's on an intercommunicator.
pub fn peers(comm: ffi::MPI_Comm) -> Option<usize> {
    let (mut inter, mut n): (c_int, c_int) = (0, 0);
    // SAFETY: the caller's communicator; out-pointers.
    let rc = unsafe {
        match ffi::PMPI_Comm_test_inter(comm, &mut inter) {
            0 if inter != 0 => ffi::PMPI_Comm_remote_size(comm, &mut n),
            0 => ffi::PMPI_Comm_size(comm, &mut n),
            e => e,
        }
    };
    (rc == 0).then(|| usize::try_from(n).ok()).flatten()
}

/// Registers a communicator just created by an intercepted call (see
/// [`created`]). Collective
/// over `comm`: the members agree on a random 63-bit id (the largest
/// proposal), so two communicators sharing two processes get the same id
/// only with probability 2^-63.
/// Without `node` (this rank keeps no infos), the rank only takes part in
/// the agreement.
fn register_new(comm: ffi::MPI_Comm, node: Option<ffi::MPI_Comm>) {
    let mut inter: c_int = 0;
    // SAFETY: valid communicator, valid out-pointer.
    if unsafe { ffi::PMPI_Comm_test_inter(comm, &mut inter) } != 0 || inter != 0 {
        return;
    }
    // A communicator with members of another job (`MPI_Intercomm_merge`
    // after `MPI_Comm_spawn`, connect/accept or join): the other job may
    // not register its communicators, or not run heapmpi at all, so no
    // collective may be added; it stays the real MPI's. Every member sees
    // someone outside its own MPI_COMM_WORLD, so they all agree without
    // communicating.
    if !within_world(comm) {
        return;
    }
    // The info, built before the agreement (locally: translating groups).
    let built = node.and_then(|n| build(comm, n, 0));
    // A communicator whose members all live on this node gets its
    // nonblocking collectives' block here, in the agreement every new
    // communicator makes anyway: a nonblocking collective may be its first
    // collective, and a nonblocking call cannot wait for the others to
    // make a block (see `coll::nb`). Rank 0 offers one; the others vote.
    let cell = EAGER_CELL.load(Ordering::Relaxed);
    let flat = built
        .as_ref()
        .is_some_and(|i| i.n_remote == 0 && i.size >= 2 && cell > 0 && heap::is_active());
    let offered = match &built {
        Some(i) if flat && i.rank == 0 => node::new_block(i.size as usize, cell),
        _ => core::ptr::null_mut(),
    };
    // The id proposal; whether some member keeps no infos (then the
    // communicator is not `complete`); the offered block; whether some
    // member cannot take a block.
    let mine: [u64; 4] = [
        crate::sys::random_u64() | (1 << 63),
        node.is_none() as u64,
        offered as u64,
        !flat as u64,
    ];
    let mut agreed = [0u64; 4];
    // SAFETY: four u64s each way; every member of `comm` calls this right
    // after the same creating call (it is collective over them). The
    // all-reduce also orders the block's zeroing before any member's use.
    let rc = unsafe {
        ffi::PMPI_Allreduce(
            mine.as_ptr().cast(),
            agreed.as_mut_ptr().cast(),
            4,
            ffi::RSMPI_UINT64_T,
            ffi::RSMPI_MAX,
            comm,
        )
    };
    let eager = rc == 0 && agreed[3] == 0 && agreed[2] != 0;
    if !eager && !offered.is_null() {
        // SAFETY: our fresh block, which no member adopted.
        unsafe { heap::free(offered) };
    }
    if rc != 0 {
        return;
    }
    if let Some(mut info) = built {
        info.id = agreed[0];
        info.complete.store(agreed[1] == 0, Ordering::Relaxed);
        if eager {
            let _ = info
                .nb
                .set(node::Node::adopt_flat(&info, agreed[2] as *mut u8));
            // A topology's neighbourhood, read now for the same reason:
            // a nonblocking neighbourhood collective may come first (see
            // `coll::nb::neighbor`). Collective over `comm`: every member
            // gets here (`eager` is agreed, the topology the
            // communicator's).
            if topo::kind(comm).is_some() {
                let (r, n) = (info.rank, info.size);
                let _ = info.topo.set(topo::gather(comm, r, n));
            }
        }
        attach(comm, info);
    }
}

/// Inline bytes per cell of the nonblocking block every new node-local
/// communicator gets at creation (see `register_new`); 0: none. Set once
/// in `MPI_Init` (by [`set_eager_blocks`]) before any communicator is
/// created; Relaxed as `KEYVAL`.
static EAGER_CELL: AtomicUsize = AtomicUsize::new(0);

/// Makes every communicator created from now on whose members all live on
/// this node come with a nonblocking collectives' block of `cell` inline
/// bytes per cell (0: none). Every rank of the job sets the same value
/// (the switches it depends on are agreed at init); a rank that differs
/// only makes its communicators go without.
pub fn set_eager_blocks(cell: usize) {
    EAGER_CELL.store(cell, Ordering::Relaxed);
}

pub mod cache;
pub mod node;
pub mod quirks;
pub mod topo;
pub mod wait;
pub use cache::Cache;
