//! The shared region: its layout, and how the node-local ranks agree on one
//! virtual address for it.
//!
//! Layout (all offsets from the region base, which is 1 GiB-aligned):
//!
//! ```text
//! [0, HEADER_SIZE)                      node header (NodeHeader, then room
//!                                       for node-wide control data)
//! [HEADER_SIZE + i*part, ... + part)    local rank i's part of the heap
//! ```
//!
//! Agreement (ASLR puts libraries, stacks and the brk heap at different
//! addresses in every rank, so no address can be assumed free):
//!
//! 1. Local rank 0 broadcasts its heap size, so all ranks use one layout.
//! 2. Local rank 0 creates an anonymous memfd and broadcasts its pid and
//!    descriptor number; the others open it through `/proc/<pid>/fd/<n>`.
//!    It has no name: nothing can be left behind, and `/dev/shm`'s size
//!    does not bound it. If that is not asked for (`HEAPMPI_SHM=posix` on
//!    rank 0) or any rank fails, rank 0 creates a POSIX shared object
//!    instead (`O_EXCL`, 0600, random name) and broadcasts the name; the
//!    others open it; once all hold a descriptor, rank 0 unlinks the name.
//!    From here on nothing can be left behind in `/dev/shm`, whatever
//!    happens to the job.
//! 3. Rounds: a proposer (round-robin over local ranks) picks a random
//!    1 GiB-aligned address in a range that the kernel's default placement
//!    never uses (16..96 TiB), reserves it locally with
//!    `MAP_FIXED_NOREPLACE`, and broadcasts it; every other rank tries the
//!    same reservation; an all-reduce decides. On any conflict everyone drops
//!    the reservation and the next round proposes elsewhere. If some rank
//!    could not reserve for lack of address space (`ulimit -v`), all halve
//!    the parts first (down to [`MIN_SHRUNK_PART`]).
//! 4. Everyone maps the object over its reservation; rank 0 commits and
//!    writes the header; a last all-reduce is the barrier after which every
//!    rank checks the header.
//!
//! Every step is collective and every failure is agreed on, so either all
//! local ranks end up with the region or none does, and nobody hangs.

use core::fmt;
use std::os::fd::{AsRawFd, RawFd};

use nix::errno::Errno;

use crate::sys::{self, shm, shm::ShmName, vm};

/// Bytes at the start of the region reserved for node-wide data.
pub const HEADER_SIZE: usize = 2 << 20;
/// Alignment of the region base.
pub const REGION_ALIGN: usize = 1 << 30;
/// Alignment (and rounding) of each rank's part.
pub const PART_ALIGN: usize = 64 << 10;
/// Largest region heapmpi will create; parts shrink to fit.
pub const MAX_TOTAL: usize = 64 << 40;
/// Lowest address proposed.
const PROPOSE_LO: usize = 16 << 40;
/// Highest end address proposed.
const PROPOSE_HI: usize = 96 << 40;
/// Agreement rounds before giving up.
pub const MAX_ROUNDS: u32 = 16;
/// Smallest part the agreement shrinks to when address space is limited.
pub const MIN_SHRUNK_PART: usize = 64 << 20;
/// Local attempts by a proposer to find a free candidate in its own space.
const LOCAL_TRIES: u32 = 64;

/// Offset of the point-to-point mailboxes (one per local rank, see
/// `p2p::queue::Mailbox`) in the node header area.
pub const MAILBOX_OFFSET: usize = 4096;
/// Bytes per mailbox.
pub const MAILBOX_SIZE: usize = 256;

/// Bytes of the header area committed at set-up: the node header and the
/// mailboxes (zero-filled by the kernel, which is an empty mailbox).
pub fn control_bytes(nlocal: usize) -> usize {
    let ps = sys::page_size();
    (MAILBOX_OFFSET + nlocal * MAILBOX_SIZE).div_ceil(ps) * ps
}

/// `NodeHeader::magic`: "heapmpi1".
pub const MAGIC: u64 = u64::from_le_bytes(*b"heapmpi1");

