//! `HEAPMPI_PROFILE`: where a job's MPI time goes, in the manner of mpiP
//! and IPM (Vetter and McCracken, "Statistical scalability analysis of
//! communication operations in distributed applications", PPoPP 2001;
//! Skinner, "Performance monitoring of parallel scientific applications",
//! LBNL 2005): every MPI entry point heapmpi defines is timed, and at
//! `MPI_Finalize` rank 0 prints one job-wide table (per routine: calls,
//! bytes, time summed over the ranks and of the slowest rank, and how many
//! calls went through the shared heap or to the real MPI, and why).
//!
//! The entry points (`ffi`'s `c_exports!` and the Fortran bindings) call
//! [`enter`] and [`leave`]; while profiling is off that is one load of a
//! flag and a predictable branch each. The layers below say how a call was
//! served ([`heap`], [`real`], with the bytes it moved): a call that says
//! nothing was passed through (heapmpi has no fast path for it). Only the
//! outermost entry of a thread is timed: a Fortran binding that calls a C
//! entry point counts once.
//!
//! What "bytes" means: the data the call describes on this rank (count
//! times the size of its datatype): a send's message, a receive's buffer
//! (its capacity), a collective's own contribution (its send count; the
//! receive count of `MPI_Bcast`, `MPI_Scatter(v)` and
//! `MPI_Reduce_scatter_block`; the sum of its send counts for the
//! all-to-all `v` and `w` forms, neighbourhood ones included, counted
//! once the call has succeeded), the origin buffer of one-sided
//! communication.
//!
//! `HEAPMPI_PROFILE=1` prints the table on rank 0's stderr; any other value
//! that is not an "off" word names a file that also gets it as CSV.

use core::cell::Cell;
use core::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use mpi_sys as ffi;

/// Whether profiling is on (set once at `MPI_Init`, before the program's
/// other calls; Relaxed: only this thread's own entries read it until MPI
/// publishes the program's other threads' start).
static ON: AtomicBool = AtomicBool::new(false);

/// When `MPI_Init` returned (monotonic ns), for the MPI share of wall time.
static START: AtomicU64 = AtomicU64::new(0);

/// How a call was served, in the order the report's columns give them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum How {
    /// Not said: heapmpi has no fast path for the call (or is off for it),
    /// so the real MPI served it.
    Passed = 0,
    /// Through the shared heap.
    Heap = 1,
    /// The real MPI: a peer (or member) on another node.
    Remote = 2,
    /// The real MPI: a communicator heapmpi does not know.
    UnknownComm = 3,
    /// The real MPI: arguments, datatypes or operations heapmpi leaves to
    /// it (including every erroneous call, and `MPI_PROC_NULL`).
    Args = 4,
    /// The real MPI: a request or window the real MPI owns.
    RealObject = 5,
}

/// The reasons, in [`How`]'s order, as the report names them.
const HOW_NAMES: [&str; 6] = [
    "passed",
    "heap",
    "remote",
    "unknown_comm",
    "args",
    "real_object",
];

/// The counts of one entry point in this process. Only the outermost entry
/// of a thread updates them; Relaxed adds: independent counts read once at
/// the end.
pub struct Slot {
    name: &'static str,
    /// Pushed to `SLOTS` already. Relaxed: the swap only elects the one
    /// thread that pushes; `SLOTS`'s mutex publishes the slot to the
    /// report.
    registered: AtomicBool,
    ns: AtomicU64,
    bytes: AtomicU64,
    heap_ns: AtomicU64,
    by_how: [AtomicU64; 6],
}

impl Slot {
    /// The slot of entry point `name` (one static per entry point).
    #[allow(clippy::declare_interior_mutable_const)]
    pub const fn new(name: &'static str) -> Slot {
        const Z: AtomicU64 = AtomicU64::new(0);
        Slot {
            name,
            registered: AtomicBool::new(false),
            ns: Z,
            bytes: Z,
            heap_ns: Z,
            by_how: [Z; 6],
        }
    }
}

/// Every slot that counted a call.
static SLOTS: Mutex<Vec<&'static Slot>> = Mutex::new(Vec::new());

