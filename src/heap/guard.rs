//! `HEAPMPI_CHECK=1`: page protections that make a stray access into
//! another rank's memory fault where it happens, and a `SIGSEGV` handler
//! that names what was hit.
//!
//! Without heapmpi, a stale or wild pointer into another process's
//! addresses faults, because nothing is mapped there. In the shared heap
//! every rank's part is mapped in every rank, so such a write would land
//! in another rank's data. In this mode each rank's part is cut in three:
//!
//! ```text
//! [lo, lo + prog)           the program's blocks (malloc and friends)
//! [lo + prog, hi - page)    heapmpi's own blocks (message headers,
//!                           staging copies, collective scratch, window
//!                           memory): written by every local rank
//! [hi - page, hi)           a guard page
//! ```
//!
//! and each rank maps them thus (the idea of Electric Fence's guard pages
//! and of DUMA's protected free memory, applied to whole parts):
//!
//! | range | own part | another rank's part |
//! |---|---|---|
//! | program blocks, committed | read, write | read only |
//! | program blocks, not committed | none | read only |
//! | heapmpi's blocks | read, write | read, write |
//! | guard page | none | none |
//!
//! A write through a pointer into another rank's blocks, or past the end
//! of this rank's heap, then faults, and the handler prints one line
//! naming the rank whose memory it is and the block there (its address
//! and size, or that it was freed), and aborts, so the core file and a
//! debugger show the spot. heapmpi itself rarely writes into another
//! rank's program blocks in this mode (receivers copy; the synergistic
//! protocol, where a sender also copies into the receiver's buffer, is
//! off); where it must (a collective writing into a member's buffer, a
//! put into a window over `malloc`'d memory), the fault comes from a
//! thread inside an MPI call ([`enter`]/[`leave`]) or heapmpi's progress
//! thread, and the handler opens that page for writing until the
//! outermost call of any thread returns ([`leave`]).
//!
//! The program's own `SIGSEGV` handler, if it had one when MPI started
//! (Open MPI installs one to print a backtrace), still gets every fault
//! outside the shared region.

use core::cell::Cell;
use core::ffi::c_void;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicUsize, Ordering};

/// How a part is cut up in this mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Start of local rank 0's part.
    pub parts: usize,
    /// Bytes per part.
    pub part: usize,
    /// Number of local ranks.
    pub nlocal: usize,
    /// Bytes of each part that hold the program's blocks (from its start).
    pub prog: usize,
    /// The page size (the guard page's).
    pub page: usize,
}

/// Where an address lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// Local rank `.0`'s program blocks.
    Program(usize),
    /// Local rank `.0`'s heapmpi blocks.
    Own(usize),
    /// The guard page at the end of local rank `.0`'s part.
    Guard(usize),
}

impl Layout {
    /// The layout of `nlocal` parts of `part` bytes from `parts`: half of
    /// each part (in whole pages) for the program's blocks, the rest but
    /// the last page for heapmpi's.
    pub fn new(parts: usize, part: usize, nlocal: usize, page: usize) -> Layout {
        let prog = (part.saturating_sub(page) / 2) & !(page - 1);
        Layout {
            parts,
            part,
            nlocal,
            prog,
            page,
        }
    }

    /// `[lo, hi)` of local rank `i`'s part.
    pub fn part_of(&self, i: usize) -> (usize, usize) {
        let lo = self.parts + i * self.part;
        (lo, lo + self.part)
    }

    /// `[lo, hi)` of local rank `i`'s program blocks.
    pub fn program(&self, i: usize) -> (usize, usize) {
        let (lo, _) = self.part_of(i);
        (lo, lo + self.prog)
    }

    /// `[lo, hi)` of local rank `i`'s heapmpi blocks.
    pub fn own(&self, i: usize) -> (usize, usize) {
        let (lo, hi) = self.part_of(i);
        (lo + self.prog, hi - self.page)
    }

