//! The system-memory layer under one rank's dlmalloc instance.
//!
//! A rank's part of the shared region is `[start, end)`. dlmalloc asks this
//! arena for memory in granularity-sized pieces; the arena hands them out by
//! bumping a pointer, so every piece is contiguous with the previous one and
//! dlmalloc merges them into a single segment (its `sys_alloc` extends the top
//! segment when the new piece starts where the old one ends). When dlmalloc
//! trims its top chunk it gives the tail back through `free_part`; the arena
//! lowers the bump pointer, and committed pages more than [`RETAIN`] bytes
//! above it go back to the system once they have stayed unused for
//! [`PURGE_DELAY_NS`] (checked on the allocator's slow paths).
//!
//! Pages are committed (`fallocate`) before they are handed out, in steps of
//! at least [`COMMIT_STEP`], so a full `/dev/shm` turns into a failed
//! allocation (and a glibc fallback) instead of a SIGBUS later.
//!
//! RATIONALE: committing shared memory costs a system call and zeroing
//! (about 2.5 GB/s on our machines) and giving it back costs as much again,
//! so the loop "malloc 64 MiB, use it, free it" would pay both every time if
//! the tail were released at once. Releasing only what has stayed unused
//! for a while (as mimalloc does) makes such loops free while a program that
//! frees a large buffer for good still gets its memory back.

use core::cell::Cell;
use std::os::fd::RawFd;
use std::sync::atomic::Ordering;

use crate::sys;

/// Committed-but-unused bytes always kept above the bump pointer.
pub const RETAIN: usize = 16 << 20;
/// How long committed pages beyond the cushion must stay unused before they
/// are released.
pub const PURGE_DELAY_NS: u64 = 500_000_000;
/// Smallest amount committed at once.
pub const COMMIT_STEP: usize = 1 << 20;
/// Largest commit whose pages are mapped at once ([`sys::vm::prefault`]);
/// larger ones are mapped page by page as the program touches them, as
/// glibc's private memory is. Committing (`fallocate`) leaves a shared
/// object's pages to be zeroed on first mapping, so prefaulting a block
/// zeroes all of it even where the program never writes: the MPICH test
/// suite's `rma/win_large_shm` (twelve 1 GiB windows per rank, never
/// written; 4 ranks) spent a third of its time in that zeroing and took
/// 41.5 s against stock Open MPI's 18.7 s; with 1 GiB blocks left to the
/// first touch, 6.3 s against 16.8 s. A block written in full pays about
/// a fifth more for its first touch that way (1 GiB, 2 ranks, six runs:
/// 0.70-1.06 s against 0.55-0.85 s prefaulted and 0.56-0.67 s for glibc's
/// private pages), so only blocks beyond 256 MiB go that way: no
/// application of the suite allocates one (CP2K, its largest user of
/// memory, commits 243 MB per rank in all).
pub const PREFAULT_MAX: usize = 256 << 20;

/// What the arena commits and releases pages through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backing {
    /// Nothing configured yet: every request fails.
    None,
    /// A shared-memory object whose offset 0 is mapped at `file_base`.
    Shm {
        /// Descriptor of the object, open for the life of the process.
        fd: RawFd,
        /// Address at which offset 0 of the object is mapped.
        file_base: usize,
    },
}

/// One rank's part of the shared heap, as seen by its dlmalloc instance.
///
/// Invariants: `start <= bump <= end`; `committed` is page-aligned and
/// `start <= committed <= end`; every byte of `[start, max(bump, committed))`
/// that dlmalloc currently owns is committed, i.e. `bump <= committed`
/// whenever `bump > start`. Only the owning rank's threads use it, always
/// under the lock that guards its dlmalloc instance, hence `Cell`.
pub struct Arena {
    start: Cell<usize>,
    end: Cell<usize>,
    bump: Cell<usize>,
    committed: Cell<usize>,
    backing: Cell<Backing>,
    page: Cell<usize>,
    /// Monotonic time (ns) since when committed pages beyond the cushion
    /// have been unused; 0 if there are none.
    excess_since: Cell<u64>,
    /// [`PURGE_DELAY_NS`], or 0 in tests.
    purge_delay: Cell<u64>,
    /// Whether this arena holds the program's blocks (the fork handler's
    /// [`super::state::COMMITTED_END`] and `HEAPMPI_CHECK`'s page guards follow it), not
    /// only heapmpi's own (`HEAPMPI_CHECK`'s second arena).
    program: Cell<bool>,
}

// SAFETY: the arena is only reached through the mutex around its dlmalloc
// instance, so moving it between threads never shares the Cells.
unsafe impl Send for Arena {}

