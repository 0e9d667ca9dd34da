//! Completion of arrays of requests: `MPI_Waitall`/`Testall`,
//! `MPI_Waitany`/`Testany` and `MPI_Waitsome`/`Testsome`, over arrays that
//! mix heapmpi's requests with the real MPI's.
//!
//! heapmpi's requests are finished here; the real MPI's are handed to the
//! real MPI's own array call with heapmpi's entries nulled, or tested one
//! by one when both kinds are pending. Statuses are written as the real
//! MPI's same call would write them (`status_rules`); `MPI_ERROR` is set,
//! for every completed request, only when the call returns
//! `MPI_ERR_IN_STATUS` (MPI-4.0 §3.7.5).

use core::ffi::c_int;

use super::complete::*;
use super::*;
use crate::p2p::status_rules::set_error;

/// Fills `out` with a copy of `reqs` where heapmpi's requests are replaced
/// by `MPI_REQUEST_NULL`, for the real MPI's array calls.
fn real_only(reqs: &[ffi::MPI_Request], out: &mut Vec<ffi::MPI_Request>) {
    out.clear();
    out.extend(
        reqs.iter()
            .map(|&r| if dec_req(r).is_some() { req_null() } else { r }),
    );
}

/// Copies the real entries back after a real array call.
fn merge_real(reqs: &mut [ffi::MPI_Request], tmp: &[ffi::MPI_Request]) {
    for (r, t) in reqs.iter_mut().zip(tmp) {
        if dec_req(*r).is_none() {
            *r = *t;
        }
    }
}

/// Every heapmpi request of `reqs` is live (else the call is erroneous).
fn all_live(e: &mut Engine, reqs: &[ffi::MPI_Request]) -> bool {
    reqs.iter()
        .all(|&r| dec_req(r).is_none_or(|s| e.req(s as usize).is_some()))
}

/// Tries to finish heapmpi request `reqs[i]` (`slot`): on completion
/// writes its status as `call` does, nulls a one-shot handle, and returns
/// its error and communicator.
fn finish_ours(
    e: &mut Engine,
    reqs: &mut [ffi::MPI_Request],
    i: usize,
    slot: u32,
    status: *mut ffi::MPI_Status,
    call: Call,
) -> Option<(c_int, ffi::MPI_Comm)> {
    let (pers, comm) = describe(e, slot)?;
    let err = e.finish_with(slot, |st| {
        // SAFETY: the caller's status slot.
        unsafe { status_rules::write_status(st, status, call) };
        st.error()
    })?;
    if !pers {
        reqs[i] = req_null();
    }
    Some((err, comm))
}

/// Tests real request `reqs[i]` with the real `MPI_Test`, whose status
/// goes straight into the caller's slot, then applies `call`'s rule for
/// `MPI_ERROR`. Returns its error if it completed.
fn finish_real(
    reqs: &mut [ffi::MPI_Request],
    i: usize,
    status: *mut ffi::MPI_Status,
    call: Call,
) -> Option<c_int> {
    let mut flag: c_int = 0;
    // SAFETY: a real request of the caller's array; the caller's status
    // slot or MPI_STATUS_IGNORE.
    let rc = unsafe { ffi::PMPI_Test(&mut reqs[i], &mut flag, status) };
    if flag == 0 && rc == 0 {
        return None;
    }
    if status_rules::writes_error(call) {
        // SAFETY: as above.
        unsafe { set_error(status, 0) };
    }
    Some(rc)
}

