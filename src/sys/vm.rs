//! Address-space reservations and the fixed-address shared mapping.
//!
//! A range is first *reserved* with an inaccessible private mapping placed
//! with `MAP_FIXED_NOREPLACE`, which fails rather than clobbering anything
//! already there. Once every rank holds the reservation, each maps the shared
//! object over its own reservation with `MAP_FIXED`: replacing a mapping the
//! process owns is exactly what `MAP_FIXED` is safe for.

use std::num::NonZeroUsize;
use std::os::fd::BorrowedFd;
use std::os::fd::RawFd;
use std::ptr::NonNull;

use nix::errno::Errno;
use nix::sys::mman::{self, MapFlags, ProtFlags};

/// Tries to reserve `[addr, addr+len)`. Fails with `EEXIST` if any part of
/// it is in use (also when the kernel placed the mapping elsewhere, as
/// kernels older than 4.17 do when they do not know `MAP_FIXED_NOREPLACE`),
/// or `ENOMEM` when the address-space limit (`ulimit -v`) forbids it.
pub fn reserve_at(addr: usize, len: usize) -> Result<(), Errno> {
    let (Some(a), Some(l)) = (NonZeroUsize::new(addr), NonZeroUsize::new(len)) else {
        return Err(Errno::EINVAL);
    };
    // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping, so this
    // cannot invalidate any memory the program uses.
    let r = unsafe {
        mman::mmap_anonymous(
            Some(a),
            l,
            ProtFlags::PROT_NONE,
            MapFlags::MAP_PRIVATE | MapFlags::MAP_NORESERVE | MapFlags::MAP_FIXED_NOREPLACE,
        )
    };
    match r {
        Ok(p) if p.as_ptr() as usize == addr => Ok(()),
        Ok(p) => {
            // An old kernel took the flag as a hint: undo the stray mapping.
            // SAFETY: `p` is the mapping just created, of length `len`.
            let _ = unsafe { mman::munmap(p, len) };
            Err(Errno::EEXIST)
        }
        Err(e) => Err(e),
    }
}

/// Releases a reservation made by [`reserve_at`] (or a mapping made by
/// [`map_shared_over`]).
///
/// # Safety
/// `[addr, addr+len)` must be a range this module mapped and nothing else
/// may refer to it any more.
pub unsafe fn unmap(addr: usize, len: usize) {
    if let Some(p) = NonNull::new(addr as *mut libc::c_void) {
        // SAFETY: forwarded from the caller.
        let _ = unsafe { mman::munmap(p, len) };
    }
}

/// Maps `len` bytes of the shared object `fd` read-write at exactly `addr`,
/// replacing this process's own reservation there.
///
/// # Safety
/// `[addr, addr+len)` must be a reservation made by [`reserve_at`] in this
/// process (so `MAP_FIXED` replaces nothing else).
pub unsafe fn map_shared_over(addr: usize, len: usize, fd: RawFd) -> Result<(), Errno> {
    let a = NonZeroUsize::new(addr).ok_or(Errno::EINVAL)?;
    let l = NonZeroUsize::new(len).ok_or(Errno::EINVAL)?;
    // SAFETY: the descriptor is open for the duration of the call.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    // SAFETY: by the caller's contract the range is our own reservation, so
    // MAP_FIXED replaces nothing that anyone else refers to.
    let p = unsafe {
        mman::mmap(
            Some(a),
            l,
            ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
            MapFlags::MAP_SHARED | MapFlags::MAP_FIXED,
            fd,
            0,
        )
    }?;
    debug_assert_eq!(p.as_ptr() as usize, addr);
    Ok(())
}

/// Whether a core file of this process holds `[addr, addr+len)`
/// (`MADV_DODUMP` / `MADV_DONTDUMP`). The shared region is mapped at its
/// full size (tens of GiB a rank), and the kernel dumps a shared memfd
/// mapping whole, its never-committed pages as zeros: a crashing rank
/// wrote a core of the region's size (or was killed half-way by the
/// launcher). Only what a rank has committed and the node header are
/// marked for the dump. A hint: a failure only changes what a core holds.
pub fn set_dump(addr: usize, len: usize, dump: bool) {
    if len == 0 {
        return;
    }
    let advice = if dump {
        libc::MADV_DODUMP
    } else {
        libc::MADV_DONTDUMP
    };
    // SAFETY: the advice only sets or clears VM_DONTDUMP on this process's
    // own mappings in the range; no contents or protections change.
    unsafe {
        libc::madvise(addr as *mut libc::c_void, len, advice);
    }
}

/// Replaces the shared mapping `[addr, addr+len)` of `fd` (offset 0 at
/// `addr`) with a private copy-on-write mapping of the same object, then
/// forces private copies of the pages in `[copy_lo, copy_hi)` so they no
/// longer follow the object. Used in a forked child: its writes can never
/// reach the parent, and the copied range is a snapshot.
///
/// # Safety
/// `[addr, addr+len)` must be this process's shared mapping of `fd`, and
/// `[copy_lo, copy_hi)` a page-aligned sub-range of it.
pub unsafe fn privatize(
    addr: usize,
    len: usize,
    fd: RawFd,
    copy_lo: usize,
    copy_hi: usize,
) -> bool {
    // SAFETY: replacing our own mapping of the same object at the same
    // address; contents read the same immediately afterwards.
    let p = unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            // NORESERVE: the region is far larger than memory; only the pages
            // the child actually copies are charged.
            libc::MAP_PRIVATE | libc::MAP_FIXED | libc::MAP_NORESERVE,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return false;
    }
    if copy_hi <= copy_lo {
        return true;
    }
    // SAFETY: the range is inside the mapping just made.
    let r = unsafe {
        libc::madvise(
            copy_lo as *mut libc::c_void,
            copy_hi - copy_lo,
            libc::MADV_POPULATE_WRITE,
        )
    };
    if r != 0 {
        // Kernels before 5.14: write-fault every page by hand.
        let page = super::page_size();
        let mut a = copy_lo;
        while a < copy_hi {
            // SAFETY: `a` is inside the private mapping; writing back the
            // byte just read changes nothing but makes the page private.
            unsafe {
                let b = core::ptr::read_volatile(a as *const u8);
                core::ptr::write_volatile(a as *mut u8, b);
            }
            a += page;
        }
    }
    true
}

/// Maps the pages of `[addr, addr+len)` (inside this process's shared
/// mapping, already committed in the shared object) writable in one system
/// call (`MADV_POPULATE_WRITE`), instead of one page fault per page at
/// first touch. A hint: nothing is done on kernels before 5.14.
pub fn prefault(addr: usize, len: usize) {
    // SAFETY: the range lies in a live shared mapping of committed pages;
    // populating changes no contents (the pages read as they did).
    unsafe {
        libc::madvise(addr as *mut libc::c_void, len, libc::MADV_POPULATE_WRITE);
    }
}
