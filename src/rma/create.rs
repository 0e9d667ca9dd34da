//! The calls that make windows and their memory: `MPI_Alloc_mem` and
//! `MPI_Win_allocate` from the shared heap, `MPI_Win_allocate_shared` as
//! one block of consecutive segments, `MPI_Win_create` and
//! `MPI_Win_create_dynamic` over the program's memory. Each makes the real
//! window first (its creation serialised where Open MPI needs it, see
//! [`serialized`]), then [`adopt`] decides with the other members whether
//! heapmpi runs it.

use core::ffi::{c_int, c_void};
use std::collections::BTreeSet;
use std::os::fd::AsRawFd;
use std::sync::Mutex;

use mpi_sys as ffi;

use super::on;
use super::state::Peer;
use super::window::{adopt, flavor, local_allocatable, put_ptr};
use crate::comm::node::LINE;
use crate::heap;
use crate::stats;

/// Runs `create`, a real window creation over `comm`, with the machine's
/// other real window creations of this job kept out (Open MPI only).
///
/// Open MPI 4.1's `osc/rdma` names the shared segment of a window's state
/// after the communicator's context id (`window_<cid>.<node>` in the job's
/// session directory), created by the node's first member, attached by the
/// others, unlinked inside the creation. Two windows made at the same time
/// on disjoint communicators with the same context id (pairs split from one
/// communicator) take the same name: one member attaches to the other
/// window's segment or finds none (`open(2)` ENOENT, `MPI_ERR_WIN`). Stock
/// Open MPI fails so with `Win_create` on pairs (7 of 8 runs of 40
/// creations at 4 ranks), and heapmpi makes a real `Win_create` under every
/// window, `Win_allocate_shared` included. Rank 0 of `comm` holds an
/// `flock` on a file in the job's session directory (removed with it at the
/// end of the job) for the creation, which returns on rank 0 only after
/// every member attached and the segment was unlinked.
///
/// The lock is taken only once every member of `comm` is in this call, and
/// never waited for: a holder that still needed a member who was itself
/// waiting for the lock (for a window on another communicator, made
/// earlier in that member's program) would never let go. Seen: ranks 0 and
/// 1 of four made a window on `MPI_COMM_WORLD` while ranks 2 and 3, slowed
/// by a loaded machine, were still making one on their pair; rank 0 held
/// the lock in the world's creation, waiting for rank 2, which waited for
/// the lock. So every member first meets the others in a barrier; then rank
/// 0 tries the lock without blocking and tells the others whether it got
/// it, and while it did not, all of them back off and try again together.
/// A holder's members are all in its creation, which therefore finishes.
fn serialized(comm: ffi::MPI_Comm, create: impl FnOnce() -> c_int) -> c_int {
    let _lock = if crate::version::open_mpi() {
        creation_lock(comm)
    } else {
        None
    };
    create()
}

/// The creation lock of [`serialized`] on rank 0 of `comm` (released when
/// the file is closed), or `None`. Collective over `comm`, unless `comm`
/// is not a valid intra-communicator (the creation then reports it).
fn creation_lock(comm: ffi::MPI_Comm) -> Option<std::fs::File> {
    let (mut rank, mut inter): (c_int, c_int) = (-1, 1);
    // SAFETY: a communicator handle from the caller and valid out-pointers
    // (an invalid handle gives an error, and no lock).
    let valid = unsafe {
        ffi::PMPI_Comm_rank(comm, &mut rank) == 0
            && ffi::PMPI_Comm_test_inter(comm, &mut inter) == 0
    };
    if !valid || inter != 0 {
        return None;
    }
    // Rank 0's lock file; the others take part in the agreement below
    // whether or not rank 0 has one, and so learn nothing from the
    // environment that rank 0 does not also see.
    let file = if rank == 0 { lock_file() } else { None };
    // SAFETY: a valid intra-communicator; every member calls this at the
    // same point of the same creation.
    if unsafe { ffi::PMPI_Barrier(comm) } != 0 {
        return None;
    }
    let mut pause_us = 20u64;
    loop {
        let mut got: u64 = match &file {
            // SAFETY: a descriptor we own; never blocks.
            Some(f) => {
                (unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0) as u64
            }
            None => 1,
        };
        if !crate::comm::bcast_u64(comm, &mut got) {
            return None;
        }
        if got != 0 {
            return file;
        }
        // Another creation of this job holds the lock, every member of its
        // communicator inside it: it ends soon.
        std::thread::sleep(std::time::Duration::from_micros(pause_us));
        pause_us = (pause_us * 2).min(1000);
    }
}

/// The file in the job's session directory whose `flock` is the creation
/// lock (Open MPI 4.1 names the directory in the environment).
fn lock_file() -> Option<std::fs::File> {
    let dir = std::env::var_os("OMPI_MCA_orte_jobfam_session_dir")?;
    let path = std::path::Path::new(&dir).join("heapmpi-window.lock");
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .ok()
}

/// Whether every member of `comm` got `p` non-null (collective).
fn all_got(comm: ffi::MPI_Comm, p: *mut u8) -> bool {
    crate::comm::all_agree(comm, !p.is_null())
}

