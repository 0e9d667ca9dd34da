//! Copies between this process and another one's private memory through
//! the kernel: `process_vm_readv`/`process_vm_writev` (Linux's
//! "cross-memory attach"), one copy without the other process taking part.
//! Used where a peer's memory is outside the shared heap (a one-sided
//! window over a stack or a global, a message staged nowhere because the
//! heap is full).

/// Reads `len` bytes at `remote` in process `pid` into `local`. False when
/// the kernel refuses (another user's process, a bad address).
///
/// # Safety
/// `local` has room for `len` bytes.
pub unsafe fn read(pid: i32, remote: usize, local: *mut u8, len: usize) -> bool {
    // SAFETY: per the contract.
    unsafe { transfer(pid, remote, local, len, false) }
}

/// Writes `len` bytes from `local` to `remote` in process `pid`. False
/// when the kernel refuses.
///
/// # Safety
/// `local` holds `len` readable bytes.
pub unsafe fn write(pid: i32, remote: usize, local: *const u8, len: usize) -> bool {
    // SAFETY: per the contract (the local side is only read).
    unsafe { transfer(pid, remote, local as *mut u8, len, true) }
}

/// One direction of the copy, repeated until every byte moved (the kernel
/// may move fewer bytes than asked at once).
unsafe fn transfer(pid: i32, remote: usize, local: *mut u8, len: usize, write: bool) -> bool {
    let mut done = 0usize;
    while done < len {
        let l = libc::iovec {
            iov_base: local.wrapping_add(done).cast(),
            iov_len: len - done,
        };
        let r = libc::iovec {
            iov_base: (remote + done) as *mut libc::c_void,
            iov_len: len - done,
        };
        // SAFETY: one local iovec within the caller's buffer (per the
        // contract) and one remote iovec, which the kernel checks against
        // the other process's mappings.
        let n = unsafe {
            if write {
                libc::process_vm_writev(pid, &l, 1, &r, 1, 0)
            } else {
                libc::process_vm_readv(pid, &l, 1, &r, 1, 0)
            }
        };
        if n <= 0 {
            return false;
        }
        done += n as usize;
    }
    true
}
