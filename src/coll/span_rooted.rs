//! `MPI_Gather` and `MPI_Scatter` on a communicator that spans nodes: a
//! node phase through the heap between each node's members and one of
//! them, and one real-MPI collective among those, one per node, as the
//! two-level gather and scatter of Open MPI's `coll/han` (Luo et al., "HAN: a
//! Hierarchical AutotuNed Collective Communication Framework", CLUSTER
//! 2020) and MPICH's node-aware compositions do.
//!
//! The root has some index `k` on its node, and on every node the member
//! of index `k` relays its node's pieces (the node's leader when the root
//! leads its node). Gather: each node gathers its ranks' pieces to its
//! relay (the root's node straight into the root's receive buffer, the
//! others into a packed block at their relay), then the relays gather the
//! blocks to the root (`MPI_Gatherv` of bytes over the communicator of the
//! members of index `k`: a block is its node's pieces packed in rank
//! order). Scatter runs the same way backwards. A block crosses the
//! network once, from one relay, instead of once per rank. `coll/han`
//! pairs ranks across nodes by their index on the node the same way (its
//! "up" communicators).
//!
//! When each node's ranks are consecutive, a node's pieces are one run of
//! the root's buffer, and the blocks go to (come from) it in place. When
//! they are not (ranks dealt to the nodes round-robin, as `mpirun --map-by
//! node` and MPICH's default place them), the root gathers into (scatters
//! from) a packed copy of its whole buffer, node by node, as `coll/han`
//! reorders at its root.
//!
//! Taken when every node has a member of the root's index and the whole
//! buffer's bytes fit the real MPI's `int` counts. Every rank knows both
//! the same way, so every rank takes the same path; other calls go to the
//! real MPI. A node phase the heap cannot serve runs over the node's own
//! communicator, so the other nodes never notice.
//!
//! [`run`] is where both calls choose between this, their one-node form
//! (`node_gather`, `node_scatter`) and the real MPI.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::node_rooted::{node_gather, node_scatter};
use super::{gave_up, in_place, ran, Buf, Stage};
use crate::comm::node::{Node, Span};

/// A byte buffer for a node's packed block: in the shared heap when it
/// has room (the node phase then writes or reads it in place), else
/// private memory (the node phase stages it).
pub(super) enum Block {
    Shared(Stage),
    Private(Vec<u8>),
}

impl Block {
    pub(super) fn new(len: usize) -> Block {
        match Stage::new(len) {
            Some(st) => Block::Shared(st),
            None => Block::Private(vec![0; len]),
        }
    }

    pub(super) fn ptr(&mut self) -> *mut u8 {
        match self {
            Block::Shared(st) => st.0,
            Block::Private(v) => v.as_mut_ptr(),
        }
    }
}

/// `MPI_UINT8_T`: the relays move packed bytes (the real MPI has no
/// `MPI_BYTE` handle in the bindings; both ends use this one type).
pub(super) fn bytes_type() -> ffi::MPI_Datatype {
    // SAFETY: reading an MPI constant.
    unsafe { ffi::RSMPI_UINT8_T }
}

/// One piece of `pb` packed bytes at `p`, as a buffer (its `piece(i)` at
/// `p + i * pb`).
fn byte_buf(p: *mut u8, pb: usize) -> Buf {
    Buf::new(p.cast(), pb as c_int, bytes_type()).expect("a predefined type")
}

/// The layout of a rooted collective across nodes, when it is taken (see
/// the module's opening); with the root's index 0, the layout of the
/// leaders' packed blocks in an allgather across interleaved nodes.
pub(super) struct Plan {
    /// Each node's ranks in rank order (its members in member order).
    members: Vec<Vec<usize>>,
    /// The root's node.
    rn: usize,
    /// The root's index on its node: each node's relay has this index.
    k: usize,
    /// The nodes in their relays' rank order: rank `p` of the relays'
    /// communicator is node `order[p]`'s relay.
    order: Vec<usize>,
    /// Each node's ranks are consecutive: its pieces are one run of the
    /// root's buffer, which the blocks go to and come from in place.
    /// Otherwise (ranks dealt round-robin, ...) the root's whole buffer
    /// goes through a packed copy, node by node.
    runs: bool,
}

