//! heapmpi's own `MPI_Request` and `MPI_Message` handles.
//!
//! A request that heapmpi serves itself must look like an MPI handle to the
//! program, yet never be mistaken for one of the real MPI's (and never reach
//! it). Both MPIs are covered by encoding a slot index into a value the real
//! MPI can never produce:
//!
//! - Open MPI's handles are pointers to its objects. heapmpi reserves an
//!   address range with `PROT_NONE` and hands out addresses inside it; no
//!   Open MPI object can live there, and nothing ever dereferences them.
//! - MPICH's handles are `int`s whose two top bits give the handle kind
//!   (0 = invalid, never issued for live objects; `MPI_REQUEST_NULL` and
//!   `MPI_MESSAGE_NULL` are `0x2c000000`). heapmpi uses `0x1a000000 | index`
//!   (`0x1b000000 | index` for messages) with a 24-bit index, inside the "invalid" kind and away from the nulls.

use core::ffi::c_int;
use std::sync::OnceLock;

use mpi_sys as ffi;

/// Largest number of live heapmpi handles of one kind (24 bits for MPICH).
pub const MAX_SLOTS: usize = 1 << 24;

pub use crate::raw::RawHandle;

/// The kind of request handles.
pub const REQ: usize = 0;
/// The kind of message handles (`MPI_Mprobe`).
pub const MSG: usize = 1;

/// MPICH: the tag in the top byte of heapmpi's handles.
const INT_TAG: usize = 0x1a00_0000;

/// Open MPI: the base of the reserved range (twice `MAX_SLOTS` bytes: one
/// half for requests, one for messages).
fn ptr_base() -> usize {
    static BASE: OnceLock<usize> = OnceLock::new();
    *BASE.get_or_init(|| {
        // SAFETY: a fresh anonymous PROT_NONE mapping at an address the
        // kernel picks; it is never unmapped, read or written.
        let p = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                2 * MAX_SLOTS,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            // Without a reservation pointer handles cannot be told apart:
            // heapmpi then serves nothing itself (see `available`).
            0
        } else {
            p as usize
        }
    })
}

/// Whether heapmpi can issue handles at all in this process.
pub fn available<H: RawHandle>() -> bool {
    !H::IS_PTR || ptr_base() != 0
}

/// The handle for slot `idx` of kind `kind` (0 requests, 1 messages).
#[inline]
pub fn encode<H: RawHandle>(kind: usize, idx: usize) -> H {
    debug_assert!(idx < MAX_SLOTS);
    if H::IS_PTR {
        H::from_bits(ptr_base() + kind * MAX_SLOTS + idx)
    } else {
        H::from_bits((INT_TAG + (kind << 24)) | idx)
    }
}

/// The slot index of a heapmpi handle of kind `kind`, or `None` for any
/// other value (the real MPI's handles, nulls).
#[inline]
pub fn decode<H: RawHandle>(kind: usize, h: H) -> Option<usize> {
    let b = h.to_bits();
    if H::IS_PTR {
        let base = ptr_base() + kind * MAX_SLOTS;
        (b >= base && b < base + MAX_SLOTS && ptr_base() != 0).then(|| b - base)
    } else {
        // 0x1a (requests) or 0x1b (messages) in the top byte.
        (b & 0xff00_0000 == INT_TAG + (kind << 24)).then_some(b & (MAX_SLOTS - 1))
    }
}

/// The Fortran integer for slot `idx` of kind `kind`: `0x1a000000 | idx`
/// (`0x1b000000 | idx` for messages), MPICH's C value as well. Open MPI's
/// Fortran handles are indices into its translation table, small
/// non-negative integers that never reach 2^28, and its `f2c` rejects
/// anything beyond the table.
#[inline]
pub fn encode_fortran(kind: usize, idx: usize) -> c_int {
    debug_assert!(idx < MAX_SLOTS);
    ((INT_TAG + (kind << 24)) | idx) as c_int
}

/// The slot of a Fortran integer made by [`encode_fortran`], or `None`.
#[inline]
pub fn decode_fortran(kind: usize, f: c_int) -> Option<usize> {
    let b = f as u32 as usize;
    (b & 0xff00_0000 == INT_TAG + (kind << 24)).then_some(b & (MAX_SLOTS - 1))
}

// ----- the MPI handle types -----

/// heapmpi's request handle for slot `i`.
#[inline]
pub fn enc_req(i: u32) -> ffi::MPI_Request {
    ffi::MPI_Request(encode(REQ, i as usize))
}

/// The slot of a heapmpi request handle.
#[inline]
pub fn dec_req(r: ffi::MPI_Request) -> Option<u32> {
    let i = decode(REQ, r.0).map(|i| i as u32);
    if i.is_some() {
        // A call on one of heapmpi's requests is heapmpi's.
        crate::profile::heap(None);
    }
    i
}

/// heapmpi's message handle for slot `i`.
#[inline]
pub fn enc_msg(i: u32) -> ffi::MPI_Message {
    ffi::MPI_Message(encode(MSG, i as usize))
}

/// The slot of a heapmpi message handle.
#[inline]
pub fn dec_msg(m: ffi::MPI_Message) -> Option<usize> {
    decode(MSG, m.0)
}

/// `MPI_Request_c2f`: heapmpi's requests get their own Fortran integers
/// (see [`encode_fortran`]); the real MPI converts its own.
pub fn request_c2f(r: ffi::MPI_Request) -> c_int {
    match dec_req(r) {
        Some(i) => encode_fortran(REQ, i as usize),
        None => real_request_c2f(r),
    }
}