    /// Where `a` lies, if in some rank's part.
    pub fn zone(&self, a: usize) -> Option<Zone> {
        let off = a.checked_sub(self.parts)?;
        let i = off / self.part;
        if i >= self.nlocal {
            return None;
        }
        let within = off % self.part;
        Some(if within < self.prog {
            Zone::Program(i)
        } else if within < self.part - self.page {
            Zone::Own(i)
        } else {
            Zone::Guard(i)
        })
    }
}

/// The layout, once protections are set ([`protect`]); fields are written
/// before `ARMED`'s Release store and never changed afterwards.
static PARTS: AtomicUsize = AtomicUsize::new(0);
static PART: AtomicUsize = AtomicUsize::new(0);
static NLOCAL: AtomicUsize = AtomicUsize::new(0);
static PROG: AtomicUsize = AtomicUsize::new(0);
static PAGE: AtomicUsize = AtomicUsize::new(4096);
/// This rank's index among the local ranks.
static ME: AtomicUsize = AtomicUsize::new(0);
/// World ranks of the local ranks (`NLOCAL` entries, leaked), for names.
static WORLD: AtomicPtr<i32> = AtomicPtr::new(core::ptr::null_mut());
/// This rank's world rank.
static MY_WORLD: AtomicI32 = AtomicI32::new(-1);
/// Whether the protections and the handler are in place. Release when
/// set, Acquire in the handler: it then sees the layout above.
static ARMED: AtomicBool = AtomicBool::new(false);

fn layout() -> Layout {
    Layout {
        parts: PARTS.load(Ordering::Relaxed),
        part: PART.load(Ordering::Relaxed),
        nlocal: NLOCAL.load(Ordering::Relaxed),
        prog: PROG.load(Ordering::Relaxed),
        page: PAGE.load(Ordering::Relaxed),
    }
}

/// Whether the protections are in place.
#[inline]
pub fn armed() -> bool {
    ARMED.load(Ordering::Acquire)
}

thread_local! {
    /// Depth of heapmpi entry points on this thread (the progress thread
    /// stays at 1): a fault in another rank's program blocks from a thread
    /// at depth > 0 is heapmpi's own write. Const-initialised without a
    /// destructor: reading it in the signal handler allocates nothing.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Pages opened for heapmpi's own writes, closed again by [`leave`].
const OPEN_SLOTS: usize = 64;
#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: AtomicUsize = AtomicUsize::new(0);
static OPENED: [AtomicUsize; OPEN_SLOTS] = [EMPTY; OPEN_SLOTS];
/// How many slots of `OPENED` hold a page. Relaxed everywhere: it only
/// saves [`leave`] a scan; the slots themselves are swapped atomically.
static OPEN_COUNT: AtomicUsize = AtomicUsize::new(0);

/// A heapmpi entry point begins on this thread.
#[inline]
pub fn enter() {
    DEPTH.with(|d| d.set(d.get() + 1));
}

/// A heapmpi entry point ends on this thread: at the outermost, pages
/// opened for heapmpi's writes become read-only again.
#[inline]
pub fn leave() {
    let d = DEPTH.with(|d| {
        let v = d.get().saturating_sub(1);
        d.set(v);
        v
    });
    if d == 0 && OPEN_COUNT.load(Ordering::Relaxed) > 0 {
        close_opened();
    }
}

/// This thread is heapmpi's for its whole life (the progress thread).
pub fn inside_for_good() {
    DEPTH.with(|d| d.set(1));
    // A fault on a thread that blocks SIGSEGV kills the process without
    // running the handler: the progress thread blocks every signal.
    // SAFETY: plain sigset manipulation on local values.
    unsafe {
        let mut set: libc::sigset_t = core::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGSEGV);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, core::ptr::null_mut());
    }
}

#[cold]
fn close_opened() {
    let page = PAGE.load(Ordering::Relaxed);
    for s in &OPENED {
        let p = s.swap(0, Ordering::Relaxed);
        if p != 0 {
            OPEN_COUNT.fetch_sub(1, Ordering::Relaxed);
            // SAFETY: `p` is a page of another rank's program blocks inside
            // the shared mapping; making it read-only again changes no
            // contents. A heapmpi thread still writing there faults and
            // reopens it.
            unsafe { libc::mprotect(p as *mut c_void, page, libc::PROT_READ) };
        }
    }
}

