//! Nonblocking broadcasts and reductions (`MPI_Ibcast`, `Ireduce`,
//! `Iallreduce`, `Iscan`, `Iexscan`) whose payload does not fit a cell
//! inline: read in place, with one copy, as the blocking collectives read
//! large buffers ([`super::super::fold`]).
//!
//! An operation of `bytes` takes `1 + k` steps at the call, `k` the chunks
//! of at most a cell's inline size the payload would make (the same on
//! every member: MPI makes the type signatures match). On its first step
//! every member that contributes data publishes where the others can read
//! it: its buffer when it lies in the shared heap (not in place: a member
//! writing its result there would change what the others read), else a
//! staging copy in its part of the heap. Once every contribution is known
//! each receiver reads them straight from those addresses (one copy, or
//! the fold that is the reduction), and every contributor keeps its
//! request open until every member is done with the operation's last step,
//! so its buffer stays valid while the others read it (the rendezvous of
//! the shared-memory transports, e.g. Open MPI's `smsc`/XPMEM single-copy
//! path, with a flag where they exchange a message).
//!
//! A member that can get no staging memory (heap full) publishes `FAIL`
//! instead. A nonblocking call cannot hand the operation to the real MPI
//! then (the others have queued it on the heap, and may call other
//! collectives on the communicator meanwhile), so every member, seeing a
//! `FAIL` among the contributions, moves the payload through the cells
//! instead: chunk `j` on step `1 + j`, each chunk published in the
//! writers' cells and read as a small operation is, pipelined over the
//! cells' ring. Slower, but it needs no memory, so it cannot fail.

use super::super::{Stage, FAIL};
use super::{Fold, Kind, Pending};
use crate::comm::node::Node;

/// Bytes a receiver of a direct reduction folds at a time: a chunk, its
/// accumulator and the inputs' lines stay in the L1/L2 caches (the
/// blocking reductions' choice, measured there).
const FOLD_CHUNK: usize = 16 << 10;

/// A payload larger than a cell: how this member offers and receives it.
pub(super) struct Large {
    /// Chunks the payload makes, each on its own step after the first
    /// (used only when some member published `FAIL`).
    k: u64,
    /// Bytes of a chunk (a whole number of elements for reductions).
    chunk: usize,
    /// Bytes of the payload.
    bytes: usize,
    /// What this member published on the first step: the address of its
    /// contribution, 0 for none (a broadcast's receivers), or `FAIL`.
    offer: u64,
    /// Where this member's contribution is read from for the chunks: its
    /// offer, or its own buffer (packed copy) when it could not offer one.
    src: *const u8,
    /// The staging copy the offer points at, if any (freed with this).
    _stage: Option<Stage>,
    /// A root's packed derived-type data (what `src` points at when no
    /// staging copy could be made), or a derived-type receiver's chunks
    /// gathered for one unpack at the end.
    packed: Vec<u8>,
    mode: Mode,
}

/// Where a published operation stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Waiting for the offers it needs.
    Deciding,
    /// Reading in place.
    Direct,
    /// Moving chunk `j` through the cells; `put`: ours is published;
    /// `got`: we have read the chunk.
    Chunked { j: u64, put: bool, got: bool },
}

impl Large {
    /// Steps the operation takes beyond its first.
    pub(super) fn extra_steps(&self) -> u64 {
        self.k
    }

    /// Whether other members read this member's memory in place, so its
    /// request must wait until they are all done.
    pub(super) fn drains(&self) -> bool {
        self.mode == Mode::Direct && self.offer != 0 && self.offer != FAIL
    }
}

/// Whether `kind` can run as a large operation on `node` if it does not
/// fit a cell: a broadcast, or a reduction whose elements fit a cell whole
/// and that every member receives whole (not `Fold::Block`).
pub(super) fn takes(node: &Node, kind: &Kind) -> bool {
    match kind {
        Kind::Bcast { .. } => true,
        Kind::Reduce {
            count, bytes, fold, ..
        } => *fold != Fold::Block && *count > 0 && *bytes / *count <= node.inline_max,
        _ => false,
    }
}