impl Plan {
    /// `of`: each rank's node; `consecutive`: each node's ranks are.
    fn new(of: &[u32], consecutive: bool, root: usize, pb: usize) -> Option<Plan> {
        let total = pb.checked_mul(of.len())?;
        if total > c_int::MAX as usize || root >= of.len() {
            return None;
        }
        let nodes = of.iter().map(|&j| j as usize + 1).max().unwrap_or(0);
        let mut members = vec![Vec::new(); nodes];
        for (r, &j) in of.iter().enumerate() {
            members[j as usize].push(r);
        }
        let rn = of[root] as usize;
        let k = members[rn].iter().position(|&r| r == root)?;
        // Every node needs a relay of the root's index.
        if members.iter().any(|m| m.len() <= k) {
            return None;
        }
        // The relays' communicator ranks its members in rank order (the
        // node order when the nodes are runs).
        let mut order: Vec<usize> = (0..nodes).collect();
        order.sort_by_key(|&j| members[j][k]);
        Some(Plan {
            members,
            rn,
            k,
            order,
            runs: consecutive,
        })
    }

    /// The leaders' layout: as a rooted collective whose root is rank 0
    /// (node 0's leader), whose relays are the nodes' leaders in node
    /// order. `None` when the whole buffer's bytes overflow an int.
    pub(super) fn leaders(of: &[u32], pb: usize) -> Option<Plan> {
        Plan::new(of, false, 0, pb)
    }

    /// Each node's ranks in rank order, node by node.
    pub(super) fn members(&self) -> &[Vec<usize>] {
        &self.members
    }

    /// The root's node's rank among the relays (the root's own).
    fn root_peer(&self) -> usize {
        self.order
            .iter()
            .position(|&j| j == self.rn)
            .expect("every node has a relay")
    }

    /// Where the root's node's block sits in the packed copy, in bytes.
    fn root_block(&self, pb: usize) -> usize {
        self.displs(pb)[self.root_peer()]
    }

    /// Where each relay's block sits (relay rank order), in bytes: in the
    /// root's buffer at its node's first rank's piece (`runs`), else in
    /// the packed copy, one block after another.
    pub(super) fn displs(&self, pb: usize) -> Vec<usize> {
        let mut at = 0;
        self.order
            .iter()
            .map(|&j| {
                let m = &self.members[j];
                if self.runs {
                    m[0] * pb
                } else {
                    at += m.len() * pb;
                    at - m.len() * pb
                }
            })
            .collect()
    }

    /// Each relay's block's bytes and displacement (relay rank order),
    /// as the real MPI's ints.
    pub(super) fn blocks(&self, pb: usize) -> (Vec<c_int>, Vec<c_int>) {
        let counts = (self.order.iter())
            .map(|&j| (self.members[j].len() * pb) as c_int)
            .collect();
        let displs = self.displs(pb).into_iter().map(|d| d as c_int).collect();
        (counts, displs)
    }

    /// The relays' byte counts and displacements (relay rank order); the
    /// root's node gets none: its pieces are in place already.
    fn counts(&self, pb: usize) -> (Vec<c_int>, Vec<c_int>) {
        let (mut counts, displs) = self.blocks(pb);
        counts[self.root_peer()] = 0;
        (counts, displs)
    }

    /// Every piece of a packed copy of the whole buffer: (rank, byte
    /// offset in the copy), node by node in relay order.
    pub(super) fn packed_pieces(&self, pb: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let displs = self.displs(pb);
        self.order.iter().enumerate().flat_map(move |(p, &j)| {
            let d = displs[p];
            self.members[j]
                .iter()
                .enumerate()
                .map(move |(i, &r)| (r, d + i * pb))
        })
    }
}

/// Which rooted collective [`run`] runs.
#[derive(Clone, Copy)]
pub(super) enum Rooted {
    Gather,
    Scatter,
}

/// One rooted collective across nodes: where it runs, and how.
struct Call<'a> {
    node: &'a Node,
    span: &'a Span,
    plan: Plan,
    /// The root's rank.
    root: usize,
    /// One piece's packed bytes (the same at every rank).
    pb: usize,
}