/// Sets `[lo, hi)` (page-aligned) to `prot`.
fn set_prot(lo: usize, hi: usize, prot: i32) -> bool {
    if hi <= lo {
        return true;
    }
    // SAFETY: every caller passes a range inside the shared region's
    // mapping; protections change, contents do not.
    unsafe { libc::mprotect(lo as *mut c_void, hi - lo, prot) == 0 }
}

/// The arena of this rank's program blocks committed `[from, to)`: those
/// pages become writable before they are handed out.
pub fn committed(from: usize, to: usize) {
    if armed() {
        set_prot(from, to, libc::PROT_READ | libc::PROT_WRITE);
    }
}

/// The arena released `[from, to)`: no access until committed again.
pub fn released(from: usize, to: usize) {
    if armed() {
        set_prot(from, to, libc::PROT_NONE);
    }
}

/// Sets this rank's protections for layout `l` (it is local rank `me`;
/// `world[i]` is local rank `i`'s world rank) and installs the handler.
/// False if the system refused (the check then runs with canaries only).
/// Called under the lock of this rank's program arena, so that no commit
/// runs between reading where its committed pages end and protecting the
/// rest (`state::COMMITTED_END`: the arena moves it under that
/// lock before it hands pages out).
pub fn protect(l: Layout, me: usize, world: &[i32]) -> bool {
    PARTS.store(l.parts, Ordering::Relaxed);
    PART.store(l.part, Ordering::Relaxed);
    NLOCAL.store(l.nlocal, Ordering::Relaxed);
    PROG.store(l.prog, Ordering::Relaxed);
    PAGE.store(l.page, Ordering::Relaxed);
    ME.store(me, Ordering::Relaxed);
    MY_WORLD.store(world.get(me).copied().unwrap_or(-1), Ordering::Relaxed);
    WORLD.store(
        Box::leak(world.to_vec().into_boxed_slice()).as_mut_ptr(),
        Ordering::Relaxed,
    );
    if !install_handler() {
        return false;
    }
    let mut ok = true;
    for i in 0..l.nlocal {
        let (plo, phi) = l.program(i);
        let (_, hi) = l.part_of(i);
        if i == me {
            let c = super::state::COMMITTED_END
                .load(Ordering::Relaxed)
                .clamp(plo, phi);
            ok &= set_prot(c, phi, libc::PROT_NONE);
        } else {
            ok &= set_prot(plo, phi, libc::PROT_READ);
        }
        ok &= set_prot(hi - l.page, hi, libc::PROT_NONE);
    }
    if !ok {
        // Half-protected parts would fault heapmpi's own writes with no
        // handler to open them: back to the plain mapping.
        set_prot(
            l.parts,
            l.parts + l.nlocal * l.part,
            libc::PROT_READ | libc::PROT_WRITE,
        );
        return false;
    }
    // Release: the handler's Acquire load then sees the layout.
    ARMED.store(true, Ordering::Release);
    true
}

/// The handler that was in place before heapmpi's.
static OLD: AtomicPtr<libc::sigaction> = AtomicPtr::new(core::ptr::null_mut());

fn install_handler() -> bool {
    // SAFETY: a zeroed sigaction is a valid starting value; the handler
    // has the SA_SIGINFO signature; the old action goes to a leaked box
    // that lives for the rest of the process.
    unsafe {
        let mut sa: libc::sigaction = core::mem::zeroed();
        sa.sa_sigaction = on_segv as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut sa.sa_mask);
        let old = Box::leak(Box::new(core::mem::zeroed::<libc::sigaction>()));
        if libc::sigaction(libc::SIGSEGV, &sa, old) != 0 {
            return false;
        }
        OLD.store(old, Ordering::Release);
    }
    true
}