thread_local! {
    /// Depth of nested entries on this thread.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// How the current outermost call was served, and its bytes.
    static ROUTE: Cell<(How, u64)> = const { Cell::new((How::Passed, 0)) };
}

/// Token [`enter`] gives while profiling is off.
const OFF: u64 = 0;
/// Token of a nested entry (not timed).
const NESTED: u64 = 1;
/// Token of an entry while only `HEAPMPI_CHECK`'s page guards listen.
const GUARD_ONLY: u64 = 2;

/// Whether entry points take the slow path: profiling is on, or
/// `HEAPMPI_CHECK`'s page guards count heapmpi's entries on each thread
/// ([`crate::heap::guard`]). Relaxed: set once at `MPI_Init`; an entry
/// that misses it only misses being counted.
static HOOKED: AtomicBool = AtomicBool::new(false);

/// Entry points tell `HEAPMPI_CHECK`'s page guards when heapmpi runs.
pub fn hook_for_guards() {
    HOOKED.store(true, Ordering::Relaxed);
}

/// Starts profiling (at `MPI_Init`, when `HEAPMPI_PROFILE` asks for it).
pub fn start() {
    START.store(crate::sys::monotonic_ns(), Ordering::Relaxed);
    ON.store(true, Ordering::Relaxed);
    HOOKED.store(true, Ordering::Relaxed);
}

/// Whether profiling is on.
#[inline]
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// At an entry point: a token for [`leave`].
#[inline]
pub fn enter() -> u64 {
    if !HOOKED.load(Ordering::Relaxed) {
        return OFF;
    }
    enter_slow()
}

#[cold]
fn enter_slow() -> u64 {
    if crate::heap::guard::armed() {
        crate::heap::guard::enter();
    }
    if !on() {
        return GUARD_ONLY;
    }
    let d = DEPTH.with(|d| {
        let v = d.get();
        d.set(v + 1);
        v
    });
    if d > 0 {
        return NESTED;
    }
    ROUTE.with(|r| r.set((How::Passed, 0)));
    crate::sys::monotonic_ns().max(GUARD_ONLY + 1)
}

/// At the end of an entry point: records the call in `slot`.
#[inline]
pub fn leave(slot: &'static Slot, token: u64) {
    if token != OFF {
        leave_slow(slot, token);
    }
}

#[cold]
fn leave_slow(slot: &'static Slot, token: u64) {
    if crate::heap::guard::armed() {
        crate::heap::guard::leave();
    }
    if token == GUARD_ONLY {
        return;
    }
    DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    if token == NESTED {
        return;
    }
    let ns = crate::sys::monotonic_ns().saturating_sub(token);
    let (how, bytes) = ROUTE.with(|r| r.get());
    // As few locked instructions as the counts allow (each costs ~10 ns,
    // and an 8-byte ping-pong is ~400 ns): the call count is the sum of
    // the per-route counts, zero bytes are not added, and the slot is
    // registered once (a load first, then the swap).
    slot.ns.fetch_add(ns, Ordering::Relaxed);
    if bytes != 0 {
        slot.bytes.fetch_add(bytes, Ordering::Relaxed);
    }
    slot.by_how[how as usize].fetch_add(1, Ordering::Relaxed);
    if how == How::Heap {
        slot.heap_ns.fetch_add(ns, Ordering::Relaxed);
    }
    if !slot.registered.load(Ordering::Relaxed) && !slot.registered.swap(true, Ordering::Relaxed) {
        SLOTS.lock().unwrap_or_else(|e| e.into_inner()).push(slot);
    }
}

/// The current call is served by the shared heap (moving `bytes`, when
/// given).
#[inline]
pub fn heap(bytes: Option<u64>) {
    if on() {
        note(How::Heap, bytes);
    }
}

/// The current call goes to the real MPI for `why`; `bytes` when known.
#[inline]
pub fn real(why: How, bytes: Option<u64>) {
    if on() {
        note(why, bytes);
    }
}

/// The current call's bytes (`count` elements of `dt`), when profiling.
#[inline]
pub fn data(count: i64, dt: ffi::MPI_Datatype) {
    if on() {
        data_slow(count, dt);
    }
}