/// `MPI_Gather` or `MPI_Scatter` once its arguments are taken: on one node
/// through the heap, across nodes as the module says, else (or should the
/// heap fail a one-node call) `real`. `send` and `recv` are this rank's
/// sides as the collective has them (`None` where there is none: a root
/// in place, a non-root's insignificant side), `root` the root's rank.
/// Every rank takes the same path.
///
/// # Safety
/// The buffers are the caller's.
pub(super) unsafe fn run(
    kind: Rooted,
    node: &Node,
    (send, recv): (Option<Buf>, Option<Buf>),
    root: usize,
    real: impl FnOnce() -> c_int,
) -> c_int {
    let Some(span) = &node.span else {
        // SAFETY: the caller's buffers.
        let done = unsafe {
            match kind {
                Rooted::Gather => node_gather(node, root, send, recv),
                Rooted::Scatter => node_scatter(node, root, send, recv),
            }
        };
        if !done {
            gave_up();
            return real();
        }
        ran();
        return 0;
    };
    // One piece's packed size, the same at every rank (MPI makes every
    // send side and receive side of a piece agree).
    let pb = send.or(recv).map_or(0, |b| b.bytes());
    let Some(plan) = Plan::new(&span.node_of, span.consecutive, root, pb) else {
        crate::profile::real(crate::profile::How::Remote, None);
        return real();
    };
    let c = Call {
        node,
        span,
        plan,
        root,
        pb,
    };
    // SAFETY: the caller's buffers.
    unsafe {
        match kind {
            Rooted::Gather => gather(&c, send, recv),
            Rooted::Scatter => scatter(&c, send, recv),
        }
    }
}

