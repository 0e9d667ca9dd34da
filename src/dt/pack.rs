//! Packing and unpacking through the real MPI's `MPI_Pack`/`MPI_Unpack`
//! (a derived type heapmpi does not copy as one run of bytes), including
//! the buffers `MPI_Pack` refuses as they come: `MPI_BOTTOM`, and packed
//! sizes of 2 GiB or more (`MPI_Pack_c` where the MPI has it, else groups
//! of whole elements).

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::{extents, Dt};

/// Runs `f` on an equivalent (buffer, count, datatype) triple whose buffer
/// is not null: MPICH's `MPI_Pack`/`MPI_Unpack` refuse `MPI_BOTTOM` (a null
/// buffer with absolute displacements). The triple becomes one element of a
/// temporary struct type holding the `count` elements at displacement
/// `-anchor`, packed from `anchor` (any non-null address): the same bytes.
fn non_null<R>(
    buf: *const u8,
    count: c_int,
    dt: ffi::MPI_Datatype,
    f: impl FnOnce(*const u8, c_int, ffi::MPI_Datatype) -> R,
) -> R {
    if !buf.is_null() || count == 0 {
        return f(buf, count, dt);
    }
    static ANCHOR: u8 = 0;
    let anchor = &ANCHOR as *const u8;
    let disp: ffi::MPI_Aint = (anchor as usize).wrapping_neg() as ffi::MPI_Aint;
    let mut t = dt;
    // SAFETY: a one-block struct type over a valid datatype; freed below.
    unsafe {
        let types = [dt];
        if ffi::PMPI_Type_create_struct(1, &count, &disp, types.as_ptr() as *mut _, &mut t) != 0
            || ffi::PMPI_Type_commit(&mut t) != 0
        {
            return f(buf, count, dt);
        }
    }
    let r = f(anchor, 1, t);
    // SAFETY: the temporary type made above.
    unsafe { ffi::PMPI_Type_free(&mut t) };
    r
}

/// Packs `count` elements of `dt` at `buf` into `out` (room for
/// `packed_size` bytes). Returns false if the real MPI refused (e.g. an
/// uncommitted type).
///
/// # Safety
/// `buf` holds `count` elements of `dt`; `out` has room for `len` bytes.
pub unsafe fn pack(
    buf: *const u8,
    count: c_int,
    dt: ffi::MPI_Datatype,
    out: *mut u8,
    len: usize,
    comm: ffi::MPI_Comm,
) -> bool {
    if len > c_int::MAX as usize {
        // SAFETY: per the contract.
        return unsafe { pack_large(buf, count, dt, out, len, comm) };
    }
    non_null(buf, count, dt, |buf, count, dt| {
        let mut pos: c_int = 0;
        // SAFETY: per the contract (the same bytes as the caller's triple).
        unsafe {
            ffi::PMPI_Pack(
                buf.cast(),
                count,
                dt,
                out.cast(),
                len.min(c_int::MAX as usize) as c_int,
                &mut pos,
                comm,
            ) == 0
        }
    })
}

/// [`pack`] of 2 GiB or more, beyond `MPI_Pack`'s `int` sizes:
/// `MPI_Pack_c` where the MPI has it, else groups of whole elements of
/// less than 2 GiB each (an element of 2 GiB or more then cannot be
/// packed: false).
///
/// # Safety
/// As [`pack`].
unsafe fn pack_large(
    buf: *const u8,
    count: c_int,
    dt: ffi::MPI_Datatype,
    out: *mut u8,
    len: usize,
    comm: ffi::MPI_Comm,
) -> bool {
    #[cfg(heapmpi_mpi4)]
    {
        non_null(buf, count, dt, |buf, count, dt| {
            let mut pos: ffi::MPI_Count = 0;
            // SAFETY: per the contract.
            unsafe {
                ffi::PMPI_Pack_c(
                    buf.cast(),
                    count as ffi::MPI_Count,
                    dt,
                    out.cast(),
                    len as ffi::MPI_Count,
                    &mut pos,
                    comm,
                ) == 0
            }
        })
    }
    #[cfg(not(heapmpi_mpi4))]
    {
        in_groups(buf, count, dt, len, |b, n, off| {
            let mut pos: c_int = 0;
            // SAFETY: `n` whole elements at `b` (within the caller's
            // buffer) into their place in `out`, less than 2 GiB.
            unsafe {
                ffi::PMPI_Pack(
                    b.cast(),
                    n,
                    dt,
                    out.add(off).cast(),
                    n * size_of(len, count),
                    &mut pos,
                    comm,
                ) == 0
            }
        })
    }
}

/// The packed size of one of `count` elements taking `len` bytes, as the
/// `int` a group's size is made of (less than 2 GiB per element, checked
/// by [`in_groups`] before any group runs).
#[cfg_attr(heapmpi_mpi4, allow(dead_code))]
fn size_of(len: usize, count: c_int) -> c_int {
    (len / count.max(1) as usize) as c_int
}