/// The node header at the region base. Lives in shared memory (same address
/// in every local rank); written once by local rank 0 before the final
/// barrier of [`establish`] and read-only afterwards.
#[repr(C)]
pub struct NodeHeader {
    /// [`MAGIC`].
    pub magic: u64,
    /// Number of node-local ranks.
    pub nlocal: u64,
    /// Bytes per rank's part.
    pub part_size: u64,
    /// Total bytes of the region.
    pub total: u64,
    /// The region base (self-check of the same-address property).
    pub base: u64,
}

/// How the region is cut up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Number of node-local ranks.
    pub nlocal: usize,
    /// Bytes per rank's part (multiple of [`PART_ALIGN`]).
    pub part_size: usize,
    /// Total bytes: header plus all parts.
    pub total: usize,
}

impl Layout {
    /// The layout for `nlocal` ranks asking for `heap_size` bytes each.
    pub fn new(nlocal: usize, heap_size: usize) -> Layout {
        let nlocal = nlocal.max(1);
        let max_part = ((MAX_TOTAL - HEADER_SIZE) / nlocal) & !(PART_ALIGN - 1);
        let part = heap_size
            .checked_add(PART_ALIGN - 1)
            .map(|s| s & !(PART_ALIGN - 1))
            .unwrap_or(max_part)
            .clamp(PART_ALIGN, max_part);
        Layout {
            nlocal,
            part_size: part,
            total: HEADER_SIZE + nlocal * part,
        }
    }

    /// `[start, end)` of local rank `i`'s part for a region at `base`.
    pub fn part(&self, base: usize, i: usize) -> (usize, usize) {
        let start = base + HEADER_SIZE + i * self.part_size;
        (start, start + self.part_size)
    }
}

/// Why the shared heap is not in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inactive {
    /// `MPI_Init` has not run (or failed).
    NotInitialized,
    /// `HEAPMPI_DISABLE` is set.
    Disabled,
    /// This rank is alone on its node: nobody to share with.
    SingleRank,
    /// The MPI calls used to set the region up failed.
    MpiFailed,
    /// Creating the shared-memory object failed (e.g. no `/dev/shm`).
    ShmCreate(Errno),
    /// A rank could not open the object created by local rank 0.
    ShmOpen(Errno),
    /// No address range was free in every local rank.
    NoCommonAddress,
    /// The address-space limit leaves no room even for a small heap.
    AddressSpace,
    /// Mapping the object at the agreed address failed.
    Map(Errno),
    /// The first pages could not be committed (e.g. `/dev/shm` full).
    Commit(Errno),
    /// The header read back wrong in some rank.
    BadHeader,
}

impl Inactive {
    /// A small integer for agreeing on the reason across ranks (0 = active).
    pub fn code(&self) -> i32 {
        match self {
            Inactive::NotInitialized => 1,
            Inactive::Disabled => 2,
            Inactive::SingleRank => 3,
            Inactive::MpiFailed => 4,
            Inactive::ShmCreate(_) => 5,
            Inactive::ShmOpen(_) => 6,
            Inactive::NoCommonAddress => 7,
            Inactive::Map(_) => 8,
            Inactive::Commit(_) => 9,
            Inactive::BadHeader => 10,
            Inactive::AddressSpace => 11,
        }
    }

    /// Whether this is a failure worth a warning (as opposed to a choice or
    /// a situation in which sharing makes no sense).
    pub fn is_failure(&self) -> bool {
        !matches!(
            self,
            Inactive::NotInitialized | Inactive::Disabled | Inactive::SingleRank
        )
    }
}

impl fmt::Display for Inactive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Inactive::NotInitialized => write!(f, "MPI_Init has not completed"),
            Inactive::Disabled => write!(f, "disabled by HEAPMPI_DISABLE"),
            Inactive::SingleRank => write!(f, "only one rank on this node"),
            Inactive::MpiFailed => write!(f, "MPI calls during set-up failed"),
            Inactive::ShmCreate(e) => {
                write!(
                    f,
                    "cannot create a shared-memory object in /dev/shm ({})",
                    e.desc()
                )
            }
            Inactive::ShmOpen(e) => write!(
                f,
                "cannot open the node's shared-memory object ({})",
                e.desc()
            ),
            Inactive::NoCommonAddress => write!(
                f,
                "no address range free in every node-local rank after {MAX_ROUNDS} proposals"
            ),
            Inactive::AddressSpace => write!(
                f,
                "the address-space limit (ulimit -v) leaves no room for a shared heap"
            ),
            Inactive::Map(e) => write!(f, "cannot map the shared heap ({})", e.desc()),
            Inactive::Commit(e) => {
                write!(
                    f,
                    "cannot commit shared memory, /dev/shm may be full ({})",
                    e.desc()
                )
            }
            Inactive::BadHeader => write!(f, "shared heap header mismatch between ranks"),
        }
    }
}

