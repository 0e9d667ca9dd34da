//! Accumulates, fetch-and-op and compare-and-swap: element-wise atomic, as
//! MPI requires of concurrent accumulates with the same basic datatype on
//! the same location (MPI-4.0 §12.7.1).
//!
//! How an element is updated depends only on its address and its basic
//! type, never on the call, so every accumulate on one location takes the
//! same way and they are atomic with respect to each other:
//!
//! - an aligned 4- or 8-byte integer element in the shared heap: one
//!   hardware atomic (fetch-and-add, -and, -or, -xor, -max, -min, exchange,
//!   load) or a compare-and-swap loop (product, logical operations) on the
//!   word itself;
//! - anything else (floating point, other types, `MAXLOC`/`MINLOC`, a
//!   misaligned element, memory outside the heap reached through the
//!   kernel): under the target's accumulate lock, a spin lock in the
//!   window's shared block, the operator applied ([`crate::op::Reducer`]:
//!   heapmpi's vectorised kernels, the real `MPI_Reduce_local` otherwise)
//!   in place, or read, applied and written back. Floating point could
//!   take a compare-and-swap loop per element, but the lock streams a large
//!   accumulate at memory speed and costs one element the same.
//!
//! A derived target datatype is walked element by element: its elements'
//! offsets in type-map order come from unpacking a stream of element
//! numbers into an image of the span it covers.
//!
//! A call's plan is made in `plan.rs`, applied to the elements in
//! `apply.rs`; this file holds the MPI routines.

mod apply;
mod plan;

use core::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use mpi_sys as ffi;

use super::access::{at, begin, load, locate, store, target, Stop};
use super::outcome;
use crate::dt::Buf;
use crate::heap;
use crate::op::{self, Class};
use crate::stats;
use apply::{run, AccLock};
use plan::{plan, Acc};

/// The shared part of the accumulate entry points: `Err(None)` for the real
/// MPI, `Err(Some(class))` to raise.
#[allow(clippy::too_many_arguments)]
unsafe fn acc_inner(
    origin: Option<(*const c_void, c_int, ffi::MPI_Datatype)>,
    result: Option<(*mut c_void, c_int, ffi::MPI_Datatype)>,
    t: c_int,
    disp: ffi::MPI_Aint,
    tcount: c_int,
    tdt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    win: ffi::MPI_Win,
) -> Stop {
    let (f, t) = match begin(win, t) {
        Ok(x) => x,
        Err(stop) => return stop,
    };
    // Nothing to move: done inside the epoch whatever the pair (stock
    // MPICH accepts MPI_SUM on MPI_BYTE with zero counts; mpi4py's tests
    // make that call), unless the counts or the operation are not valid.
    let empty = |c: Option<c_int>| c.is_none_or(|c| c == 0);
    if tcount == 0
        && empty(origin.map(|o| o.1))
        && empty(result.map(|r| r.1))
        && (op::predefined(op).is_some() || op == op::replace() || op == op::no_op())
    {
        return Ok(());
    }
    let pl = plan(op, tdt, result.is_some()).ok_or(None)?;
    let o = match origin {
        Some((p, c, d)) if pl.acc != Acc::NoOp => Some(Buf::new(p, c, d).ok_or(None)?),
        _ => None,
    };
    let r = match result {
        Some((p, c, d)) => Some(Buf::new(p, c, d).ok_or(None)?),
        None => None,
    };
    let tb = target(tcount, tdt).ok_or(None)?;
    // SAFETY: the caller's buffers.
    unsafe { run(f, t, disp, &tb, &pl, o.as_ref(), r.as_ref()) }?;
    stats::RMA_ACCS.bump();
    Ok(())
}