/// The engine of `MPI_Waitall` (`blocking`) and of a `MPI_Testall` that
/// found everything complete: finishes every request, writes statuses as
/// `call` does, and reports errors through `MPI_ERR_IN_STATUS`.
///
/// # Safety
/// `reqs` and `statuses` (if not ignored) are the caller's arrays.
unsafe fn complete_all(
    reqs: &mut [ffi::MPI_Request],
    statuses: *mut ffi::MPI_Status,
    call: Call,
) -> c_int {
    let n = reqs.len();
    // Error of each finished request (None: not finished yet); on the
    // stack for the usual few requests (this runs once per MPI_Waitall,
    // and a heap allocation there is a cost per message).
    let mut small = [None; 16];
    let mut large = Vec::new();
    let errs: &mut [Option<c_int>] = if n <= small.len() {
        &mut small[..n]
    } else {
        large.resize(n, None);
        &mut large
    };
    let mut left = n;
    let mut err_comm: Option<ffi::MPI_Comm> = None;
    for i in 0..n {
        if reqs[i] == req_null() {
            // SAFETY: the caller's status slot.
            unsafe { status_rules::write_status(&St::Empty, nth_status(statuses, i), call) };
            errs[i] = Some(0);
            left -= 1;
        }
    }
    // An unfinished heapmpi request keeps its handle until it is finished.
    let ours_pending = |errs: &[Option<c_int>], reqs: &[ffi::MPI_Request], i: usize| {
        errs[i].is_none() && dec_req(reqs[i]).is_some()
    };
    // heapmpi's requests not finished yet (the rest of the `left`
    // unfinished ones are the real MPI's), and an index before which none
    // of them is.
    let mut ours = (0..n).filter(|&i| ours_pending(errs, reqs, i)).count();
    let mut first = 0;
    let mut spins = 0u32;
    let mut w = Waiter::new();
    while left > 0 {
        if ours > 0 {
            let mut e = engine::lock();
            e.progress();
            // Requests mostly complete in the order they were posted: a
            // pass stops at the first one still pending, so a window of n
            // receives costs O(n) checks, not O(n^2). Every 64th pass
            // checks them all (a send checked while pending may be staged,
            // see `Engine::check`).
            let all = spins % 64 == 0;
            for i in first..n {
                if !ours_pending(errs, reqs, i) {
                    continue;
                }
                let slot = dec_req(reqs[i]).expect("a heapmpi request");
                match finish_ours(&mut e, reqs, i, slot, nth_status(statuses, i), call) {
                    Some((err, comm)) => {
                        errs[i] = Some(err);
                        left -= 1;
                        ours -= 1;
                        if err != 0 && err_comm.is_none() {
                            err_comm = Some(comm);
                        }
                    }
                    None if all => {}
                    None => break,
                }
            }
            while first < n && !ours_pending(errs, reqs, first) {
                first += 1;
            }
        }
        for i in 0..n {
            if ours == left {
                break;
            }
            if errs[i].is_some() || dec_req(reqs[i]).is_some() {
                continue;
            }
            if let Some(rc) = finish_real(reqs, i, nth_status(statuses, i), call) {
                errs[i] = Some(rc);
                left -= 1;
                if rc != 0 && err_comm.is_none() {
                    // SAFETY: reading an MPI constant.
                    err_comm = Some(unsafe { ffi::RSMPI_COMM_WORLD });
                }
            }
        }
        if left > 0 {
            w.pause(&mut spins);
        }
    }
    bury();
    let Some(c) = err_comm else { return 0 };
    for (i, e) in errs.iter().enumerate() {
        // SAFETY: the caller's status slots.
        unsafe { set_error(nth_status(statuses, i), e.unwrap_or(0)) };
    }
    raise(c, ffi::MPI_ERR_IN_STATUS as c_int)
}

/// `MPI_Waitall`.
///
/// # Safety
/// As `MPI_Waitall`.
pub unsafe fn waitall(
    count: c_int,
    array: *mut ffi::MPI_Request,
    statuses: *mut ffi::MPI_Status,
) -> c_int {
    // SAFETY: the caller's array.
    let reqs = unsafe { req_slice(array, count) };
    if !any_ours(reqs) {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Waitall(count, array, statuses) };
    }
    if !all_live(&mut engine::lock(), reqs) {
        return bad_request();
    }
    // SAFETY: the caller's arrays.
    unsafe { complete_all(reqs, statuses, Call::Waitall) }
}

