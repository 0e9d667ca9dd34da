//! Which derived datatypes are one contiguous run of bytes after all: a
//! struct, vector or contiguous type whose blocks abut in type-map order.
//! That is how BigMPI (Hammond, Schäfer and Latham, "To INT_MAX... and
//! beyond!", ExaMPI 2014) and the codes that followed it describe a
//! message of more than `INT_MAX` elements: a struct of a contiguous type
//! of `INT_MAX`-element chunks and a contiguous remainder. Such a message
//! moves as the bytes it is, with `memcpy`, not through `MPI_Pack`, whose
//! `int` sizes stop at 2 GiB (and which would cost a staging copy).
//!
//! Decoded with `MPI_Type_get_envelope`/`MPI_Type_get_contents` (MPI-4.0
//! §5.1.13): the constructors' arguments come as integers then addresses,
//! or, for a type built with the large-count constructors, as large
//! counts in the same order. The combiners' values differ between MPIs;
//! they are learned at init by building one type of each kind.

use core::ffi::c_int;
use std::sync::atomic::{AtomicI32, Ordering};

use mpi_sys as ffi;

use super::{contents, envelope, extents, free_if_derived, CONTIGUOUS, NAMED};

/// Combiners this analysis follows besides `NAMED` and `CONTIGUOUS` (the
/// parent's; learned at init; `i32::MIN` until then, which no type has). Written once at init, before any
/// communication: Relaxed is enough (MPI_Init synchronises).
static DUP: AtomicI32 = AtomicI32::new(i32::MIN);
static VECTOR: AtomicI32 = AtomicI32::new(i32::MIN);
static HVECTOR: AtomicI32 = AtomicI32::new(i32::MIN);
static STRUCT: AtomicI32 = AtomicI32::new(i32::MIN);
static RESIZED: AtomicI32 = AtomicI32::new(i32::MIN);
static SUBARRAY: AtomicI32 = AtomicI32::new(i32::MIN);

/// The constructors [`super::plan`] follows, by combiner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Named,
    Dup,
    Contiguous,
    Vector,
    Hvector,
    Struct,
    Resized,
    Subarray,
    Other,
}

/// The constructor of a datatype whose combiner is `comb`.
pub(super) fn kind(comb: c_int) -> Kind {
    let is = |c: &AtomicI32| comb == c.load(Ordering::Relaxed);
    if is(&NAMED) {
        Kind::Named
    } else if is(&DUP) {
        Kind::Dup
    } else if is(&CONTIGUOUS) {
        Kind::Contiguous
    } else if is(&VECTOR) {
        Kind::Vector
    } else if is(&HVECTOR) {
        Kind::Hvector
    } else if is(&STRUCT) {
        Kind::Struct
    } else if is(&RESIZED) {
        Kind::Resized
    } else if is(&SUBARRAY) {
        Kind::Subarray
    } else {
        Kind::Other
    }
}

/// Whether `comb` is `MPI_COMBINER_DUP`.
pub(super) fn is_dup(comb: c_int) -> bool {
    comb == DUP.load(Ordering::Relaxed)
}

/// How deep [`single_run`] follows nested types, and how many blocks of
/// a struct it reads: beyond, it answers `None` (the type is packed).
const DEPTH: u32 = 8;
const MAX_BLOCKS: i64 = 256;

/// Learns the combiners' values, building one type of each kind (from
/// `MPI_INT32_T`) and freeing it.
pub(super) fn learn() {
    let learn_one = |slot: &AtomicI32, make: &dyn Fn(*mut ffi::MPI_Datatype) -> c_int| {
        // SAFETY: reading an MPI constant.
        let mut t = unsafe { ffi::RSMPI_DATATYPE_NULL };
        if make(&mut t) != 0 {
            return;
        }
        if let Some(e) = envelope(t) {
            slot.store(e.comb, Ordering::Relaxed);
        }
        // SAFETY: the type just made, ours.
        unsafe { ffi::PMPI_Type_free(&mut t) };
    };
    // SAFETY (each closure): a predefined base type, valid arguments and
    // an out-pointer for the new type.
    let int = unsafe { ffi::RSMPI_INT32_T };
    learn_one(&DUP, &|t| unsafe { ffi::PMPI_Type_dup(int, t) });
    learn_one(&VECTOR, &|t| unsafe {
        ffi::PMPI_Type_vector(2, 1, 2, int, t)
    });
    learn_one(&HVECTOR, &|t| unsafe {
        ffi::PMPI_Type_create_hvector(2, 1, 8, int, t)
    });
    learn_one(&STRUCT, &|t| {
        let (bl, disp, types) = ([1 as c_int], [0 as ffi::MPI_Aint], [int]);
        unsafe { ffi::PMPI_Type_create_struct(1, bl.as_ptr(), disp.as_ptr(), types.as_ptr(), t) }
    });
    learn_one(&RESIZED, &|t| unsafe {
        ffi::PMPI_Type_create_resized(int, 0, 8, t)
    });
    learn_one(&SUBARRAY, &|t| {
        let (sizes, subsizes, starts) = ([4 as c_int, 4], [2 as c_int, 2], [1 as c_int, 1]);
        // The cast: the constant's type differs between MPIs' bindings.
        #[allow(clippy::unnecessary_cast)]
        let order = ffi::MPI_ORDER_C as c_int;
        unsafe {
            ffi::PMPI_Type_create_subarray(
                2,
                sizes.as_ptr(),
                subsizes.as_ptr(),
                starts.as_ptr(),
                order,
                int,
                t,
            )
        }
    });
}

