//! The entry points of the nonblocking reductions (`MPI_Ireduce`,
//! `Iallreduce`, `Iscan`, `Iexscan`, `Ireduce_scatter_block`,
//! `Ireduce_scatter`): the checks
//! every member makes alike and the `Kind::Reduce` operation they queue,
//! or the real call. Which contributions each member combines is its
//! `Fold` (see the parent module for why only exact or two-member
//! reductions are taken).

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::super::op::Reducer;
use super::super::{in_place, rank_ok};
use super::calls::queue_or;
use super::{nb_node, Fold, Kind, To};
use crate::comm::node::Node;
use crate::dt;

/// The reductions' common checks: the block, and what to reduce. `count`
/// is the elements this member receives (for `Fold::Block`, one of the
/// `n` blocks of every contribution; for `Fold::Part`, its part of the
/// `total`). Every member decides alike: what is checked is the same on
/// all of them in a correct program.
#[allow(clippy::too_many_arguments)]
pub(super) fn reduction(
    comm: ffi::MPI_Comm,
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    root: Option<c_int>,
    fold: Fold,
) -> Option<(&'static Node, Kind)> {
    let node = nb_node(comm)?;
    if count < 0 {
        return None;
    }
    let root = match root {
        Some(r) => Some(rank_ok(r, node.n)?),
        None => None,
    };
    let l = dt::layout(dt)?;
    if !l.d.named || !l.d.contig || l.extent != l.d.size {
        return None;
    }
    let red = Reducer::new(op, dt, &l)?;
    if !red.native() || !(red.exact() || node.n == 2) {
        return None;
    }
    let count = count as usize;
    let bytes = fold.elements(count, node.n) * l.d.size;
    let receives = match fold {
        Fold::Exscan => node.me != 0,
        Fold::Part { .. } => count > 0,
        _ => root.is_none_or(|r| r == node.me),
    };
    let send = if sbuf == in_place() {
        // In place: the root's (or everyone's) data is in the receive
        // buffer; elsewhere MPI_IN_PLACE is not a valid send buffer.
        if root.is_some_and(|r| r != node.me) {
            return None;
        }
        rbuf as *const u8
    } else {
        sbuf as *const u8
    };
    if bytes > 0 && (send.is_null() || (receives && rbuf.is_null())) {
        return None;
    }
    let kind = Kind::Reduce {
        root,
        send,
        recv: rbuf as *mut u8,
        count,
        bytes,
        red,
        fold,
    };
    (bytes <= node.inline_max || super::large::takes(node, &kind)).then_some((node, kind))
}

/// `MPI_Ireduce`, its request new or a persistent one being started (`to`).
///
/// # Safety
/// As `MPI_Ireduce`; `to` as [`queue_or`]'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ireduce_to(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    root: c_int,
    comm: ffi::MPI_Comm,
    to: To,
) -> c_int {
    crate::profile::data(count as i64, dt);
    let queued = reduction(comm, sbuf, rbuf, count, dt, op, Some(root), Fold::All);
    // SAFETY: the caller's arguments; the real call forwards them unchanged.
    unsafe {
        queue_or(comm, queued, to, |request| {
            ffi::PMPI_Ireduce(sbuf, rbuf, count, dt, op, root, comm, request)
        })
    }
}

/// `MPI_Iallreduce`, its request new or a persistent one being started (`to`).
///
/// # Safety
/// As `MPI_Iallreduce`; `to` as [`queue_or`]'s.
pub(super) unsafe fn iallreduce_to(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    to: To,
) -> c_int {
    crate::profile::data(count as i64, dt);
    let queued = reduction(comm, sbuf, rbuf, count, dt, op, None, Fold::All);
    // SAFETY: the caller's arguments; the real call forwards them unchanged.
    unsafe {
        queue_or(comm, queued, to, |request| {
            ffi::PMPI_Iallreduce(sbuf, rbuf, count, dt, op, comm, request)
        })
    }
}

/// `MPI_Iscan`, `MPI_Iexscan` (`fold` `Scan`, `Exscan`) and
/// `MPI_Ireduce_scatter_block` (`Block`, `count` per block).
///
/// # Safety
/// As those calls; `to` as [`queue_or`]'s.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn ifold_to(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    fold: Fold,
    to: To,
) -> c_int {
    crate::profile::data(count as i64, dt);
    let queued = reduction(comm, sbuf, rbuf, count, dt, op, None, fold);
    // SAFETY: the caller's arguments; the real call forwards them unchanged.
    unsafe {
        queue_or(comm, queued, to, |request| match fold {
            Fold::Scan => ffi::PMPI_Iscan(sbuf, rbuf, count, dt, op, comm, request),
            Fold::Exscan => ffi::PMPI_Iexscan(sbuf, rbuf, count, dt, op, comm, request),
            _ => ffi::PMPI_Ireduce_scatter_block(sbuf, rbuf, count, dt, op, comm, request),
        })
    }
}

/// `MPI_Ireduce`.
///
/// # Safety
/// As `MPI_Ireduce`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ireduce(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    root: c_int,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe { ireduce_to(sbuf, rbuf, count, dt, op, root, comm, To::New(request)) }
}

