//! The real MPI's own accumulate as the oracle for the (type, operation)
//! pairs its accumulates perform but its `MPI_Reduce_local` refuses.
//!
//! MPI-4.0 §6.9.2 lists which predefined operations apply to which types;
//! heapmpi runs those itself and asks the MPI about every other pair
//! ([`crate::op::real_accepts`], with `MPI_Reduce_local`). Stock MPICH
//! (4.0) accumulates do not check the pair at all: they hand it to its
//! datatype engine (yaksa, `MPIR_Typerep_op` in
//! `src/mpi/datatype/typerep/src/typerep_yaksa_pack.c`), which applies the
//! operation to its own view of the type (`MPI_BYTE` and `MPI_C_BOOL` as
//! 8-bit integers, `MPI_2REAL` as a complex number, `MPI_FLOAT_INT` as a
//! struct of a float and an int) when it has a kernel for it, and leaves the
//! target untouched when it has none (`MPI_BAND` on `MPI_FLOAT`). 106 such
//! pairs in MPICH 4.0.2; heapmpi, which cannot hand a call to the real MPI
//! inside an epoch heapmpi opened, must give the same results.
//!
//! Rather than rewrite one MPI release's datatype engine, heapmpi asks the
//! engine: a window of its own on `MPI_COMM_SELF`, made the first time a
//! refused pair is met, and an exclusive lock, `PMPI_Accumulate` and
//! unlock on it, through a bounce buffer, for each run of elements. Slow,
//! and only ever taken by pairs outside the standard's table. Open MPI's
//! accumulates refuse exactly what its `MPI_Reduce_local` refuses (and Open
//! MPI 4.1 cannot make a window on a one-process communicator of a larger
//! job), so there the oracle is never asked.

use core::ffi::{c_int, c_void};
use std::sync::Mutex;

use mpi_sys as ffi;

use crate::raw::RawHandle;

/// Bytes of the oracle window: whole runs of up to this many bytes go
/// through it at once (an element is at most 64 bytes).
const WINDOW_BYTES: usize = 4096;

/// The oracle window and its memory.
struct Oracle {
    win: ffi::MPI_Win,
    mem: *mut u8,
}

// SAFETY: the window handle and its memory are only used under `ORACLE`'s
// lock, by one thread at a time.
unsafe impl Send for Oracle {}

/// `None` until first needed; `Some(None)` when the window could not be
/// made (every pair is then refused, and the real MPI raises its error).
static ORACLE: Mutex<Option<Option<Oracle>>> = Mutex::new(None);

/// Pairs already asked: (op bits, type bits, accepted).
static SEEN: Mutex<Vec<(usize, usize, bool)>> = Mutex::new(Vec::new());

/// Whether the MPI's accumulate applies `op` to `dt`, a predefined type of
/// at most 64 bytes that its `MPI_Reduce_local` refuses.
pub fn accepts(op: ffi::MPI_Op, dt: ffi::MPI_Datatype) -> bool {
    if !crate::version::mpich() {
        return false;
    }
    let key = (op.0.to_bits(), dt.0.to_bits());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = seen.iter().find(|e| (e.0, e.1) == key) {
        return e.2;
    }
    let ok = match crate::dt::layout(dt) {
        Some(l) if l.d.named && l.extent <= 64 => {
            let zero = [0u8; 64];
            let mut cur = [0u8; 64];
            // SAFETY: one element of at most 64 bytes in each buffer.
            unsafe { run(op, dt, l.extent, zero.as_ptr(), cur.as_mut_ptr(), 1) }
        }
        _ => false,
    };
    seen.push((key.0, key.1, ok));
    ok
}