/// `MPI_Testall`: completes all or none.
///
/// # Safety
/// As `MPI_Testall`.
pub unsafe fn testall(
    count: c_int,
    array: *mut ffi::MPI_Request,
    flag: *mut c_int,
    statuses: *mut ffi::MPI_Status,
) -> c_int {
    // SAFETY: the caller's array.
    let reqs = unsafe { req_slice(array, count) };
    if !any_ours(reqs) {
        // SAFETY: forwarded unchanged.
        return unsafe { ffi::PMPI_Testall(count, array, flag, statuses) };
    }
    if known_pending_array(reqs) {
        poke_real_after_test();
        // SAFETY: the caller's flag.
        unsafe { *flag = 0 };
        return 0;
    }
    let mut all = true;
    {
        let mut e = engine::lock();
        if !all_live(&mut e, reqs) {
            drop(e);
            return bad_request();
        }
        e.progress();
        for &r in reqs.iter() {
            if let Some(s) = dec_req(r) {
                if e.active(s) && !e.check(s) {
                    all = false;
                    break;
                }
            }
        }
        if !all {
            note_pending_array(&e, reqs);
        }
    }
    if !all {
        poke_real_after_test();
        // SAFETY: the caller's flag.
        unsafe { *flag = 0 };
        return 0;
    }
    // Ours are all complete (and stay so): the real MPI's own Testall over
    // the rest decides, completing all of them or none. Its statuses land
    // in copies of the caller's (so what it leaves alone stays), copied
    // back for its entries.
    let n = reqs.len();
    // SAFETY: reading MPI constants.
    let ignore = statuses.is_null() || statuses == unsafe { ffi::RSMPI_STATUSES_IGNORE };
    let mut tmp = Vec::with_capacity(n);
    real_only(reqs, &mut tmp);
    let mut st: Vec<ffi::MPI_Status> = if ignore {
        Vec::new()
    } else {
        // SAFETY: the caller's array of `count` statuses.
        unsafe { core::slice::from_raw_parts(statuses, n) }.to_vec()
    };
    let mut f: c_int = 0;
    // SAFETY: arrays of `n` entries (or MPI_STATUSES_IGNORE).
    let rc = unsafe {
        ffi::PMPI_Testall(
            n as c_int,
            tmp.as_mut_ptr(),
            &mut f,
            if ignore {
                ffi::RSMPI_STATUSES_IGNORE
            } else {
                st.as_mut_ptr()
            },
        )
    };
    if f == 0 && rc == 0 {
        poke_real_after_test();
        // SAFETY: the caller's flag.
        unsafe { *flag = 0 };
        return 0;
    }
    let mut errs: Vec<c_int> = vec![0; n];
    let mut err_comm: Option<ffi::MPI_Comm> = None;
    for i in 0..n {
        if dec_req(reqs[i]).is_none() {
            reqs[i] = tmp[i];
            if !ignore {
                // SAFETY: the caller's status slot.
                unsafe { *statuses.add(i) = st[i] };
                if rc != 0 {
                    errs[i] = st[i].MPI_ERROR;
                }
            }
        }
    }
    if rc != 0 {
        // SAFETY: reading an MPI constant.
        err_comm = Some(unsafe { ffi::RSMPI_COMM_WORLD });
    }
    {
        let mut e = engine::lock();
        for i in 0..n {
            if let Some(slot) = dec_req(reqs[i]) {
                if let Some((err, comm)) = finish_ours(
                    &mut e,
                    reqs,
                    i,
                    slot,
                    nth_status(statuses, i),
                    Call::Testall,
                ) {
                    errs[i] = err;
                    if err != 0 && err_comm.is_none() {
                        err_comm = Some(comm);
                    }
                }
            }
        }
    }
    bury();
    // SAFETY: the caller's flag.
    unsafe { *flag = 1 };
    let Some(c) = err_comm else { return 0 };
    for (i, e) in errs.iter().enumerate() {
        // SAFETY: the caller's status slots.
        unsafe { set_error(nth_status(statuses, i), *e) };
    }
    raise(c, ffi::MPI_ERR_IN_STATUS as c_int)
}