/// One element of `dt`, if its type map is one run of bytes in increasing
/// order: `(offset, length)` from the buffer address (length 0 for a type
/// without data). `None` for anything else, or beyond what is followed.
pub(super) fn single_run(dt: ffi::MPI_Datatype) -> Option<(i64, i64)> {
    run(dt, DEPTH)
}

/// The size of a predefined datatype without holes (not MPI_DOUBLE_INT's
/// kind): one run of bytes from its address. `None` for one with holes.
pub(super) fn dense_named(dt: ffi::MPI_Datatype) -> Option<i64> {
    let mut size: ffi::MPI_Count = 0;
    // SAFETY: a valid datatype, an out-pointer.
    if unsafe { ffi::PMPI_Type_size_x(dt, &mut size) } != 0 {
        return None;
    }
    let (lb, ext, tlb, text) = extents(dt);
    // The casts are needed where MPI_Aint or MPI_Count is not `i64`.
    #[allow(clippy::unnecessary_cast)]
    let dense = lb == 0 && tlb == 0 && ext as i64 == size as i64 && text == ext;
    #[allow(clippy::unnecessary_cast)]
    dense.then_some(size as i64)
}

fn run(dt: ffi::MPI_Datatype, depth: u32) -> Option<(i64, i64)> {
    let env = envelope(dt)?;
    let comb = env.comb;
    let is = |c: &AtomicI32| comb == c.load(Ordering::Relaxed);
    if comb == NAMED.load(Ordering::Relaxed) {
        return dense_named(dt).map(|size| (0, size));
    }
    if depth == 0 {
        return None;
    }
    let known = [&DUP, &CONTIGUOUS, &VECTOR, &HVECTOR, &STRUCT, &RESIZED];
    if !known.iter().any(|c| is(c)) {
        return None;
    }
    let c = contents(dt, &env)?;
    let r = (|| {
        // The arguments in the constructor's order: integers then
        // addresses, or the large counts.
        let v = &c.values;
        let base = |i: usize| -> Option<(i64, i64, i64)> {
            let t = *c.types.get(i)?;
            let (o, l) = run(t, depth - 1)?;
            let (_, ext, _, _) = extents(t);
            // The cast is needed where MPI_Aint is not `i64`.
            #[allow(clippy::unnecessary_cast)]
            Some((o, l, ext as i64))
        };
        // `n` copies of a base of run (o, l) and extent `ext`, one after
        // another: one run if they abut.
        let repeat = |n: i64, (o, l, ext): (i64, i64, i64)| -> Option<(i64, i64)> {
            if n <= 0 || l == 0 {
                return Some((0, 0));
            }
            (n == 1 || l == ext).then_some((o, n.checked_mul(l)?))
        };
        if is(&DUP) || is(&RESIZED) {
            // Neither changes the type map (a resized type's extent, which
            // places the next element, is the caller's to check).
            let (o, l, _) = base(0)?;
            Some((o, l))
        } else if is(&CONTIGUOUS) {
            repeat(*v.first()?, base(0)?)
        } else if is(&VECTOR) || is(&HVECTOR) {
            let (n, bl, stride) = (*v.first()?, *v.get(1)?, *v.get(2)?);
            let b = base(0)?;
            let block = repeat(bl, b)?;
            if n <= 1 || block.1 == 0 {
                return repeat(n.min(1), (block.0, block.1, 0));
            }
            let stride_bytes = if is(&VECTOR) {
                stride.checked_mul(b.2)?
            } else {
                stride
            };
            (stride_bytes == block.1).then_some((block.0, n.checked_mul(block.1)?))
        } else {
            // STRUCT: count, block lengths, displacements.
            let n = *v.first()?;
            if !(0..=MAX_BLOCKS).contains(&n) {
                return None;
            }
            let n = n as usize;
            let mut cur: Option<(i64, i64)> = None;
            for i in 0..n {
                let (bl, disp) = (*v.get(1 + i)?, *v.get(1 + n + i)?);
                let (o, l) = repeat(bl, base(i)?)?;
                if l == 0 {
                    continue;
                }
                let start = disp.checked_add(o)?;
                cur = match cur {
                    None => Some((start, l)),
                    Some((s, len)) if s.checked_add(len)? == start => Some((s, len + l)),
                    Some(_) => return None,
                };
            }
            Some(cur.unwrap_or((0, 0)))
        }
    })();
    c.types.into_iter().for_each(free_if_derived);
    r
}