/// `MPI_Gather` across nodes. `send` is this rank's piece (`None` at a
/// root that gathers in place), `recv` the root's whole receive buffer's
/// first piece (`None` elsewhere).
///
/// # Safety
/// The buffers are the caller's.
unsafe fn gather(c: &Call, send: Option<Buf>, recv: Option<Buf>) -> c_int {
    let (node, span, plan, root, pb) = (c.node, c.span, &c.plan, c.root, c.pb);
    let (here, n, k) = (span.my_node as usize, node.n, plan.k);
    let size = span.node_of.len();
    // The relay's block of its node's pieces; at the root when the nodes
    // are not runs, the packed copy of the whole buffer (its own node's
    // block included).
    let mut block = None;
    let mut whole: Option<Block> = None;
    let rc = if here == plan.rn && plan.runs {
        // Straight into the root's buffer: its node's pieces start at its
        // node's first rank's.
        let local = recv.map(|r| r.piece(plan.members[here][0]));
        // SAFETY: the caller's buffers.
        if unsafe { node_gather(node, k, send, local) } {
            0
        } else {
            gave_up();
            let (sp, sc, sd) = send.map_or((in_place(), 0, bytes_type()), |b| {
                (b.ptr as *const c_void, b.count as c_int, b.dt)
            });
            let (rp, rc, rd) = local.map_or((core::ptr::null_mut(), 0, bytes_type()), |b| {
                (b.ptr.cast(), b.count as c_int, b.dt)
            });
            // SAFETY: the caller's arguments over the node's communicator,
            // whose member k is the root.
            unsafe { ffi::PMPI_Gather(sp, sc, sd, rp, rc, rd, k as c_int, span.node.0) }
        }
    } else {
        // A root gathering in place has its piece in its receive buffer.
        let mine = send
            .or_else(|| recv.map(|r| r.piece(root)))
            .expect("only the root gathers in place");
        let local = (node.me == k).then(|| {
            let p = if here == plan.rn {
                let w = whole.insert(Block::new(pb * size));
                // SAFETY: the root's block lies within the copy.
                unsafe { w.ptr().add(plan.root_block(pb)) }
            } else {
                block.insert(Block::new(pb * n)).ptr()
            };
            byte_buf(p, pb)
        });
        // SAFETY: the caller's buffer and the relay's block.
        if unsafe { node_gather(node, k, Some(mine), local) } {
            0
        } else {
            gave_up();
            let mut packed = vec![0u8; pb];
            // SAFETY: the caller's buffer; `packed` has room.
            unsafe { mine.pack_to(packed.as_mut_ptr()) };
            let rp = local.map_or(core::ptr::null_mut(), |b| b.ptr);
            let bt = bytes_type();
            // SAFETY: bytes over the node's communicator, to its relay.
            unsafe {
                ffi::PMPI_Gather(
                    packed.as_ptr().cast(),
                    pb as c_int,
                    bt,
                    rp.cast(),
                    pb as c_int,
                    bt,
                    k as c_int,
                    span.node.0,
                )
            }
        }
    };
    let Some(l) = span.peers(k) else {
        ran();
        return rc;
    };
    if rc != 0 {
        return rc;
    }
    let bt = bytes_type();
    let root_peer = plan.root_peer() as c_int;
    let rc = if here == plan.rn {
        let recv = recv.expect("the root's node's relay is the root");
        let all = recv.times(size);
        // The root's own node's pieces are in place already (and get no
        // bytes): the other nodes' blocks land straight in a dense buffer
        // whose nodes are runs (piece r's bytes sit r * pb in), else in a
        // packed copy of the whole buffer, unpacked piece by piece.
        let (counts, displs) = plan.counts(pb);
        let into = if let Some(w) = whole.as_mut() {
            w.ptr()
        } else if all.d.contig {
            recv.ptr
        } else {
            whole.insert(Block::new(all.bytes())).ptr()
        };
        // SAFETY: the caller's dense receive buffer or `whole`, which the
        // counts and displacements stay within.
        let rc = unsafe {
            ffi::PMPI_Gatherv(
                in_place(),
                0,
                bt,
                into.cast(),
                counts.as_ptr(),
                displs.as_ptr(),
                bt,
                root_peer,
                l.0,
            )
        };
        if let (0, Some(w)) = (rc, whole.as_mut()) {
            let base = w.ptr();
            for (r, at) in plan.packed_pieces(pb) {
                // The root's node's pieces are in place already when the
                // nodes are runs; gathered in place, the root's own piece
                // stays as it is.
                if (plan.runs && span.node_of[r] as usize == plan.rn)
                    || (r == root && send.is_none())
                {
                    continue;
                }
                // SAFETY: the caller's receive buffer; the copy holds piece
                // r's bytes at `at`.
                unsafe { recv.piece(r).unpack_from(base.add(at), pb) };
            }
        }
        rc
    } else {
        let b = block.as_mut().expect("a relay has its node's block");
        // SAFETY: the relay's block of n pieces; the receive arguments
        // are not significant at a non-root.
        unsafe {
            ffi::PMPI_Gatherv(
                b.ptr().cast(),
                (n * pb) as c_int,
                bt,
                core::ptr::null_mut(),
                core::ptr::null(),
                core::ptr::null(),
                bt,
                root_peer,
                l.0,
            )
        }
    };
    ran();
    rc
}