/// Hands a fault that is not heapmpi's to the handler before it (or the
/// default action: the fault recurs on return and kills with a core).
///
/// # Safety
/// The arguments of a `SIGSEGV` delivered to [`on_segv`].
unsafe fn chain(sig: i32, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    let old = OLD.load(Ordering::Acquire);
    // SAFETY: `old` is null or the leaked action saved at installation.
    let Some(old) = (unsafe { old.as_ref() }) else {
        return default_action(sig);
    };
    let h = old.sa_sigaction;
    if h == libc::SIG_DFL || h == libc::SIG_IGN {
        return default_action(sig);
    }
    if old.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the program installed this as an SA_SIGINFO handler.
        let f: extern "C" fn(i32, *mut libc::siginfo_t, *mut c_void) =
            unsafe { core::mem::transmute(h) };
        f(sig, info, ctx);
    } else {
        // SAFETY: the program installed this as a plain handler.
        let f: extern "C" fn(i32) = unsafe { core::mem::transmute(h) };
        f(sig);
    }
}

fn default_action(sig: i32) {
    // SAFETY: restoring the default action; the faulting instruction runs
    // again on return and the kernel ends the process as without heapmpi.
    unsafe {
        let mut sa: libc::sigaction = core::mem::zeroed();
        sa.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sig, &sa, core::ptr::null_mut());
    }
}

/// Whether the fault was a write (x86-64: bit 1 of the page-fault error
/// code), if the context tells.
///
/// # Safety
/// `ctx` is the `ucontext_t` of a delivered signal.
unsafe fn was_write(ctx: *mut c_void) -> Option<bool> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: the kernel passes a ucontext_t to SA_SIGINFO handlers.
        let uc = unsafe { &*(ctx as *const libc::ucontext_t) };
        Some(uc.uc_mcontext.gregs[libc::REG_ERR as usize] & 2 != 0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = ctx;
        None
    }
}

extern "C" fn on_segv(sig: i32, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    // SAFETY: the kernel's siginfo for a SIGSEGV carries the address.
    let addr = unsafe { (*info).si_addr() } as usize;
    let zone = if armed() { layout().zone(addr) } else { None };
    let Some(zone) = zone else {
        // SAFETY: forwarded from the kernel.
        return unsafe { chain(sig, info, ctx) };
    };
    let me = ME.load(Ordering::Relaxed);
    // SAFETY: forwarded from the kernel.
    let write = unsafe { was_write(ctx) };
    if let Zone::Program(i) = zone {
        if i != me && write != Some(false) && DEPTH.with(|d| d.get()) > 0 && open(addr) {
            return;
        }
    }
    report(zone, addr, write);
}

/// Opens the page of `addr` for heapmpi's own write.
fn open(addr: usize) -> bool {
    let page = PAGE.load(Ordering::Relaxed);
    let p = addr & !(page - 1);
    if !set_prot(p, p + page, libc::PROT_READ | libc::PROT_WRITE) {
        return false;
    }
    // Relaxed: the slot only records the page for `close_opened`, which
    // swaps it out; the protection itself is the kernel's, in place now.
    if OPENED.iter().any(|s| {
        s.compare_exchange(0, p, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }) {
        OPEN_COUNT.fetch_add(1, Ordering::Relaxed);
    }
    true
}

fn world_of(i: usize) -> i32 {
    let w = WORLD.load(Ordering::Relaxed);
    if w.is_null() || i >= NLOCAL.load(Ordering::Relaxed) {
        return -1;
    }
    // SAFETY: `WORLD` holds NLOCAL entries for the life of the process.
    unsafe { *w.add(i) }
}

/// What the handler found at an address of a program range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// Inside an allocated block at `.0` of `.1` requested bytes.
    Block(usize, usize),
    /// Inside a free chunk at `.0` (a block freed there, or never used).
    Free(usize),
    /// Nothing the walk could read.
    Unknown,
}

/// dlmalloc's "this chunk is in use" bit of a chunk's head word.
pub(super) const CINUSE: usize = 2;

/// The chunk at `c` of `[c, hi)`: its head word and size, if they are
/// plausible (the range may be changing under another rank).
///
/// # Safety
/// `[c, hi)` is readable.
pub(super) unsafe fn chunk_at(c: usize, hi: usize) -> Option<(usize, usize)> {
    if c.checked_add(16)? > hi {
        return None;
    }
    // SAFETY: `c + 16 <= hi`: the chunk's two header words are readable.
    let head = unsafe { ((c + 8) as *const usize).read_volatile() };
    let size = head & !7;
    if size < 32 || size % 16 != 0 || c.checked_add(size)? > hi {
        return None;
    }
    Some((head, size))
}

