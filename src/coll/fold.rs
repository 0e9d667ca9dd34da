//! The reduction engine behind `MPI_Reduce`, `Allreduce`,
//! `Reduce_scatter(_block)`, `Scan` and `Exscan`.
//!
//! Every reduction works on the *span* of its input: the bytes `count`
//! elements of the datatype touch, copied raw (MPI requires the same
//! datatype on every member, so every member's span has the same layout)
//! and combined with the datatype's own element layout.
//!
//! - Small spans (up to a cell's inline size): every member copies its
//!   span into its cell and raises its flag; every member that needs a
//!   result folds the cells it needs itself. No second phase: a member
//!   that needs no result (a non-root of `MPI_Reduce`) returns at once.
//! - Small `Reduce` and `Allreduce` with a commutative operation on more
//!   members than the fan-in (`HEAPMPI_COLL_RADIX` + 1): up a k-ary tree
//!   rooted at the root, as the barrier's
//!   (each member folds its children's partial results into its own and
//!   publishes it; the fan-in trees of shared-memory collectives, e.g.
//!   Graham and Shipman's, "MPI support for multi-core architectures",
//!   EuroPVM/MPI 2008), then, for `Allreduce`, a broadcast of the root's
//!   cell. Every member reads k cells instead of n, and a member waits for
//!   its children only. Not on fewer members: there the tree is one level,
//!   and `Allreduce` would pay its broadcast for nothing (4 ranks on 2
//!   cores, 8 B: 2.25-3.09 µs flat, 2.48-2.70 up the tree, within noise).
//! - Larger spans are read in place (or from a staging copy). For
//!   `Reduce` and `Allreduce` the element range is cut into one slice per
//!   member; each member reduces its slice, reading every member's input,
//!   and writes the reduced slice straight into the output of every member
//!   that needs it: a reduce-scatter and an allgather done as direct reads
//!   and writes, so all cores and all the memory bandwidth work (the split
//!   of Rabenseifner's allreduce, "Optimization of collective reduction
//!   operations", ICCS 2004, with shared memory in place of messages). For
//!   the reduce-scatters each member reduces its own block; for the scans
//!   each member folds its own prefix of members. Work proceeds in chunks
//!   that stay in the L1/L2 cache.
//!
//! The combination order is fixed, whatever the timing, so every member
//! computes bit-identical results: where the order shows (floating-point
//! sums and products, user operations) it is the association the MPI
//! underneath computes for the same call ([`super::order`], evaluated per
//! chunk, one tree per ring block); elsewhere `x0 op (x1 op (... op xk))`,
//! members in rank order folded from the last one (non-commutative
//! operations get the order MPI requires). The small k-ary tree is taken
//! only where the order does not show; its order is fixed too (by the
//! number of members, the radix and the root), and only its root computes
//! the result, which every member then copies.

use std::sync::atomic::Ordering;

use super::op::Reducer;
use super::order::{self, Shape, Tree};
use super::{gave_up, with_scratch, Buf, Stage, FAIL};
use crate::comm::node::Node;
use crate::dt::{Layout, Span};
use crate::heap;

/// Bytes of the chunks a large reduction works in. Measured (2 ranks,
/// Open MPI, doubles): allreduce 64 KiB / 256 KiB / 1 MiB in 2.2 / 7.6 /
/// 43 µs with 16 KiB chunks against 3.4 / 12.3 / 59 with 32 KiB and 128
/// KiB; 8 KiB as good, 4 KiB 10% slower; with send buffers rewritten
/// before every call 1 MiB takes 69-76 µs against 78. A chunk, its
/// accumulator and the inputs' lines it reads stay in the L1/L2 caches.
const CHUNK: usize = 16 << 10;

/// What a reduction computes, and for whom.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    /// Everything to the root.
    Reduce(usize),
    /// Everything to every member.
    Allreduce,
    /// Block `m` (elements `blocks[m]..blocks[m + 1]`) to member `m`.
    Scatter,
    /// Members `0..=m` to member `m`.
    Scan,
    /// Members `0..m` to member `m` (nothing to member 0).
    Exscan,
}

