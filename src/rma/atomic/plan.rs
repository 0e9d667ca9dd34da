//! What an accumulate does ([`Plan`]): its operation on the basic type of
//! the target datatype, whether hardware atomics apply to that element
//! kind, and the reducer for software; remembered for the last predefined
//! pair (a loop of fetch-and-ops asks for the same plan every time). A
//! pair the standard does not list goes by what the real MPI accepts
//! (`op::real_accepts`, [`super::super::oracle`]).

use mpi_sys as ffi;

use super::super::oracle;
use crate::dt::{self, Buf};
use crate::op::{self, Elem, Pre};
use crate::raw::RawHandle;

/// What an accumulate does to each element.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Acc {
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
pub(super) struct Plan {
    pub(super) acc: Acc,
    pub(super) base: ffi::MPI_Datatype,
    /// Bytes of one element's data (`MPI_Type_size` of `base`).
    pub(super) size: usize,
    /// Extent of one element: larger than `size` for the pairs with
    /// padding (`MPI_DOUBLE_INT`, `MPI_LONG_DOUBLE_INT`, ...), whose packed
    /// elements are therefore not laid out as the reducer expects.
    pub(super) ext: usize,
    /// The element, when hardware atomics apply to its kind and operation.
    pub(super) hw: Option<Elem>,
    /// For a predefined operation in software.
    pub(super) reducer: Option<op::Reducer>,
}

/// The plan of `op` on elements of `tdt`, or `None` for the real MPI (an
/// operation not allowed here, a type not built from one predefined type,
/// a pair heapmpi leaves to the real MPI).
pub(super) fn plan(op: ffi::MPI_Op, tdt: ffi::MPI_Datatype, fetch: bool) -> Option<Plan> {
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

/// A buffer of the plan's basic type (address and count to fill in).
pub(super) fn elem_buf(pl: &Plan) -> Buf {
    let l = dt::layout(pl.base).expect("the plan's type has a layout");
    Buf {
        ptr: core::ptr::null_mut(),
        count: 1,
        dt: pl.base,
        d: l.d,
        l,
    }
}