/// `MPI_Accumulate`.
///
/// # Safety
/// As `MPI_Accumulate`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn accumulate(
    oaddr: *const c_void,
    ocount: c_int,
    odt: ffi::MPI_Datatype,
    t: c_int,
    disp: ffi::MPI_Aint,
    tcount: c_int,
    tdt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    win: ffi::MPI_Win,
) -> c_int {
    crate::profile::data(ocount as i64, odt);
    // SAFETY: the caller's arguments.
    let r = unsafe {
        acc_inner(
            Some((oaddr, ocount, odt)),
            None,
            t,
            disp,
            tcount,
            tdt,
            op,
            win,
        )
    };
    // SAFETY: the real call gets the caller's arguments unchanged.
    outcome(r, win, core::ptr::null_mut(), || unsafe {
        ffi::PMPI_Accumulate(oaddr, ocount, odt, t, disp, tcount, tdt, op, win)
    })
}

/// `MPI_Raccumulate`.
///
/// # Safety
/// As `MPI_Raccumulate`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn raccumulate(
    oaddr: *const c_void,
    ocount: c_int,
    odt: ffi::MPI_Datatype,
    t: c_int,
    disp: ffi::MPI_Aint,
    tcount: c_int,
    tdt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    win: ffi::MPI_Win,
    req: *mut ffi::MPI_Request,
) -> c_int {
    crate::profile::data(ocount as i64, odt);
    // SAFETY: the caller's arguments.
    let r = unsafe {
        acc_inner(
            Some((oaddr, ocount, odt)),
            None,
            t,
            disp,
            tcount,
            tdt,
            op,
            win,
        )
    };
    // SAFETY: the real call gets the caller's arguments unchanged.
    outcome(r, win, req, || unsafe {
        ffi::PMPI_Raccumulate(oaddr, ocount, odt, t, disp, tcount, tdt, op, win, req)
    })
}

/// `MPI_Get_accumulate`.
///
/// # Safety
/// As `MPI_Get_accumulate`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn get_accumulate(
    oaddr: *const c_void,
    ocount: c_int,
    odt: ffi::MPI_Datatype,
    raddr: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    t: c_int,
    disp: ffi::MPI_Aint,
    tcount: c_int,
    tdt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    win: ffi::MPI_Win,
) -> c_int {
    crate::profile::data(ocount as i64, odt);
    // SAFETY: the caller's arguments.
    let r = unsafe {
        acc_inner(
            Some((oaddr, ocount, odt)),
            Some((raddr, rcount, rdt)),
            t,
            disp,
            tcount,
            tdt,
            op,
            win,
        )
    };
    // SAFETY: the caller's arguments; the real call gets them unchanged.
    outcome(r, win, core::ptr::null_mut(), || unsafe {
        ffi::PMPI_Get_accumulate(
            oaddr, ocount, odt, raddr, rcount, rdt, t, disp, tcount, tdt, op, win,
        )
    })
}

/// `MPI_Rget_accumulate`.
///
/// # Safety
/// As `MPI_Rget_accumulate`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn rget_accumulate(
    oaddr: *const c_void,
    ocount: c_int,
    odt: ffi::MPI_Datatype,
    raddr: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    t: c_int,
    disp: ffi::MPI_Aint,
    tcount: c_int,
    tdt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    win: ffi::MPI_Win,
    req: *mut ffi::MPI_Request,
) -> c_int {
    crate::profile::data(ocount as i64, odt);
    // SAFETY: the caller's arguments.
    let r = unsafe {
        acc_inner(
            Some((oaddr, ocount, odt)),
            Some((raddr, rcount, rdt)),
            t,
            disp,
            tcount,
            tdt,
            op,
            win,
        )
    };
    // SAFETY: the caller's arguments and request pointer; the real call
    // gets them unchanged.
    outcome(r, win, req, || unsafe {
        ffi::PMPI_Rget_accumulate(
            oaddr, ocount, odt, raddr, rcount, rdt, t, disp, tcount, tdt, op, win, req,
        )
    })
}

/// `MPI_Fetch_and_op`: a get-accumulate of one element.
///
/// # Safety
/// As `MPI_Fetch_and_op`.
pub unsafe fn fetch_and_op(
    oaddr: *const c_void,
    raddr: *mut c_void,
    dt: ffi::MPI_Datatype,
    t: c_int,
    disp: ffi::MPI_Aint,
    op: ffi::MPI_Op,
    win: ffi::MPI_Win,
) -> c_int {
    crate::profile::data(1, dt);
    // SAFETY: the caller's arguments.
    let r = unsafe {
        acc_inner(
            Some((oaddr, 1, dt)),
            Some((raddr, 1, dt)),
            t,
            disp,
            1,
            dt,
            op,
            win,
        )
    };
    // SAFETY: the real call gets the caller's arguments unchanged.
    outcome(r, win, core::ptr::null_mut(), || unsafe {
        ffi::PMPI_Fetch_and_op(oaddr, raddr, dt, t, disp, op, win)
    })
}

