//! The neighbourhoods of a communicator with a process topology, as the
//! neighbourhood collectives (`MPI_Neighbor_allgather`, `_alltoall`, ...)
//! see them: for each of this rank's receive blocks, the rank it comes
//! from and which of that rank's send blocks it is.
//!
//! MPI-4.0 §8.6 orders the neighbours: a Cartesian communicator has, for
//! each dimension `d`, the ranks at `-1` and `+1` along `d`
//! (`MPI_Cart_shift(comm, d, 1)`, `MPI_PROC_NULL` off a non-periodic
//! edge), as both sources and destinations; a graph communicator has
//! `MPI_Graph_neighbors` as both; a distributed graph has its own source
//! and destination lists (`MPI_Dist_graph_neighbors`). Which send block
//! lands in which receive block ([`Pairing`]) is where implementations
//! part, where one rank is a neighbour more than once (a periodic
//! Cartesian dimension of 2 or 1, a graph that lists a rank twice or
//! itself: [`Neighbors::ambiguous`]); heapmpi must move the bytes its MPI
//! moves ([`stock_pairing`]). Measured with `tests/c/coll_neighbor.c`, and
//! in the MPIs' trackers (mpi-forum/mpi-issues#153, the errata that made
//! the Cartesian rule explicit in MPI-4.0; pmodels/mpich#5777 and #7945;
//! open-mpi/ompi#7063):
//! - MPI-4.1 (Open MPI 4.1 and 5.0, whose blocking forms run in
//!   `coll/basic` with a tag per direction; MPICH from 5.0.2): on a
//!   Cartesian grid what a rank sends towards `+1` is what its `+1`
//!   neighbour receives from `-1` ([`Pairing::Direction`]); on graphs
//!   messages between two ranks match in order ([`Pairing::InOrder`]: the
//!   `o`-th time a source appears in a rank's source list is the `o`-th
//!   time that rank appears in the source's destination list).
//! - MPICH 4.0: `MPI_Neighbor_alltoall` posts its receives last to first,
//!   so the `o`-th occurrence from the start pairs with the `o`-th from the
//!   end ([`Pairing::Reverse`]), on every topology;
//!   `MPI_Neighbor_alltoallv` and `_alltoallw` match in order, on every
//!   topology.
//! - Others (MPICH 4.1 to 5.0.1 reverse all three, by #7945's account, not
//!   measured here; Intel MPI; older versions): unknown, so an ambiguous
//!   neighbourhood goes to the real MPI there. Without repeated neighbours
//!   every reading agrees.
//! - With one send block (`MPI_Neighbor_allgather(v)`) all agree.
//! - The nonblocking forms ([`stock_pairing_nonblocking`]) run elsewhere in
//!   the MPIs: Open MPI 4.1's in `libnbc`, which matches every topology in
//!   order, Cartesian grids included (measured with
//!   `tests/c/coll_nbneighbor.c`: a periodic ring of 2 and a 2x2 grid
//!   periodic in one dimension); MPICH 4.0's as its blocking forms; Intel
//!   MPI 2021's in order (a probe of rings of 1 and 2, grids of
//!   1x1 and 2x1 and a graph naming a neighbour twice, alltoall, `v` and
//!   `w`; its blocking forms stay unknown).
//!
//! Only the own lists are local knowledge (for a distributed graph), so the
//! first neighbourhood collective on a communicator gathers every rank's
//! lists once through the real MPI (the call is collective: every member
//! gathers at the same point) and checks that the graph is consistent
//! (every edge seen from both ends equally often); every member decides
//! from the same gathered lists, so all use the heap or none does.

use core::ffi::c_int;

use mpi_sys as ffi;

use crate::version::Library;

/// Where one receive block comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct From {
    /// The source's rank.
    pub src: i32,
    /// Which of the source's send blocks.
    pub block: u32,
    /// How many send blocks the source has (its out-degree).
    pub src_blocks: u32,
}

