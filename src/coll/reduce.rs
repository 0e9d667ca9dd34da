//! The reduction entry points: `MPI_Reduce`, `MPI_Allreduce`,
//! `MPI_Reduce_scatter_block`, `MPI_Reduce_scatter`, `MPI_Scan` and
//! `MPI_Exscan`. Each checks its arguments (anything heapmpi does not take
//! goes to the real MPI, which judges it as always) and describes the
//! reduction for the engine in [`super::fold`].

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::bcast::{node_bcast, node_phase_bcast};
use super::fold::{self, Job, Kind};
use super::op::Reducer;
use super::{flat, gave_up, in_place, node, ran, rank_ok, to_real, Buf};
use crate::comm::node::Node;
use crate::dt::{self, Layout};

/// What every reduction checks first: the node state, the datatype's
/// layout and the operator.
/// Only Reduce and Allreduce run across nodes (`spanning`); the others
/// leave such communicators to the real MPI.
fn common(
    comm: ffi::MPI_Comm,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    spanning: bool,
) -> Option<(&'static Node, Layout, Reducer)> {
    if count < 0 {
        return None;
    }
    let node = if spanning { node(comm)? } else { flat(comm)? };
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

/// Whether heapmpi's hierarchy (node by node, then the leaders) gives the
/// bits the MPI gives on a communicator that spans nodes: only when the
/// order of combination does not show, or with two members (see
/// [`super::order`]). Otherwise the MPI's own algorithm runs.
fn in_stock_order(span: &crate::comm::node::Span, red: &Reducer) -> bool {
    red.exact() || span.node_of.len() <= 2
}

/// Runs `job`, or makes the real call when every member must.
///
/// # Safety
/// The job's buffers are the caller's.
unsafe fn go_or(node: &Node, job: &Job, real: impl FnOnce() -> c_int) -> c_int {
    // SAFETY: per the contract.
    if unsafe { go(node, job) } {
        0
    } else {
        real()
    }
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
    crate::profile::data(count as i64, dt);
    // SAFETY: forwarded unchanged.
    let real = || to_real(|| unsafe { ffi::PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm) });
    let Some((node, l, red)) = common(comm, count, dt, op, true) else {
        return real();
    };
    let (Some(recv), Some(input)) = (Buf::new(rbuf, count, dt), input(sbuf, rbuf, count as usize))
    else {
        return real();
    };
    if let Some(span) = &node.span {
        if (!red.commute && !span.consecutive) || !in_stock_order(span, &red) {
            return real();
        }
        if count == 0 {
            ran();
            return 0;
        }
        // Across nodes: reduce to the node's leader (into its receive
        // buffer), leaders all-reduce in place, the node's leader
        // broadcasts.
        let leader = node.me == 0;
        let job = Job::new(
            Kind::Reduce(0),
            input,
            count,
            leader.then_some(recv),
            red,
            l,
        );
        // SAFETY: the caller's buffers; the leader's receive buffer is
        // read again only after the node phase.
        let mut rc = unsafe { node_reduce(node, &job, count, dt, op) };
        if rc == 0 {
            if let Some(lc) = span.leaders() {
                // SAFETY: the caller's buffer and arguments.
                rc = unsafe { ffi::PMPI_Allreduce(in_place(), rbuf, count, dt, op, lc.0) };
            }
        }
        if rc == 0 {
            // SAFETY: the caller's buffer.
            rc = unsafe { node_phase_bcast(node, &recv, 0) };
        }
        ran();
        return rc;
    }
    let job = Job::new(Kind::Allreduce, input, count, Some(recv), red, l);
    // SAFETY: the caller's buffers, described by `job`.
    unsafe { go_or(node, &job, real) }
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
    crate::profile::data(count as i64, dt);
    // SAFETY: forwarded unchanged.
    let real = || to_real(|| unsafe { ffi::PMPI_Reduce(sbuf, rbuf, count, dt, op, root, comm) });
    let Some((node, l, red)) = common(comm, count, dt, op, true) else {
        return real();
    };
    if let Some(span) = &node.span {
        let bad_root = root < 0 || root as usize >= span.node_of.len();
        if bad_root || (!red.commute && !span.consecutive) || !in_stock_order(span, &red) {
            return real();
        }
        let me_root = node.ranks[node.me] == root;
        if sbuf == in_place() && !me_root {
            return real();
        }
        let Some(input) = input(sbuf, rbuf, count as usize) else {
            return real();
        };
        if me_root && rbuf.is_null() && count > 0 {
            return real();
        }
        if count == 0 {
            ran();
            return 0;
        }
        // SAFETY: the caller's arguments, checked.
        let rc = unsafe { spanning_reduce(node, span, l, red, input, rbuf, count, dt, op, root) };
        ran();
        return rc;
    }
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
    let job = Job::new(Kind::Reduce(root), input, count, recv, red, l);
    // SAFETY: the caller's buffers, described by `job`.
    unsafe { go_or(node, &job, real) }
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
    crate::profile::data(count as i64, dt);
    // SAFETY: forwarded unchanged.
    let real =
        || to_real(|| unsafe { ffi::PMPI_Reduce_scatter_block(sbuf, rbuf, count, dt, op, comm) });
    let Some((node, l, red)) = common(comm, count, dt, op, false) else {
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
    let real = || to_real(|| unsafe { ffi::PMPI_Reduce_scatter(sbuf, rbuf, counts, dt, op, comm) });
    if counts.is_null() {
        return real();
    }
    let Some((node, l, red)) = common(comm, 0, dt, op, false) else {
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
    let Some((node, l, red)) = common(comm, count, dt, op, false) else {
        return real();
    };
    let (Some(recv), Some(input)) = (Buf::new(rbuf, count, dt), input(sbuf, rbuf, count as usize))
    else {
        return real();
    };
    if rbuf.is_null() && count > 0 {
        return real();
    }
    let job = Job::new(kind, input, count, Some(recv), red, l);
    // SAFETY: the caller's buffers, described by `job`.
    unsafe { go_or(node, &job, real) }
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
    crate::profile::data(count as i64, dt);
    // SAFETY: forwarded unchanged.
    let real = || to_real(|| unsafe { ffi::PMPI_Scan(sbuf, rbuf, count, dt, op, comm) });
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
    crate::profile::data(count as i64, dt);
    // SAFETY: forwarded unchanged.
    let real = || to_real(|| unsafe { ffi::PMPI_Exscan(sbuf, rbuf, count, dt, op, comm) });
    // SAFETY: the caller's arguments.
    unsafe { prefix(Kind::Exscan, sbuf, rbuf, count, dt, op, comm, real) }
}

/// The node phase of a reduction across nodes: `job` reduces to the
/// node's leader (into `job.recv`); should the heap fail it, the node's
/// own communicator does.
///
/// # Safety
/// The job's buffers are the caller's.
unsafe fn node_reduce(
    node: &Node,
    job: &Job,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
) -> c_int {
    // SAFETY: per the contract.
    if unsafe { fold::run(node, job) } {
        return 0;
    }
    gave_up();
    let span = node.span.as_ref().expect("a node phase spans nodes");
    let target = job
        .recv
        .map_or(core::ptr::null_mut(), |b| b.ptr as *mut c_void);
    let send = if core::ptr::eq(job.input, target as *const u8) {
        in_place()
    } else {
        job.input as *const c_void
    };
    // SAFETY: the caller's buffers over the node's communicator.
    unsafe { ffi::PMPI_Reduce(send, target, count, dt, op, 0, span.node.0) }
}

/// `MPI_Reduce` across nodes: each node reduces to its leader, the leaders
/// reduce to the root's leader, which hands the result to the root.
///
/// # Safety
/// As `MPI_Reduce`; `input` is the checked input buffer.
#[allow(clippy::too_many_arguments)]
unsafe fn spanning_reduce(
    node: &Node,
    span: &crate::comm::node::Span,
    l: Layout,
    red: Reducer,
    input: *const u8,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    root: c_int,
) -> c_int {
    let me_root = node.ranks[node.me] == root;
    let leader = node.me == 0;
    let rn = span.node_of[root as usize];
    let here = span.my_node == rn;
    // Whether the root leads its node (the same answer on all its members).
    let root_leads = node.ranks[0] == root;
    // The leader's partial result: the root's own buffer when the leader is
    // the root, else a private buffer of the data's span.
    let sp = l.span(count as usize);
    let mut tmp = vec![0u8; if leader && !me_root { sp.len } else { 0 }];
    let tmp_base = tmp.as_mut_ptr().wrapping_offset(-sp.lo);
    let target = if me_root {
        rbuf
    } else {
        tmp_base as *mut c_void
    };
    let Some(tb) = Buf::new(target, count, dt) else {
        return ffi::MPI_ERR_TYPE as c_int;
    };
    let job = Job::new(Kind::Reduce(0), input, count, leader.then_some(tb), red, l);
    // SAFETY: the caller's buffers and ours.
    let mut rc = unsafe { node_reduce(node, &job, count, dt, op) };
    if rc == 0 {
        if let Some(lc) = span.leaders() {
            // SAFETY: our buffer (or the root's) over the leaders'
            // communicator. The root's leader sends a copy of its partial
            // result rather than `MPI_IN_PLACE`: MPICH 4.0's reduce crashes
            // on `MPI_IN_PLACE` at a root other than 0 (its
            // reduce-scatter-gather algorithm, 8000 bytes of doubles).
            rc = unsafe {
                if here {
                    let mut part = vec![0u8; sp.len];
                    crate::dt::copy_disjoint(
                        (target as *const u8).wrapping_offset(sp.lo),
                        part.as_mut_ptr(),
                        sp.len,
                    );
                    let part_base = part.as_ptr().wrapping_offset(-sp.lo);
                    ffi::PMPI_Reduce(part_base.cast(), target, count, dt, op, rn as c_int, lc.0)
                } else {
                    ffi::PMPI_Reduce(
                        target,
                        core::ptr::null_mut(),
                        count,
                        dt,
                        op,
                        rn as c_int,
                        lc.0,
                    )
                }
            };
        }
    }
    if here && !root_leads {
        // The leader hands the result to the root: a broadcast among the
        // node's members that only the root reads.
        let root_member = node.member_of(root).expect("the root is on its own node");
        let mine = if leader || me_root { Some(tb) } else { None };
        // SAFETY: our buffer (leader) or the caller's (root).
        if !unsafe { node_bcast(node, mine.as_ref(), 0) } {
            gave_up();
            // SAFETY: the same buffers, over the node's communicator.
            unsafe {
                if leader {
                    rc = ffi::PMPI_Send(target, count, dt, root_member as c_int, 0, span.node.0);
                } else if me_root {
                    rc = ffi::PMPI_Recv(
                        rbuf,
                        count,
                        dt,
                        0,
                        0,
                        span.node.0,
                        ffi::RSMPI_STATUS_IGNORE,
                    );
                }
            }
        }
    }
    drop(tmp);
    rc
}