#[cold]
fn data_slow(count: i64, dt: ffi::MPI_Datatype) {
    let Some(d) = crate::dt::info(dt) else {
        return;
    };
    let b = count.max(0) as u64 * d.size as u64;
    ROUTE.with(|r| {
        let (h, _) = r.get();
        r.set((h, b));
    });
}

/// [`data`] for the `v` forms whose arrays give one count per peer: the
/// sum of `counts[0..n]` elements of `dt`. Called after the call succeeded
/// (so the arrays and handles were valid), with `n` the peers the arrays
/// cover.
///
/// # Safety
/// `counts` holds `n` counts.
#[inline]
pub unsafe fn data_v(n: usize, counts: *const core::ffi::c_int, dt: ffi::MPI_Datatype) {
    if on() {
        // SAFETY: per the contract.
        unsafe { data_many(n, counts, |_| dt) }
    }
}

/// [`data_v`] for the `w` forms: `counts[i]` elements of `types[i]`.
///
/// # Safety
/// `counts` and `types` hold `n` entries each.
#[inline]
pub unsafe fn data_w(n: usize, counts: *const core::ffi::c_int, types: *const ffi::MPI_Datatype) {
    if on() && (n == 0 || !types.is_null()) {
        // SAFETY: per the contract.
        unsafe { data_many(n, counts, |i| *types.add(i)) }
    }
}

/// # Safety
/// `counts` holds `n` counts; `dt(i)` reads within its array.
#[cold]
unsafe fn data_many(
    n: usize,
    counts: *const core::ffi::c_int,
    dt: impl Fn(usize) -> ffi::MPI_Datatype,
) {
    if n > 0 && counts.is_null() {
        return;
    }
    let mut b = 0u64;
    for i in 0..n {
        // SAFETY: per the contract.
        let (c, t) = unsafe { (*counts.add(i), dt(i)) };
        let Some(d) = crate::dt::info(t) else {
            return;
        };
        b += c.max(0) as u64 * d.size as u64;
    }
    ROUTE.with(|r| {
        let (h, _) = r.get();
        r.set((h, b));
    });
}

#[cold]
fn note(how: How, bytes: Option<u64>) {
    ROUTE.with(|r| {
        let (old, b) = r.get();
        // The first reason for the real MPI stands (a fallback after a
        // heap decision included); a heap decision undoes none.
        let h = match (old, how) {
            (How::Passed | How::Heap, h) => h,
            (o, _) => o,
        };
        r.set((h, bytes.unwrap_or(b)));
    });
}

/// One routine's line of this rank's table, as text: `name calls ns bytes
/// heap_ns how...`.
fn local_table() -> String {
    let slots = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
    let mut s = String::new();
    let wall = crate::sys::monotonic_ns().saturating_sub(START.load(Ordering::Relaxed));
    let _ = writeln!(s, "@wall {wall}");
    for sl in slots.iter() {
        let _ = write!(
            s,
            "{} {} {} {} {}",
            canonical(sl.name),
            sl.by_how
                .iter()
                .map(|h| h.load(Ordering::Relaxed))
                .sum::<u64>(),
            sl.ns.load(Ordering::Relaxed),
            sl.bytes.load(Ordering::Relaxed),
            sl.heap_ns.load(Ordering::Relaxed)
        );
        for h in &sl.by_how {
            let _ = write!(s, " {}", h.load(Ordering::Relaxed));
        }
        s.push('\n');
    }
    s
}

/// The MPI name of an entry point: `MPI_Send` for `MPI_Send`, `mpi_send_`,
/// `ompi_send_f`, `mpi_send_f08_`, `pmpi_send__`.
pub fn canonical(name: &str) -> String {
    let name = name.strip_prefix("__wrap_").unwrap_or(name);
    if name.starts_with("MPI_") {
        return name.to_string();
    }
    let mut n = name.to_ascii_lowercase();
    for p in ["pmpi_", "ompi_", "mpi_"] {
        if let Some(r) = n.strip_prefix(p) {
            n = r.to_string();
            break;
        }
    }
    for suf in ["_f08_", "_f08", "_f", "__", "_"] {
        if let Some(r) = n.strip_suffix(suf) {
            n = r.to_string();
            break;
        }
    }
    let mut c = n.chars();
    match c.next() {
        Some(f) => format!("MPI_{}{}", f.to_ascii_uppercase(), c.as_str()),
        None => name.to_string(),
    }
}