/// Memory heapmpi handed out through `MPI_Alloc_mem`.
static ALLOCATED: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());

/// `MPI_Alloc_mem`: from the shared heap, so that a window over it is read
/// and written in place by every member.
///
/// # Safety
/// As `MPI_Alloc_mem`.
pub unsafe fn alloc_mem(size: ffi::MPI_Aint, info: ffi::MPI_Info, baseptr: *mut c_void) -> c_int {
    if on() && size >= 0 && !baseptr.is_null() {
        let p = heap::alloc_shared(LINE, size as usize);
        if !p.is_null() {
            ALLOCATED
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(p as usize);
            // SAFETY: per the contract.
            unsafe { put_ptr(baseptr, p) };
            return 0;
        }
    }
    // SAFETY: forwarded unchanged.
    unsafe { ffi::PMPI_Alloc_mem(size, info, baseptr) }
}

/// `MPI_Free_mem`.
///
/// # Safety
/// As `MPI_Free_mem`.
pub unsafe fn free_mem(base: *mut c_void) -> c_int {
    let ours = ALLOCATED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(base as usize));
    if ours {
        // SAFETY: our allocation from this rank's part of the heap.
        unsafe { heap::free(base.cast()) };
        return 0;
    }
    // SAFETY: forwarded unchanged.
    unsafe { ffi::PMPI_Free_mem(base) }
}

/// `MPI_Win_create`.
///
/// # Safety
/// As `MPI_Win_create`.
pub unsafe fn create(
    base: *mut c_void,
    size: ffi::MPI_Aint,
    unit: c_int,
    info: ffi::MPI_Info,
    comm: ffi::MPI_Comm,
    win: *mut ffi::MPI_Win,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let rc = serialized(comm, || unsafe {
        ffi::PMPI_Win_create(base, size, unit, info, comm, win)
    });
    if rc == 0 {
        // SAFETY: the creation succeeded on this member, and so on every
        // member (a failed creation is fatal or raised everywhere alike).
        unsafe {
            adopt(
                *win,
                comm,
                (base as usize, size as usize, unit as usize),
                flavor::CREATE,
                core::ptr::null_mut(),
                None,
            )
        };
    }
    rc
}

/// `MPI_Win_create_dynamic`.
///
/// # Safety
/// As `MPI_Win_create_dynamic`.
pub unsafe fn create_dynamic(
    info: ffi::MPI_Info,
    comm: ffi::MPI_Comm,
    win: *mut ffi::MPI_Win,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let rc = serialized(comm, || unsafe {
        ffi::PMPI_Win_create_dynamic(info, comm, win)
    });
    if rc == 0 {
        // SAFETY: as in `create`.
        unsafe {
            adopt(
                *win,
                comm,
                (0, 0, 1),
                flavor::DYNAMIC,
                core::ptr::null_mut(),
                None,
            )
        };
    }
    rc
}

/// `MPI_Win_allocate`: memory from the shared heap, under a real
/// `Win_create`; when some member gets none, the real `Win_allocate`.
///
/// # Safety
/// As `MPI_Win_allocate`.
pub unsafe fn win_allocate(
    size: ffi::MPI_Aint,
    unit: c_int,
    info: ffi::MPI_Info,
    comm: ffi::MPI_Comm,
    baseptr: *mut c_void,
    win: *mut ffi::MPI_Win,
) -> c_int {
    if size >= 0 && unit > 0 && local_allocatable(comm) {
        let p = heap::alloc_shared(LINE, size as usize);
        if all_got(comm, p) {
            // SAFETY: the caller's out-pointers; memory of `size` bytes.
            let rc = serialized(comm, || unsafe {
                ffi::PMPI_Win_create(p.cast(), size, unit, info, comm, win)
            });
            if rc != 0 {
                // SAFETY: ours, unused.
                unsafe { heap::free(p) };
                return rc;
            }
            // SAFETY: per the contract; as in `create`.
            unsafe {
                put_ptr(baseptr, p);
                adopt(
                    *win,
                    comm,
                    (p as usize, size as usize, unit as usize),
                    flavor::ALLOCATE,
                    p,
                    None,
                );
            }
            return 0;
        }
        let mine_failed = p.is_null();
        if !mine_failed {
            // SAFETY: ours, unused.
            unsafe { heap::free(p) };
        }
        no_memory(size as usize, mine_failed);
    }
    stats::RMA_WIN_REAL.add(1);
    // SAFETY: forwarded unchanged.
    serialized(comm, || unsafe {
        ffi::PMPI_Win_allocate(size, unit, info, comm, baseptr, win)
    })
}

/// Counts a window whose memory the heap could not give, and (`say`: on
/// the member that got none) says so once per process: the window runs on
/// the real MPI.
fn no_memory(size: usize, say: bool) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    stats::RMA_WIN_NO_MEMORY.add(1);
    // Relaxed: only decides who prints.
    if say && !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        crate::eprint_noalloc!(
            "heapmpi: warning: the shared heap has no room for a window of {} here; \
             this window (and any other that does not fit) runs on the real MPI",
            stats::Bytes(size as u64)
        );
    }
}

