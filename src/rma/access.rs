//! Put and get: a store into the target's memory and a load from it, made
//! by the origin alone and complete when the call returns.
//!
//! Memory in the shared heap (and the origin's own) is copied in place,
//! through the datatypes on both sides (`MPI_Pack`/`MPI_Unpack` with the
//! target's datatype straight at the target's address, which is the same
//! in every process). Memory outside the heap is reached through
//! cross-memory attach: a contiguous target in one system call, a derived
//! target datatype through an image of the bytes it spans, written back
//! (or read) run by run, so bytes between its elements are never touched.
//! Also the checks every operation makes first ([`begin`], [`locate`]).

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::state::Fast;
use super::window::fast;
use super::{outcome, proc_null};
use crate::dt::{layout, Buf};
use crate::heap;
use crate::stats;

/// How an operation ends without running: `Ok(())` nothing to do
/// (success), `Err(None)` the real MPI's call (not heapmpi's window,
/// arguments it judges, or no epoch open: it raises its own error),
/// `Err(Some(class))` an error to raise.
pub(super) type Stop = Result<(), Option<u32>>;

/// The window and target member of an operation on `win` towards rank `t`;
/// `MPI_PROC_NULL` inside an epoch is nothing to do.
#[inline]
pub(super) fn begin(win: ffi::MPI_Win, t: c_int) -> Result<(&'static Fast, usize), Stop> {
    let Some(f) = fast(win) else {
        crate::profile::real(crate::profile::How::RealObject, None);
        return Err(Err(None));
    };
    if t == proc_null() {
        return Err(if f.any_epoch() { Ok(()) } else { Err(None) });
    }
    if t < 0 || t as usize >= f.n || !f.may_access(t as usize) {
        return Err(Err(None));
    }
    Ok((f, t as usize))
}

/// Where an operation's target data is.
pub(super) struct Loc {
    /// Address of the target buffer (its elements start at the datatype's
    /// lower bound from here).
    pub addr: usize,
    /// Loads and stores reach it (the heap, or this process's own memory);
    /// otherwise cross-memory attach, with `pid`.
    pub direct: bool,
    /// The target's process.
    pub pid: i32,
}

/// Locates target buffer `tb` at displacement `disp` of member `t`'s
/// window. A negative displacement goes to the real MPI, which refuses it
/// with `MPI_ERR_DISP` before anything else (both MPIs). A range past the
/// window is refused with `MPI_ERR_RMA_RANGE` under Open MPI; stock MPICH
/// does not check it and reads or writes past the window, which heapmpi
/// does not: it reports success and leaves all memory alone.
#[inline]
pub(super) fn locate(f: &Fast, t: usize, disp: ffi::MPI_Aint, tb: &Buf) -> Result<Loc, Stop> {
    if disp < 0 && !f.dynamic {
        return Err(Err(None));
    }
    let p = &f.peers[t];
    let span = tb.l.span(tb.count);
    let off = (disp as i128) * p.unit as i128;
    let lo = off + span.lo as i128;
    let hi = lo + span.len as i128;
    if !f.dynamic && span.len > 0 && (lo < 0 || hi > p.size as i128) {
        return Err(if crate::version::mpich() {
            Ok(())
        } else {
            Err(Some(ffi::MPI_ERR_RMA_RANGE))
        });
    }
    let addr = (p.base as i128 + off) as usize;
    let start = (addr as isize).wrapping_add(span.lo) as usize;
    let direct = t == f.me || span.len == 0 || heap::in_region(start as *const u8, span.len);
    Ok(Loc {
        addr,
        direct,
        pid: p.pid,
    })
}

/// The target buffer: `count` elements of `dt` at a displacement still to
/// be located (its address is filled in by [`at`]).
pub(super) fn target(count: c_int, dt: ffi::MPI_Datatype) -> Option<Buf> {
    target_like(count, dt, None)
}

/// [`target`], reusing the layout of `o` when it has the same datatype.
#[inline]
pub(super) fn target_like(count: c_int, dt: ffi::MPI_Datatype, o: Option<&Buf>) -> Option<Buf> {
    if count < 0 {
        return None;
    }
    let l = match o {
        Some(o) if o.dt == dt => o.l,
        _ => layout(dt)?,
    };
    Some(Buf {
        ptr: core::ptr::null_mut(),
        count: count as usize,
        dt,
        d: l.d,
        l,
    })
}