/// The family a routine belongs to, for the report.
pub fn family(name: &str) -> &'static str {
    let b = name.strip_prefix("MPI_").unwrap_or(name);
    let b = b.strip_suffix("_c").unwrap_or(b);
    const COLL: [&str; 17] = [
        "Barrier",
        "Bcast",
        "Reduce",
        "Allreduce",
        "Gather",
        "Gatherv",
        "Scatter",
        "Scatterv",
        "Allgather",
        "Allgatherv",
        "Alltoall",
        "Alltoallv",
        "Alltoallw",
        "Reduce_scatter",
        "Reduce_scatter_block",
        "Scan",
        "Exscan",
    ];
    if COLL.contains(&b) || b.starts_with("Neighbor_") {
        "collective"
    } else if b.starts_with("Wait")
        || b.starts_with("Test")
        || b.starts_with("Request_")
        || b == "Cancel"
    {
        "completion"
    } else if b.ends_with("probe") || b.ends_with("Probe") {
        "probe"
    } else if b.contains("recv") || b.contains("Recv") {
        "p2p receive"
    } else if b.contains("send") || b.contains("Send") {
        "p2p send"
    } else if b.starts_with("Start") {
        "persistent"
    } else if b.starts_with("Win_")
        || [
            "Put",
            "Get",
            "Rput",
            "Rget",
            "Accumulate",
            "Raccumulate",
            "Get_accumulate",
            "Rget_accumulate",
            "Fetch_and_op",
            "Compare_and_swap",
            "Alloc_mem",
            "Free_mem",
        ]
        .contains(&b)
    {
        "one-sided"
    } else if b.starts_with("Comm_")
        || b.starts_with("Cart_")
        || b.starts_with("Graph_")
        || b.starts_with("Dist_graph")
        || b == "Intercomm_merge"
    {
        "communicators"
    } else if b.starts_with("Buffer_") {
        "buffers"
    } else if b.starts_with("Init") || b == "Finalize" {
        "init/finalize"
    } else {
        "other"
    }
}

/// One routine's merged counts over the job.
#[derive(Default, Clone)]
struct Row {
    calls: u64,
    ns: u64,
    max_rank_ns: u64,
    bytes: u64,
    heap_ns: u64,
    by_how: [u64; 6],
}

/// Merges the ranks' tables (text from [`local_table`]).
fn merge(tables: &[String]) -> (Vec<(String, Row)>, u64, u64) {
    let mut rows: Vec<(String, Row)> = Vec::new();
    let (mut wall_sum, mut wall_max) = (0u64, 0u64);
    for t in tables {
        // Per rank, a routine may come from several entry points (C and
        // Fortran): its time for the per-rank maximum is their sum.
        let mut mine: Vec<(String, u64)> = Vec::new();
        for line in t.lines() {
            let mut it = line.split_whitespace();
            let Some(name) = it.next() else { continue };
            let nums: Vec<u64> = it.filter_map(|x| x.parse().ok()).collect();
            if name == "@wall" {
                let w = nums.first().copied().unwrap_or(0);
                wall_sum += w;
                wall_max = wall_max.max(w);
                continue;
            }
            if nums.len() != 10 {
                continue;
            }
            let i = match rows.iter().position(|r| r.0 == name) {
                Some(i) => i,
                None => {
                    rows.push((name.to_string(), Row::default()));
                    rows.len() - 1
                }
            };
            let r = &mut rows[i].1;
            r.calls += nums[0];
            r.ns += nums[1];
            r.bytes += nums[2];
            r.heap_ns += nums[3];
            for k in 0..6 {
                r.by_how[k] += nums[4 + k];
            }
            match mine.iter_mut().find(|m| m.0 == name) {
                Some(m) => m.1 += nums[1],
                None => mine.push((name.to_string(), nums[1])),
            }
        }
        for (name, ns) in mine {
            if let Some(r) = rows.iter_mut().find(|r| r.0 == name) {
                r.1.max_rank_ns = r.1.max_rank_ns.max(ns);
            }
        }
    }
    rows.sort_by(|a, b| b.1.ns.cmp(&a.1.ns).then(a.0.cmp(&b.0)));
    (rows, wall_sum, wall_max)
}