impl Arena {
    /// An arena with no memory: every allocation fails until [`Arena::configure`].
    pub const fn empty() -> Arena {
        Arena {
            start: Cell::new(0),
            end: Cell::new(0),
            bump: Cell::new(0),
            committed: Cell::new(0),
            backing: Cell::new(Backing::None),
            page: Cell::new(4096),
            excess_since: Cell::new(0),
            purge_delay: Cell::new(PURGE_DELAY_NS),
            program: Cell::new(true),
        }
    }

    /// This arena holds only heapmpi's own blocks (`HEAPMPI_CHECK`).
    pub fn set_heapmpi_only(&self) {
        self.program.set(false);
    }

    /// Sets how long unused committed pages wait before release.
    pub fn set_purge_delay(&self, ns: u64) {
        self.purge_delay.set(ns);
    }

    /// Points the arena at `[start, end)` (page-aligned) backed by `backing`.
    pub fn configure(&self, start: usize, end: usize, backing: Backing) {
        let page = sys::page_size();
        debug_assert!(start % page == 0 && end % page == 0 && start <= end);
        self.start.set(start);
        self.end.set(end);
        self.bump.set(start);
        self.committed.set(start);
        self.backing.set(backing);
        self.page.set(page);
    }

    /// Bytes handed to dlmalloc and not given back.
    pub fn in_use(&self) -> usize {
        self.bump.get() - self.start.get()
    }

    /// Bytes of committed pages.
    pub fn committed(&self) -> usize {
        self.committed.get() - self.start.get()
    }

    fn round_page(&self, x: usize) -> usize {
        let p = self.page.get();
        (x + p - 1) & !(p - 1)
    }

    /// Commits `[committed, target)`; returns false if the system refused.
    fn commit_to(&self, target: usize) -> bool {
        let from = self.committed.get();
        if target <= from {
            return true;
        }
        match self.backing.get() {
            Backing::None => false,
            Backing::Shm { fd, file_base } => {
                let saved = sys::errno();
                let ok = sys::shm::commit(fd, from - file_base, target - from).is_ok();
                // A failed commit ends in a glibc fallback that succeeds; the
                // program must not see ENOSPC in errno after a good malloc.
                sys::set_errno(saved);
                if ok {
                    self.set_committed(target);
                    if self.program.get() {
                        super::guard::committed(from, target);
                    }
                    // A core file of this rank holds what it committed.
                    sys::vm::set_dump(from, target - from, true);
                    // The pages are about to be handed out and written:
                    // map them now in one call (a first-touch fault on a
                    // shared page costs more than on a private one). Not
                    // a large block's: it may be touched in part or never
                    // (a window sized for the worst case), and mapping
                    // zeroes every page (see PREFAULT_MAX).
                    if target - from <= PREFAULT_MAX {
                        sys::vm::prefault(from, target - from);
                    }
                }
                ok
            }
        }
    }

    fn set_committed(&self, end: usize) {
        self.committed.set(end);
        if self.program.get() {
            super::state::COMMITTED_END.store(end, Ordering::Relaxed);
        }
    }

    /// Where committed pages stop being part of the cushion.
    fn cushion_end(&self) -> usize {
        self.round_page(self.bump.get()).saturating_add(RETAIN)
    }

    /// Releases committed pages beyond the cushion if they have stayed
    /// unused for the purge delay; starts or stops that clock otherwise.
    /// Cheap unless there is an excess (reads the clock only then).
    pub fn maybe_purge(&self) {
        let keep = self.cushion_end();
        let committed = self.committed.get();
        if committed <= keep {
            self.excess_since.set(0);
            return;
        }
        let now = sys::monotonic_ns().max(1);
        let since = self.excess_since.get();
        if since == 0 {
            self.excess_since.set(now);
            if self.purge_delay.get() > 0 {
                return;
            }
        } else if now - since < self.purge_delay.get() {
            return;
        }
        if let Backing::Shm { fd, file_base } = self.backing.get() {
            let saved = sys::errno();
            if sys::shm::release(fd, keep - file_base, committed - keep).is_ok() {
                self.set_committed(keep);
                if self.program.get() {
                    super::guard::released(keep, committed);
                }
                self.excess_since.set(0);
            }
            sys::set_errno(saved);
        }
    }
}

// SAFETY: `alloc` returns fresh, committed, page-aligned ranges inside the
// rank's part that nothing else hands out (the bump pointer only moves past
// them), and `free`/`free_part` only take back ranges at the top of what was
// handed out, so no range is ever given to dlmalloc twice.
unsafe impl dlmalloc::Allocator for Arena {
    fn alloc(&self, size: usize) -> (*mut u8, usize, u32) {
        let fail = (core::ptr::null_mut(), 0, 0);
        let size = self.round_page(size);
        let base = self.bump.get();
        let Some(new_bump) = base.checked_add(size) else {
            return fail;
        };
        if new_bump > self.end.get() {
            return fail;
        }
        if new_bump > self.committed.get() {
            // Commit at least COMMIT_STEP at a time, never past the end.
            let step = (self.committed.get() + COMMIT_STEP).min(self.end.get());
            if !self.commit_to(new_bump.max(step)) && !self.commit_to(new_bump) {
                return fail;
            }
        }
        self.bump.set(new_bump);
        if self.committed.get() <= self.cushion_end() {
            self.excess_since.set(0);
        }
        (base as *mut u8, size, 0)
    }