/// `tb` at `loc`'s address.
#[inline]
pub(super) fn at(tb: &Buf, loc: &Loc) -> Buf {
    Buf {
        ptr: loc.addr as *mut u8,
        ..*tb
    }
}

/// The origin's packed bytes: in place when it is dense, else packed into
/// `tmp`.
///
/// # Safety
/// `o` holds its elements.
#[inline]
pub(super) unsafe fn packed(o: &Buf, tmp: &mut Vec<u8>) -> *const u8 {
    if o.d.contig {
        return o.ptr;
    }
    tmp.resize(o.bytes(), 0);
    // SAFETY: per the contract; `tmp` has room.
    unsafe { o.pack_to(tmp.as_mut_ptr()) };
    tmp.as_ptr()
}

/// The runs of bytes `tb`'s elements touch, relative to the start of its
/// span, in address order: an image of the span is marked through the
/// datatype and scanned.
pub(super) fn runs(tb: &Buf) -> Vec<(usize, usize)> {
    let span = tb.l.span(tb.count);
    let mut image = vec![0u8; span.len];
    let ones = vec![0xffu8; tb.bytes()];
    let view = Buf {
        ptr: image.as_mut_ptr().wrapping_offset(-span.lo),
        ..*tb
    };
    // SAFETY: the image covers the span of the elements.
    unsafe { view.unpack_from(ones.as_ptr(), ones.len()) };
    let mut out = Vec::new();
    let mut i = 0;
    while i < image.len() {
        if image[i] == 0 {
            i += 1;
            continue;
        }
        let s = i;
        while i < image.len() && image[i] != 0 {
            i += 1;
        }
        out.push((s, i - s));
    }
    out
}

/// Writes `n` packed bytes at `src` into target buffer `tb` (located at
/// `loc`).
///
/// # Safety
/// `src` holds `n ≤ tb.bytes()` bytes; the target memory is the window's.
#[inline(always)]
pub(super) unsafe fn store(tb: &Buf, loc: &Loc, src: *const u8, n: usize) {
    if loc.direct && tb.d.contig {
        // SAFETY: per the contract; `copy` since a put from a window into
        // itself may overlap.
        unsafe { crate::dt::copy_small(src, tb.ptr, n) };
    } else {
        // SAFETY: per the contract.
        unsafe { store_other(tb, loc, src, n) };
    }
}

/// [`store`] into a derived target datatype or through the kernel (out
/// of line: the contiguous store above is the one that must be short).
///
/// # Safety
/// As [`store`].
#[inline(never)]
unsafe fn store_other(tb: &Buf, loc: &Loc, src: *const u8, n: usize) {
    if n == 0 {
        return;
    }
    if loc.direct {
        // SAFETY: per the contract.
        unsafe { tb.unpack_from(src, n) };
        return;
    }
    if tb.d.contig {
        // SAFETY: per the contract.
        unsafe { cma_write(loc.pid, tb.ptr as usize, src, n) };
        return;
    }
    let span = tb.l.span(tb.count);
    let mut image = vec![0u8; span.len];
    let view = Buf {
        ptr: image.as_mut_ptr().wrapping_offset(-span.lo),
        ..*tb
    };
    // SAFETY: the image covers the span.
    unsafe { view.unpack_from(src, n) };
    let start = (tb.ptr as isize).wrapping_add(span.lo) as usize;
    for (off, len) in runs(tb) {
        // SAFETY: inside the image.
        unsafe { cma_write(loc.pid, start + off, image.as_ptr().add(off), len) };
    }
}