/// What the chunk at `c` (head word `head`, `size` bytes) holds.
///
/// # Safety
/// The chunk is readable.
unsafe fn what(c: usize, head: usize, size: usize) -> Found {
    let mem = c + 16;
    if head & CINUSE == 0 {
        return Found::Free(mem);
    }
    let usable = size - 8;
    // SAFETY: the block's last word is inside `[c, c + size)`.
    let n = unsafe { ((mem + usable - 8) as *const u64).read_volatile() } as usize;
    Found::Block(
        mem,
        if n + super::check::EXTRA <= usable {
            n
        } else {
            usable
        },
    )
}

/// Walks the dlmalloc chunks of `[lo, hi)` (a program range whose first
/// chunk starts at `lo`) to the one holding `a`. In-use blocks carry
/// [`super::check`]'s size word in their last 8 bytes.
///
/// # Safety
/// `[lo, hi)` is readable (it may be changing: every value read is
/// bounds-checked before it is followed).
pub unsafe fn find(lo: usize, hi: usize, a: usize) -> Found {
    let mut c = lo;
    while c <= a {
        // SAFETY: forwarded from the caller.
        let Some((head, size)) = (unsafe { chunk_at(c, hi) }) else {
            return Found::Unknown;
        };
        if a < c + size {
            // The header words before a block's memory are not the block.
            if a < c + 16 {
                return Found::Free(c + 16);
            }
            // SAFETY: the chunk lies inside `[lo, hi)`.
            return unsafe { what(c, head, size) };
        }
        c += size;
    }
    Found::Unknown
}

/// The last allocated block of `[lo, end)`, with its requested size.
///
/// # Safety
/// `[lo, end)` is readable.
unsafe fn last_block(lo: usize, end: usize) -> Option<(usize, usize)> {
    let mut last = None;
    let mut c = lo;
    // SAFETY: forwarded from the caller.
    while let Some((head, size)) = unsafe { chunk_at(c, end) } {
        // SAFETY: the chunk lies inside `[lo, end)`.
        if let Found::Block(b, n) = unsafe { what(c, head, size) } {
            last = Some((b, n));
        }
        c += size;
    }
    last
}

/// Writes who owns local rank `i`'s part ("this rank's", "rank 3's").
fn part_name(out: &mut crate::sys::out::LineBuf, i: usize) {
    use core::fmt::Write as _;
    if i == ME.load(Ordering::Relaxed) {
        let _ = out.write_str("this rank's");
    } else {
        let _ = write!(out, "rank {}'s", world_of(i));
    }
}