/// One reduction on one member: the caller's arguments, checked.
pub(super) struct Job<'a> {
    pub kind: Kind,
    /// Input element base (the send buffer, or the receive buffer in
    /// place): `count` elements.
    pub input: *const u8,
    /// Input elements.
    pub count: usize,
    /// Where this member's result goes (`None`: it gets none).
    pub recv: Option<Buf>,
    pub red: Reducer,
    pub l: Layout,
    /// For [`Kind::Scatter`]: the block starts, `n + 1` prefix sums.
    pub blocks: &'a [usize],
}

impl Job<'static> {
    /// A job without blocks (every kind but [`Kind::Scatter`]); `count` is
    /// checked non-negative by the caller.
    pub fn new(
        kind: Kind,
        input: *const u8,
        count: core::ffi::c_int,
        recv: Option<Buf>,
        red: Reducer,
        l: Layout,
    ) -> Job<'static> {
        Job {
            kind,
            input,
            count: count.max(0) as usize,
            recv,
            red,
            l,
            blocks: &[],
        }
    }
}

impl Job<'_> {
    fn sp(&self) -> Span {
        self.l.span(self.count)
    }

    /// The elements of this member's own result and how many members
    /// (from rank 0) it folds.
    fn mine(&self, me: usize, n: usize) -> (usize, usize, usize) {
        match self.kind {
            Kind::Reduce(_) | Kind::Allreduce => (0, self.count, n),
            Kind::Scatter => (self.blocks[me], self.blocks[me + 1], n),
            Kind::Scan => (0, self.count, me + 1),
            Kind::Exscan => (0, self.count, me),
        }
    }
}

/// The element base of a span that starts at `span_start`.
fn base(span_start: *const u8, l: &Layout) -> *const u8 {
    span_start.wrapping_offset(-l.true_lb)
}

/// `memcpy`.
///
/// # Safety
/// `len` bytes at each, not overlapping.
#[inline]
unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: per the contract.
    unsafe { crate::dt::copy_disjoint(src, dst, len) };
}

/// Folds members `0..mh` (element bases `ins`) over elements `e0..e1`, in
/// chunks, in the association `trees` gives (see [`order::trees`]; empty:
/// heapmpi's right fold, `x0 op (x1 op ...)`). With `dst` (the span start of
/// a result for elements `e0..e1`, aliasing no input) the fold accumulates
/// there; otherwise in scratch, and `emit(first element, chunk span, its
/// length)` gets each chunk.
///
/// # Safety
/// Every input holds the elements; `dst` has room for the result span.
#[allow(clippy::too_many_arguments)]
unsafe fn fold(
    ins: &[*const u8],
    mh: usize,
    (e0, e1): (usize, usize),
    job: &Job,
    trees: &[(usize, Tree)],
    dst: Option<*mut u8>,
    mut emit: impl FnMut(usize, *const u8, usize),
) {
    if e0 >= e1 || mh == 0 {
        return;
    }
    let l = &job.l;
    let ext = l.extent.max(1);
    let per = (CHUNK / ext).max(1);
    let plain = trees.is_empty() || (trees.len() == 1 && trees[0].1.is_right_fold());
    let mut temps: Vec<Vec<u8>> = Vec::new();
    let mut chunk = |acc_span: *mut u8, a: usize, k: usize| {
        let off = a * ext;
        let len = (k - 1) * ext + l.true_extent;
        if !plain {
            let t = &trees[trees.partition_point(|e| e.0 <= a) - 1].1;
            let mut ev = Eval {
                ins,
                off,
                k,
                len,
                job,
                temps: &mut temps,
            };
            // SAFETY: per the contract, as below.
            unsafe { ev.eval(t, acc_span, 0) };
            return len;
        }
        // SAFETY: per the contract: the chunk's elements lie in every
        // input and in `acc_span`'s room.
        unsafe {
            copy(
                ins[mh - 1].wrapping_add(off).wrapping_offset(l.true_lb),
                acc_span,
                len,
            );
            let acc = base(acc_span, l) as *mut u8;
            for m in (0..mh - 1).rev() {
                job.red.apply(ins[m].wrapping_add(off), acc, k);
            }
        }
        len
    };
    // The next element at which the tree changes (a ring block starts).
    let cut = |a: usize| {
        if plain {
            e1
        } else {
            trees
                .get(trees.partition_point(|e| e.0 <= a))
                .map_or(e1, |e| e.0.min(e1))
        }
    };
    match dst {
        Some(d) => {
            let mut a = e0;
            while a < e1 {
                let k = per.min(cut(a) - a);
                chunk(d.wrapping_add((a - e0) * ext), a, k);
                a += k;
            }
        }
        None => with_scratch((per - 1) * ext + l.true_extent, |scr| {
            let mut a = e0;
            while a < e1 {
                let k = per.min(cut(a) - a);
                let len = chunk(scr, a, k);
                emit(a, scr, len);
                a += k;
            }
        }),
    }
}