/// The collective operations the agreement needs, over the node-local ranks.
pub trait NodeComm {
    /// This rank's index among the node-local ranks.
    fn rank(&self) -> usize;
    /// Number of node-local ranks.
    fn size(&self) -> usize;
    /// Broadcasts `buf` from `root` to all; false if the transport failed.
    fn bcast(&self, buf: &mut [u8], root: usize) -> bool;
    /// True iff every rank passed `ok == true` (and the transport worked).
    fn all(&self, ok: bool) -> bool;
    /// True iff some rank passed `yes == true` (or the transport failed).
    fn any(&self, yes: bool) -> bool {
        !self.all(!yes)
    }
}

/// A region every node-local rank has mapped at `base`.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    /// The agreed base address.
    pub base: usize,
    /// How it is cut up.
    pub layout: Layout,
    /// This rank's index among the node-local ranks.
    pub local_rank: usize,
    /// Descriptor of the (already unlinked) shared object.
    pub fd: RawFd,
    /// The object's (former) name, for the report.
    pub name: ShmName,
    /// How many proposals it took to agree on the address.
    pub rounds: u32,
    /// The part size asked for, if the address-space limit made it smaller.
    pub shrunk_from: Option<usize>,
}

impl Region {
    /// `[start, end)` of this rank's part.
    pub fn my_part(&self) -> (usize, usize) {
        self.layout.part(self.base, self.local_rank)
    }

    /// The node header.
    pub fn header(&self) -> &NodeHeader {
        // SAFETY: the header is mapped at `base` for the process lifetime
        // (the region is never unmapped once established) and is read-only
        // after `establish`.
        unsafe { &*(self.base as *const NodeHeader) }
    }
}

/// A random 1 GiB-aligned candidate in `[PROPOSE_LO, PROPOSE_HI - total)`.
fn candidate(total: usize) -> Option<usize> {
    let lo = PROPOSE_LO / REGION_ALIGN;
    let hi = PROPOSE_HI.checked_sub(total)? / REGION_ALIGN;
    if hi <= lo {
        return None;
    }
    Some((lo + (sys::random_u64() as usize) % (hi - lo)) * REGION_ALIGN)
}

/// Agrees on an address, reserves it in every rank, and returns it with the
/// number of rounds used; shrinks `layout` when address space is short.
/// `refuse` tells how many proposals the last local rank pretends to have in
/// use (test knob).
fn agree_address(
    comm: &impl NodeComm,
    layout: &mut Layout,
    refuse: u32,
) -> Result<(usize, u32), Inactive> {
    let me = comm.rank();
    let n = comm.size();
    for round in 0..MAX_ROUNDS {
        let total = layout.total;
        let proposer = round as usize % n;
        let mut addr = 0usize;
        let mut no_space = false;
        if me == proposer {
            for _ in 0..LOCAL_TRIES {
                let Some(a) = candidate(total) else { break };
                match vm::reserve_at(a, total) {
                    Ok(()) => {
                        addr = a;
                        break;
                    }
                    Err(Errno::ENOMEM) => {
                        no_space = true;
                        break;
                    }
                    Err(_) => continue,
                }
            }
        }
        let mut buf = addr.to_le_bytes();
        if !comm.bcast(&mut buf, proposer) {
            if me == proposer && addr != 0 {
                // SAFETY: our own reservation, not yet used by anything.
                unsafe { vm::unmap(addr, total) };
            }
            return Err(Inactive::MpiFailed);
        }
        let addr = usize::from_le_bytes(buf);
        let mut have = me == proposer && addr != 0;
        if me != proposer && addr != 0 {
            match vm::reserve_at(addr, total) {
                Ok(()) => have = true,
                Err(e) => no_space = e == Errno::ENOMEM,
            }
        }
        let pretend_conflict = me == n - 1 && round < refuse;
        if comm.all(have && !pretend_conflict) {
            return Ok((addr, round + 1));
        }
        if have {
            // SAFETY: our own reservation, not yet used by anything.
            unsafe { vm::unmap(addr, total) };
        }
        if comm.any(no_space) {
            if layout.part_size / 2 < MIN_SHRUNK_PART {
                return Err(Inactive::AddressSpace);
            }
            *layout = Layout::new(n, layout.part_size / 2);
        }
    }
    Err(Inactive::NoCommonAddress)
}