/// How the blocks exchanged between two ranks pair up (see the module
/// documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairing {
    /// Cartesian: receive block `k` is the source's send block `k ^ 1`.
    Direction,
    /// The `o`-th occurrence with the `o`-th occurrence.
    InOrder,
    /// The `o`-th occurrence from the start with the `o`-th from the end.
    Reverse,
}

/// A rank's neighbourhood, under every pairing that applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Neighbors {
    /// Per receive block, under [`Pairing::InOrder`]; `None` for
    /// `MPI_PROC_NULL`.
    pub in_order: Vec<Option<From>>,
    /// The same under [`Pairing::Reverse`].
    pub reverse: Vec<Option<From>>,
    /// The same under [`Pairing::Direction`] (Cartesian only).
    pub direction: Option<Vec<Option<From>>>,
    /// Send blocks (out-degree, `MPI_PROC_NULL` destinations included).
    pub blocks: usize,
    /// The topology's kind.
    pub kind: Kind,
    /// Whether some rank is another's (or its own) neighbour more than
    /// once anywhere in the topology, where the pairings differ (the same
    /// on every rank: decided from the whole graph).
    pub ambiguous: bool,
}

/// The neighbourhood calls whose pairing can differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exchange {
    /// `MPI_Neighbor_alltoall`.
    Alltoall,
    /// `MPI_Neighbor_alltoallv` and `MPI_Neighbor_alltoallw`.
    Alltoallv,
}

/// The pairing of ambiguous neighbourhoods in the MPI `lib` (its
/// `MPI_Get_library_version`, parsed: `crate::version::library()`, once
/// per process, not per call), where known (see the module
/// documentation); `None` sends ambiguous neighbourhoods to the real MPI.
pub fn stock_pairing(lib: Library, kind: Kind, call: Exchange) -> Option<Pairing> {
    let mpi41 = if kind == Kind::Cart {
        Pairing::Direction
    } else {
        Pairing::InOrder
    };
    match lib {
        Library::OpenMpi((major, minor, _)) => {
            ((major, minor) >= (4, 1) && major <= 5).then_some(mpi41)
        }
        Library::Mpich(v) => match v {
            (4, 0, _) => Some(match call {
                Exchange::Alltoall => Pairing::Reverse,
                Exchange::Alltoallv => Pairing::InOrder,
            }),
            _ if v >= (5, 0, 2) => Some(mpi41),
            _ => None,
        },
        Library::IntelMpi(_) | Library::Other => None,
    }
}

/// [`stock_pairing`] for the nonblocking forms (`MPI_Ineighbor_*`), where
/// measured (a periodic ring of 1 and 2, a periodic 1x1 and 2x1 grid and a
/// graph listing one neighbour twice, 2026-11-27): Open MPI 4.1 and 5.0
/// pair in order on every topology (their `libnbc`), MPICH 4.0 and 5.0.2
/// as their blocking forms, Intel MPI 2021.18 in order (`alltoall`, `v`
/// and `w` alike; its blocking forms are left to it: they leave blocks of
/// `Neighbor_alltoallv` unwritten on a ring of 2, see `tests/mpis.rs`).
/// Elsewhere an ambiguous neighbourhood goes to the real MPI.
pub fn stock_pairing_nonblocking(lib: Library, kind: Kind, call: Exchange) -> Option<Pairing> {
    match lib {
        Library::OpenMpi((major, minor, _)) => {
            ((major, minor) >= (4, 1) && major <= 5).then_some(Pairing::InOrder)
        }
        Library::Mpich(_) => stock_pairing(lib, kind, call),
        Library::IntelMpi(v) => (v.0 == 2021).then_some(Pairing::InOrder),
        Library::Other => None,
    }
}

impl Neighbors {
    /// The receive blocks under `p`; a Cartesian pairing asked of a graph
    /// falls back to the order.
    pub fn from(&self, p: Pairing) -> &[Option<From>] {
        match p {
            Pairing::Direction => self.direction.as_deref().unwrap_or(&self.in_order),
            Pairing::InOrder => &self.in_order,
            Pairing::Reverse => &self.reverse,
        }
    }