/// Reads target buffer `tb` (located at `loc`) as `n` packed bytes into
/// `dst`.
///
/// # Safety
/// `dst` has room for `n ≤ tb.bytes()` bytes; the target memory is the
/// window's.
#[inline]
pub(super) unsafe fn load(tb: &Buf, loc: &Loc, dst: *mut u8, n: usize) {
    if n == 0 {
        return;
    }
    if tb.d.contig {
        if loc.direct {
            // SAFETY: per the contract.
            unsafe { crate::dt::copy_small(tb.ptr, dst, n) };
        } else {
            // SAFETY: per the contract.
            unsafe { cma_read(loc.pid, tb.ptr as usize, dst, n) };
        }
        return;
    }
    let mut packed = vec![0u8; tb.bytes()];
    if loc.direct {
        // SAFETY: per the contract; `packed` has room.
        unsafe { tb.pack_to(packed.as_mut_ptr()) };
    } else {
        let span = tb.l.span(tb.count);
        let mut image = vec![0u8; span.len];
        let start = (tb.ptr as isize).wrapping_add(span.lo) as usize;
        for (off, len) in runs(tb) {
            // SAFETY: inside the image.
            unsafe { cma_read(loc.pid, start + off, image.as_mut_ptr().add(off), len) };
        }
        let view = Buf {
            ptr: image.as_mut_ptr().wrapping_offset(-span.lo),
            ..*tb
        };
        // SAFETY: the image covers the span.
        unsafe { view.pack_to(packed.as_mut_ptr()) };
    }
    // SAFETY: `n ≤ packed.len()`.
    unsafe { crate::dt::copy_disjoint(packed.as_ptr(), dst, n) };
}

/// Cross-memory attach write; a refusal (the kernel allowed it at creation)
/// is reported once, as the real MPI would report a failed transfer.
unsafe fn cma_write(pid: i32, remote: usize, src: *const u8, n: usize) {
    // SAFETY: per the caller's contract.
    if !unsafe { crate::sys::cma::write(pid, remote, src, n) } {
        cma_failed(pid);
    }
}

/// Cross-memory attach read (see [`cma_write`]).
unsafe fn cma_read(pid: i32, remote: usize, dst: *mut u8, n: usize) {
    // SAFETY: per the caller's contract.
    if !unsafe { crate::sys::cma::read(pid, remote, dst, n) } {
        cma_failed(pid);
    }
}

#[cold]
fn cma_failed(pid: i32) {
    crate::eprint_noalloc!(
        "heapmpi: error: one-sided access to process {} failed (process_vm_readv/writev: \
         errno {}): the target address is not mapped there",
        pid,
        crate::sys::errno()
    );
}

/// `MPI_Put`.
///
/// # Safety
/// As `MPI_Put`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn put(
    oaddr: *const c_void,
    ocount: c_int,
    odt: ffi::MPI_Datatype,
    t: c_int,
    disp: ffi::MPI_Aint,
    tcount: c_int,
    tdt: ffi::MPI_Datatype,
    win: ffi::MPI_Win,
) -> c_int {
    crate::profile::data(ocount as i64, odt);
    // SAFETY: the caller's arguments; the real call gets them unchanged.
    outcome(
        unsafe { put_inner(oaddr, ocount, odt, t, disp, tcount, tdt, win) },
        win,
        core::ptr::null_mut(),
        || unsafe { ffi::PMPI_Put(oaddr, ocount, odt, t, disp, tcount, tdt, win) },
    )
}

/// The origin buffer, and the target buffer located in member `t`'s window,
/// of a put or a get (the checks every operation makes first). Always
/// inlined: returned by value, its three descriptors went through memory
/// and the caller's wide load of them stalled on the narrow stores that
/// wrote them (a sampled profile of 64 B puts put most of `put_inner`'s
/// time on that load).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn resolve(
    win: ffi::MPI_Win,
    oaddr: *const c_void,
    ocount: c_int,
    odt: ffi::MPI_Datatype,
    t: c_int,
    disp: ffi::MPI_Aint,
    tcount: c_int,
    tdt: ffi::MPI_Datatype,
) -> Result<(Buf, Buf, Loc), Stop> {
    let (f, t) = begin(win, t)?;
    let o = Buf::new(oaddr, ocount, odt).ok_or(Err(None))?;
    let tb = target_like(tcount, tdt, Some(&o)).ok_or(Err(None))?;
    let loc = locate(f, t, disp, &tb)?;
    Ok((o, at(&tb, &loc), loc))
}