/// The payload of `kind` (what [`takes`] checks the size of).
pub(super) fn payload(kind: &Kind) -> usize {
    match kind {
        Kind::Bcast { buf, .. } => buf.bytes(),
        Kind::Reduce { bytes, .. } => *bytes,
        Kind::Blocks { mine, pb, .. } => mine.len().max(*pb),
        Kind::Barrier => 0,
    }
}

/// This member's offer for `kind`, whose payload is larger than a cell
/// (checked by [`takes`] at the call): made at the call, where the MPI
/// may be called (packing) and the send buffer holds the data.
///
/// # Safety
/// `kind`'s buffers are the caller's.
pub(super) unsafe fn prepare(node: &Node, kind: &mut Kind) -> Box<Large> {
    let bytes = payload(kind);
    let me = node.me;
    let mut large = Large {
        k: 0,
        chunk: node.inline_max,
        bytes,
        offer: 0,
        src: core::ptr::null(),
        _stage: None,
        packed: Vec::new(),
        mode: Mode::Deciding,
    };
    match kind {
        Kind::Bcast {
            root, buf, packed, ..
        } => {
            if *root == me {
                let from: *const u8 = match packed {
                    Some(v) => v.as_ptr(),
                    None => buf.ptr,
                };
                if let Some(p) = buf.shared() {
                    large.offer = p as u64;
                    large.src = p;
                } else if let Some(st) = Stage::new(bytes) {
                    // SAFETY: `from` holds `bytes` packed bytes (the
                    // caller's dense buffer or our packed copy); the
                    // stage has room.
                    unsafe { core::ptr::copy_nonoverlapping(from, st.0, bytes) };
                    large.offer = st.0 as u64;
                    large.src = st.0;
                    large._stage = Some(st);
                } else {
                    large.offer = FAIL;
                    large.src = from;
                }
                // Keep the packed copy alive as long as `src` may point
                // into it.
                large.packed = packed.take().unwrap_or_default();
            }
        }
        Kind::Reduce {
            send,
            recv,
            count,
            bytes,
            ..
        } => {
            let elem = *bytes / *count;
            large.chunk = node.inline_max / elem * elem;
            let in_place = core::ptr::eq(*send, *recv);
            if !in_place && crate::heap::in_region(*send, *bytes) {
                large.offer = *send as u64;
                large.src = *send;
            } else if let Some(st) = Stage::new(*bytes) {
                // SAFETY: the contribution holds `bytes` bytes; the stage
                // has room.
                unsafe { core::ptr::copy_nonoverlapping(*send, st.0, *bytes) };
                large.offer = st.0 as u64;
                large.src = st.0;
                large._stage = Some(st);
            } else {
                // In place, chunk `j` is read from the receive buffer
                // before this member's result for it is written there.
                large.offer = FAIL;
                large.src = *send;
            }
        }
        Kind::Barrier | Kind::Blocks { .. } => unreachable!("only broadcasts and reductions"),
    }
    large.k = bytes.div_ceil(large.chunk) as u64;
    Box::new(large)
}

/// Whether this member writes data for `kind` (its cells or its offer).
fn writes(kind: &Kind, me: usize) -> bool {
    match kind {
        Kind::Bcast { root, .. } => *root == me,
        _ => true,
    }
}

/// Whether this member receives a result of `kind`, and from which
/// members (`0..=last`, and where in their contributions).
fn receives(kind: &Kind, node: &Node) -> Option<usize> {
    let me = node.me;
    match kind {
        Kind::Bcast { root, .. } => (*root != me).then_some(*root),
        Kind::Reduce { root, fold, .. } => match fold {
            Fold::Scan => Some(me),
            Fold::Exscan => me.checked_sub(1),
            _ => root.is_none_or(|r| r == me).then_some(node.n - 1),
        },
        _ => None,
    }
}