/// `MPI_Request_f2c`, the inverse of [`request_c2f`].
pub fn request_f2c(f: c_int) -> ffi::MPI_Request {
    match decode_fortran(REQ, f) {
        Some(i) if handles_ok() => enc_req(i as u32),
        _ => real_request_f2c(f),
    }
}

/// `MPI_Message_c2f` (see [`request_c2f`]).
pub fn message_c2f(m: ffi::MPI_Message) -> c_int {
    match dec_msg(m) {
        Some(i) => encode_fortran(MSG, i),
        None => real_message_c2f(m),
    }
}

/// `MPI_Message_f2c`, the inverse of [`message_c2f`].
pub fn message_f2c(f: c_int) -> ffi::MPI_Message {
    match decode_fortran(MSG, f) {
        Some(i) if handles_ok() => enc_msg(i as u32),
        _ => real_message_f2c(f),
    }
}

// Open MPI converts handles with functions; MPICH's handles are the
// Fortran integers themselves (its conversions are macros); the MPI-5
// standard ABI has no Fortran integers but the same functions under the
// names `MPI_X_toint` / `MPI_X_fromint`.
#[cfg(not(any(heapmpi_mpich, heapmpi_abi)))]
use ffi::{
    PMPI_Message_c2f as message_to_int, PMPI_Message_f2c as message_from_int,
    PMPI_Request_c2f as request_to_int, PMPI_Request_f2c as request_from_int,
};
#[cfg(heapmpi_abi)]
use ffi::{
    PMPI_Message_fromint as message_from_int, PMPI_Message_toint as message_to_int,
    PMPI_Request_fromint as request_from_int, PMPI_Request_toint as request_to_int,
};
#[cfg(not(heapmpi_mpich))]
fn real_request_c2f(r: ffi::MPI_Request) -> c_int {
    // SAFETY: a handle of the real MPI (or an invalid one, which it rejects).
    unsafe { request_to_int(r) }
}
#[cfg(not(heapmpi_mpich))]
fn real_request_f2c(f: c_int) -> ffi::MPI_Request {
    // SAFETY: as above.
    unsafe { request_from_int(f) }
}
#[cfg(not(heapmpi_mpich))]
fn real_message_c2f(m: ffi::MPI_Message) -> c_int {
    // SAFETY: as above.
    unsafe { message_to_int(m) }
}
#[cfg(not(heapmpi_mpich))]
fn real_message_f2c(f: c_int) -> ffi::MPI_Message {
    // SAFETY: as above.
    unsafe { message_from_int(f) }
}
#[cfg(heapmpi_mpich)]
fn real_request_c2f(r: ffi::MPI_Request) -> c_int {
    r.0
}
#[cfg(heapmpi_mpich)]
fn real_request_f2c(f: c_int) -> ffi::MPI_Request {
    ffi::MPI_Request(f)
}
#[cfg(heapmpi_mpich)]
fn real_message_c2f(m: ffi::MPI_Message) -> c_int {
    m.0
}
#[cfg(heapmpi_mpich)]
fn real_message_f2c(f: c_int) -> ffi::MPI_Message {
    ffi::MPI_Message(f)
}

/// Whether heapmpi can issue handles here.
pub fn handles_ok() -> bool {
    fn f<H: RawHandle>(_: H) -> bool {
        available::<H>()
    }
    // SAFETY: reading an MPI constant.
    f(unsafe { ffi::RSMPI_REQUEST_NULL }.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_handles_round_trip_and_avoid_mpich_values() {
        for kind in 0..2 {
            for idx in [0usize, 1, 77, MAX_SLOTS - 1] {
                let h: c_int = encode(kind, idx);
                assert_eq!(decode(kind, h), Some(idx));
                assert_eq!(decode(1 - kind, h), None);
                // Top two bits 0: MPICH's "invalid" kind, never a live object.
                assert_eq!((h as u32) >> 30, 0);
            }
        }
        // MPICH's nulls and real handles are not ours.
        for v in [0x2c00_0000u32, 0x6c00_0000, 0xac00_0003, 0xec00_0001, 0, 1] {
            assert_eq!(decode(0, v as c_int), None);
            assert_eq!(decode(1, v as c_int), None);
        }
    }

    #[test]
    fn fortran_integers_round_trip_and_avoid_real_ones() {
        for kind in 0..2 {
            for idx in [0usize, 9, MAX_SLOTS - 1] {
                let f = encode_fortran(kind, idx);
                assert_eq!(decode_fortran(kind, f), Some(idx));
                assert_eq!(decode_fortran(1 - kind, f), None);
                assert!(f > 0);
            }
        }
        // Open MPI's table indices and MPI_REQUEST_NULL (0), MPICH's nulls.
        for f in [0, 1, 2, 1000, 0x2c00_0000u32 as c_int, -1] {
            assert_eq!(decode_fortran(0, f), None);
        }
    }

    #[test]
    fn pointer_handles_round_trip() {
        assert!(available::<*mut u8>());
        for kind in 0..2 {
            let h: *mut u8 = encode(kind, 5);
            assert_eq!(decode(kind, h), Some(5));
            assert_eq!(decode(1 - kind, h), None);
        }
        let real = Box::into_raw(Box::new(0u8));
        assert_eq!(decode(0, real), None);
        // SAFETY: from Box::into_raw just above.
        drop(unsafe { Box::from_raw(real) });
        assert_eq!(decode(0, core::ptr::null_mut::<u8>()), None);
    }
}