    fn remap(&self, _ptr: *mut u8, _old: usize, _new: usize, _can_move: bool) -> *mut u8 {
        core::ptr::null_mut()
    }

    fn free_part(&self, ptr: *mut u8, oldsize: usize, newsize: usize) -> bool {
        let base = ptr as usize;
        if base + oldsize != self.bump.get() || newsize > oldsize {
            return false;
        }
        self.bump.set(base + newsize);
        self.maybe_purge();
        true
    }

    fn free(&self, ptr: *mut u8, size: usize) -> bool {
        self.free_part(ptr, size, 0)
    }

    fn can_release_part(&self, _flags: u32) -> bool {
        true
    }

    fn allocates_zeros(&self) -> bool {
        // Retained pages are reused with old contents; never claim zeros.
        false
    }

    fn page_size(&self) -> usize {
        self.page.get()
    }
}

/// The dlmalloc chunk size of a live block (its head word without flags).
///
/// # Safety
/// `ptr` must be a live block from a dlmalloc instance over an [`Arena`].
#[inline]
pub unsafe fn chunk_size(ptr: *const u8) -> usize {
    const FLAG_BITS: usize = 7;
    // SAFETY: a live dlmalloc block is preceded by its chunk's head word.
    unsafe { ptr.cast::<usize>().sub(1).read() & !FLAG_BITS }
}

/// Usable bytes of a block that dlmalloc handed out.
///
/// dlmalloc keeps a `head` word (chunk size | flag bits) just before the user
/// pointer; an in-use chunk may use its whole size except that one word (the
/// next chunk's `prev_foot` belongs to it while it is in use). This crate's
/// dlmalloc never creates mmapped chunks, so no other overhead applies. The
/// layout is dlmalloc's classic one; the crate version is pinned and the unit
/// tests check this against real allocations.
///
/// # Safety
/// `ptr` must be a live block from a dlmalloc instance over an [`Arena`].
#[inline]
pub unsafe fn usable_size(ptr: *const u8) -> usize {
    // SAFETY: forwarded from the caller.
    unsafe { chunk_size(ptr) - core::mem::size_of::<usize>() }
}

