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

use core::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};

use mpi_sys as ffi;

use super::access::{at, begin, load, locate, packed, runs, store, target, Stop};
use super::oracle;
use super::outcome;
use super::window::Fast;
use crate::comm::node::wait_until;
use crate::dt::{self, Buf};
use crate::heap;
use crate::op::{self, Class, Elem, Pre};
use crate::raw::RawHandle;
use crate::stats;

/// What an accumulate does to each element.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Acc {
    /// `MPI_REPLACE`.
    Replace,
    /// `MPI_NO_OP` (fetch only).
    NoOp,
    /// A predefined operation.
    Pre(Pre),
}

/// The operation and element type of an accumulate heapmpi takes: the
/// basic type of the target datatype, its kernel element (for hardware
/// atomics) and the reducer for software.
#[derive(Clone, Copy)]
struct Plan {
    acc: Acc,
    base: ffi::MPI_Datatype,
    /// Bytes of one element's data (`MPI_Type_size` of `base`).
    size: usize,
    /// Extent of one element: larger than `size` for the pairs with
    /// padding (`MPI_DOUBLE_INT`, `MPI_LONG_DOUBLE_INT`, ...), whose packed
    /// elements are therefore not laid out as the reducer expects.
    ext: usize,
    /// The element, when hardware atomics apply to its kind and operation.
    hw: Option<Elem>,
    /// For a predefined operation in software.
    reducer: Option<op::Reducer>,
}

/// The plan of `op` on elements of `tdt`, or `None` for the real MPI (an
/// operation not allowed here, a type not built from one predefined type,
/// a pair heapmpi leaves to the real MPI).
fn plan(op: ffi::MPI_Op, tdt: ffi::MPI_Datatype, fetch: bool) -> Option<Plan> {
    let key = (op.0.to_bits(), tdt.0.to_bits(), fetch);
    if let Some(p) =
        OWNER_LAST_PLAN.with(&LAST_PLAN, |c| c.get().filter(|e| e.0 == key).map(|e| e.1))
    {
        return Some(p);
    }
    let tl = dt::layout(tdt)?;
    let p = make_plan(op, tdt, &tl, fetch)?;
    // Only predefined types and operations are remembered: their handles
    // never change meaning (a derived type's may, once freed).
    if tl.d.named {
        OWNER_LAST_PLAN.with(&LAST_PLAN, |c| c.set(Some((key, p))));
    }
    Some(p)
}

/// (operation, type, fetch) handle bits, and the plan made for them.
type PlanEntry = ((usize, usize, bool), Plan);

thread_local! {
    /// The last plan made for a predefined type: a loop of fetch-and-ops
    /// asks for the same one every time.
    static LAST_PLAN: core::cell::Cell<Option<PlanEntry>> = const { core::cell::Cell::new(None) };
}

/// The owner thread's [`LAST_PLAN`] (`crate::sys::tls`: no `__tls_get_addr`
/// on the thread that makes the calls).
static OWNER_LAST_PLAN: crate::sys::tls::Owned<core::cell::Cell<Option<PlanEntry>>> =
    crate::sys::tls::Owned::new(core::cell::Cell::new(None));

/// [`plan`], made.
fn make_plan(
    op: ffi::MPI_Op,
    tdt: ffi::MPI_Datatype,
    tl: &dt::Layout,
    fetch: bool,
) -> Option<Plan> {
    let tl = *tl;
    let base = if tl.d.named { tdt } else { dt::base_type(tdt)? };
    let l = if tl.d.named { tl } else { dt::layout(base)? };
    let class = op::class_of(base);
    // A predefined operation on a pair the standard lists, or one the MPI
    // underneath accepts all the same (then applied by its own
    // `MPI_Reduce_local`): inside heapmpi's epoch the real MPI could not
    // take the call.
    let mut listed = true;
    let mut by_oracle = false;
    let acc = if op == op::replace() {
        Acc::Replace
    } else if op == op::no_op() {
        if !fetch {
            return None;
        }
        Acc::NoOp
    } else {
        let p = op::predefined(op)?;
        listed = class.is_some_and(|c| op::valid(p, c.0));
        if !listed && !op::real_accepts(op, base) {
            if !oracle::accepts(op, base) {
                return None;
            }
            by_oracle = true;
        }
        Acc::Pre(p)
    };
    let elem = class
        .and_then(|c| c.1)
        .filter(|e| listed && e.size() == l.extent);
    // Floating point goes through the target's lock, whatever the
    // operation: a compare-and-swap loop per element ran large accumulates
    // at 1.4 GB/s (1 MiB of doubles in 737 µs, stock Open MPI 20 µs),
    // where the locked, vectorised kernel streams; one element costs the
    // same either way (a lock taken instead of one compare-and-swap).
    let hw = match (acc, elem) {
        (Acc::Pre(Pre::Maxloc | Pre::Minloc), _) | (_, Some(Elem::F32 | Elem::F64)) => None,
        (_, e) => e,
    };
    // Also with hardware atomics: a misaligned element goes through the
    // lock.
    let reducer = match acc {
        Acc::Pre(_) if listed => Some(op::Reducer::new(op, base, &l)?),
        Acc::Pre(_) if by_oracle => Some(op::Reducer::by_fn(op, base, &l, oracle::apply)),
        Acc::Pre(_) => Some(op::Reducer::by_real(op, base, &l)),
        _ => None,
    };
    Some(Plan {
        acc,
        base,
        size: l.d.size,
        ext: l.extent,
        hw,
        reducer,
    })
}