/// Shares a memfd of the region's size (collective): rank 0 makes it (if
/// `memfd` there: rank 0's setting decides for all) and sends its pid and
/// descriptor number; the others open it through `/proc`. `Ok(None)` when
/// that is not asked for or fails on any rank (nothing is left open then):
/// the caller falls back to a POSIX object.
fn share_memfd(
    comm: &impl NodeComm,
    layout: &Layout,
    memfd: bool,
) -> Result<Option<(RawFd, ShmName)>, Inactive> {
    // [tried, status, pid, fd] as little-endian i32s.
    let mut msg = [0u8; 16];
    let mut fd = None;
    if comm.rank() == 0 && memfd {
        let status = match shm::create_anonymous(layout.total) {
            Ok(f) => {
                let raw = f.as_raw_fd();
                fd = Some(f);
                msg[8..12].copy_from_slice(&std::process::id().to_le_bytes());
                msg[12..16].copy_from_slice(&raw.to_le_bytes());
                0
            }
            Err(e) => e as i32,
        };
        msg[..4].copy_from_slice(&1i32.to_le_bytes());
        msg[4..8].copy_from_slice(&status.to_le_bytes());
    }
    if !comm.bcast(&mut msg, 0) {
        return Err(Inactive::MpiFailed);
    }
    let word = |i: usize| i32::from_le_bytes(msg[4 * i..4 * i + 4].try_into().unwrap_or([0; 4]));
    if word(0) != 1 || word(1) != 0 {
        return Ok(None);
    }
    if comm.rank() != 0 {
        fd = shm::open_of_process(word(2), word(3)).ok();
    }
    // Everyone holds the memory, or everyone drops it (closing the
    // descriptor frees a memfd nobody else holds).
    if !comm.all(fd.is_some()) {
        return Ok(None);
    }
    let mut name = ShmName([0; shm::NAME_LEN]);
    let label = b"memfd:heapmpi";
    name.0[..label.len()].copy_from_slice(label);
    Ok(fd.map(|f| (shm::keep_forever(f), name)))
}

/// Shares a POSIX shared-memory object of the region's size (collective):
/// rank 0 creates it under a random name, every rank opens it, rank 0
/// unlinks it once all hold it (or gave up).
fn share_posix(comm: &impl NodeComm, layout: &Layout) -> Result<(RawFd, ShmName), Inactive> {
    let me = comm.rank();
    let mut msg = [0u8; 4 + shm::NAME_LEN];
    let mut fd = None;
    if me == 0 {
        let name = ShmName::random();
        let status = match shm::create(&name, layout.total) {
            Ok(f) => {
                fd = Some(f);
                0
            }
            Err(e) => e as i32,
        };
        msg[..4].copy_from_slice(&status.to_le_bytes());
        msg[4..].copy_from_slice(&name.0);
    }
    if !comm.bcast(&mut msg, 0) {
        if fd.is_some() {
            let mut name = ShmName([0; shm::NAME_LEN]);
            name.0.copy_from_slice(&msg[4..]);
            let _ = shm::unlink(&name);
        }
        return Err(Inactive::MpiFailed);
    }
    let status = i32::from_le_bytes(msg[..4].try_into().unwrap_or([0; 4]));
    let mut name = ShmName([0; shm::NAME_LEN]);
    name.0.copy_from_slice(&msg[4..]);
    if status != 0 {
        return Err(Inactive::ShmCreate(Errno::from_raw(status)));
    }
    let mut open_err = Errno::UnknownErrno;
    if me != 0 {
        match shm::open(&name) {
            Ok(f) => fd = Some(f),
            Err(e) => open_err = e,
        }
    }
    let all_open = comm.all(fd.is_some());
    if me == 0 {
        // Everyone holds a descriptor (or gives up): the name has done its job.
        let _ = shm::unlink(&name);
    }
    if !all_open {
        return Err(Inactive::ShmOpen(open_err));
    }
    match fd {
        Some(f) => Ok((shm::keep_forever(f), name)),
        None => Err(Inactive::ShmOpen(open_err)),
    }
}

