//! Valgrind's client requests, and who owns `malloc` in this process.
//!
//! A client request is a magic instruction sequence (valgrind.h's
//! `VALGRIND_DO_CLIENT_REQUEST_EXPR`): four rotations of a register by 128
//! bits in all (a no-op on the hardware) followed by an exchange of a
//! register with itself. Run natively it costs a few cycles and yields the
//! default value; under valgrind the JIT recognises it and hands the
//! request to the tool. The encoding is valgrind's stable ABI (request
//! numbers from `valgrind.h` and `memcheck.h`, which "must not change
//! order"); only x86-64 is encoded here, other targets always see "not
//! running on valgrind".
//!
//! heapmpi uses three: whether it runs on valgrind (then it leaves the
//! program's `malloc` to valgrind, whose memcheck reports the program's
//! heap errors with their stacks as it does stock), and at the end of the
//! run the marking of the shared region's unused parts as no-access for
//! memcheck: its leak check scans every readable mapping word by word, and
//! the region is mapped readable at its full size (tens of GiB per rank,
//! most of it never committed), which made the leak check at exit take
//! minutes and commit every page it read.

/// `VG_USERREQ__RUNNING_ON_VALGRIND` (valgrind.h).
const RUNNING_ON_VALGRIND: usize = 0x1001;
/// `VG_USERREQ_TOOL_BASE('M','C')`: memcheck's first request,
/// `VG_USERREQ__MAKE_MEM_NOACCESS`.
const MC_BASE: usize = (b'M' as usize) << 24 | (b'C' as usize) << 16;
const MAKE_MEM_NOACCESS: usize = MC_BASE;

/// Runs client request `req` with arguments `args`; `default` natively.
#[inline]
fn request(default: usize, req: usize, args: [usize; 5]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let block: [usize; 6] = [req, args[0], args[1], args[2], args[3], args[4]];
        let mut result = default;
        // SAFETY: natively the sequence rotates rdi by 3 + 13 + 61 + 51 =
        // 128 bits (back to its value) and exchanges rbx with itself: no
        // register, flag beyond "cc" or memory changes. Under valgrind it
        // reads the six words at `block` (live for the whole asm) and
        // writes only rdx, which is declared as the output.
        unsafe {
            core::arch::asm!(
                "rol rdi, 3",
                "rol rdi, 13",
                "rol rdi, 61",
                "rol rdi, 51",
                "xchg rbx, rbx",
                inout("rdx") result,
                in("rax") block.as_ptr(),
                out("rdi") _,
                options(nostack)
            );
        }
        result
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (req, args);
        default
    }
}

/// Whether this process runs on valgrind (any tool). Asked once.
pub fn running() -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    // 0: not asked yet, 1: no, 2: yes. Relaxed: every thread that asks
    // computes the same answer, so a race only repeats the request.
    static ANSWER: AtomicU8 = AtomicU8::new(0);
    match ANSWER.load(Ordering::Relaxed) {
        0 => {
            let yes = request(0, RUNNING_ON_VALGRIND, [0; 5]) != 0;
            ANSWER.store(1 + yes as u8, Ordering::Relaxed);
            yes
        }
        a => a == 2,
    }
}

/// Tells memcheck that `[addr, addr + len)` must not be accessed (and is
/// not to be scanned for pointers). No effect natively or under other tools.
pub fn make_noaccess(addr: usize, len: usize) {
    if len > 0 && running() {
        request(0, MAKE_MEM_NOACCESS, [addr, len, 0, 0, 0]);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn natively_no_request_has_an_effect() {
        // Under `cargo test` the process is not on valgrind: the sequence
        // must be a no-op returning the default.
        assert_eq!(
            super::request(42, super::RUNNING_ON_VALGRIND, [1, 2, 3, 4, 5]),
            42
        );
        assert!(!super::running());
        let v = [7u8; 64];
        super::make_noaccess(v.as_ptr() as usize, v.len());
        assert_eq!(v[63], 7);
    }
}
