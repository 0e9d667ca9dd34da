//! MPI-4.1's nondestructive tests of arrays of requests:
//! `MPI_Request_get_status_all`, `_any` and `_some` (MPI-4.1 §3.7.6):
//! `MPI_Testall`, `Testany` and `Testsome` that neither free nor
//! deactivate a request. Compiled where `<mpi.h>` declares them
//! (`cfg(heapmpi_mpi41)`: MPICH 5, Intel MPI 2021.1x). Handed heapmpi's
//! requests, the real MPI's own calls reject them (mpi4py's suite met
//! that on MPICH 5: an error, then a hang on the messages left behind),
//! so an array with any of heapmpi's requests is looked at here, each of
//! the real MPI's requests through its `MPI_Request_get_status`; an array
//! of the real MPI's requests only goes to its own call unchanged.
//!
//! Statuses are written as the corresponding `Test*` call writes them
//! (`status_rules`), `MPI_ERROR` never (no `MPI_ERR_IN_STATUS` is
//! returned). A persistent request of the real MPI's that is inactive
//! counts as complete here (its `MPI_Request_get_status` says so), where
//! the real MPI's array call would skip it.

use core::ffi::c_int;

use super::*;

/// What one request is now.
enum Peek {
    Pending,
    Done,
    /// Null or inactive: its status is empty.
    Inactive,
}

/// Looks at request `r` without freeing or deactivating it; a complete
/// (or null, or inactive) one's status is written to `status` as `call`
/// writes it.
///
/// # Safety
/// `status` is a status the caller may write, or `MPI_STATUS_IGNORE`.
unsafe fn peek(
    r: ffi::MPI_Request,
    status: *mut ffi::MPI_Status,
    call: Call,
) -> Result<Peek, c_int> {
    if let Some(i) = dec_req(r) {
        let mut e = engine::lock();
        if e.req(i as usize).is_none() {
            drop(e);
            return Err(bad_request());
        }
        let st = if !e.active(i) {
            St::Inactive
        } else if e.test(i) {
            match e.req(i as usize).map(|q| q.state) {
                Some(State::Done(st)) => st,
                _ => return Ok(Peek::Pending),
            }
        } else {
            return Ok(Peek::Pending);
        };
        drop(e);
        // SAFETY: per the contract.
        unsafe { status_rules::write_status(&st, status, call) };
        return Ok(if matches!(st, St::Inactive) {
            Peek::Inactive
        } else {
            Peek::Done
        });
    }
    let mut flag: c_int = 0;
    // SAFETY: the real MPI's request (or null); per the contract.
    let rc = unsafe { ffi::PMPI_Request_get_status(r, &mut flag, status) };
    if rc != 0 {
        return Err(rc);
    }
    Ok(if r == req_null() {
        Peek::Inactive
    } else if flag != 0 {
        Peek::Done
    } else {
        Peek::Pending
    })
}

/// A scratch status for one request: a copy of the caller's (so that what
/// the call leaves alone stays), or `None` for `MPI_STATUS_IGNORE`.
///
/// # Safety
/// `status` is the caller's status or `MPI_STATUS_IGNORE`.
unsafe fn scratch(status: *mut ffi::MPI_Status) -> Option<ffi::MPI_Status> {
    // SAFETY: reading an MPI constant; the caller's status otherwise.
    unsafe { (!status.is_null() && status != ffi::RSMPI_STATUS_IGNORE).then(|| *status) }
}

/// `MPI_Request_get_status_all`.
///
/// # Safety
/// As `MPI_Request_get_status_all`.
pub unsafe fn request_get_status_all(
    count: c_int,
    array: *mut ffi::MPI_Request,
    flag: *mut c_int,
    statuses: *mut ffi::MPI_Status,
) -> c_int {
    // SAFETY: the caller's array.
    let reqs = unsafe { req_slice(array, count) };
    if !any_ours(reqs) {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Request_get_status_all(count, array, flag, statuses) };
    }
    let mut all = true;
    for (k, &r) in reqs.iter().enumerate() {
        // SAFETY: the caller's status slot k (statuses are undefined
        // unless all are complete, so writing the complete ones is fine).
        match unsafe { peek(r, nth_status(statuses, k), Call::Testall) } {
            Ok(Peek::Pending) => all = false,
            Ok(_) => {}
            Err(rc) => return rc,
        }
    }
    if !all {
        poke_real_after_test();
    }
    // SAFETY: the caller's flag.
    unsafe { *flag = all as c_int };
    0
}