/// A stand-in for the shared region in unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use std::os::fd::AsRawFd;

    /// A memfd mapped with memmap2 stands in for the shared object.
    pub(crate) struct Fixture {
        file: std::fs::File,
        pub(crate) map: memmap2::MmapRaw,
        pub(crate) len: usize,
    }

    impl Fixture {
        pub(crate) fn new(len: usize) -> Fixture {
            let fd =
                nix::sys::memfd::memfd_create(c"heapmpi-test", nix::sys::memfd::MFdFlags::empty())
                    .unwrap();
            let file = std::fs::File::from(fd);
            file.set_len(len as u64).unwrap();
            let map = memmap2::MmapOptions::new().len(len).map_raw(&file).unwrap();
            Fixture { file, map, len }
        }

        /// Points `a` at the whole fixture.
        pub(crate) fn configure(&self, a: &Arena) {
            let base = self.map.as_mut_ptr() as usize;
            a.configure(
                base,
                base + self.len,
                Backing::Shm {
                    fd: self.file.as_raw_fd(),
                    file_base: base,
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::Fixture;
    use super::*;
    use dlmalloc::Dlmalloc;

    fn fixture(len: usize) -> Fixture {
        Fixture::new(len)
    }

    fn dl(f: &Fixture) -> Dlmalloc<Arena> {
        let a = Arena::empty();
        f.configure(&a);
        Dlmalloc::new_with_allocator(a)
    }

    #[test]
    fn unconfigured_arena_fails_cleanly() {
        let mut d = Dlmalloc::new_with_allocator(Arena::empty());
        // SAFETY: plain allocation calls on a private instance.
        assert!(unsafe { d.c_malloc(16) }.is_null());
    }

    #[test]
    fn allocations_stay_inside_and_usable_size_is_right() {
        let f = fixture(64 << 20);
        let mut d = dl(&f);
        let base = f.map.as_mut_ptr() as usize;
        let mut live = Vec::new();
        for (i, size) in [0usize, 1, 7, 16, 24, 100, 255, 256, 4096, 100_000, 3 << 20]
            .into_iter()
            .enumerate()
        {
            // SAFETY: private instance; sizes are small.
            let p = unsafe { d.c_malloc(size) };
            assert!(!p.is_null());
            assert_eq!(p as usize % 16, 0);
            assert!(p as usize >= base && (p as usize) + size <= base + f.len);
            // SAFETY: `p` is live.
            let u = unsafe { usable_size(p) };
            assert!(u >= size, "usable {u} < {size}");
            assert!(u < size + 64 || size > 4096, "usable {u} far above {size}");
            // Fill the whole usable size: must not corrupt neighbours.
            // SAFETY: `u` bytes belong to the block.
            unsafe { p.write_bytes(i as u8, u) };
            live.push((p, u, i as u8));
        }
        for &(p, u, v) in &live {
            // SAFETY: blocks are live and `u` bytes long.
            let s = unsafe { std::slice::from_raw_parts(p, u) };
            assert!(s.iter().all(|&b| b == v));
        }
        for (p, _, _) in live {
            // SAFETY: each block is freed once.
            unsafe { d.c_free(p) };
        }
    }

    #[test]
    fn aligned_allocations() {
        let f = fixture(64 << 20);
        let mut d = dl(&f);
        for align in [32usize, 64, 4096, 1 << 16, 1 << 20] {
            // SAFETY: power-of-two alignments.
            let p = unsafe { d.c_memalign(align, 100) };
            assert!(!p.is_null());
            assert_eq!(p as usize % align, 0);
            // SAFETY: live block.
            assert!(unsafe { usable_size(p) } >= 100);
            unsafe { d.c_free(p) };
        }
    }

    #[test]
    fn full_part_fails_then_recovers() {
        let f = fixture(4 << 20);
        let mut d = dl(&f);
        // SAFETY: private instance.
        let big = unsafe { d.c_malloc(8 << 20) };
        assert!(big.is_null(), "more than the part must fail");
        let mut got = Vec::new();
        loop {
            // SAFETY: private instance.
            let p = unsafe { d.c_malloc(256 << 10) };
            if p.is_null() {
                break;
            }
            got.push(p);
        }
        assert!(got.len() >= 10 && got.len() <= 16, "{} blocks", got.len());
        for p in got.drain(..) {
            // SAFETY: each freed once.
            unsafe { d.c_free(p) };
        }
        // SAFETY: private instance.
        let p = unsafe { d.c_malloc(2 << 20) };
        assert!(!p.is_null(), "space must be reusable after frees");
    }

    #[test]
    fn trimming_releases_pages_beyond_retain() {
        let f = fixture(512 << 20);
        let mut d = dl(&f);
        d.allocator().set_purge_delay(0);
        // SAFETY: private instance.
        let p = unsafe { d.c_malloc(200 << 20) };
        assert!(!p.is_null());
        // SAFETY: 200 MiB belong to the block.
        unsafe { p.write_bytes(1, 200 << 20) };
        assert!(d.allocator().committed() >= 200 << 20);
        // SAFETY: freed once.
        unsafe { d.c_free(p) };
        let a = d.allocator();
        assert!(a.in_use() < (1 << 20), "top trimmed: {}", a.in_use());
        assert!(
            a.committed() <= a.in_use() + RETAIN + 4096,
            "committed {}",
            a.committed()
        );
        // Released pages read back as zeros and can be reused.
        // SAFETY: private instance.
        let q = unsafe { d.c_malloc(100 << 20) };
        assert_eq!(q, p, "address space reused from the bottom");
        // SAFETY: freed once.
        unsafe { d.c_free(q) };
    }

    #[test]
    fn release_waits_for_the_purge_delay() {
        let f = fixture(512 << 20);
        let mut d = dl(&f);
        d.allocator().set_purge_delay(50_000_000);
        // SAFETY: private instance; freed once.
        unsafe {
            let p = d.c_malloc(100 << 20);
            assert!(!p.is_null());
            d.c_free(p);
        }
        assert!(
            d.allocator().committed() >= 100 << 20,
            "kept during the delay"
        );
        std::thread::sleep(std::time::Duration::from_millis(60));
        d.allocator().maybe_purge();
        assert!(d.allocator().committed() <= d.allocator().in_use() + RETAIN + 4096);
    }

    #[test]
    fn small_churn_costs_no_growth() {
        let f = fixture(64 << 20);
        let mut d = dl(&f);
        for _ in 0..10_000 {
            // SAFETY: private instance; each block freed once.
            unsafe {
                let p = d.c_malloc(4 << 20);
                assert!(!p.is_null());
                d.c_free(p);
            }
        }
        assert!(d.allocator().committed() <= (4 << 20) + RETAIN + COMMIT_STEP);
    }
}
