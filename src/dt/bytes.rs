//! Copying a few bytes: the packed bytes of small messages, collective
//! blocks and one-sided transfers, where a call to `memmove` with its size
//! dispatch costs more than the copy.

/// `ptr::copy`, with sizes up to 128 bytes done in registers rather than
/// through a call to `memmove`: put and get of a few elements are the
/// latency-bound case, and the call with its size dispatch was a quarter
/// of a 64-byte put. Every load is made before the first store (two
/// overlapping pieces cover any length), so overlap is harmless.
///
/// # Safety
/// As `ptr::copy`.
#[inline]
pub unsafe fn copy_small(src: *const u8, dst: *mut u8, n: usize) {
    /// The first and the last `T`-sized piece of `n` bytes (`n` between
    /// one and two pieces), both read before either is written.
    ///
    /// # Safety
    /// As `copy_small`, with `size_of::<T>() <= n <= 2 * size_of::<T>()`.
    #[inline(always)]
    unsafe fn ends<T: Copy>(src: *const u8, dst: *mut u8, n: usize) {
        let k = n - core::mem::size_of::<T>();
        // SAFETY: both pieces lie inside the `n` bytes (the contract).
        unsafe {
            let a = (src as *const T).read_unaligned();
            let b = (src.add(k) as *const T).read_unaligned();
            (dst as *mut T).write_unaligned(a);
            (dst.add(k) as *mut T).write_unaligned(b);
        }
    }
    // SAFETY (all): per the contract and the size bounds of each arm.
    unsafe {
        match n {
            0 => {}
            1 => dst.write(src.read()),
            2..=3 => ends::<u16>(src, dst, n),
            4..=7 => ends::<u32>(src, dst, n),
            8..=15 => ends::<u64>(src, dst, n),
            16..=32 => ends::<u128>(src, dst, n),
            33..=64 => ends::<[u128; 2]>(src, dst, n),
            65..=128 => ends::<[u128; 4]>(src, dst, n),
            _ => core::ptr::copy(src, dst, n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::copy_small;

    /// Every length up to past the register sizes, disjoint and
    /// overlapping both ways, gives what `ptr::copy` gives.
    #[test]
    fn copy_small_is_ptr_copy() {
        for n in 0..=200usize {
            for (from, to) in [(0usize, 300usize), (0, 1), (1, 0), (5, 37), (37, 5), (0, 0)] {
                let mut want: Vec<u8> = (0..600).map(|i| (i * 7 + 3) as u8).collect();
                let mut got = want.clone();
                // SAFETY: both ranges lie inside the 600-byte buffers.
                unsafe {
                    core::ptr::copy(want.as_ptr().add(from), want.as_mut_ptr().add(to), n);
                    copy_small(got.as_ptr().add(from), got.as_mut_ptr().add(to), n);
                }
                assert_eq!(got, want, "{n} bytes from {from} to {to}");
            }
        }
    }
}