/// Publishes this member's offer on the operation's first step, if it
/// writes one. False: its cell is not free yet.
pub(super) fn begin(p: &mut Pending) -> bool {
    let (node, s) = (p.node, p.s);
    let l = p.large.as_ref().expect("a large operation");
    if writes(&p.kind, node.me) {
        if !node.gate_open(s) {
            return false;
        }
        node.publish(s, l.offer, l.bytes as u64, 0);
    }
    true
}

/// Moves a published large operation on; true once this member has its
/// result (and, in chunks, has finished every step: `first` says whether
/// it may finish steps now, every earlier operation of the communicator
/// being finished here).
///
/// # Safety
/// `p`'s buffers are the caller's (see `post`).
pub(super) unsafe fn work(p: &mut Pending, first: bool, may_call_mpi: bool) -> bool {
    let (node, s) = (p.node, p.s);
    let me = node.me;
    let from = receives(&p.kind, node);
    let l = p.large.as_mut().expect("a large operation");
    if l.mode == Mode::Deciding {
        // The offers every member must see to choose the same way: every
        // contribution of a reduction (a member that reads none still
        // chunks if another failed), a broadcast's root.
        let mut failed = l.offer == FAIL;
        let needed: &mut dyn Iterator<Item = usize> = match &p.kind {
            Kind::Bcast { root, .. } => &mut core::iter::once(*root),
            _ => &mut (0..node.n),
        };
        for m in needed.filter(|&m| m != me) {
            let Some(c) = node.published(m, s) else {
                return false;
            };
            // Relaxed: ordered by the Acquire in `published`.
            failed |= c.addr.load(std::sync::atomic::Ordering::Relaxed) == FAIL;
        }
        l.mode = if failed {
            Mode::Chunked {
                j: 0,
                put: false,
                got: false,
            }
        } else {
            Mode::Direct
        };
    }
    if l.mode == Mode::Direct {
        let Some(last) = from else {
            return true;
        };
        // SAFETY: per the contract; the offers stay valid until we finish
        // the operation's steps.
        return unsafe { direct(&p.kind, node, s, l, last, may_call_mpi) };
    }
    // SAFETY: per the contract.
    unsafe { chunks(&p.kind, node, s, l, from, first, may_call_mpi) }
}

/// The address member `m` offered on step `s` (ours: our own offer).
fn offer_of(node: &Node, s: u64, l: &Large, m: usize) -> *const u8 {
    if m == node.me {
        return l.offer as *const u8;
    }
    // Relaxed: the publication was seen with Acquire (deciding).
    node.cell(m, s)
        .addr
        .load(std::sync::atomic::Ordering::Relaxed) as *const u8
}

/// Reads the result in place from the offers (`last`: the last member
/// combined, or a broadcast's root).
///
/// # Safety
/// As [`work`].
unsafe fn direct(
    kind: &Kind,
    node: &Node,
    s: u64,
    l: &Large,
    last: usize,
    may_call_mpi: bool,
) -> bool {
    match kind {
        Kind::Bcast { buf, .. } => {
            if !buf.d.contig && !may_call_mpi {
                // Unpacking a derived type calls the MPI.
                return false;
            }
            // SAFETY: the root's offer holds `bytes` packed bytes until
            // every member finished; the buffer is the caller's.
            unsafe { buf.unpack_from(offer_of(node, s, l, last), l.bytes) };
        }
        Kind::Reduce {
            recv, count, red, ..
        } => {
            let elem = l.bytes / *count;
            let per = (FOLD_CHUNK / elem).max(1);
            let mut at = 0;
            while at < *count {
                let n = per.min(*count - at);
                let off = at * elem;
                // x0 op (x1 op (... op x(last))), as the small
                // reductions, chunk by chunk.
                // SAFETY: every offer holds `bytes` bytes until every
                // member finished; `recv` holds `count` elements and is
                // none of them (in place contributions are staged).
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        offer_of(node, s, l, last).add(off),
                        recv.add(off),
                        n * elem,
                    );
                    for m in (0..last).rev() {
                        red.apply(offer_of(node, s, l, m).add(off), recv.add(off), n);
                    }
                }
                at += n;
            }
        }
        Kind::Barrier | Kind::Blocks { .. } => unreachable!("only broadcasts and reductions"),
    }
    true
}