/// `MPI_Waitany` (`blocking`) and `MPI_Testany`.
///
/// # Safety
/// As the MPI calls.
pub unsafe fn waitany(
    count: c_int,
    array: *mut ffi::MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut ffi::MPI_Status,
    blocking: bool,
) -> c_int {
    // SAFETY: the caller's array.
    let reqs = unsafe { req_slice(array, count) };
    if !any_ours(reqs) {
        // SAFETY: forwarded unchanged.
        return unsafe {
            if blocking {
                ffi::PMPI_Waitany(count, array, index, status)
            } else {
                ffi::PMPI_Testany(count, array, index, flag, status)
            }
        };
    }
    // SAFETY: reading an MPI constant.
    let undefined = unsafe { ffi::RSMPI_UNDEFINED };
    if !blocking && known_pending_array(reqs) {
        poke_real_after_test();
        // SAFETY: a nonblocking call's caller passes valid index and flag.
        unsafe {
            *index = undefined;
            *flag = 0;
        }
        return 0;
    }
    if !all_live(&mut engine::lock(), reqs) {
        return bad_request();
    }
    let call = if blocking {
        Call::Waitany
    } else {
        Call::Testany
    };
    // Without requests of the real MPI, its Testany (over nulls) is not
    // asked; its progress is driven as after any failed test.
    let real = any_real(reqs);
    let set_flag = |f: c_int| {
        if !blocking {
            // SAFETY: a nonblocking call's caller passes a valid flag.
            unsafe { *flag = f };
        }
    };
    let mut tmp = Vec::new();
    let mut spins = 0u32;
    let mut w = Waiter::new();
    loop {
        let mut active = false;
        {
            let mut e = engine::lock();
            e.progress();
            for i in 0..reqs.len() {
                let Some(slot) = dec_req(reqs[i]).filter(|&s| e.active(s)) else {
                    continue;
                };
                active = true;
                if let Some((err, comm)) = finish_ours(&mut e, reqs, i, slot, status, call) {
                    drop(e);
                    // SAFETY: the caller's index.
                    unsafe { *index = i as c_int };
                    set_flag(1);
                    bury();
                    return raise(comm, err);
                }
            }
            if active && !blocking && !real {
                note_pending_array(&e, reqs);
            }
        }
        let real_active = real && {
            real_only(reqs, &mut tmp);
            let (mut idx, mut f): (c_int, c_int) = (undefined, 0);
            // The real MPI writes a status it completes into a copy of the
            // caller's (so what it leaves alone stays as the caller had it),
            // copied back only if it completed one of the real requests.
            let ignore = status.is_null() || status == ignore_status();
            // SAFETY: the caller's status is a valid MPI_Status unless ignored.
            let mut scratch: ffi::MPI_Status = unsafe {
                if ignore {
                    core::mem::zeroed()
                } else {
                    core::ptr::read(status)
                }
            };
            let out: *mut ffi::MPI_Status = if ignore { status } else { &mut scratch };
            // SAFETY: an array of real requests and nulls; a valid status or
            // MPI_STATUS_IGNORE.
            let rc = unsafe {
                ffi::PMPI_Testany(tmp.len() as c_int, tmp.as_mut_ptr(), &mut idx, &mut f, out)
            };
            merge_real(reqs, &tmp);
            if rc != 0 || (f != 0 && idx != undefined) {
                // SAFETY: the caller's pointers.
                unsafe {
                    if !ignore {
                        *status = scratch;
                    }
                    *index = idx;
                }
                set_flag(1);
                return rc;
            }
            // The real MPI reports "no active request" as flag set, index
            // MPI_UNDEFINED.
            !(f != 0 && idx == undefined)
        };
        if !active && !real_active {
            // An inactive persistent request of ours makes the empty status
            // an inactive request's (which MPICH writes differently).
            let inactive = {
                let mut e = engine::lock();
                reqs.iter()
                    .any(|&r| dec_req(r).is_some_and(|s| e.req(s as usize).is_some()))
            };
            let st = if inactive { St::Inactive } else { St::Empty };
            // SAFETY: the caller's pointers.
            unsafe {
                *index = undefined;
                status_rules::write_status(&st, status, call);
            }
            set_flag(1);
            return 0;
        }
        if !blocking {
            if !real {
                poke_real_after_test();
            }
            // SAFETY: the caller's index.
            unsafe { *index = undefined };
            set_flag(0);
            return 0;
        }
        w.pause(&mut spins);
    }
}