/// `MPI_Win_allocate_shared`: one block from member 0's part of the heap,
/// the members' segments consecutive in rank order (the default
/// `alloc_shared_noncontig = false` layout), every pointer valid in every
/// member.
///
/// # Safety
/// As `MPI_Win_allocate_shared`.
pub unsafe fn win_allocate_shared(
    size: ffi::MPI_Aint,
    unit: c_int,
    info: ffi::MPI_Info,
    comm: ffi::MPI_Comm,
    baseptr: *mut c_void,
    win: *mut ffi::MPI_Win,
) -> c_int {
    if size >= 0 && unit > 0 && local_allocatable(comm) {
        let nc = noncontig(info);
        if let Some((p, segs, whole)) = shared_segments(size as usize, unit as usize, comm, nc) {
            let me = crate::comm::lookup(comm).map_or(0, |i| i.rank as usize);
            let mine = segs[me];
            // SAFETY: the caller's out-pointers; the segment's memory.
            let rc = serialized(comm, || unsafe {
                ffi::PMPI_Win_create(p.cast(), size, unit, info, comm, win)
            });
            if rc != 0 {
                if !whole.is_null() {
                    // SAFETY: ours, unused.
                    unsafe { heap::free(whole) };
                }
                return rc;
            }
            // SAFETY: per the contract; as in `create`.
            unsafe {
                put_ptr(baseptr, p);
                adopt(
                    *win,
                    comm,
                    (mine.base, mine.size, mine.unit),
                    flavor::SHARED,
                    whole,
                    Some(segs),
                );
            }
            return 0;
        }
        let first = crate::comm::lookup(comm).is_some_and(|i| i.rank == 0);
        no_memory(size as usize, first);
    }
    stats::RMA_WIN_REAL.add(1);
    // SAFETY: forwarded unchanged.
    serialized(comm, || unsafe {
        ffi::PMPI_Win_allocate_shared(size, unit, info, comm, baseptr, win)
    })
}

/// Whether `info` asks for `alloc_shared_noncontig`.
fn noncontig(info: ffi::MPI_Info) -> bool {
    // SAFETY: reading an MPI constant.
    if info == unsafe { ffi::RSMPI_INFO_NULL } {
        return false;
    }
    let mut v = [0 as core::ffi::c_char; 16];
    let mut flag: c_int = 0;
    let key = c"alloc_shared_noncontig";
    // SAFETY: a valid info (the caller's), a NUL-terminated key, a buffer
    // of 16 characters of which at most 15 are written plus the NUL.
    let rc =
        unsafe { ffi::PMPI_Info_get(info, key.as_ptr() as *mut _, 15, v.as_mut_ptr(), &mut flag) };
    if rc != 0 || flag == 0 {
        return false;
    }
    // SAFETY: the MPI wrote a NUL-terminated string into `v`.
    let s = unsafe { core::ffi::CStr::from_ptr(v.as_ptr()) };
    s.to_bytes().eq_ignore_ascii_case(b"true")
}

/// Lays out the segments of a shared window: returns this member's base,
/// every segment, and the block to free with the window (on member 0),
/// or `None` on every member when member 0 gets no memory. Collective.
/// `noncontig`: the window asked for `alloc_shared_noncontig`. The layout
/// follows what each MPI reports, as programs rely on it: an empty
/// segment's base is null under MPICH always and under Open MPI for
/// noncontiguous windows (nothing is ever read or written there), and
/// Open MPI rounds each segment of a noncontiguous window up to whole pages
/// (its `MPI_Win_shared_query` reports that size, which a program may use).
fn shared_segments(
    size: usize,
    unit: usize,
    comm: ffi::MPI_Comm,
    noncontig: bool,
) -> Option<(*mut u8, Box<[Peer]>, *mut u8)> {
    let null_empty = crate::version::mpich() || noncontig;
    let page = if crate::version::open_mpi() && noncontig {
        crate::sys::page_size()
    } else {
        1
    };
    let info = crate::comm::lookup(comm)?;
    let mine = [size.div_ceil(page) as u64 * page as u64, unit as u64];
    let all = crate::comm::allgather_u64(comm, &mine)?;
    let total: usize = all.chunks(2).map(|c| c[0] as usize).sum();
    let mut addr: u64 = 0;
    if info.rank == 0 {
        addr = heap::alloc_shared(LINE, total) as u64;
    }
    let sent = crate::comm::bcast_u64(comm, &mut addr);
    if !sent || addr == 0 {
        return None;
    }
    // SAFETY: a system call without arguments.
    let pid = unsafe { libc::getpid() };
    let mut off = 0usize;
    let segs: Box<[Peer]> = all
        .chunks(2)
        .map(|c| {
            let empty = c[0] == 0 && null_empty;
            let p = Peer {
                base: if empty { 0 } else { addr as usize + off },
                size: c[0] as usize,
                unit: c[1] as usize,
                pid,
            };
            off += c[0] as usize;
            p
        })
        .collect();
    let me = info.rank as usize;
    let whole = if me == 0 {
        addr as *mut u8
    } else {
        core::ptr::null_mut()
    };
    Some((segs[me].base as *mut u8, segs, whole))
}
