//! Who owns the program's `malloc`: heapmpi, or a tool that must.
//!
//! valgrind's memcheck and the sanitizers find a program's heap errors by
//! owning its allocator (memcheck replaces glibc's, AddressSanitizer puts
//! its own in front, with red zones and a quarantine). If heapmpi served
//! the program's `malloc` from the shared heap there, the tool would see
//! none of the program's blocks: no overflow, use after free or leak would
//! be reported, and under AddressSanitizer a block freed by the other
//! allocator aborts the run. When such a tool is present heapmpi leaves the
//! program's blocks to it (they then are private buffers for heapmpi's
//! messages) and keeps only its own headers and staging buffers in the
//! shared heap.

/// The tool that owns `malloc` in this process, if any.
pub fn malloc_owner() -> Option<&'static str> {
    if super::valgrind::running() {
        return Some("valgrind");
    }
    // The sanitizers' runtimes export their start-up routine; a symbol
    // found in the global scope means the runtime is loaded (linked into
    // the program or preloaded).
    const RUNTIMES: [(&core::ffi::CStr, &str); 4] = [
        (c"__asan_init", "AddressSanitizer"),
        (c"__hwasan_init", "HWAddressSanitizer"),
        (c"__tsan_init", "ThreadSanitizer"),
        (c"__msan_init", "MemorySanitizer"),
    ];
    RUNTIMES.iter().find_map(|(sym, name)| {
        // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only
        // looks the symbol up; the result is compared with null, never
        // called.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, sym.as_ptr()) };
        (!p.is_null()).then_some(*name)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_plain_test_process_has_no_tool() {
        // `cargo test` runs natively, without a sanitizer runtime.
        assert_eq!(super::malloc_owner(), None);
    }
}