/// One chunk of a fold in a given association.
struct Eval<'a> {
    ins: &'a [*const u8],
    /// Byte offset of the chunk's first element from an element base.
    off: usize,
    /// Elements in the chunk.
    k: usize,
    /// Bytes of the chunk's span.
    len: usize,
    job: &'a Job<'a>,
    /// Scratch spans, one per depth of left operands that are not leaves.
    temps: &'a mut Vec<Vec<u8>>,
}

impl Eval<'_> {
    /// Writes `t`'s value for the chunk into the span at `out`.
    ///
    /// # Safety
    /// Every input holds the chunk's elements; `out` has room for its span.
    unsafe fn eval(&mut self, t: &Tree, out: *mut u8, depth: usize) {
        let l = &self.job.l;
        match t {
            // SAFETY (both arms): per the contract.
            Tree::Leaf(m) => unsafe {
                copy(
                    self.ins[*m]
                        .wrapping_add(self.off)
                        .wrapping_offset(l.true_lb),
                    out,
                    self.len,
                )
            },
            Tree::Op(a, b) => unsafe {
                self.eval(b, out, depth);
                let acc = base(out, l) as *mut u8;
                if let Tree::Leaf(m) = **a {
                    self.job
                        .red
                        .apply(self.ins[m].wrapping_add(self.off), acc, self.k);
                } else {
                    if self.temps.len() <= depth {
                        self.temps.resize_with(depth + 1, Vec::new);
                    }
                    let mut tmp = core::mem::take(&mut self.temps[depth]);
                    tmp.resize(tmp.len().max(self.len), 0);
                    self.eval(a, tmp.as_mut_ptr(), depth + 1);
                    self.job.red.apply(base(tmp.as_ptr(), l), acc, self.k);
                    self.temps[depth] = tmp;
                }
            },
        }
    }
}

/// Runs a reduction. Returns false when every member must make the real
/// call instead (some member could not offer its input).
///
/// # Safety
/// The job's buffers are the caller's, valid for its counts and datatype.
pub(super) unsafe fn run(node: &Node, job: &Job) -> bool {
    // The stock association (every member computes the same answer from
    // arguments MPI requires to agree): on a communicator within the node,
    // for Reduce and Allreduce. Across nodes heapmpi's hierarchy cannot
    // follow the MPI's order anyway.
    let root = match job.kind {
        Kind::Reduce(r) => Some(Some(r)),
        Kind::Allreduce => Some(None),
        _ => None,
    };
    let trees = match (root, job.kind) {
        (Some(root), _) if node.span.is_none() => {
            let bytes = job.count.saturating_mul(job.l.d.size);
            match order::stock(node.n, job.count, bytes, root, &job.red) {
                None => return false,
                Some(Shape::RightFold) => None,
                Some(shape) => Some(order::trees_cached(shape, node.n, job.count)),
            }
        }
        (_, Kind::Scan | Kind::Exscan) => {
            if !job.red.exact() && node.n > 2 && !order::rules_are_default() {
                return false;
            }
            let inclusive = job.kind == Kind::Scan;
            if node.me + usize::from(inclusive) == 0 || job.red.exact() || node.n <= 2 {
                None
            } else {
                Some(std::rc::Rc::new(vec![(
                    0,
                    order::scan_tree(node.me, inclusive, &job.red),
                )]))
            }
        }
        // The reduce-scatters: heapmpi's order where it does not show;
        // the MPIs' per-block orders are not evaluated here.
        (_, Kind::Scatter) if !job.red.exact() && node.n > 2 => return false,
        // None: heapmpi's own right fold (no tree built on the hot path).
        _ => None,
    };
    let trees: &[(usize, Tree)] = trees.as_deref().map_or(&[], |t| t);
    let s = node.begin(1);
    let small_span = job.sp().len <= node.inline_max;
    if small_span && job.red.commute && job.red.exact() && node.n > super::radix() + 1 {
        let root = match job.kind {
            Kind::Reduce(r) => Some(r),
            Kind::Allreduce => Some(0),
            _ => None,
        };
        if let Some(root) = root {
            // SAFETY: per the contract.
            unsafe { small_tree(node, job, s, root) };
            if job.kind == Kind::Allreduce {
                // SAFETY: every member's receive buffer; the root's holds
                // the result. Inline data is never refused.
                unsafe { super::bcast::node_bcast(node, job.recv.as_ref(), root) };
            }
            return true;
        }
    }
    if small_span {
        // SAFETY: per the contract.
        unsafe { small(node, job, s, trees) };
        return true;
    }
    // SAFETY: per the contract.
    unsafe { large(node, job, s, trees) }
}