/// Moves the payload chunk by chunk through the cells (some member could
/// not offer it): returns true once every chunk is through here.
///
/// # Safety
/// As [`work`].
unsafe fn chunks(
    kind: &Kind,
    node: &Node,
    s: u64,
    l: &mut Large,
    from: Option<usize>,
    first: bool,
    may_call_mpi: bool,
) -> bool {
    let me = node.me;
    let gathers = matches!(kind, Kind::Bcast { buf, .. } if !buf.d.contig) && from.is_some();
    while let Mode::Chunked { j, put, got } = l.mode {
        if j == l.k {
            break;
        }
        let t = s + 1 + j;
        let off = j as usize * l.chunk;
        let len = l.chunk.min(l.bytes - off);
        if !put && writes(kind, me) {
            if !node.gate_open(t) {
                return false;
            }
            // SAFETY: `src` holds `bytes` bytes of this member's
            // contribution (chunk `j` not yet overwritten by a result:
            // results are written after the chunk is published); the
            // cell holds `inline_max` >= `len`.
            unsafe { core::ptr::copy_nonoverlapping(l.src.add(off), node.data(me, t, len), len) };
            node.publish(t, 0, len as u64, 0);
        }
        l.mode = Mode::Chunked { j, put: true, got };
        if let (false, Some(last)) = (got, from) {
            let senders = match kind {
                Kind::Bcast { .. } => last..=last,
                _ => 0..=last,
            };
            if !senders
                .into_iter()
                .all(|m| m == me || node.published(m, t).is_some())
            {
                return false;
            }
            match kind {
                Kind::Bcast { buf, .. } => {
                    let at = node.data(last, t, len);
                    if gathers {
                        // SAFETY: the root's cell holds `len` bytes.
                        l.packed
                            .extend_from_slice(unsafe { core::slice::from_raw_parts(at, len) });
                    } else {
                        // SAFETY: as above; the caller's dense buffer
                        // holds `bytes` bytes.
                        unsafe { core::ptr::copy_nonoverlapping(at, buf.ptr.add(off), len) };
                    }
                }
                Kind::Reduce {
                    recv, red, count, ..
                } => {
                    let elems = len / (l.bytes / *count);
                    // SAFETY: every sender's cell holds `len` bytes of
                    // its contribution; `recv` holds the result's
                    // `bytes` and overlaps no cell.
                    unsafe {
                        core::ptr::copy_nonoverlapping(node.data(last, t, len), recv.add(off), len);
                        for m in (0..last).rev() {
                            red.apply(node.data(m, t, len), recv.add(off), elems);
                        }
                    }
                }
                Kind::Barrier | Kind::Blocks { .. } => {
                    unreachable!("only broadcasts and reductions")
                }
            }
            l.mode = Mode::Chunked {
                j,
                put: true,
                got: true,
            };
        }
        if !first {
            // Steps are finished in order: an earlier operation of the
            // communicator is not finished here yet.
            return false;
        }
        node.finish(t);
        l.mode = Mode::Chunked {
            j: j + 1,
            put: false,
            got: false,
        };
    }
    if gathers {
        if !may_call_mpi {
            // Unpacking a derived type calls the MPI.
            return false;
        }
        if let Kind::Bcast { buf, .. } = kind {
            // SAFETY: the packed payload, whole; the caller's buffer.
            unsafe { buf.unpack_from(l.packed.as_ptr(), l.packed.len()) };
        }
    }
    true
}
