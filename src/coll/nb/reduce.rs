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
use super::schedule::nb_node;
use super::{Fold, Kind};
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

// The entry points.

nb_entry! {
    "MPI_Ireduce": ireduce / ireduce_to(
        sbuf: *const c_void,
        rbuf: *mut c_void,
        count: c_int,
        dt: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
        root: c_int,
        comm: ffi::MPI_Comm,
    ) on comm, data(count, dt);
    plan = reduction(comm, sbuf, rbuf, count, dt, op, Some(root), Fold::All);
    real = ffi::PMPI_Ireduce;
    persistent "MPI_Reduce_init": reduce_init;
    init_args = CollArgs {
        root,
        ..fold_args(REDUCE, sbuf, rbuf, count, dt, op, comm)
    };
    init_real = ffi::PMPI_Reduce_init;
}

nb_entry! {
    "MPI_Iallreduce": iallreduce / iallreduce_to(
        sbuf: *const c_void,
        rbuf: *mut c_void,
        count: c_int,
        dt: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
        comm: ffi::MPI_Comm,
    ) on comm, data(count, dt);
    plan = reduction(comm, sbuf, rbuf, count, dt, op, None, Fold::All);
    real = ffi::PMPI_Iallreduce;
    persistent "MPI_Allreduce_init": allreduce_init;
    init_args = fold_args(ALLREDUCE, sbuf, rbuf, count, dt, op, comm);
    init_real = ffi::PMPI_Allreduce_init;
}

nb_entry! {
    "MPI_Iscan": iscan / iscan_to(
        sbuf: *const c_void,
        rbuf: *mut c_void,
        count: c_int,
        dt: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
        comm: ffi::MPI_Comm,
    ) on comm, data(count, dt);
    plan = reduction(comm, sbuf, rbuf, count, dt, op, None, Fold::Scan);
    real = ffi::PMPI_Iscan;
    persistent "MPI_Scan_init": scan_init;
    init_args = fold_args(SCAN, sbuf, rbuf, count, dt, op, comm);
    init_real = ffi::PMPI_Scan_init;
}

nb_entry! {
    "MPI_Iexscan": iexscan / iexscan_to(
        sbuf: *const c_void,
        rbuf: *mut c_void,
        count: c_int,
        dt: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
        comm: ffi::MPI_Comm,
    ) on comm, data(count, dt);
    plan = reduction(comm, sbuf, rbuf, count, dt, op, None, Fold::Exscan);
    real = ffi::PMPI_Iexscan;
    persistent "MPI_Exscan_init": exscan_init;
    init_args = fold_args(EXSCAN, sbuf, rbuf, count, dt, op, comm);
    init_real = ffi::PMPI_Exscan_init;
}

nb_entry! {
    "MPI_Ireduce_scatter_block": ireduce_scatter_block / ireduce_scatter_block_to(
        sbuf: *const c_void,
        rbuf: *mut c_void,
        count: c_int,
        dt: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
        comm: ffi::MPI_Comm,
    ) on comm, data(count, dt);
    plan = reduction(comm, sbuf, rbuf, count, dt, op, None, Fold::Block);
    real = ffi::PMPI_Ireduce_scatter_block;
    persistent "MPI_Reduce_scatter_block_init": reduce_scatter_block_init;
    init_args = fold_args(REDUCE_SCATTER_BLOCK, sbuf, rbuf, count, dt, op, comm);
    init_real = ffi::PMPI_Reduce_scatter_block_init;
}

nb_entry! {
    /// The reduction of every member's `sum(counts)` elements (`counts`:
    /// one per member), of which member `r` receives `counts[r]`, starting
    /// after those of the members before it (`Fold::Part`); on bad counts
    /// (negative, or a sum beyond memory) every member calls the real MPI,
    /// whose error handler reports what is wrong.
    "MPI_Ireduce_scatter": ireduce_scatter / ireduce_scatter_to(
        sbuf: *const c_void,
        rbuf: *mut c_void,
        counts: *const c_int,
        dt: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
        comm: ffi::MPI_Comm,
    ) on comm;
    op = ireduce_scatter_op {
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
    real = ffi::PMPI_Ireduce_scatter;
    persistent "MPI_Reduce_scatter_init": reduce_scatter_init with (request, real) {
        let a = CollArgs {
            sbuf,
            rbuf,
            sdt: dt,
            op,
            root: -1,
            ..args(REDUCE_SCATTER, comm)
        };
        v_init(a, [NONE, NONE, all(counts), NONE], None, request, real)
    }
    init_real = ffi::PMPI_Reduce_scatter_init;
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
