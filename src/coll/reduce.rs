//! The reduction entry points: `MPI_Reduce`, `MPI_Allreduce`,
//! `MPI_Reduce_scatter_block`, `MPI_Reduce_scatter`, `MPI_Scan` and
//! `MPI_Exscan`. Each checks its arguments (anything heapmpi does not take
//! goes to the real MPI, which judges it as always) and describes the
//! reduction for the engine in [`super::fold`].

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::fold::{self, Job, Kind};
use super::op::Reducer;
use super::{in_place, node, ran, rank_ok, Buf};
use crate::comm::node::Node;
use crate::dt::{self, Layout};

/// What every reduction checks first: the node state, the datatype's
/// layout and the operator.
fn common(
    comm: ffi::MPI_Comm,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
) -> Option<(&'static Node, Layout, Reducer)> {
    if count < 0 {
        return None;
    }
    let node = node(comm)?;
    let l = dt::layout(dt)?;
    let red = Reducer::new(op, dt, &l)?;
    Some((node, l, red))
}

/// The input element base: the send buffer, or `in_place_input` when the
/// send buffer is `MPI_IN_PLACE`. `None` for a null buffer with data.
fn input(sbuf: *const c_void, in_place_input: *const c_void, count: usize) -> Option<*const u8> {
    let p = if sbuf == in_place() {
        in_place_input
    } else {
        sbuf
    };
    (!p.is_null() || count == 0).then_some(p as *const u8)
}

/// Runs `job`, counting it; false: make the real call.
///
/// # Safety
/// The job's buffers are the caller's.
unsafe fn go(node: &Node, job: &Job) -> bool {
    // SAFETY: per the contract.
    let done = unsafe { fold::run(node, job) };
    if done {
        ran();
    }
    done
}

/// `MPI_Allreduce`.
///
/// # Safety
/// As `MPI_Allreduce`.
pub unsafe fn allreduce(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let real = || unsafe { ffi::PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm) };
    let Some((node, l, red)) = common(comm, count, dt, op) else {
        return real();
    };
    let (Some(recv), Some(input)) = (Buf::new(rbuf, count, dt), input(sbuf, rbuf, count as usize))
    else {
        return real();
    };
    let job = Job {
        kind: Kind::Allreduce,
        input,
        count: count as usize,
        recv: Some(recv),
        red,
        l,
        blocks: &[],
    };
    // SAFETY: the caller's buffers, described by `job`.
    if unsafe { go(node, &job) } {
        0
    } else {
        real()
    }
}

/// `MPI_Reduce`.
///
/// # Safety
/// As `MPI_Reduce`.
pub unsafe fn reduce(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    root: c_int,
    comm: ffi::MPI_Comm,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let real = || unsafe { ffi::PMPI_Reduce(sbuf, rbuf, count, dt, op, root, comm) };
    let Some((node, l, red)) = common(comm, count, dt, op) else {
        return real();
    };
    let Some(root) = rank_ok(root, node.n) else {
        return real();
    };
    let me_root = node.me == root;
    if sbuf == in_place() && !me_root {
        return real();
    }
    let recv = if me_root {
        match Buf::new(rbuf, count, dt) {
            Some(b) if !rbuf.is_null() || count == 0 => Some(b),
            _ => return real(),
        }
    } else {
        None
    };
    let Some(input) = input(sbuf, rbuf, count as usize) else {
        return real();
    };
    let job = Job {
        kind: Kind::Reduce(root),
        input,
        count: count as usize,
        recv,
        red,
        l,
        blocks: &[],
    };
    // SAFETY: the caller's buffers, described by `job`.
    if unsafe { go(node, &job) } {
        0
    } else {
        real()
    }
}