/// `inout[i] = in[i] op inout[i]` for `count` elements of `dt` laid out at
/// extent `ext`, as the MPI's accumulate computes it: the
/// [`crate::op::Reducer`] of a pair that [`accepts`].
///
/// # Safety
/// Both buffers hold `count` elements at extent `ext`; they do not overlap.
pub unsafe fn apply(
    op: ffi::MPI_Op,
    dt: ffi::MPI_Datatype,
    ext: usize,
    inb: *const u8,
    inout: *mut u8,
    count: usize,
) {
    // SAFETY: forwarded from the caller.
    unsafe { run(op, dt, ext, inb, inout, count) };
}

/// [`apply`], reporting whether every step succeeded.
///
/// # Safety
/// As [`apply`].
unsafe fn run(
    op: ffi::MPI_Op,
    dt: ffi::MPI_Datatype,
    ext: usize,
    inb: *const u8,
    inout: *mut u8,
    count: usize,
) -> bool {
    let mut g = ORACLE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(o) = g.get_or_insert_with(make).as_ref() else {
        return false;
    };
    let per = (WINDOW_BYTES / ext.max(1)).max(1);
    let mut done = 0usize;
    let mut ok = true;
    while done < count {
        let n = (count - done).min(per);
        let bytes = n * ext;
        // SAFETY: `o.mem` holds WINDOW_BYTES >= `bytes` bytes and is only
        // touched under the lock we hold; the caller's buffers hold `count`
        // elements at extent `ext`. The window has MPI_ERRORS_RETURN, so a
        // refused pair returns an error code instead of aborting.
        unsafe {
            let (src, dst) = (inb.add(done * ext), inout.add(done * ext));
            core::ptr::copy_nonoverlapping(dst, o.mem, bytes);
            let mut rc = ffi::PMPI_Win_lock(ffi::MPI_LOCK_EXCLUSIVE as c_int, 0, 0, o.win);
            if rc == 0 {
                rc = ffi::PMPI_Accumulate(
                    src.cast::<c_void>(),
                    n as c_int,
                    dt,
                    0,
                    0,
                    n as c_int,
                    dt,
                    op,
                    o.win,
                );
                let rc2 = ffi::PMPI_Win_unlock(0, o.win);
                rc = if rc == 0 { rc2 } else { rc };
            }
            if rc == 0 {
                core::ptr::copy_nonoverlapping(o.mem, dst, bytes);
            } else {
                ok = false;
            }
        }
        done += n;
    }
    ok
}

/// The oracle window, or `None` when the MPI cannot make one.
fn make() -> Option<Oracle> {
    let mut mem: *mut u8 = core::ptr::null_mut();
    // SAFETY: valid out-pointers; MPI_COMM_SELF involves this process only;
    // the window's handler is set to return before any call that can fail
    // on it.
    unsafe {
        if ffi::PMPI_Alloc_mem(
            WINDOW_BYTES as ffi::MPI_Aint,
            ffi::RSMPI_INFO_NULL,
            (&mut mem as *mut *mut u8).cast(),
        ) != 0
        {
            return None;
        }
        let mut win = core::mem::zeroed::<ffi::MPI_Win>();
        if ffi::PMPI_Win_create(
            mem.cast(),
            WINDOW_BYTES as ffi::MPI_Aint,
            1,
            ffi::RSMPI_INFO_NULL,
            ffi::RSMPI_COMM_SELF,
            &mut win,
        ) != 0
        {
            ffi::PMPI_Free_mem(mem.cast());
            return None;
        }
        ffi::PMPI_Win_set_errhandler(win, ffi::RSMPI_ERRORS_RETURN);
        Some(Oracle { win, mem })
    }
}

/// Frees the oracle window, if one was made (before `MPI_Finalize`).
pub fn before_finalize() {
    let mut g = ORACLE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(Some(mut o)) = g.take() {
        // SAFETY: the window and memory were made by `make` and are not
        // used after this point (a later call would make new ones, but
        // none comes after finalize).
        unsafe {
            ffi::PMPI_Win_free(&mut o.win);
            ffi::PMPI_Free_mem(o.mem.cast());
        }
    }
}