/// One line naming what the access at `addr` hit, then `abort`. Formats
/// into a stack buffer: nothing here allocates.
#[cold]
fn report(zone: Zone, addr: usize, write: Option<bool>) -> ! {
    use core::fmt::Write as _;
    let l = layout();
    let me = ME.load(Ordering::Relaxed);
    let rank = MY_WORLD.load(Ordering::Relaxed);
    let what = match write {
        Some(true) => "a write",
        Some(false) => "a read",
        None => "an access",
    };
    let mut out = crate::sys::out::LineBuf::new();
    let _ = write!(
        out,
        "heapmpi: HEAPMPI_CHECK (rank {rank}): {what} at {addr:#x}"
    );
    match zone {
        Zone::Program(i) if i == me => {
            let (lo, _) = l.program(i);
            let end = super::state::COMMITTED_END.load(Ordering::Relaxed).max(lo);
            let _ = write!(
                out,
                ", past the end of this rank's heap (its blocks end at {end:#x}"
            );
            // SAFETY: this rank's committed program pages are readable.
            if let Some((b, n)) = unsafe { last_block(lo, end) } {
                let _ = write!(out, "; the last is the {n}-byte block at {b:#x}");
            }
            let _ = out.write_str(
                "): a block overrun or a wild pointer, which without the check could reach \
                 the next rank's part",
            );
        }
        Zone::Program(i) => {
            let (lo, hi) = l.program(i);
            let _ = out.write_str(" into ");
            part_name(&mut out, i);
            let _ = out.write_str(" part of the shared heap, ");
            // SAFETY: another rank's program range is mapped readable.
            let _ = match unsafe { find(lo, hi, addr) } {
                Found::Block(b, n) => write!(out, "inside the {n}-byte block at {b:#x}"),
                Found::Free(b) => write!(out, "inside freed memory (a free chunk at {b:#x})"),
                Found::Unknown => out.write_str("in memory it has not allocated"),
            };
            let _ = write!(
                out,
                ": a stale or wild pointer (without heapmpi nothing of rank {} is mapped there)",
                world_of(i)
            );
        }
        Zone::Guard(i) => {
            let _ = out.write_str(", in the guard page at the end of ");
            part_name(&mut out, i);
            let _ = out.write_str(" part of the shared heap");
            if i + 1 < l.nlocal {
                let _ = write!(out, " (rank {}'s part follows)", world_of(i + 1));
            }
        }
        Zone::Own(i) => {
            let _ = out.write_str(" faulted in ");
            part_name(&mut out, i);
            let _ = out.write_str(" part of the shared heap");
        }
    }
    let _ = out.write_str("; aborting\n");
    out.emit();
    std::process::abort();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_cut_each_part_in_three() {
        let page = 4096;
        let l = Layout::new(1 << 30, 1 << 20, 3, page);
        assert_eq!(l.prog, (((1 << 20) - page) / 2) & !(page - 1));
        assert_eq!(l.zone((1 << 30) - 1), None);
        assert_eq!(l.zone(1 << 30), Some(Zone::Program(0)));
        assert_eq!(l.zone((1 << 30) + l.prog), Some(Zone::Own(0)));
        assert_eq!(l.zone((1 << 30) + (1 << 20) - 1), Some(Zone::Guard(0)));
        assert_eq!(l.zone((1 << 30) + (1 << 20)), Some(Zone::Program(1)));
        assert_eq!(l.zone((1 << 30) + 3 * (1 << 20)), None);
        let (olo, ohi) = l.own(2);
        assert_eq!(l.zone(olo), Some(Zone::Own(2)));
        assert_eq!(l.zone(ohi - 1), Some(Zone::Own(2)));
        assert_eq!(l.zone(ohi), Some(Zone::Guard(2)));
    }

    #[test]
    fn the_walk_finds_blocks_and_freed_memory() {
        use super::super::arena::{testing::Fixture, Arena};
        use super::super::check;
        let f = Fixture::new(8 << 20);
        let a = Arena::empty();
        f.configure(&a);
        let mut d = dlmalloc::Dlmalloc::new_with_allocator(a);
        let lo = f.map.as_mut_ptr() as usize;
        let mut blocks = Vec::new();
        for n in [1usize, 100, 4000, 70_000, 24] {
            // SAFETY: a private instance over the fixture.
            let p = unsafe { d.c_malloc(n + check::EXTRA) };
            // SAFETY: a fresh block of at least n + EXTRA bytes.
            unsafe { check::stamp(p, n, super::super::arena::usable_size(p)) };
            blocks.push((p as usize, n));
        }
        let hi = lo + (8 << 20);
        for &(p, n) in &blocks {
            // SAFETY: the fixture is mapped readable.
            assert_eq!(unsafe { find(lo, hi, p) }, Found::Block(p, n));
            // SAFETY: as above.
            assert_eq!(unsafe { find(lo, hi, p + n - 1) }, Found::Block(p, n));
        }
        let (p, _) = blocks[2];
        // SAFETY: freed once.
        unsafe { d.c_free(p as *mut u8) };
        // SAFETY: the fixture is mapped readable.
        assert!(matches!(unsafe { find(lo, hi, p + 8) }, Found::Free(_)));
        // SAFETY: as above.
        assert_eq!(unsafe { last_block(lo, hi) }, Some(blocks[4]));
    }
}
