//! Everything that talks to the operating system: glibc's allocator, shared
//! memory objects, address-space reservations, and raw stderr output. The
//! rest of heapmpi calls these and never `libc` directly for these jobs.

pub mod cma;
pub mod glibc;
pub mod out;
pub mod owner;
pub mod shm;
pub mod tls;
pub mod valgrind;
pub mod vm;
pub mod wake;

/// Node-local ranks of the job (1 until `MPI_Init` finds them). Written
/// once at init, before any communication: Relaxed is enough.
static LOCAL_RANKS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);

/// Records how many ranks share this node (from `MPI_Init`).
pub fn set_local_ranks(n: usize) {
    LOCAL_RANKS.store(n.max(1), std::sync::atomic::Ordering::Relaxed);
}

/// Whether the real MPI was told that its ranks share cores (Open MPI's
/// `mpi_yield_when_idle`, which a user or a launcher sets when it knows
/// more than the node's CPU count shows: nodes that share a machine's
/// cores, a node shared with other jobs). Written once at init, before
/// any communication: Relaxed is enough.
static YIELD_ASKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Records whether the real MPI's ranks were told to yield when idle.
pub fn set_yield_asked(asked: bool) {
    YIELD_ASKED.store(asked, std::sync::atomic::Ordering::Relaxed);
}

/// Whether an Open MPI setting in `value` (`OMPI_MCA_mpi_yield_when_idle`)
/// turns yielding on: Open MPI's true values.
pub fn yield_value_is_on(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on" | "enabled"
    )
}

/// Whether this node's ranks outnumber its online CPUs, or the real MPI's
/// ranks were told to yield ([`set_yield_asked`]): then waits yield almost
/// at once, as the real MPI's do. Online CPUs, not this process's
/// affinity: a rank bound to one core (`--bind-to core`) is not
/// oversubscribed.
#[inline]
pub fn oversubscribed() -> bool {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    // SAFETY: sysconf has no preconditions.
    let cpus =
        *CPUS.get_or_init(|| unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize);
    LOCAL_RANKS.load(std::sync::atomic::Ordering::Relaxed) > cpus
        || YIELD_ASKED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The system page size (fixed for the life of the process).
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// Fills `buf` with random bytes from the kernel (`getrandom`), falling back
/// to a mix of time and pid if the call is unavailable.
pub fn random_bytes(buf: &mut [u8]) {
    let mut done = 0;
    while done < buf.len() {
        // SAFETY: the pointer and length describe the unfilled tail of `buf`.
        let n = unsafe { libc::getrandom(buf[done..].as_mut_ptr().cast(), buf.len() - done, 0) };
        if n <= 0 {
            break;
        }
        done += n as usize;
    }
    if done < buf.len() {
        let mut x = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
            ^ ((std::process::id() as u64) << 32);
        for b in &mut buf[done..] {
            // xorshift64
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
    }
}

/// A random `u64` (see [`random_bytes`]).
pub fn random_u64() -> u64 {
    let mut b = [0u8; 8];
    random_bytes(&mut b);
    u64::from_ne_bytes(b)
}

/// Monotonic time in nanoseconds (vDSO `clock_gettime`, no system call).
pub fn monotonic_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The calling thread's `errno`.
pub fn errno() -> i32 {
    // SAFETY: __errno_location always returns the thread's errno slot.
    unsafe { *libc::__errno_location() }
}

/// Sets the calling thread's `errno`.
pub fn set_errno(e: i32) {
    // SAFETY: as in `errno`.
    unsafe { *libc::__errno_location() = e }
}

#[cfg(test)]
mod tests {
    #[test]
    fn open_mpi_true_values_turn_yielding_on() {
        for v in ["1", "true", "TRUE", " yes", "on", "enabled"] {
            assert!(super::yield_value_is_on(v), "{v}");
        }
        for v in ["0", "false", "no", "", "2"] {
            assert!(!super::yield_value_is_on(v), "{v}");
        }
    }
}