/// The job-wide report: text for stderr and CSV.
fn render(tables: &[String]) -> (String, String) {
    let (rows, wall_sum, wall_max) = merge(tables);
    let mpi_ns: u64 = rows.iter().map(|r| r.1.ns).sum();
    let heap_ns: u64 = rows.iter().map(|r| r.1.heap_ns).sum();
    let calls: u64 = rows.iter().map(|r| r.1.calls).sum();
    let heap_calls: u64 = rows.iter().map(|r| r.1.by_how[How::Heap as usize]).sum();
    let pct = |a: u64, b: u64| {
        if b == 0 {
            0.0
        } else {
            100.0 * a as f64 / b as f64
        }
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "heapmpi profile: {} ranks, wall {:.3} s (slowest rank), MPI time {:.3} s over all ranks = {:.1}% of their wall time; through the heap: {:.1}% of MPI time, {} of {} calls",
        tables.len(),
        wall_max as f64 * 1e-9,
        mpi_ns as f64 * 1e-9,
        pct(mpi_ns, wall_sum),
        pct(heap_ns, mpi_ns),
        heap_calls,
        calls
    );
    let _ = writeln!(
        out,
        "{:<14} {:<24} {:>10} {:>14} {:>10} {:>10} {:>6} {:>10} {:>10}  real MPI: {}/{}/{}/{}/{}",
        "family",
        "routine",
        "calls",
        "bytes",
        "time_s",
        "max_rank_s",
        "%mpi",
        "heap_calls",
        "heap_time%",
        HOW_NAMES[0],
        HOW_NAMES[2],
        HOW_NAMES[3],
        HOW_NAMES[4],
        HOW_NAMES[5]
    );
    let mut csv = String::from(
        "family,routine,calls,bytes,time_s,max_rank_s,pct_mpi,heap_calls,heap_time_pct,passed,remote,unknown_comm,args,real_object\n",
    );
    for (name, r) in &rows {
        let fam = family(name);
        let h = &r.by_how;
        let _ = writeln!(
            out,
            "{:<14} {:<24} {:>10} {:>14} {:>10.6} {:>10.6} {:>6.1} {:>10} {:>10.1}  {}/{}/{}/{}/{}",
            fam,
            name,
            r.calls,
            r.bytes,
            r.ns as f64 * 1e-9,
            r.max_rank_ns as f64 * 1e-9,
            pct(r.ns, mpi_ns),
            h[1],
            pct(r.heap_ns, r.ns),
            h[0],
            h[2],
            h[3],
            h[4],
            h[5]
        );
        let _ = writeln!(
            csv,
            "{},{},{},{},{:.9},{:.9},{:.3},{},{:.3},{},{},{},{},{}",
            fam,
            name,
            r.calls,
            r.bytes,
            r.ns as f64 * 1e-9,
            r.max_rank_ns as f64 * 1e-9,
            pct(r.ns, mpi_ns),
            h[1],
            pct(r.heap_ns, r.ns),
            h[0],
            h[2],
            h[3],
            h[4],
            h[5]
        );
    }
    let _ = writeln!(
        csv,
        "total,all,{},{},{:.9},{:.9},{:.3},{},{:.3},,,,,",
        calls,
        rows.iter().map(|r| r.1.bytes).sum::<u64>(),
        mpi_ns as f64 * 1e-9,
        wall_max as f64 * 1e-9,
        pct(mpi_ns, wall_sum),
        heap_calls,
        pct(heap_ns, mpi_ns)
    );
    (out, csv)
}