/// Writes this member's result for elements `e0..e1` with `produce`,
/// which folds either into the given span start or, through `emit`-style
/// staging, into a private buffer that is then copied out.
///
/// # Safety
/// `recv` holds `e1 - e0` elements.
unsafe fn into_recv(recv: &Buf, job: &Job, n_elems: usize, produce: impl FnOnce(*mut u8)) {
    if recv.d.contig {
        produce(recv.ptr);
    } else {
        let mut tmp = vec![0u8; job.l.span(n_elems).len];
        produce(tmp.as_mut_ptr());
        // SAFETY: `tmp` holds the result span.
        unsafe { typed_copy(base(tmp.as_ptr(), &job.l), recv) };
    }
}

/// Inline cells: every member that needs a result folds the cells.
///
/// # Safety
/// As [`run`].
unsafe fn small(node: &Node, job: &Job, s: u64, trees: &[(usize, Tree)]) {
    let (me, sp) = (node.me, job.sp());
    node.gate(s);
    // SAFETY: the input span is the caller's; the cell holds `inline_max`
    // bytes.
    unsafe {
        copy(
            job.input.wrapping_offset(sp.lo),
            node.data(me, s, sp.len),
            sp.len,
        )
    };
    node.publish(s, 0, sp.len as u64, 0);
    if let Some(recv) = &job.recv {
        let (e0, e1, mh) = job.mine(me, node.n);
        if mh > 0 && e1 > e0 {
            let ins: Vec<*const u8> = (0..mh)
                .map(|m| {
                    if m != me {
                        node.wait_cell(m, s);
                    }
                    // Every member's span is as long as ours (same
                    // count and datatype, as MPI requires).
                    base(node.data(m, s, sp.len), &job.l)
                })
                .collect();
            // SAFETY: every cell holds its member's span until we are done;
            // the result buffer aliases no cell.
            unsafe {
                into_recv(recv, job, e1 - e0, |dst| {
                    fold(&ins, mh, (e0, e1), job, trees, Some(dst), |_, _, _| {})
                })
            };
        }
    }
    node.finish(s);
}

/// Inline cells up a k-ary tree rooted at member `root` (see the module
/// overview): the member at place `v` (counted from the root) folds the
/// partial results of its children at places `k v + 1 ..= k v + k`, in that
/// order, into a copy of its own input in its cell and publishes it; the
/// root writes the result into its receive buffer.
///
/// # Safety
/// As [`run`]; the operation is commutative.
unsafe fn small_tree(node: &Node, job: &Job, s: u64, root: usize) {
    let (me, n, k, sp) = (node.me, node.n, super::radix(), job.sp());
    let v = (me + n - root) % n;
    node.gate(s);
    let mine = node.data(me, s, sp.len);
    // SAFETY: the input span is the caller's; the cell holds `inline_max`
    // bytes.
    unsafe { copy(job.input.wrapping_offset(sp.lo), mine, sp.len) };
    let acc = base(mine, &job.l) as *mut u8;
    for c in (k * v + 1..=k * v + k).take_while(|&c| c < n) {
        let child = (c + root) % n;
        node.wait_cell(child, s);
        // SAFETY: the child's cell holds its partial result (a span as long
        // as ours) until we are done with step `s`; ours is ours.
        unsafe {
            job.red
                .apply(base(node.data(child, s, sp.len), &job.l), acc, job.count)
        };
    }
    node.publish(s, 0, sp.len as u64, 0);
    if v == 0 {
        if let Some(recv) = &job.recv {
            // SAFETY: our cell holds the result span; the receive buffer
            // has room for `count` elements.
            unsafe {
                into_recv(recv, job, job.count, |dst| {
                    copy(mine, dst, sp.len);
                })
            };
        }
    }
    node.finish(s);
}

