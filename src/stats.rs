//! Per-rank counters and the `HEAPMPI_STATS=1` report.
//!
//! Counting is off unless `HEAPMPI_STATS` is set, so the allocator's fast
//! path pays one predictable branch for it. All counters are independent
//! event counts read once at the end: Relaxed increments are enough, as no
//! other memory is published through them.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Whether counting is on (set once at load time from the configuration).
static ENABLED: AtomicBool = AtomicBool::new(false);

/// One event counter.
pub struct Counter(AtomicU64);

impl Counter {
    const fn new() -> Counter {
        Counter(AtomicU64::new(0))
    }

    /// Adds `n` if counting is on.
    #[inline]
    pub fn add(&self, n: u64) {
        if ENABLED.load(Ordering::Relaxed) {
            self.0.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// The current value.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Allocations served from this rank's part of the shared heap.
pub static SHARED_ALLOCS: Counter = Counter::new();
/// Bytes requested by those allocations.
pub static SHARED_BYTES: Counter = Counter::new();
/// Allocations served by glibc (before the heap existed, while inactive, or
/// as fallback).
pub static GLIBC_ALLOCS: Counter = Counter::new();
/// Bytes requested by those allocations.
pub static GLIBC_BYTES: Counter = Counter::new();
/// Allocations that did not fit in the shared heap and went to glibc.
pub static FALLBACKS: Counter = Counter::new();
/// Blocks returned to the shared heap.
pub static SHARED_FREES: Counter = Counter::new();
/// Blocks returned to glibc.
pub static GLIBC_FREES: Counter = Counter::new();
/// `free` of shared-heap memory this process may not release (another
/// rank's part, or the parent's heap in a forked child): left alone.
pub static FOREIGN_FREES: Counter = Counter::new();
/// `realloc` calls that moved a block between glibc and the shared heap.
pub static MIGRATIONS: Counter = Counter::new();

/// Turns counting on or off.
pub fn enable(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether counting is on.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Writes the counter part of the report (`key=value` pairs) to `w`.
pub fn write_counters(w: &mut impl core::fmt::Write) -> core::fmt::Result {
    write!(
        w,
        "shared_allocs={} shared_bytes={} glibc_allocs={} glibc_bytes={} fallbacks={} \
         shared_frees={} glibc_frees={} foreign_frees={} migrations={}",
        SHARED_ALLOCS.get(),
        SHARED_BYTES.get(),
        GLIBC_ALLOCS.get(),
        GLIBC_BYTES.get(),
        FALLBACKS.get(),
        SHARED_FREES.get(),
        GLIBC_FREES.get(),
        FOREIGN_FREES.get(),
        MIGRATIONS.get(),
    )
}

/// A byte count for people: `64.0 GiB`.
pub struct Bytes(pub u64);

impl core::fmt::Display for Bytes {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut v = self.0 as f64;
        let mut u = 0;
        while v >= 1024.0 && u < UNITS.len() - 1 {
            v /= 1024.0;
            u += 1;
        }
        if u == 0 {
            write!(f, "{} B", self.0)
        } else {
            write!(f, "{v:.1} {}", UNITS[u])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_display() {
        assert_eq!(Bytes(0).to_string(), "0 B");
        assert_eq!(Bytes(1023).to_string(), "1023 B");
        assert_eq!(Bytes(1024).to_string(), "1.0 KiB");
        assert_eq!(Bytes(64 << 30).to_string(), "64.0 GiB");
    }
}