/// At `MPI_Finalize` (every rank, before the real one): gathers the ranks'
/// tables on rank 0 of `MPI_COMM_WORLD`, which prints the job's report
/// (and writes the CSV to `file`, unless empty).
pub fn finish(file: &str) {
    if !on() {
        return;
    }
    ON.store(false, Ordering::Relaxed);
    let mine = local_table();
    let Some(tables) = gather(mine.as_bytes()) else {
        return;
    };
    let (text, csv) = render(&tables);
    eprint!("{text}");
    if !file.is_empty() {
        if let Err(e) = std::fs::write(file, csv) {
            eprintln!("heapmpi: warning: HEAPMPI_PROFILE: cannot write {file}: {e}");
        }
    }
}

/// Every rank's bytes, on rank 0 (`None` elsewhere or on failure).
fn gather(mine: &[u8]) -> Option<Vec<String>> {
    // SAFETY: reading MPI constants; valid buffers of the sizes given.
    unsafe {
        let w = ffi::RSMPI_COMM_WORLD;
        let (mut rank, mut size) = (0, 0);
        ffi::PMPI_Comm_rank(w, &mut rank);
        ffi::PMPI_Comm_size(w, &mut size);
        let n = size.max(1) as usize;
        let len = mine.len() as core::ffi::c_int;
        let mut lens = vec![0 as core::ffi::c_int; n];
        if ffi::PMPI_Gather(
            (&len as *const core::ffi::c_int).cast(),
            1,
            ffi::RSMPI_INT32_T,
            lens.as_mut_ptr().cast(),
            1,
            ffi::RSMPI_INT32_T,
            0,
            w,
        ) != 0
        {
            return None;
        }
        let mut displs = vec![0 as core::ffi::c_int; n];
        let mut total = 0;
        for i in 0..n {
            displs[i] = total;
            total += lens[i];
        }
        let mut all = vec![0u8; total.max(1) as usize];
        if ffi::PMPI_Gatherv(
            mine.as_ptr().cast(),
            len,
            ffi::RSMPI_UINT8_T,
            all.as_mut_ptr().cast(),
            lens.as_ptr(),
            displs.as_ptr(),
            ffi::RSMPI_UINT8_T,
            0,
            w,
        ) != 0
            || rank != 0
        {
            return None;
        }
        Some(
            (0..n)
                .map(|i| {
                    let a = displs[i] as usize;
                    String::from_utf8_lossy(&all[a..a + lens[i] as usize]).into_owned()
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(canonical("MPI_Send"), "MPI_Send");
        assert_eq!(canonical("mpi_send_"), "MPI_Send");
        assert_eq!(canonical("ompi_send_f"), "MPI_Send");
        assert_eq!(canonical("mpi_win_fence_f08_"), "MPI_Win_fence");
        assert_eq!(canonical("pmpi_allreduce__"), "MPI_Allreduce");
        assert_eq!(canonical("__wrap_mpi_send_"), "MPI_Send");
        assert_eq!(family("MPI_Allreduce"), "collective");
        assert_eq!(family("MPI_Neighbor_alltoallv"), "collective");
        assert_eq!(family("MPI_Send_c"), "p2p send");
        assert_eq!(family("MPI_Irecv"), "p2p receive");
        assert_eq!(family("MPI_Waitall"), "completion");
        assert_eq!(family("MPI_Improbe"), "probe");
        assert_eq!(family("MPI_Put"), "one-sided");
    }

    #[test]
    fn merging_sums_and_keeps_the_slowest_rank() {
        let a = "@wall 1000\nMPI_Send 2 100 16 100 0 2 0 0 0 0\nMPI_Barrier 1 50 0 0 1 0 0 0 0 0\n";
        let b = "@wall 2000\nMPI_Send 3 300 24 0 0 0 3 0 0 0\n";
        let (rows, wsum, wmax) = merge(&[a.to_string(), b.to_string()]);
        assert_eq!((wsum, wmax), (3000, 2000));
        let s = &rows[0];
        assert_eq!(s.0, "MPI_Send");
        assert_eq!(
            (s.1.calls, s.1.ns, s.1.max_rank_ns, s.1.bytes),
            (5, 400, 300, 40)
        );
        assert_eq!(s.1.by_how, [0, 2, 3, 0, 0, 0]);
        let (text, csv) = render(&[a.to_string(), b.to_string()]);
        assert!(text.contains("2 of 6 calls"), "{text}");
        assert!(csv.lines().count() == 4, "{csv}");
    }
}