    /// Receive blocks (in-degree).
    pub fn indegree(&self) -> usize {
        self.in_order.len()
    }
}

/// Topology kinds, from `MPI_Topo_test`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `MPI_CART`.
    Cart,
    /// `MPI_GRAPH`.
    Graph,
    /// `MPI_DIST_GRAPH`.
    DistGraph,
}

/// Receive blocks of rank `me` of a Cartesian communicator under
/// [`Pairing::Direction`]: `mine` are its sources in neighbour order (`-1`
/// for `MPI_PROC_NULL`); every rank has as many send blocks (two per
/// dimension).
fn by_direction(mine: &[i32]) -> Vec<Option<From>> {
    mine.iter()
        .enumerate()
        .map(|(k, &s)| {
            (s >= 0).then_some(From {
                src: s,
                block: (k ^ 1) as u32,
                src_blocks: mine.len() as u32,
            })
        })
        .collect()
}

/// Receive blocks of rank `me` under the order pairings (`reverse`: the
/// source's destinations counted from the end).
fn by_order(
    me: usize,
    ins: &[Vec<i32>],
    outs: &[Vec<i32>],
    reverse: bool,
) -> Option<Vec<Option<From>>> {
    let mine = ins.get(me)?;
    let mut from = Vec::with_capacity(mine.len());
    for (k, &s) in mine.iter().enumerate() {
        if s < 0 {
            from.push(None);
            continue;
        }
        let o = mine[..k].iter().filter(|&&x| x == s).count();
        let theirs = &outs[s as usize];
        let hits = theirs.iter().enumerate().filter(|&(_, &d)| d == me as i32);
        let block = if reverse {
            hits.rev().nth(o)?.0
        } else {
            hits.clone().nth(o)?.0
        };
        from.push(Some(From {
            src: s,
            block: block as u32,
            src_blocks: theirs.len() as u32,
        }));
    }
    Some(from)
}

/// Rank `me`'s neighbourhood: `ins[r]` and `outs[r]` are rank `r`'s
/// source and destination lists (`-1` for `MPI_PROC_NULL`; on a Cartesian
/// communicator both are its neighbours). `None` when the lists do not
/// pair up (an edge seen a different number of times from its two ends or
/// a rank out of range: an erroneous program, or a rank whose query
/// failed; left to the real MPI). Every rank checks the whole graph, so all
/// reach the same answer.
pub fn neighbors(me: usize, kind: Kind, ins: &[Vec<i32>], outs: &[Vec<i32>]) -> Option<Neighbors> {
    let n = ins.len();
    if outs.len() != n {
        return None;
    }
    let in_range = |v: &Vec<i32>| v.iter().all(|&x| x < n as i32);
    if !ins.iter().all(in_range) || !outs.iter().all(in_range) {
        return None;
    }
    // Every edge (s -> r) as often in s's destinations as in r's sources.
    let mut count = std::collections::HashMap::<(i32, i32), i64>::new();
    for r in 0..n {
        for &s in ins[r].iter().filter(|&&s| s >= 0) {
            *count.entry((s, r as i32)).or_default() += 1;
        }
        for &d in outs[r].iter().filter(|&&d| d >= 0) {
            *count.entry((r as i32, d)).or_default() -= 1;
        }
    }
    if count.values().any(|&c| c != 0) {
        return None;
    }
    let mut edges = std::collections::HashMap::<(i32, i32), u32>::new();
    for (r, v) in ins.iter().enumerate() {
        for &s in v.iter().filter(|&&s| s >= 0) {
            *edges.entry((s, r as i32)).or_default() += 1;
        }
    }
    Some(Neighbors {
        kind,
        ambiguous: edges.values().any(|&c| c > 1),
        in_order: by_order(me, ins, outs, false)?,
        reverse: by_order(me, ins, outs, true)?,
        direction: (kind == Kind::Cart).then(|| by_direction(&ins[me])),
        blocks: outs[me].len(),
    })
}

