//! The shared memory backing the shared heap: an anonymous memfd, which the
//! node's other ranks open through `/proc/<pid>/fd/<n>` of the rank that
//! made it (bounded by memory and the memory cgroup, not by the size of
//! `/dev/shm`: Docker gives containers 64 MiB there; and nameless, so
//! nothing can be left behind), or a POSIX shared-memory object in
//! `/dev/shm` where a memfd cannot be shared that way (a `/proc` mounted
//! with `hidepid`, ranks of different users, a kernel before 3.17).
//!
//! The POSIX object is created by one rank with `O_EXCL` and mode 0600
//! under an unguessable name, opened by the other node-local ranks, and
//! unlinked as soon as all of them hold a descriptor, so a killed job
//! leaves nothing in `/dev/shm`. Either way, memory is committed explicitly with `fallocate` as the heap
//! grows: on a full tmpfs that fails cleanly (and heapmpi falls back to
//! glibc) instead of raising SIGBUS on first touch, which is what a lazily
//! touched sparse file would do.

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::fcntl::{FallocateFlags, OFlag};
use nix::sys::mman;
use nix::sys::stat::Mode;

/// Length of the fixed name buffer: "/heapmpi-" plus 32 hex digits, NUL-padded.
pub const NAME_LEN: usize = 48;

/// The name of a shared-memory object: `/heapmpi-` followed by 128 random
/// bits in hex. Fixed-size so it can be broadcast as plain bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ShmName(pub [u8; NAME_LEN]);

impl core::fmt::Debug for ShmName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ShmName {
    /// A fresh random name.
    pub fn random() -> ShmName {
        let mut rnd = [0u8; 16];
        super::random_bytes(&mut rnd);
        let mut buf = [0u8; NAME_LEN];
        let prefix = b"/heapmpi-";
        buf[..prefix.len()].copy_from_slice(prefix);
        const HEX: &[u8; 16] = b"0123456789abcdef";
        for (i, b) in rnd.iter().enumerate() {
            buf[prefix.len() + 2 * i] = HEX[(b >> 4) as usize];
            buf[prefix.len() + 2 * i + 1] = HEX[(b & 15) as usize];
        }
        ShmName(buf)
    }

    /// The name as text (up to the first NUL).
    pub fn as_str(&self) -> &str {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(NAME_LEN);
        core::str::from_utf8(&self.0[..end]).unwrap_or("/heapmpi-?")
    }
}

/// Creates a new object of `size` bytes (sparse) with `O_EXCL`, mode 0600.
pub fn create(name: &ShmName, size: usize) -> Result<OwnedFd, Errno> {
    let fd = mman::shm_open(
        name.as_str(),
        OFlag::O_RDWR | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_CLOEXEC,
        Mode::S_IRUSR | Mode::S_IWUSR,
    )?;
    let len = libc::off_t::try_from(size).map_err(|_| Errno::EFBIG)?;
    if let Err(e) = nix::unistd::ftruncate(&fd, len) {
        let _ = unlink(name);
        return Err(e);
    }
    Ok(fd)
}

/// Creates an anonymous shared file of `size` bytes (sparse): a memfd
/// named `heapmpi` (`/memfd:heapmpi` in `/proc/<pid>/maps`).
pub fn create_anonymous(size: usize) -> Result<OwnedFd, Errno> {
    // SAFETY: a NUL-terminated name and valid flags; the descriptor is
    // owned from here on.
    let raw = unsafe { libc::memfd_create(c"heapmpi".as_ptr(), libc::MFD_CLOEXEC) };
    if raw < 0 {
        return Err(Errno::last());
    }
    // SAFETY: a descriptor just created and owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let len = libc::off_t::try_from(size).map_err(|_| Errno::EFBIG)?;
    nix::unistd::ftruncate(&fd, len)?;
    Ok(fd)
}

/// Opens descriptor `fd` of process `pid` (an anonymous file made by
/// [`create_anonymous`]) read-write, through `/proc/<pid>/fd/<fd>`: a new
/// open file description of the same memory. The kernel allows it to a
/// process that may read the other's `/proc` entries (same user, no
/// `hidepid`).
pub fn open_of_process(pid: i32, fd: i32) -> Result<OwnedFd, Errno> {
    let path = format!("/proc/{pid}/fd/{fd}");
    nix::fcntl::open(
        path.as_str(),
        OFlag::O_RDWR | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
}

/// Opens an existing object read-write.
pub fn open(name: &ShmName) -> Result<OwnedFd, Errno> {
    mman::shm_open(
        name.as_str(),
        OFlag::O_RDWR | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
}

/// Removes the object's name; the memory lives on while mapped or open.
pub fn unlink(name: &ShmName) -> Result<(), Errno> {
    mman::shm_unlink(name.as_str())
}

/// Space heapmpi always leaves free in the filesystem behind `/dev/shm`:
/// the MPI library keeps its own shared segments there and touches them
/// lazily, so filling the filesystem would make *it* die of SIGBUS. A
/// sixteenth of the filesystem, at least 32 MiB, at most 1 GiB.
pub fn reserve_for(fs_size: u64) -> u64 {
    (fs_size / 16).clamp(32 << 20, 1 << 30)
}

/// Allocates the pages of `[off, off+len)` of the object so that touching
/// them can never fault for lack of space. Fails with `ENOSPC` if that would
/// leave less than [`reserve_for`] free in the filesystem.
pub fn commit(fd: RawFd, off: usize, len: usize) -> Result<(), Errno> {
    // SAFETY: heapmpi keeps the descriptor open for the life of the process.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    let st = nix::sys::statvfs::fstatvfs(fd)?;
    let frsize = st.fragment_size() as u64;
    let free = st.blocks_available() as u64 * frsize;
    let size = st.blocks() as u64 * frsize;
    // A size of 0 means "unlimited" (tmpfs mounted with size=0).
    if size != 0 && free < (len as u64).saturating_add(reserve_for(size)) {
        return Err(Errno::ENOSPC);
    }
    loop {
        match nix::fcntl::fallocate(fd, FallocateFlags::empty(), off as _, len as _) {
            Err(Errno::EINTR) => continue,
            r => return r,
        }
    }
}

/// Gives the pages of `[off, off+len)` back to the system; the range reads
/// as zeros afterwards, in every rank that maps it.
pub fn release(fd: RawFd, off: usize, len: usize) -> Result<(), Errno> {
    // SAFETY: as in `commit`.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    nix::fcntl::fallocate(
        fd,
        FallocateFlags::FALLOC_FL_PUNCH_HOLE | FallocateFlags::FALLOC_FL_KEEP_SIZE,
        off as _,
        len as _,
    )
}

/// Turns an owned descriptor into one heapmpi keeps for the rest of the
/// process (the arena needs it to commit and release pages).
pub fn keep_forever(fd: OwnedFd) -> RawFd {
    let raw = fd.as_raw_fd();
    core::mem::forget(fd);
    raw
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserve_is_bounded() {
        assert_eq!(reserve_for(48 << 20), 32 << 20);
        assert_eq!(reserve_for(1 << 30), 64 << 20);
        assert_eq!(reserve_for(12 << 30), 768 << 20);
        assert_eq!(reserve_for(1 << 40), 1 << 30);
    }
}