/// The reduce-scatters: block `m` of `counts[m]` elements to member `m`.
///
/// # Safety
/// As `MPI_Reduce_scatter`.
unsafe fn scatter_blocks(
    node: &Node,
    l: Layout,
    red: Reducer,
    sbuf: *const c_void,
    rbuf: *mut c_void,
    counts: impl Fn(usize) -> c_int,
    dt: ffi::MPI_Datatype,
) -> Option<bool> {
    let n = node.n;
    let mut blocks = Vec::with_capacity(n + 1);
    blocks.push(0usize);
    for m in 0..n {
        let c = counts(m);
        if c < 0 {
            return None;
        }
        blocks.push(blocks[m] + c as usize);
    }
    let total = blocks[n];
    let mine = counts(node.me);
    let recv = Buf::new(rbuf, mine, dt)?;
    if rbuf.is_null() && mine > 0 {
        return None;
    }
    let input = input(sbuf, rbuf, total)?;
    let job = Job {
        kind: Kind::Scatter,
        input,
        count: total,
        recv: Some(recv),
        red,
        l,
        blocks: &blocks,
    };
    // SAFETY: the caller's buffers, described by `job`.
    Some(unsafe { go(node, &job) })
}

/// `MPI_Reduce_scatter_block`.
///
/// # Safety
/// As `MPI_Reduce_scatter_block`.
pub unsafe fn reduce_scatter_block(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let real = || unsafe { ffi::PMPI_Reduce_scatter_block(sbuf, rbuf, count, dt, op, comm) };
    let Some((node, l, red)) = common(comm, count, dt, op) else {
        return real();
    };
    // SAFETY: the caller's arguments.
    match unsafe { scatter_blocks(node, l, red, sbuf, rbuf, |_| count, dt) } {
        Some(true) => 0,
        _ => real(),
    }
}

/// `MPI_Reduce_scatter`.
///
/// # Safety
/// As `MPI_Reduce_scatter`.
pub unsafe fn reduce_scatter(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    counts: *const c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let real = || unsafe { ffi::PMPI_Reduce_scatter(sbuf, rbuf, counts, dt, op, comm) };
    if counts.is_null() {
        return real();
    }
    let Some((node, l, red)) = common(comm, 0, dt, op) else {
        return real();
    };
    // SAFETY: MPI requires `counts` to hold one count per member.
    let count_of = |m: usize| unsafe { *counts.add(m) };
    // SAFETY: the caller's arguments.
    match unsafe { scatter_blocks(node, l, red, sbuf, rbuf, count_of, dt) } {
        Some(true) => 0,
        _ => real(),
    }
}

/// `MPI_Scan` and `MPI_Exscan`.
///
/// # Safety
/// As `MPI_Scan`.
#[allow(clippy::too_many_arguments)]
unsafe fn prefix(
    kind: Kind,
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    real: impl Fn() -> c_int,
) -> c_int {
    let Some((node, l, red)) = common(comm, count, dt, op) else {
        return real();
    };
    let (Some(recv), Some(input)) = (Buf::new(rbuf, count, dt), input(sbuf, rbuf, count as usize))
    else {
        return real();
    };
    if rbuf.is_null() && count > 0 {
        return real();
    }
    let job = Job {
        kind,
        input,
        count: count as usize,
        recv: Some(recv),
        red,
        l,
        blocks: &[],
    };
    // SAFETY: the caller's buffers, described by `job`.
    if unsafe { go(node, &job) } {
        0
    } else {
        real()
    }
}

/// `MPI_Scan`.
///
/// # Safety
/// As `MPI_Scan`.
pub unsafe fn scan(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let real = || unsafe { ffi::PMPI_Scan(sbuf, rbuf, count, dt, op, comm) };
    // SAFETY: the caller's arguments.
    unsafe { prefix(Kind::Scan, sbuf, rbuf, count, dt, op, comm, real) }
}

/// `MPI_Exscan`.
///
/// # Safety
/// As `MPI_Exscan`.
pub unsafe fn exscan(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let real = || unsafe { ffi::PMPI_Exscan(sbuf, rbuf, count, dt, op, comm) };
    // SAFETY: the caller's arguments.
    unsafe { prefix(Kind::Exscan, sbuf, rbuf, count, dt, op, comm, real) }
}