/// `MPI_Scatter` across nodes. `send` is the root's whole send buffer's
/// first piece (`None` elsewhere), `recv` this rank's piece (`None` at a
/// root that receives in place).
///
/// # Safety
/// The buffers are the caller's.
unsafe fn scatter(c: &Call, send: Option<Buf>, recv: Option<Buf>) -> c_int {
    let (node, span, plan, pb) = (c.node, c.span, &c.plan, c.pb);
    let (here, n, k) = (span.my_node as usize, node.n, plan.k);
    let size = span.node_of.len();
    let bt = bytes_type();
    // As in `gather`: a relay's block, the root's packed copy.
    let mut block = None;
    let mut whole: Option<Block> = None;
    if let Some(l) = span.peers(k) {
        let rc = if here == plan.rn {
            let send = send.expect("the root's node's relay is the root");
            let all = send.times(size);
            let from = if plan.runs && all.d.contig {
                send.ptr
            } else {
                let base = whole.insert(Block::new(all.bytes())).ptr();
                for (r, at) in plan.packed_pieces(pb) {
                    // SAFETY: the caller's buffer; the copy has room for
                    // piece r at `at`.
                    unsafe { send.piece(r).pack_to(base.add(at)) };
                }
                base
            };
            let (counts, displs) = plan.counts(pb);
            // SAFETY: the caller's dense buffer or its packed copy, which
            // the counts and displacements stay within; the root keeps
            // its own node's pieces.
            unsafe {
                ffi::PMPI_Scatterv(
                    from.cast(),
                    counts.as_ptr(),
                    displs.as_ptr(),
                    bt,
                    in_place() as *mut c_void,
                    0,
                    bt,
                    plan.root_peer() as c_int,
                    l.0,
                )
            }
        } else {
            let b = block.insert(Block::new(pb * n));
            // SAFETY: the relay's block of n pieces; the send arguments
            // are not significant at a non-root.
            unsafe {
                ffi::PMPI_Scatterv(
                    core::ptr::null(),
                    core::ptr::null(),
                    core::ptr::null(),
                    bt,
                    b.ptr().cast(),
                    (n * pb) as c_int,
                    bt,
                    plan.root_peer() as c_int,
                    l.0,
                )
            }
        };
        if rc != 0 {
            return rc;
        }
    }
    let rc = if here == plan.rn && plan.runs {
        let local = send.map(|s| s.piece(plan.members[here][0]));
        // SAFETY: the caller's buffers.
        if unsafe { node_scatter(node, k, local, recv) } {
            0
        } else {
            gave_up();
            let (sp, sc, sd) = local.map_or((core::ptr::null(), 0, bt), |b| {
                (b.ptr as *const c_void, b.count as c_int, b.dt)
            });
            let (rp, rc, rd) = recv.map_or((in_place() as *mut c_void, 0, bt), |b| {
                (b.ptr.cast(), b.count as c_int, b.dt)
            });
            // SAFETY: the caller's arguments over the node's communicator,
            // whose member k is the root.
            unsafe { ffi::PMPI_Scatter(sp, sc, sd, rp, rc, rd, k as c_int, span.node.0) }
        }
    } else {
        // The relay's block: its own, or (at the root) its node's block of
        // the packed copy.
        let local = if here == plan.rn {
            let w = whole.as_mut().filter(|_| node.me == k);
            // SAFETY: the root's node's block lies within the copy.
            w.map(|w| byte_buf(unsafe { w.ptr().add(plan.root_block(pb)) }, pb))
        } else {
            block.as_mut().map(|b| byte_buf(b.ptr(), pb))
        };
        // SAFETY: the relay's block and the caller's buffer (`None` at a
        // root that receives in place).
        if unsafe { node_scatter(node, k, local, recv) } {
            0
        } else {
            gave_up();
            let mut packed = vec![0u8; pb];
            let sp = local.map_or(core::ptr::null(), |b| b.ptr as *const c_void);
            let rp = if recv.is_some() {
                packed.as_mut_ptr().cast()
            } else {
                in_place() as *mut c_void
            };
            // SAFETY: bytes over the node's communicator, from its relay.
            let rc = unsafe {
                ffi::PMPI_Scatter(
                    sp,
                    pb as c_int,
                    bt,
                    rp,
                    pb as c_int,
                    bt,
                    k as c_int,
                    span.node.0,
                )
            };
            if let (0, Some(mine)) = (rc, recv) {
                // SAFETY: the caller's buffer; `packed` holds its bytes.
                unsafe { mine.unpack_from(packed.as_ptr(), pb) };
            }
            rc
        }
    };
    ran();
    rc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_relays_through_the_roots_index() {
        // Two nodes of two: roots 0 and 2 lead their nodes, whose leaders
        // relay; roots 1 and 3 are second on theirs, and so are the relays.
        let of = [0, 0, 1, 1];
        let p = Plan::new(&of, true, 0, 8).unwrap();
        assert_eq!(
            (p.members.clone(), p.rn, p.k, p.order.clone()),
            (vec![vec![0, 1], vec![2, 3]], 0, 0, vec![0, 1])
        );
        let rn_k = |root| Plan::new(&of, true, root, 8).map(|p| (p.rn, p.k));
        assert_eq!(rn_k(1), Some((0, 1)));
        assert_eq!(rn_k(2), Some((1, 0)));
        assert_eq!(rn_k(3), Some((1, 1)));
        assert!(Plan::new(&of, true, 4, 8).is_none());
        // The whole buffer's bytes must fit an int.
        assert!(Plan::new(&of, true, 0, c_int::MAX as usize / 4).is_some());
        assert!(Plan::new(&of, true, 0, c_int::MAX as usize / 4 + 1).is_none());
        assert!(Plan::new(&of, true, 0, usize::MAX).is_none());
    }

    #[test]
    fn round_robin_nodes_go_through_a_packed_copy() {
        // Ranks dealt to two nodes in turn: node 0 has 0, 2, 4; node 1
        // has 1, 3, 5. Root 3 is second on node 1.
        let of = [0, 1, 0, 1, 0, 1];
        let p = Plan::new(&of, false, 3, 4).unwrap();
        assert_eq!((p.rn, p.k, p.root_peer()), (1, 1, 1));
        // Blocks one after another in the copy; the root's node's gets no
        // bytes from the relays.
        assert_eq!(p.counts(4), (vec![12, 0], vec![0, 12]));
        let pieces: Vec<_> = p.packed_pieces(4).collect();
        assert_eq!(
            pieces,
            vec![(0, 0), (2, 4), (4, 8), (1, 12), (3, 16), (5, 20)]
        );
        // Three nodes of uneven placement, whose second members are not
        // in node order: node 0 = {0, 4}, node 1 = {1, 2}, node 2 = {3, 5}.
        // The relays of index 1 are ranks 4, 2, 5: in their communicator
        // node 1's comes first, then node 0's, then node 2's.
        let of = [0, 1, 1, 2, 0, 2];
        let p = Plan::new(&of, false, 4, 1).unwrap();
        assert_eq!(
            (p.rn, p.k, p.order.clone(), p.root_peer()),
            (0, 1, vec![1, 0, 2], 1)
        );
        assert_eq!(p.counts(1), (vec![2, 0, 2], vec![0, 2, 4]));
        let ranks: Vec<usize> = p.packed_pieces(1).map(|(r, _)| r).collect();
        assert_eq!(ranks, vec![1, 2, 0, 4, 3, 5]);
    }

    #[test]
    fn leaders_exchange_every_nodes_block_in_node_order() {
        // Node 0 = {0, 4}, node 1 = {1, 2}, node 2 = {3, 5}: the leaders
        // (0, 1, 3) are in node order, whatever the other members' order.
        let of = [0, 1, 1, 2, 0, 2];
        let p = Plan::leaders(&of, 3).unwrap();
        assert_eq!(p.order, vec![0, 1, 2]);
        // Every node's block counts, its own included.
        assert_eq!(p.blocks(3), (vec![6, 6, 6], vec![0, 6, 12]));
        let pieces: Vec<_> = p.packed_pieces(3).collect();
        assert_eq!(
            pieces,
            vec![(0, 0), (4, 3), (1, 6), (2, 9), (3, 12), (5, 15)]
        );
        // 2 + 1 round-robin: node 0 = {0, 2}, node 1 = {1}.
        let p = Plan::leaders(&[0, 1, 0], 8).unwrap();
        assert_eq!(p.blocks(8), (vec![16, 8], vec![0, 16]));
        assert!(Plan::leaders(&[0, 1, 0], c_int::MAX as usize / 2).is_none());
    }

    #[test]
    fn uneven_nodes_get_their_blocks() {
        // 2 + 1 + 1: the single-rank nodes lead themselves.
        let of = [0, 0, 1, 2];
        let p = Plan::new(&of, true, 3, 5).unwrap();
        assert_eq!(
            (p.members.clone(), p.rn),
            (vec![vec![0, 1], vec![2], vec![3]], 2)
        );
        // Bytes per node; the root's node gets none (its pieces are in
        // place); displacements at each node's first rank's piece.
        assert_eq!(p.counts(5), (vec![10, 5, 0], vec![0, 10, 15]));
        // The second rank of the first node: the lone ranks of the other
        // nodes have no second member to relay.
        assert!(Plan::new(&of, true, 1, 5).is_none());
        // 2 + 3: root 4 is third on its node, and the first node has no
        // third member; root 3 is second, and both nodes have a second.
        let of = [0, 0, 1, 1, 1];
        assert!(Plan::new(&of, true, 4, 5).is_none());
        let p = Plan::new(&of, true, 3, 5).unwrap();
        assert_eq!((p.rn, p.k), (1, 1));
        assert_eq!(p.counts(5), (vec![10, 0], vec![0, 10]));
    }
}