/// The target's accumulate lock, held for the scope.
struct AccLock<'a>(&'a AtomicU32);

impl<'a> AccLock<'a> {
    fn take(f: &'a Fast, t: usize) -> AccLock<'a> {
        let l = f.acc_lock(t);
        // Acquire: the previous holder's writes (Release below) happen
        // before ours.
        wait_until(|| {
            l.compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
                .ok()
        });
        AccLock(l)
    }
}

impl Drop for AccLock<'_> {
    fn drop(&mut self) {
        // Release: our writes happen before the next holder's reads.
        self.0.store(0, Ordering::Release);
    }
}

/// One atomic read-modify-write of an integer word: the new value from
/// the old and the operand.
macro_rules! int_rmw {
    ($atomic:ty, $t:ty, $p:expr, $v:expr, $acc:expr) => {{
        // SAFETY (caller): `$p` is an aligned word in the shared heap.
        let a = unsafe { &*($p as *const $atomic) };
        let v: $t = $v;
        // AcqRel (all below): an accumulate orders nothing by itself (the
        // synchronisation calls do), but the result of a fetching one is
        // used as a value read from memory; on x86 every locked operation is
        // a full barrier anyway.
        match $acc {
            Acc::Replace => a.swap(v, Ordering::AcqRel),
            Acc::NoOp => a.load(Ordering::Acquire),
            Acc::Pre(Pre::Sum) => a.fetch_add(v, Ordering::AcqRel),
            Acc::Pre(Pre::Band) => a.fetch_and(v, Ordering::AcqRel),
            Acc::Pre(Pre::Bor) => a.fetch_or(v, Ordering::AcqRel),
            Acc::Pre(Pre::Bxor) => a.fetch_xor(v, Ordering::AcqRel),
            Acc::Pre(Pre::Max) => a.fetch_max(v, Ordering::AcqRel),
            Acc::Pre(Pre::Min) => a.fetch_min(v, Ordering::AcqRel),
            Acc::Pre(p) => {
                let f = |x: $t| -> $t {
                    match p {
                        Pre::Prod => x.wrapping_mul(v),
                        Pre::Land => ((x != 0) && (v != 0)) as $t,
                        Pre::Lor => ((x != 0) || (v != 0)) as $t,
                        Pre::Lxor => ((x != 0) != (v != 0)) as $t,
                        _ => unreachable!("no other operation applies to integers"),
                    }
                };
                match a.fetch_update(Ordering::AcqRel, Ordering::Acquire, |x| Some(f(x))) {
                    Ok(x) | Err(x) => x,
                }
            }
        }
    }};
}

/// Applies `acc` with operand `*v` to the element at `p` atomically; writes
/// its old value to `old`.
///
/// # Safety
/// `p` is an aligned element of kind `e` in the shared heap; `v` and `old`
/// hold one element each (unaligned).
unsafe fn hw_apply(e: Elem, acc: Acc, p: *mut u8, v: *const u8, old: *mut u8) {
    /// One kind: read the operand, apply, write the old value.
    macro_rules! kind {
        ($rmw:ident, $atomic:ty, $t:ty) => {{
            // SAFETY: per the contract (unaligned operand).
            let x = unsafe { (v as *const $t).read_unaligned() };
            let r = $rmw!($atomic, $t, p, x, acc);
            // SAFETY: per the contract (unaligned result).
            unsafe { (old as *mut $t).write_unaligned(r) };
        }};
    }
    match e {
        Elem::I32 => kind!(int_rmw, AtomicI32, i32),
        Elem::U32 => kind!(int_rmw, AtomicU32, u32),
        Elem::I64 => kind!(int_rmw, AtomicI64, i64),
        Elem::U64 => kind!(int_rmw, AtomicU64, u64),
        Elem::F32 | Elem::F64 => unreachable!("floating point goes through the target's lock"),
    }
}