/// `MPI_Request_get_status_any`.
///
/// # Safety
/// As `MPI_Request_get_status_any`.
pub unsafe fn request_get_status_any(
    count: c_int,
    array: *mut ffi::MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut ffi::MPI_Status,
) -> c_int {
    // SAFETY: the caller's array.
    let reqs = unsafe { req_slice(array, count) };
    if !any_ours(reqs) {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Request_get_status_any(count, array, index, flag, status) };
    }
    // SAFETY: reading an MPI constant.
    let undefined = unsafe { ffi::RSMPI_UNDEFINED };
    let mut active = false;
    for (k, &r) in reqs.iter().enumerate() {
        // SAFETY: the caller's status, or ignore.
        let mut tmp = unsafe { scratch(status) };
        let at = tmp.as_mut().map_or(status, |t| t as *mut ffi::MPI_Status);
        // SAFETY: a scratch status, or MPI_STATUS_IGNORE.
        match unsafe { peek(r, at, Call::Testany) } {
            Ok(Peek::Done) => {
                // SAFETY: the caller's pointers.
                unsafe {
                    if let Some(t) = tmp {
                        *status = t;
                    }
                    *index = k as c_int;
                    *flag = 1;
                }
                return 0;
            }
            Ok(Peek::Pending) => active = true,
            Ok(Peek::Inactive) => {}
            Err(rc) => return rc,
        }
    }
    // SAFETY: the caller's pointers.
    unsafe {
        *index = undefined;
        *flag = !active as c_int;
        if !active {
            // No active request: an empty status (MPI-4.1 §3.7.5).
            status_rules::write_status(&St::Inactive, status, Call::Testany);
        }
    }
    if active {
        poke_real_after_test();
    }
    0
}

/// `MPI_Request_get_status_some`.
///
/// # Safety
/// As `MPI_Request_get_status_some`.
pub unsafe fn request_get_status_some(
    incount: c_int,
    array: *mut ffi::MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut ffi::MPI_Status,
) -> c_int {
    // SAFETY: the caller's array.
    let reqs = unsafe { req_slice(array, incount) };
    if !any_ours(reqs) {
        // SAFETY: forwarded unchanged.
        return unsafe {
            ffi::PMPI_Request_get_status_some(incount, array, outcount, indices, statuses)
        };
    }
    // SAFETY: reading an MPI constant.
    let undefined = unsafe { ffi::RSMPI_UNDEFINED };
    let (mut active, mut out) = (false, 0usize);
    for (k, &r) in reqs.iter().enumerate() {
        // Completed requests' statuses are packed at the front, in the
        // order of `indices`.
        let slot = nth_status(statuses, out);
        // SAFETY: the caller's status slot `out`, or ignore.
        let mut tmp = unsafe { scratch(slot) };
        let at = tmp.as_mut().map_or(slot, |t| t as *mut ffi::MPI_Status);
        // SAFETY: a scratch status, or MPI_STATUS_IGNORE.
        match unsafe { peek(r, at, Call::Testsome) } {
            Ok(Peek::Done) => {
                // SAFETY: the caller's arrays hold `incount` entries.
                unsafe {
                    if let Some(t) = tmp {
                        *slot = t;
                    }
                    *indices.add(out) = k as c_int;
                }
                out += 1;
                active = true;
            }
            Ok(Peek::Pending) => active = true,
            Ok(Peek::Inactive) => {}
            Err(rc) => return rc,
        }
    }
    if active && out == 0 {
        poke_real_after_test();
    }
    // SAFETY: the caller's count.
    unsafe { *outcount = if active { out as c_int } else { undefined } };
    0
}