/// `MPI_Iallreduce`.
///
/// # Safety
/// As `MPI_Iallreduce`.
pub unsafe fn iallreduce(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe { iallreduce_to(sbuf, rbuf, count, dt, op, comm, To::New(request)) }
}

/// `MPI_Iscan`.
///
/// # Safety
/// As `MPI_Iscan`.
pub unsafe fn iscan(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe {
        ifold_to(
            sbuf,
            rbuf,
            count,
            dt,
            op,
            comm,
            Fold::Scan,
            To::New(request),
        )
    }
}

/// `MPI_Iexscan`.
///
/// # Safety
/// As `MPI_Iexscan`.
pub unsafe fn iexscan(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe {
        ifold_to(
            sbuf,
            rbuf,
            count,
            dt,
            op,
            comm,
            Fold::Exscan,
            To::New(request),
        )
    }
}

/// `MPI_Ireduce_scatter_block`.
///
/// # Safety
/// As `MPI_Ireduce_scatter_block`.
pub unsafe fn ireduce_scatter_block(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe {
        ifold_to(
            sbuf,
            rbuf,
            count,
            dt,
            op,
            comm,
            Fold::Block,
            To::New(request),
        )
    }
}

/// `MPI_Ireduce_scatter`: the reduction of every member's `sum(counts)`
/// elements, of which member `r` receives `counts[r]`, starting after
/// those of the members before it (`Fold::Part`); on bad counts (negative,
/// or a sum beyond memory) every member calls the real MPI, whose error
/// handler reports what is wrong.
///
/// # Safety
/// As `MPI_Ireduce_scatter`: `counts` holds one count per member.
pub unsafe fn ireduce_scatter(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    counts: *const c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: the caller's arguments.
    unsafe { ireduce_scatter_to(sbuf, rbuf, counts, dt, op, comm, To::New(request)) }
}

/// `MPI_Ireduce_scatter`, its request new or a persistent one being
/// started (`to`).
///
/// # Safety
/// As `MPI_Ireduce_scatter`; `to` as `queue_or`'s.
pub(super) unsafe fn ireduce_scatter_to(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    counts: *const c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    to: To,
) -> c_int {
    // SAFETY: the caller's arguments; the real call forwards them unchanged.
    unsafe {
        let queued = ireduce_scatter_op(sbuf, rbuf, counts, dt, op, comm);
        queue_or(comm, queued, to, |request| {
            ffi::PMPI_Ireduce_scatter(sbuf, rbuf, counts, dt, op, comm, request)
        })
    }
}

/// The operation of `MPI_Ireduce_scatter`, or `None` for the real MPI.
///
/// # Safety
/// As `MPI_Ireduce_scatter`.
pub(super) unsafe fn ireduce_scatter_op(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    counts: *const c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
) -> Option<(&'static Node, Kind)> {
    let node = nb_node(comm)?;
    if counts.is_null() {
        return None;
    }
    // SAFETY: the caller's array of one count per member (`node.n` is the
    // communicator's size).
    let counts = unsafe { core::slice::from_raw_parts(counts, node.n) };
    let (first, total) = part_of(counts, node.me)?;
    crate::profile::data(counts[node.me] as i64, dt);
    reduction(
        comm,
        sbuf,
        rbuf,
        counts[node.me],
        dt,
        op,
        None,
        Fold::Part { first, total },
    )
}

/// Member `me`'s first element and the total of `counts` (one per
/// member); `None` when a count is negative or the total overflows.
fn part_of(counts: &[c_int], me: usize) -> Option<(usize, usize)> {
    let mut first = 0usize;
    let mut total = 0usize;
    for (m, &c) in counts.iter().enumerate() {
        let c = usize::try_from(c).ok()?;
        if m == me {
            first = total;
        }
        total = total.checked_add(c)?;
    }
    Some((first, total))
}

#[cfg(test)]
mod tests {
    use super::part_of;
    use super::Fold;

    #[test]
    fn folds_name_each_members_part() {
        // 3 members; this one receives 4 elements.
        assert_eq!(Fold::All.elements(4, 3), 4);
        assert_eq!(Fold::All.part(4, 2), (0, 4));
        assert_eq!(Fold::Scan.part(4, 2), (0, 4));
        assert_eq!(Fold::Block.elements(4, 3), 12);
        assert_eq!(Fold::Block.part(4, 2), (8, 4));
        let part = Fold::Part {
            first: 3,
            total: 10,
        };
        assert_eq!(part.elements(4, 3), 10);
        assert_eq!(part.part(4, 1), (3, 4));
    }

    #[test]
    fn parts_follow_the_counts() {
        assert_eq!(part_of(&[3, 0, 5, 2], 0), Some((0, 10)));
        assert_eq!(part_of(&[3, 0, 5, 2], 1), Some((3, 10)));
        assert_eq!(part_of(&[3, 0, 5, 2], 2), Some((3, 10)));
        assert_eq!(part_of(&[3, 0, 5, 2], 3), Some((8, 10)));
        assert_eq!(part_of(&[0, 0], 1), Some((0, 0)));
        assert_eq!(part_of(&[1, -1], 0), None);
        assert_eq!(
            part_of(&[i32::MAX; 4], 2),
            Some((2 * i32::MAX as usize, 4 * i32::MAX as usize))
        );
    }
}