/// Inputs read in place.
///
/// # Safety
/// As [`run`].
unsafe fn large(node: &Node, job: &Job, s: u64, trees: &[(usize, Tree)]) -> bool {
    let (me, n, sp, l) = (node.me, node.n, job.sp(), &job.l);
    let in_span = job.input.wrapping_offset(sp.lo);
    let mut in_stage = None;
    let in_addr = if heap::in_region(in_span, sp.len) {
        in_span as u64
    } else {
        match Stage::new(sp.len) {
            Some(st) => {
                // SAFETY: the caller's input span; the stage has room.
                unsafe { copy(in_span, st.0, sp.len) };
                let p = st.0 as u64;
                in_stage = Some(st);
                p
            }
            None => FAIL,
        }
    };
    // Reduce and Allreduce: every member writes its slice into the outputs
    // of the members that need it (in place if dense and in the heap).
    let push = matches!(job.kind, Kind::Reduce(_) | Kind::Allreduce);
    let mut out_stage = None;
    let out_addr = match &job.recv {
        Some(r) if push => {
            if r.d.contig && heap::in_region(r.ptr, sp.len) {
                r.ptr as u64
            } else {
                match Stage::new(sp.len) {
                    Some(st) => {
                        let p = st.0 as u64;
                        out_stage = Some(st);
                        p
                    }
                    None => FAIL,
                }
            }
        }
        _ => 0,
    };
    node.gate(s);
    node.publish(s, in_addr, out_addr, 0);
    node.wait_all(s);
    // Relaxed (all loads of cell words): ordered by the Acquire of the step
    // in `wait_all`.
    let failed = (0..n).any(|m| {
        let c = node.cell(m, s);
        c.addr.load(Ordering::Relaxed) == FAIL || c.len.load(Ordering::Relaxed) == FAIL
    });
    if failed {
        node.finish(s);
        drop((in_stage, out_stage));
        gave_up();
        return false;
    }
    let ins: Vec<*const u8> = (0..n)
        .map(|m| base(node.cell(m, s).addr.load(Ordering::Relaxed) as *const u8, l))
        .collect();
    let ext = l.extent.max(1);
    let mut result = Vec::new();
    if push {
        let outs: Vec<*mut u8> = (0..n)
            .filter(|&m| match job.kind {
                Kind::Reduce(root) => root == m,
                _ => true,
            })
            .map(|m| node.cell(m, s).len.load(Ordering::Relaxed) as *mut u8)
            .collect();
        let slice = (me * job.count / n, (me + 1) * job.count / n);
        // SAFETY: every input is readable and every output writable until
        // all members are done (they wait for our `done`); our slice is
        // written by us only.
        unsafe {
            fold(&ins, n, slice, job, trees, None, |a, chunk, len| {
                for &o in &outs {
                    copy(chunk, o.wrapping_add(a * ext), len);
                }
            })
        };
    } else if job.recv.is_some() {
        // Our own result, folded privately (in place, the receive buffer
        // is an input others still read).
        let (e0, e1, mh) = job.mine(me, n);
        if mh > 0 && e1 > e0 {
            result = vec![0u8; l.span(e1 - e0).len];
            // SAFETY: as above; `result` has room for the result span.
            unsafe {
                fold(
                    &ins,
                    mh,
                    (e0, e1),
                    job,
                    trees,
                    Some(result.as_mut_ptr()),
                    |_, _, _| {},
                )
            };
        }
    }
    node.finish(s);
    node.wait_done(s);
    if let Some(r) = &job.recv {
        // SAFETY: the stage or `result` holds this member's result span;
        // nobody writes it any more.
        unsafe {
            if let Some(st) = &out_stage {
                typed_copy(base(st.0, l), r);
            } else if !push && !result.is_empty() {
                if r.d.contig {
                    copy(result.as_ptr(), r.ptr, result.len());
                } else {
                    typed_copy(base(result.as_ptr(), l), r);
                }
            }
        }
    }
    drop((in_stage, out_stage));
    true
}

/// Copies the elements at element base `src` into `to` (same count and
/// datatype), touching only the bytes the datatype describes.
///
/// # Safety
/// `src` holds `to.count` elements of the datatype.
unsafe fn typed_copy(src: *const u8, to: &Buf) {
    let from = Buf {
        ptr: src as *mut u8,
        ..*to
    };
    // SAFETY: per the contract.
    unsafe { from.copy_to(to) };
}