/// The offsets (from the buffer address) of the elements of `size` bytes
/// of `tb`, a derived datatype, in type-map order.
fn elem_offsets(tb: &Buf, size: usize) -> Vec<isize> {
    let n = tb.bytes() / size;
    // Element i of the packed stream carries i + 1 in its first 4 bytes
    // (elements handled here have 4 or 8).
    let mut stream = vec![0u8; n * size];
    for i in 0..n {
        stream[i * size..i * size + 4].copy_from_slice(&(i as u32 + 1).to_le_bytes());
    }
    let span = tb.l.span(tb.count);
    let mut image = vec![0u8; span.len];
    let view = Buf {
        ptr: image.as_mut_ptr().wrapping_offset(-span.lo),
        ..*tb
    };
    // SAFETY: the image covers the span of the elements.
    unsafe { view.unpack_from(stream.as_ptr(), stream.len()) };
    let mut out = vec![0isize; n];
    for (off, len) in runs(tb) {
        for k in (0..len).step_by(size) {
            let pos = off + k;
            let mut b = [0u8; 4];
            b.copy_from_slice(&image[pos..pos + 4]);
            let i = u32::from_le_bytes(b) as usize;
            if (1..=n).contains(&i) {
                out[i - 1] = span.lo + pos as isize;
            }
        }
    }
    out
}

/// The accumulate family: applies `acc` of `origin` (packed elements,
/// absent for `MPI_NO_OP`) to target buffer `tb` of member `t`, at `disp`;
/// the old values, packed, go to `result` when given.
///
/// # Safety
/// The buffers hold their elements.
unsafe fn run(
    f: &Fast,
    t: usize,
    disp: ffi::MPI_Aint,
    tb: &Buf,
    pl: &Plan,
    origin: Option<&Buf>,
    result: Option<&Buf>,
) -> Stop {
    let loc = match locate(f, t, disp, tb) {
        Ok(l) => l,
        Err(stop) => return stop,
    };
    let tb = at(tb, &loc);
    let n = tb.bytes() / pl.size.max(1);
    let bytes = n * pl.size;
    let mut otmp = Vec::new();
    let mut full = Vec::new();
    // The operands, packed: the origin's, or zeros for MPI_NO_OP.
    let src: *const u8 = match origin {
        Some(o) if o.bytes() >= bytes => {
            // SAFETY: per the contract.
            unsafe { packed(o, &mut otmp) }
        }
        Some(o) => {
            // A shorter origin (erroneous): its bytes, then zeros.
            full.resize(bytes, 0);
            // SAFETY: per the contract; `full` has room for the origin.
            unsafe {
                core::ptr::copy_nonoverlapping(packed(o, &mut otmp), full.as_mut_ptr(), o.bytes())
            };
            full.as_ptr()
        }
        None => {
            full.resize(bytes, 0);
            full.as_ptr()
        }
    };
    // The old values, when fetched: on the stack for a few elements
    // (fetch-and-op); without a result, one element's room, reused.
    let mut small = [0u64; 8];
    let mut big = Vec::new();
    let (old, stride): (*mut u8, usize) = if result.is_none() || bytes <= 64 {
        (
            small.as_mut_ptr().cast(),
            if result.is_some() { pl.size } else { 0 },
        )
    } else {
        big.resize(bytes, 0u8);
        (big.as_mut_ptr(), pl.size)
    };
    let span = tb.l.span(tb.count);
    let start = (tb.ptr as isize).wrapping_add(span.lo) as *const u8;
    let shared = heap::in_region(start, span.len);
    match pl.hw.filter(|_| shared) {
        Some(e) => {
            let offsets = (!tb.d.contig).then(|| elem_offsets(&tb, pl.size));
            for i in 0..n {
                let off = offsets.as_ref().map_or((i * pl.size) as isize, |o| o[i]);
                let p = tb.ptr.wrapping_offset(off);
                // SAFETY: element `i` of the operands and results.
                let (v, o) = unsafe { (src.add(i * pl.size), old.add(i * stride)) };
                if (p as usize) % pl.size == 0 {
                    // SAFETY: an aligned element in the heap, inside the
                    // window (range checked).
                    unsafe { hw_apply(e, pl.acc, p, v, o) };
                } else {
                    let one = Buf {
                        ptr: p,
                        count: 1,
                        ..elem_buf(pl)
                    };
                    let _g = AccLock::take(f, t);
                    // SAFETY: as above, one element under the lock.
                    unsafe { soft(pl, &one, &loc, v, Some(o), pl.size) };
                }
            }
        }
        None => {
            let _g = AccLock::take(f, t);
            let keep = result.is_some().then_some(old);
            // SAFETY: per the contract, under the target's lock.
            unsafe { soft(pl, &tb, &loc, src, keep, bytes) };
        }
    }
    if let Some(r) = result {
        // SAFETY: the result buffer holds its elements.
        unsafe { r.unpack_from(old, bytes) };
    }
    Ok(())
}