/// Runs `f(address, elements, packed offset)` over groups of whole
/// elements of `count` elements of `dt` at `buf` (`len` packed bytes in
/// all), each group less than 2 GiB packed; false if `f` fails, an element
/// alone is 2 GiB or more, or the buffer is `MPI_BOTTOM`.
#[cfg_attr(heapmpi_mpi4, allow(dead_code))]
fn in_groups(
    buf: *const u8,
    count: c_int,
    dt: ffi::MPI_Datatype,
    len: usize,
    mut f: impl FnMut(*const u8, c_int, usize) -> bool,
) -> bool {
    if count <= 0 || buf.is_null() {
        return count <= 0;
    }
    let size = len / count as usize;
    if size == 0 || size > c_int::MAX as usize {
        return false;
    }
    let (_, ext, _, _) = extents(dt);
    let per = (c_int::MAX as usize / size).max(1);
    let mut i = 0usize;
    while i < count as usize {
        let n = per.min(count as usize - i);
        // The cast is needed where MPI_Aint is `long` (MPICH).
        #[allow(clippy::unnecessary_cast)]
        let b = buf.wrapping_offset((i as isize).wrapping_mul(ext as isize));
        if !f(b, n as c_int, i * size) {
            return false;
        }
        i += n;
    }
    true
}

/// Unpacks the first `len` packed bytes at `src` into `count` elements of
/// `dt` at `buf`, `len ≤ count * size`. A trailing partial element updates
/// only the bytes the message carries: the element is packed from the
/// buffer, overwritten with the message's prefix, and unpacked back.
///
/// # Safety
/// `src` holds `len` readable bytes; `buf` holds `count` elements of `dt`.
pub unsafe fn unpack_prefix(
    src: *const u8,
    len: usize,
    buf: *mut u8,
    count: c_int,
    dt: ffi::MPI_Datatype,
    d: &Dt,
    comm: ffi::MPI_Comm,
) {
    if d.size == 0 || len == 0 {
        return;
    }
    let full = (len / d.size).min(count as usize);
    let rem = len - full * d.size;
    let mut pos: c_int = 0;
    // SAFETY: per the contract; `full * size ≤ len` bytes are read.
    unsafe {
        if full > 0 && full * d.size > c_int::MAX as usize {
            unpack_large(src, full * d.size, buf, full as c_int, dt, comm);
        } else if full > 0 {
            non_null(buf, full as c_int, dt, |b, c, t| {
                ffi::PMPI_Unpack(
                    src.cast(),
                    len.min(c_int::MAX as usize) as c_int,
                    &mut pos,
                    b as *mut c_void,
                    c,
                    t,
                    comm,
                )
            });
        }
        if rem > 0 && full < count as usize {
            let (_, ext, _, _) = extents(dt);
            // The cast is needed where MPI_Aint is `long` (MPICH).
            #[allow(clippy::unnecessary_cast)]
            let elem = buf.wrapping_offset((full as isize).wrapping_mul(ext as isize));
            let mut tmp = vec![0u8; d.size];
            pack(elem, 1, dt, tmp.as_mut_ptr(), d.size, comm);
            core::ptr::copy_nonoverlapping(src.add(full * d.size), tmp.as_mut_ptr(), rem);
            let mut p2: c_int = 0;
            non_null(elem, 1, dt, |b, c, t| {
                ffi::PMPI_Unpack(
                    tmp.as_ptr().cast(),
                    d.size as c_int,
                    &mut p2,
                    b as *mut c_void,
                    c,
                    t,
                    comm,
                )
            });
        }
    }
}

/// Unpacks `len` bytes at `src`, exactly `count` elements of `dt`, into
/// `buf`, beyond `MPI_Unpack`'s `int` sizes: `MPI_Unpack_c` where the MPI
/// has it, else groups of whole elements (as [`pack_large`]).
///
/// # Safety
/// `src` holds `len` bytes; `buf` holds `count` elements of `dt`.
unsafe fn unpack_large(
    src: *const u8,
    len: usize,
    buf: *mut u8,
    count: c_int,
    dt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) {
    #[cfg(heapmpi_mpi4)]
    non_null(buf, count, dt, |b, c, t| {
        let mut pos: ffi::MPI_Count = 0;
        // SAFETY: per the contract.
        unsafe {
            ffi::PMPI_Unpack_c(
                src.cast(),
                len as ffi::MPI_Count,
                &mut pos,
                b as *mut c_void,
                c as ffi::MPI_Count,
                t,
                comm,
            )
        }
    });
    #[cfg(not(heapmpi_mpi4))]
    in_groups(buf, count, dt, len, |b, n, off| {
        let mut pos: c_int = 0;
        // SAFETY: the packed bytes of `n` whole elements at `off`, into
        // their place in the caller's buffer; less than 2 GiB.
        unsafe {
            ffi::PMPI_Unpack(
                src.add(off).cast(),
                n * size_of(len, count),
                &mut pos,
                b as *mut c_void,
                n,
                dt,
                comm,
            ) == 0
        }
    });
}
