//! Allocation-free output to stderr.
//!
//! Warnings can be raised from inside `malloc` (heap full), where formatting
//! into a `String` would re-enter the allocator. Messages are therefore
//! formatted into a fixed stack buffer and written with one `write(2)`, so
//! lines from different ranks do not interleave mid-line.

use core::fmt;

/// A fixed-capacity text buffer; output past the capacity is dropped.
pub struct LineBuf {
    buf: [u8; 2048],
    len: usize,
}

impl LineBuf {
    /// An empty buffer.
    pub const fn new() -> LineBuf {
        LineBuf {
            buf: [0; 2048],
            len: 0,
        }
    }

    /// The text written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Writes the buffer to stderr in one `write(2)` (retrying on EINTR and
    /// short writes).
    pub fn emit(&self) {
        let mut off = 0;
        while off < self.len {
            // SAFETY: the pointer and length describe initialised bytes of `buf`.
            let n = unsafe { libc::write(2, self.buf[off..].as_ptr().cast(), self.len - off) };
            if n < 0 {
                if crate::sys::errno() == libc::EINTR {
                    continue;
                }
                return;
            }
            off += n as usize;
        }
    }
}

impl Default for LineBuf {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Write for LineBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// Formats a message with `format_args!` syntax into a [`LineBuf`] and writes
/// it to stderr, without allocating. A trailing newline is added.
#[macro_export]
macro_rules! eprint_noalloc {
    ($($arg:tt)*) => {{
        use core::fmt::Write as _;
        let mut line = $crate::sys::out::LineBuf::new();
        let _ = write!(line, $($arg)*);
        let _ = line.write_str("\n");
        line.emit();
    }};
}