/// A buffer of the plan's basic type (address and count to fill in).
fn elem_buf(pl: &Plan) -> Buf {
    let l = dt::layout(pl.base).expect("the plan's type has a layout");
    Buf {
        ptr: core::ptr::null_mut(),
        count: 1,
        dt: pl.base,
        d: l.d,
        l,
    }
}

/// Applies the plan in software to `tb` (at `loc`): its old values (to
/// `old`, when given), then the operation with the `bytes` packed operands
/// at `src`. A dense target in this address space is updated in place (the
/// reduction kernels vectorise); any other is read, updated and written
/// back.
///
/// # Safety
/// The caller holds the target's accumulate lock; `src` and `old` hold
/// `bytes` bytes; `tb` is inside the window.
unsafe fn soft(
    pl: &Plan,
    tb: &Buf,
    loc: &super::access::Loc,
    src: *const u8,
    old: Option<*mut u8>,
    bytes: usize,
) {
    let n = bytes / pl.size.max(1);
    // SAFETY (all below): per the contract.
    if loc.direct && tb.d.contig {
        unsafe {
            if let Some(o) = old {
                core::ptr::copy_nonoverlapping(tb.ptr, o, bytes);
            }
            match (pl.acc, &pl.reducer) {
                (Acc::Replace, _) => core::ptr::copy(src, tb.ptr, bytes),
                (Acc::Pre(_), Some(r)) => r.apply(src, tb.ptr, n),
                _ => {}
            }
        }
        return;
    }
    let mut cur = vec![0u8; bytes];
    // SAFETY: per the contract; `cur` holds `bytes` bytes.
    unsafe {
        load(tb, loc, cur.as_mut_ptr(), bytes);
        if let Some(o) = old {
            core::ptr::copy_nonoverlapping(cur.as_ptr(), o, bytes);
        }
        match (pl.acc, &pl.reducer) {
            (Acc::Replace, _) => store(tb, loc, src, bytes),
            (Acc::Pre(_), Some(r)) => {
                reduce_packed(pl, r, src, cur.as_mut_ptr(), n);
                store(tb, loc, cur.as_ptr(), bytes);
            }
            _ => {}
        }
    }
}

/// `cur = src op cur` on `n` packed elements of the plan's basic type.
/// The reducer works on elements laid out at their extent, which packed
/// elements are only when the type has no padding: a pair such as
/// `MPI_LONG_DOUBLE_INT` (20 bytes of data, extent 32) is unpacked into
/// its native layout on both sides first and the result packed back.
///
/// # Safety
/// `src` and `cur` hold `n` packed elements each.
unsafe fn reduce_packed(pl: &Plan, r: &op::Reducer, src: *const u8, cur: *mut u8, n: usize) {
    if pl.size == pl.ext {
        // SAFETY: per the contract; packed is native here.
        unsafe { r.apply(src, cur, n) };
        return;
    }
    let bytes = n * pl.size;
    let mut a = vec![0u8; n * pl.ext];
    let mut b = vec![0u8; n * pl.ext];
    let native = |p: &mut Vec<u8>| Buf {
        ptr: p.as_mut_ptr(),
        count: n,
        ..elem_buf(pl)
    };
    let (na, nb) = (native(&mut a), native(&mut b));
    // SAFETY: `a` and `b` hold `n` elements at their extent; `src` and
    // `cur` hold `bytes` packed bytes (the contract).
    unsafe {
        na.unpack_from(src, bytes);
        nb.unpack_from(cur, bytes);
        r.apply(na.ptr, nb.ptr, n);
        nb.pack_to(cur);
    }
}

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
                // AcqRel: see `int_rmw`.
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
                // AcqRel: see `int_rmw`.
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
