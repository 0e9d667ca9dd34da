//! Applying an accumulate's plan to the target's elements, element-wise
//! atomic (MPI-4.0 §12.7.1): an aligned 4- or 8-byte integer element in
//! the shared heap by one hardware atomic or a compare-and-swap loop on
//! the word ([`hw_apply`]); anything else under the target's accumulate
//! lock ([`AccLock`]), the reducer applied in place or to a copy read and
//! written back ([`soft`]). A derived target datatype is walked element by
//! element ([`elem_offsets`]).

use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};

use mpi_sys as ffi;

use super::super::access::{at, load, locate, packed, runs, store, Loc, Stop};
use super::super::state::Fast;
use super::plan::{elem_buf, Acc, Plan};
use crate::comm::node::wait_until;
use crate::dt::Buf;
use crate::heap;
use crate::op::{self, Elem, Pre};

/// The target's accumulate lock, held for the scope.
pub(super) struct AccLock<'a>(&'a AtomicU32);

impl<'a> AccLock<'a> {
    pub(super) fn take(f: &'a Fast, t: usize) -> AccLock<'a> {
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
pub(super) unsafe fn run(
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

/// Applies the plan in software to `tb` (at `loc`): its old values (to
/// `old`, when given), then the operation with the `bytes` packed operands
/// at `src`. A dense target in this address space is updated in place (the
/// reduction kernels vectorise); any other is read, updated and written
/// back.
///
/// # Safety
/// The caller holds the target's accumulate lock; `src` and `old` hold
/// `bytes` bytes; `tb` is inside the window.
unsafe fn soft(pl: &Plan, tb: &Buf, loc: &Loc, src: *const u8, old: Option<*mut u8>, bytes: usize) {
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