/// `MPI_Waitsome` (`blocking`) and `MPI_Testsome`.
///
/// # Safety
/// As the MPI calls.
pub unsafe fn waitsome(
    count: c_int,
    array: *mut ffi::MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut ffi::MPI_Status,
    blocking: bool,
) -> c_int {
    // SAFETY: the caller's array.
    let reqs = unsafe { req_slice(array, count) };
    if !any_ours(reqs) {
        // SAFETY: forwarded unchanged.
        return unsafe {
            if blocking {
                ffi::PMPI_Waitsome(count, array, outcount, indices, statuses)
            } else {
                ffi::PMPI_Testsome(count, array, outcount, indices, statuses)
            }
        };
    }
    if !blocking && known_pending_array(reqs) {
        poke_real_after_test();
        // SAFETY: the caller's out-pointer.
        unsafe { *outcount = 0 };
        return 0;
    }
    if !all_live(&mut engine::lock(), reqs) {
        return bad_request();
    }
    let call = if blocking {
        Call::Waitsome
    } else {
        Call::Testsome
    };
    // Without requests of the real MPI, its Testsome is not asked.
    let real = any_real(reqs);
    // SAFETY: reading MPI constants.
    let (undefined, ignore) = unsafe { (ffi::RSMPI_UNDEFINED, ffi::RSMPI_STATUSES_IGNORE) };
    let n = reqs.len();
    let want = statuses != ignore && !statuses.is_null();
    // Buffers for the real MPI's share of each pass, made once.
    let mut tmp = Vec::with_capacity(if real { n } else { 0 });
    let mut ridx = vec![0 as c_int; if real { n } else { 0 }];
    let mut spins = 0u32;
    let mut w = Waiter::new();
    loop {
        let mut out = 0usize;
        let mut active = false;
        // (index in `indices`, error) of every completed request.
        let mut errs: Vec<c_int> = Vec::new();
        let mut err_comm: Option<ffi::MPI_Comm> = None;
        {
            let mut e = engine::lock();
            e.progress();
            for i in 0..n {
                let Some(slot) = dec_req(reqs[i]).filter(|&s| e.active(s)) else {
                    continue;
                };
                active = true;
                let status = nth_status(statuses, out);
                if let Some((err, comm)) = finish_ours(&mut e, reqs, i, slot, status, call) {
                    // SAFETY: the caller's index array has room for `count`.
                    unsafe { *indices.add(out) = i as c_int };
                    out += 1;
                    errs.push(err);
                    if err != 0 && err_comm.is_none() {
                        err_comm = Some(comm);
                    }
                }
            }
            if out == 0 && active && !blocking && !real {
                note_pending_array(&e, reqs);
            }
        }
        if !real {
            if out == 0 && active && !blocking {
                poke_real_after_test();
            }
        } else {
            real_only(reqs, &mut tmp);
            let mut rout: c_int = 0;
            // SAFETY: arrays of `n` entries; the real MPI writes the statuses of
            // what it completes straight into the caller's slots after ours.
            let rc = unsafe {
                ffi::PMPI_Testsome(
                    n as c_int,
                    tmp.as_mut_ptr(),
                    &mut rout,
                    ridx.as_mut_ptr(),
                    if want { statuses.add(out) } else { ignore },
                )
            };
            merge_real(reqs, &tmp);
            if rc != 0 && err_comm.is_none() {
                // SAFETY: reading an MPI constant.
                err_comm = Some(unsafe { ffi::RSMPI_COMM_WORLD });
            }
            if rout != undefined {
                active = true;
                for &r in &ridx[..rout.max(0) as usize] {
                    // SAFETY: the caller's arrays have room for `count`.
                    unsafe { *indices.add(out) = r };
                    errs.push(if want && rc != 0 {
                        // SAFETY: written by the real call just now.
                        unsafe { (*statuses.add(out)).MPI_ERROR }
                    } else {
                        rc
                    });
                    out += 1;
                }
            }
        }
        if out > 0 || !active || !blocking {
            // SAFETY: the caller's out-pointer.
            unsafe { *outcount = if !active { undefined } else { out as c_int } };
            bury();
            let Some(c) = err_comm else { return 0 };
            for (k, e) in errs.iter().enumerate() {
                // SAFETY: the caller's status slots.
                unsafe { set_error(nth_status(statuses, k), *e) };
            }
            return raise(c, ffi::MPI_ERR_IN_STATUS as c_int);
        }
        w.pause(&mut spins);
    }
}