/// [`put`]: `Err(None)` for the real MPI, `Err(Some(class))` to raise.
#[allow(clippy::too_many_arguments)]
#[inline]
unsafe fn put_inner(
    oaddr: *const c_void,
    ocount: c_int,
    odt: ffi::MPI_Datatype,
    t: c_int,
    disp: ffi::MPI_Aint,
    tcount: c_int,
    tdt: ffi::MPI_Datatype,
    win: ffi::MPI_Win,
) -> Stop {
    let (o, tb, loc) = match resolve(win, oaddr, ocount, odt, t, disp, tcount, tdt) {
        Ok(x) => x,
        Err(stop) => return stop,
    };
    let n = o.bytes().min(tb.bytes());
    let mut tmp = Vec::new();
    // SAFETY: the caller's origin buffer; the target memory is the
    // window's (range checked), located in this address space or reached
    // through the kernel.
    unsafe {
        let src = packed(&o, &mut tmp);
        store(&tb, &loc, src, n);
    }
    stats::RMA_PUTS.bump();
    Ok(())
}

/// `MPI_Get`.
///
/// # Safety
/// As `MPI_Get`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn get(
    oaddr: *mut c_void,
    ocount: c_int,
    odt: ffi::MPI_Datatype,
    t: c_int,
    disp: ffi::MPI_Aint,
    tcount: c_int,
    tdt: ffi::MPI_Datatype,
    win: ffi::MPI_Win,
) -> c_int {
    crate::profile::data(ocount as i64, odt);
    // SAFETY: the caller's arguments; the real call gets them unchanged.
    outcome(
        unsafe { get_inner(oaddr, ocount, odt, t, disp, tcount, tdt, win) },
        win,
        core::ptr::null_mut(),
        || unsafe { ffi::PMPI_Get(oaddr, ocount, odt, t, disp, tcount, tdt, win) },
    )
}

/// [`get`]: `Err(None)` for the real MPI, `Err(Some(class))` to raise.
#[allow(clippy::too_many_arguments)]
#[inline]
unsafe fn get_inner(
    oaddr: *mut c_void,
    ocount: c_int,
    odt: ffi::MPI_Datatype,
    t: c_int,
    disp: ffi::MPI_Aint,
    tcount: c_int,
    tdt: ffi::MPI_Datatype,
    win: ffi::MPI_Win,
) -> Stop {
    let (o, tb, loc) = match resolve(
        win,
        oaddr as *const c_void,
        ocount,
        odt,
        t,
        disp,
        tcount,
        tdt,
    ) {
        Ok(x) => x,
        Err(stop) => return stop,
    };
    let n = o.bytes().min(tb.bytes());
    // SAFETY: as in `put_inner`, the other way.
    unsafe {
        if o.d.contig {
            load(&tb, &loc, o.ptr, n);
        } else {
            let mut tmp = vec![0u8; n];
            load(&tb, &loc, tmp.as_mut_ptr(), n);
            o.unpack_from(tmp.as_ptr(), n);
        }
    }
    stats::RMA_GETS.bump();
    Ok(())
}

/// `MPI_Rput`: the put, complete at once, and a completed request.
///
/// # Safety
/// As `MPI_Rput`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn rput(
    oaddr: *const c_void,
    ocount: c_int,
    odt: ffi::MPI_Datatype,
    t: c_int,
    disp: ffi::MPI_Aint,
    tcount: c_int,
    tdt: ffi::MPI_Datatype,
    win: ffi::MPI_Win,
    req: *mut ffi::MPI_Request,
) -> c_int {
    crate::profile::data(ocount as i64, odt);
    // SAFETY: the caller's arguments and request pointer; the real call
    // gets them unchanged.
    outcome(
        unsafe { put_inner(oaddr, ocount, odt, t, disp, tcount, tdt, win) },
        win,
        req,
        || unsafe { ffi::PMPI_Rput(oaddr, ocount, odt, t, disp, tcount, tdt, win, req) },
    )
}

/// `MPI_Rget`.
///
/// # Safety
/// As `MPI_Rget`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn rget(
    oaddr: *mut c_void,
    ocount: c_int,
    odt: ffi::MPI_Datatype,
    t: c_int,
    disp: ffi::MPI_Aint,
    tcount: c_int,
    tdt: ffi::MPI_Datatype,
    win: ffi::MPI_Win,
    req: *mut ffi::MPI_Request,
) -> c_int {
    crate::profile::data(ocount as i64, odt);
    // SAFETY: the caller's arguments and request pointer; the real call
    // gets them unchanged.
    outcome(
        unsafe { get_inner(oaddr, ocount, odt, t, disp, tcount, tdt, win) },
        win,
        req,
        || unsafe { ffi::PMPI_Rget(oaddr, ocount, odt, t, disp, tcount, tdt, win, req) },
    )
}