/// `MPI_Compare_and_swap`.
///
/// # Safety
/// As `MPI_Compare_and_swap`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn compare_and_swap(
    oaddr: *const c_void,
    caddr: *const c_void,
    raddr: *mut c_void,
    dt: ffi::MPI_Datatype,
    t: c_int,
    disp: ffi::MPI_Aint,
    win: ffi::MPI_Win,
) -> c_int {
    crate::profile::data(1, dt);
    // SAFETY: the caller's arguments.
    let r = unsafe { cas_inner(oaddr, caddr, raddr, dt, t, disp, win) };
    // SAFETY: the real call gets the caller's arguments unchanged.
    outcome(r, win, core::ptr::null_mut(), || unsafe {
        ffi::PMPI_Compare_and_swap(oaddr, caddr, raddr, dt, t, disp, win)
    })
}

/// [`compare_and_swap`]: the same ways as the accumulates (hardware on an
/// aligned 4- or 8-byte integer in the heap, else under the target's lock).
unsafe fn cas_inner(
    oaddr: *const c_void,
    caddr: *const c_void,
    raddr: *mut c_void,
    dt: ffi::MPI_Datatype,
    t: c_int,
    disp: ffi::MPI_Aint,
    win: ffi::MPI_Win,
) -> Stop {
    let (f, t) = match begin(win, t) {
        Ok(x) => x,
        Err(stop) => return stop,
    };
    let class = op::class_of(dt).ok_or(None)?;
    if !matches!(
        class.0,
        Class::Int | Class::FortranInt | Class::Logical | Class::Byte
    ) || oaddr.is_null()
        || caddr.is_null()
        || raddr.is_null()
    {
        return Err(None);
    }
    let tb = target(1, dt).ok_or(None)?;
    let size = tb.d.size;
    let loc = match locate(f, t, disp, &tb) {
        Ok(l) => l,
        Err(stop) => return stop,
    };
    let tb = at(&tb, &loc);
    let (o, c, r) = (oaddr as *const u8, caddr as *const u8, raddr as *mut u8);
    let hw = class.1.filter(|e| {
        e.size() == size && heap::in_region(tb.ptr, size) && tb.ptr as usize % size == 0
    });
    // SAFETY: one element at each of the caller's addresses; the target
    // element is inside the window (range checked).
    unsafe {
        match hw {
            Some(e) if size == 4 => {
                let a = &*(tb.ptr as *const AtomicU32);
                let (want, new) = (
                    (c as *const u32).read_unaligned(),
                    (o as *const u32).read_unaligned(),
                );
                // AcqRel: see `apply::int_rmw`.
                let old = match a.compare_exchange(want, new, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(x) | Err(x) => x,
                };
                let _ = e;
                (r as *mut u32).write_unaligned(old);
            }
            Some(_) => {
                let a = &*(tb.ptr as *const AtomicU64);
                let (want, new) = (
                    (c as *const u64).read_unaligned(),
                    (o as *const u64).read_unaligned(),
                );
                // AcqRel: see `apply::int_rmw`.
                let old = match a.compare_exchange(want, new, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(x) | Err(x) => x,
                };
                (r as *mut u64).write_unaligned(old);
            }
            None => {
                let _g = AccLock::take(f, t);
                let mut old = vec![0u8; size];
                load(&tb, &loc, old.as_mut_ptr(), size);
                if core::slice::from_raw_parts(c, size) == old.as_slice() {
                    store(&tb, &loc, o, size);
                }
                core::ptr::copy_nonoverlapping(old.as_ptr(), r, size);
            }
        }
    }
    stats::RMA_ACCS.bump();
    Ok(())
}