/// `comm`'s topology kind, if it has one.
pub fn kind(comm: ffi::MPI_Comm) -> Option<Kind> {
    let mut t: c_int = 0;
    // SAFETY: a valid communicator (the caller's), an out-pointer.
    if unsafe { ffi::PMPI_Topo_test(comm, &mut t) } != 0 {
        return None;
    }
    // SAFETY: reading MPI constants.
    unsafe {
        if t == ffi::RSMPI_CART as c_int {
            Some(Kind::Cart)
        } else if t == ffi::RSMPI_GRAPH as c_int {
            Some(Kind::Graph)
        } else if t == ffi::RSMPI_DIST_GRAPH as c_int {
            Some(Kind::DistGraph)
        } else {
            None
        }
    }
}

/// This rank's out-degree in `comm`'s topology (the blocks a
/// neighbourhood all-to-all sends), if it has one.
pub fn outdegree(comm: ffi::MPI_Comm) -> Option<usize> {
    let (mut a, mut b, mut w): (c_int, c_int, c_int) = (0, 0, 0);
    // SAFETY: `comm` has topology `kind`; out-pointers.
    let ok = unsafe {
        match kind(comm)? {
            Kind::Cart => {
                let d = ffi::PMPI_Cartdim_get(comm, &mut a);
                b = 2 * a;
                d
            }
            Kind::Graph => {
                let r = ffi::PMPI_Comm_rank(comm, &mut w);
                if r != 0 {
                    r
                } else {
                    ffi::PMPI_Graph_neighbors_count(comm, w, &mut b)
                }
            }
            Kind::DistGraph => ffi::PMPI_Dist_graph_neighbors_count(comm, &mut a, &mut b, &mut w),
        }
    } == 0;
    ok.then(|| usize::try_from(b).ok()).flatten()
}

/// This rank's own (sources, destinations) in neighbour order, with
/// `MPI_PROC_NULL` as `-1`.
fn own_lists(comm: ffi::MPI_Comm, k: Kind, rank: c_int) -> Option<(Vec<i32>, Vec<i32>)> {
    // SAFETY: `comm` has topology `k`; every array has the length the
    // preceding query gave.
    unsafe {
        let null = ffi::RSMPI_PROC_NULL;
        let fix = |v: Vec<c_int>| -> Vec<i32> {
            v.into_iter()
                .map(|x| if x == null { -1 } else { x })
                .collect()
        };
        match k {
            Kind::Cart => {
                let mut nd = 0;
                if ffi::PMPI_Cartdim_get(comm, &mut nd) != 0 {
                    return None;
                }
                let mut v = Vec::with_capacity(2 * nd as usize);
                for d in 0..nd {
                    let (mut s, mut t) = (0, 0);
                    if ffi::PMPI_Cart_shift(comm, d, 1, &mut s, &mut t) != 0 {
                        return None;
                    }
                    v.push(s);
                    v.push(t);
                }
                let v = fix(v);
                Some((v.clone(), v))
            }
            Kind::Graph => {
                let mut nn = 0;
                if ffi::PMPI_Graph_neighbors_count(comm, rank, &mut nn) != 0 {
                    return None;
                }
                let mut v = vec![0; nn as usize];
                if ffi::PMPI_Graph_neighbors(comm, rank, nn, v.as_mut_ptr()) != 0 {
                    return None;
                }
                let v = fix(v);
                Some((v.clone(), v))
            }
            Kind::DistGraph => {
                let (mut i, mut o, mut w) = (0, 0, 0);
                if ffi::PMPI_Dist_graph_neighbors_count(comm, &mut i, &mut o, &mut w) != 0 {
                    return None;
                }
                let (mut si, mut so) = (vec![0; i as usize], vec![0; o as usize]);
                let (mut wi, mut wo) = (vec![0; i as usize + 1], vec![0; o as usize + 1]);
                let (wip, wop) = if w != 0 {
                    (wi.as_mut_ptr(), wo.as_mut_ptr())
                } else {
                    (ffi::RSMPI_UNWEIGHTED(), ffi::RSMPI_UNWEIGHTED())
                };
                if ffi::PMPI_Dist_graph_neighbors(
                    comm,
                    i,
                    si.as_mut_ptr(),
                    wip,
                    o,
                    so.as_mut_ptr(),
                    wop,
                ) != 0
                {
                    return None;
                }
                Some((fix(si), fix(so)))
            }
        }
    }
}