/// Sets the shared region up across the node-local ranks (collective: every
/// local rank must call it). See the module documentation for the protocol.
pub fn establish(
    comm: &impl NodeComm,
    heap_size: usize,
    refuse: u32,
    memfd: bool,
) -> Result<Region, Inactive> {
    let me = comm.rank();
    let n = comm.size();

    // 1. One layout for all: rank 0's heap size wins.
    let mut size_buf = (heap_size as u64).to_le_bytes();
    if !comm.bcast(&mut size_buf, 0) {
        return Err(Inactive::MpiFailed);
    }
    let mut layout = Layout::new(n, u64::from_le_bytes(size_buf) as usize);
    let asked = layout.part_size;

    // 2. The memory: a memfd shared through /proc, else (or if asked) a
    //    POSIX object created, opened everywhere, unlinked.
    let (fd, name) = match share_memfd(comm, &layout, memfd)? {
        Some(shared) => shared,
        None => share_posix(comm, &layout)?,
    };
    let close = || {
        // SAFETY: `fd` is ours and nothing else uses it on this path.
        unsafe { libc::close(fd) };
    };

    // 3. Agree on an address.
    let (base, rounds) = match agree_address(comm, &mut layout, refuse) {
        Ok(r) => r,
        Err(e) => {
            close();
            return Err(e);
        }
    };

    // 4. Map over the reservation; rank 0 commits and writes the header.
    // SAFETY: `[base, base+total)` is this process's reservation from step 3.
    let mapped = unsafe { vm::map_shared_over(base, layout.total, fd) };
    if mapped.is_ok() {
        // Core files hold the node header and each rank's committed pages
        // (the arena marks them as it commits), not the whole region.
        vm::set_dump(base, layout.total, false);
        vm::set_dump(base, HEADER_SIZE, true);
    }
    let map_err = mapped.err();
    let mut header_err = None;
    if me == 0 && map_err.is_none() {
        match shm::commit(fd, 0, control_bytes(n)) {
            Ok(()) => {
                // SAFETY: the first page is mapped and committed, and no other
                // rank reads it before the barrier below.
                unsafe {
                    (base as *mut NodeHeader).write(NodeHeader {
                        magic: MAGIC,
                        nlocal: n as u64,
                        part_size: layout.part_size as u64,
                        total: layout.total as u64,
                        base: base as u64,
                    })
                };
            }
            Err(e) => header_err = Some(e),
        }
    }
    if !comm.all(map_err.is_none() && header_err.is_none()) {
        // SAFETY: the range is our reservation or our mapping of it; nothing
        // has been allocated from it.
        unsafe { vm::unmap(base, layout.total) };
        close();
        return Err(match (map_err, header_err) {
            (Some(e), _) => Inactive::Map(e),
            (_, Some(e)) => Inactive::Commit(e),
            _ => Inactive::Map(Errno::UnknownErrno),
        });
    }

    // The barrier above orders rank 0's header write before these reads.
    let shrunk_from = (layout.part_size < asked).then_some(asked);
    let region = Region {
        base,
        layout,
        local_rank: me,
        fd,
        name,
        rounds,
        shrunk_from,
    };
    let h = region.header();
    let good = h.magic == MAGIC
        && h.nlocal == n as u64
        && h.part_size == layout.part_size as u64
        && h.base == base as u64;
    if !comm.all(good) {
        // SAFETY: as above; nothing has been allocated from the region.
        unsafe { vm::unmap(base, layout.total) };
        close();
        return Err(Inactive::BadHeader);
    }
    Ok(region)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node with a single rank: every collective is trivially local.
    struct Solo;

    impl NodeComm for Solo {
        fn rank(&self) -> usize {
            0
        }
        fn size(&self) -> usize {
            1
        }
        fn bcast(&self, _buf: &mut [u8], _root: usize) -> bool {
            true
        }
        fn all(&self, ok: bool) -> bool {
            ok
        }
    }

    #[test]
    fn layout_rounds_and_caps() {
        let l = Layout::new(4, 1000);
        assert_eq!(l.part_size, PART_ALIGN);
        assert_eq!(l.total, HEADER_SIZE + 4 * PART_ALIGN);
        let l = Layout::new(2, 64 << 30);
        assert_eq!(l.part_size, 64 << 30);
        assert_eq!(
            l.part(1 << 40, 1),
            (
                (1 << 40) + HEADER_SIZE + (64 << 30),
                (1 << 40) + HEADER_SIZE + (128 << 30)
            )
        );
        let l = Layout::new(1024, 1 << 40);
        assert!(l.total <= MAX_TOTAL);
        assert_eq!(l.part_size % PART_ALIGN, 0);
        let l = Layout::new(2, usize::MAX);
        assert!(l.total <= MAX_TOTAL);
    }

    #[test]
    fn candidates_are_aligned_and_in_range() {
        for _ in 0..1000 {
            let a = candidate(1 << 40).unwrap();
            assert_eq!(a % REGION_ALIGN, 0);
            assert!(a >= PROPOSE_LO && a + (1 << 40) <= PROPOSE_HI);
        }
        assert!(candidate(PROPOSE_HI).is_none());
    }

    #[test]
    fn establish_solo_maps_and_leaves_nothing_in_dev_shm() {
        for memfd in [false, true] {
            establish_solo(memfd);
        }
    }

    fn establish_solo(memfd: bool) {
        let r = establish(&Solo, 8 << 20, 0, memfd).expect("region");
        assert_eq!(r.name.as_str().starts_with("memfd:"), memfd);
        assert_eq!(r.rounds, 1);
        assert_eq!(r.base % REGION_ALIGN, 0);
        assert_eq!(r.header().magic, MAGIC);
        let path = format!("/dev/shm{}", r.name.as_str());
        assert!(!std::path::Path::new(&path).exists(), "{path} left behind");
        // The part is usable once committed.
        let (s, e) = r.my_part();
        shm::commit(r.fd, s - r.base, 4096).unwrap();
        // SAFETY: the first page of our part is mapped and committed.
        unsafe {
            (s as *mut u64).write(42);
            assert_eq!((s as *const u64).read(), 42);
        }
        assert_eq!(e - s, 8 << 20);
        // SAFETY: test-only teardown; nothing else uses this region.
        unsafe {
            vm::unmap(r.base, r.layout.total);
            libc::close(r.fd);
        }
    }

    #[test]
    fn conflicts_are_retried_elsewhere() {
        let r = establish(&Solo, 1 << 20, 3, true).expect("region");
        assert_eq!(r.rounds, 4);
        // SAFETY: test-only teardown.
        unsafe {
            vm::unmap(r.base, r.layout.total);
            libc::close(r.fd);
        }
        assert_eq!(
            establish(&Solo, 1 << 20, MAX_ROUNDS, true).unwrap_err(),
            Inactive::NoCommonAddress
        );
    }

    #[test]
    fn taken_address_is_not_reserved_twice() {
        let a = candidate(1 << 30).unwrap();
        assert_eq!(vm::reserve_at(a, 1 << 30), Ok(()));
        assert_eq!(vm::reserve_at(a, 1 << 30), Err(Errno::EEXIST));
        assert_eq!(vm::reserve_at(a + (1 << 20), 1 << 20), Err(Errno::EEXIST));
        // SAFETY: our own reservation.
        unsafe { vm::unmap(a, 1 << 30) };
        assert_eq!(vm::reserve_at(a, 1 << 30), Ok(()));
        // SAFETY: our own reservation.
        unsafe { vm::unmap(a, 1 << 30) };
    }
}