/// Gathers every rank's (sources, destinations) through the real MPI and
/// works out this rank's neighbourhood. Collective over `comm`: every
/// member calls it at the same point (its first neighbourhood collective),
/// and every member gets `None` alike when the graph does not pair up. A
/// member whose own query failed contributes lists that make the graph
/// inconsistent for all.
pub fn gather(comm: ffi::MPI_Comm, rank: c_int, size: c_int) -> Option<Neighbors> {
    let k = kind(comm)?;
    let (ins, outs) = own_lists(comm, k, rank).unwrap_or((vec![i32::MAX], vec![]));
    let n = size as usize;
    let mut degs = vec![0 as c_int; 2 * n];
    let mine = [ins.len() as c_int, outs.len() as c_int];
    // SAFETY: `degs` holds two ints per member; the send buffer two.
    let rc = unsafe {
        ffi::PMPI_Allgather(
            mine.as_ptr().cast(),
            2,
            ffi::RSMPI_INT32_T,
            degs.as_mut_ptr().cast(),
            2,
            ffi::RSMPI_INT32_T,
            comm,
        )
    };
    if rc != 0 {
        return None;
    }
    let counts: Vec<c_int> = (0..n).map(|r| degs[2 * r] + degs[2 * r + 1]).collect();
    let mut displs = vec![0 as c_int; n];
    for r in 1..n {
        displs[r] = displs[r - 1] + counts[r - 1];
    }
    let total = (displs[n - 1] + counts[n - 1]) as usize;
    let mut all = vec![0 as c_int; total.max(1)];
    let both: Vec<c_int> = ins.iter().chain(outs.iter()).copied().collect();
    // SAFETY: as above, sized from the gathered degrees.
    let rc = unsafe {
        ffi::PMPI_Allgatherv(
            both.as_ptr().cast(),
            both.len() as c_int,
            ffi::RSMPI_INT32_T,
            all.as_mut_ptr().cast(),
            counts.as_ptr(),
            displs.as_ptr(),
            ffi::RSMPI_INT32_T,
            comm,
        )
    };
    if rc != 0 {
        return None;
    }
    let mut all_ins = Vec::with_capacity(n);
    let mut all_outs = Vec::with_capacity(n);
    for r in 0..n {
        let at = displs[r] as usize;
        let (i, o) = (degs[2 * r] as usize, degs[2 * r + 1] as usize);
        all_ins.push(all[at..at + i].to_vec());
        all_outs.push(all[at + i..at + i + o].to_vec());
    }
    // (A rank whose own query failed sent an out-of-range source: every
    // rank sees it and gives up alike.)
    neighbors(rank as usize, k, &all_ins, &all_outs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(src: i32, block: u32, src_blocks: u32) -> Option<From> {
        Some(From {
            src,
            block,
            src_blocks,
        })
    }

    fn ring_of_two() -> Neighbors {
        // A periodic ring of 2: each rank's -1 and +1 neighbour is the other.
        let ins = vec![vec![1, 1], vec![0, 0]];
        neighbors(0, Kind::Cart, &ins, &ins).unwrap()
    }

    #[test]
    fn cart_by_direction_even_with_one_peer_on_both_sides() {
        let n = ring_of_two();
        assert_eq!(n.from(Pairing::Direction), [f(1, 1, 2), f(1, 0, 2)]);
        assert_eq!(n.from(Pairing::InOrder), [f(1, 0, 2), f(1, 1, 2)]);
        assert_eq!(n.from(Pairing::Reverse), [f(1, 1, 2), f(1, 0, 2)]);
        assert_eq!((n.blocks, n.indegree()), (2, 2));
        // A periodic dimension of 1: a rank is its own neighbour twice.
        let me = vec![vec![0, 0]];
        let n = neighbors(0, Kind::Cart, &me, &me).unwrap();
        assert_eq!(n.from(Pairing::Direction), [f(0, 1, 2), f(0, 0, 2)]);
    }

    #[test]
    fn repeated_neighbours_are_ambiguous_everywhere() {
        assert!(ring_of_two().ambiguous);
        // A ring of 3: every pair meets once (rank 1's view, and rank 0's).
        let ring3 = vec![vec![2, 1], vec![0, 2], vec![1, 0]];
        assert!(!neighbors(1, Kind::Cart, &ring3, &ring3).unwrap().ambiguous);
        // A graph whose only repeated edge is between ranks 1 and 2: rank
        // 0 must see it as ambiguous too.
        let g = vec![vec![1], vec![0, 2, 2], vec![1, 1]];
        assert!(neighbors(0, Kind::Graph, &g, &g).unwrap().ambiguous);
    }

    #[test]
    fn pairing_follows_the_mpi_and_its_version() {
        use Exchange::*;
        let ompi = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4";
        assert_eq!(
            stock_pairing(crate::version::parse(ompi), Kind::Cart, Alltoall),
            Some(Pairing::Direction)
        );
        assert_eq!(
            stock_pairing(crate::version::parse(ompi), Kind::Graph, Alltoallv),
            Some(Pairing::InOrder)
        );
        let ompi5 = "Open MPI v5.0.11, package: Open MPI user@localhost";
        assert_eq!(
            stock_pairing(crate::version::parse(ompi5), Kind::Cart, Alltoallv),
            Some(Pairing::Direction)
        );
        assert_eq!(
            stock_pairing(
                crate::version::parse("Open MPI v4.0.7, package"),
                Kind::Cart,
                Alltoall
            ),
            None
        );
        let mpich40 = "MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 2022";
        assert_eq!(
            stock_pairing(crate::version::parse(mpich40), Kind::Cart, Alltoall),
            Some(Pairing::Reverse)
        );
        assert_eq!(
            stock_pairing(crate::version::parse(mpich40), Kind::Cart, Alltoallv),
            Some(Pairing::InOrder)
        );
        assert_eq!(
            stock_pairing(crate::version::parse(mpich40), Kind::DistGraph, Alltoall),
            Some(Pairing::Reverse)
        );
        // The nonblocking forms: Open MPI 4.1 and 5.0 and Intel MPI 2021 in
        // order everywhere, MPICH as blocking.
        assert_eq!(
            stock_pairing_nonblocking(crate::version::parse(ompi), Kind::Cart, Alltoall),
            Some(Pairing::InOrder)
        );
        assert_eq!(
            stock_pairing_nonblocking(crate::version::parse(mpich40), Kind::Cart, Alltoall),
            Some(Pairing::Reverse)
        );
        assert_eq!(
            stock_pairing_nonblocking(crate::version::parse(ompi5), Kind::Cart, Alltoall),
            Some(Pairing::InOrder)
        );
        let mpich5 = "MPICH Version:      5.0.2\nMPICH Release date: Fri Sep 25";
        assert_eq!(
            stock_pairing_nonblocking(crate::version::parse(mpich5), Kind::Cart, Alltoallv),
            Some(Pairing::Direction)
        );
        assert_eq!(
            stock_pairing_nonblocking(
                crate::version::parse("Intel(R) MPI Library 2021.18"),
                Kind::Cart,
                Alltoall
            ),
            Some(Pairing::InOrder)
        );
        assert_eq!(
            stock_pairing(
                crate::version::parse("Intel(R) MPI Library 2021.18"),
                Kind::Cart,
                Alltoall
            ),
            None
        );
        assert_eq!(
            stock_pairing(crate::version::parse(mpich5), Kind::Cart, Alltoall),
            Some(Pairing::Direction)
        );
        assert_eq!(
            stock_pairing(crate::version::parse(mpich5), Kind::Graph, Alltoall),
            Some(Pairing::InOrder)
        );
        assert_eq!(
            stock_pairing(
                crate::version::parse("MPICH Version: 4.2.3\n"),
                Kind::Cart,
                Alltoall
            ),
            None
        );
        assert_eq!(
            stock_pairing(
                crate::version::parse("MPICH Version: 5.0.1\n"),
                Kind::Cart,
                Alltoall
            ),
            None
        );
        assert_eq!(
            stock_pairing(
                crate::version::parse("Intel(R) MPI Library 2021.13"),
                Kind::Cart,
                Alltoall
            ),
            None
        );
    }

    #[test]
    fn proc_null_blocks_come_from_nowhere() {
        // Non-periodic line 0 - 1 - 2.
        let ins = vec![vec![-1, 1], vec![0, 2], vec![1, -1]];
        let n0 = neighbors(0, Kind::Cart, &ins, &ins).unwrap();
        assert_eq!(n0.from(Pairing::Direction), [None, f(1, 0, 2)]);
        let n1 = neighbors(1, Kind::Cart, &ins, &ins).unwrap();
        assert_eq!(n1.from(Pairing::Direction), [f(0, 1, 2), f(2, 0, 2)]);
        // Each pair meets once: every pairing agrees.
        assert_eq!(n1.from(Pairing::InOrder), n1.from(Pairing::Direction));
        assert_eq!(n1.from(Pairing::Reverse), n1.from(Pairing::Direction));
    }

    #[test]
    fn graph_matches_repeated_edges_by_occurrence() {
        // 0 lists 1 twice and itself; 1 lists 0 twice.
        let ins = vec![vec![1, 0, 1], vec![0, 0]];
        let n0 = neighbors(0, Kind::Graph, &ins, &ins).unwrap();
        assert_eq!(
            n0.from(Pairing::InOrder),
            [f(1, 0, 2), f(0, 1, 3), f(1, 1, 2)]
        );
        assert_eq!(
            n0.from(Pairing::Reverse),
            [f(1, 1, 2), f(0, 1, 3), f(1, 0, 2)]
        );
        // No direction on a graph: the order.
        assert_eq!(n0.from(Pairing::Direction), n0.from(Pairing::InOrder));
        let n1 = neighbors(1, Kind::Graph, &ins, &ins).unwrap();
        assert_eq!(n1.from(Pairing::InOrder), [f(0, 0, 3), f(0, 2, 3)]);
    }

    #[test]
    fn directed_graph_pairs_sources_with_destinations() {
        // A ring 0 -> 1 -> 2 -> 0.
        let ins = vec![vec![2], vec![0], vec![1]];
        let outs = vec![vec![1], vec![2], vec![0]];
        let n = neighbors(1, Kind::DistGraph, &ins, &outs).unwrap();
        assert_eq!(n.from(Pairing::InOrder), [f(0, 0, 1)]);
        assert_eq!(n.blocks, 1);
    }

    #[test]
    fn a_graph_that_does_not_pair_up_is_refused_everywhere() {
        // 0 sends to 1, but 1 does not list 0 as a source.
        let ins = vec![vec![], vec![]];
        let outs = vec![vec![1], vec![]];
        assert!(neighbors(0, Kind::DistGraph, &ins, &outs).is_none());
        assert!(neighbors(1, Kind::DistGraph, &ins, &outs).is_none());
        // A rank out of range (what a failed query contributes).
        let bad = vec![vec![i32::MAX], vec![]];
        assert!(neighbors(1, Kind::Cart, &bad, &bad).is_none());
    }
}
