//! Copying message and collective bytes: a few bytes in registers, where a
//! call to `memmove` with its size dispatch costs more than the copy; and
//! copies whose destination lies just above the source modulo 4 KiB
//! backwards (see [`aliases`]), for every data path (point-to-point
//! blocks, datatype plans, collective pieces, one-sided transfers).

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
            _ if aliases(src, dst, n) => copy_backwards(src, dst, n),
            _ => core::ptr::copy(src, dst, n),
        }
    }
}

/// `ptr::copy_nonoverlapping`, backwards where a forward copy would stall
/// on 4K aliasing (see [`aliases`]): a few integer operations against a
/// forward copy that runs up to 16 times slower there (measurements at
/// [`copy_backwards`]). Every large copy of message and collective bytes
/// goes through here: the offsets of user buffers are the user's.
///
/// # Safety
/// As `ptr::copy_nonoverlapping`.
#[inline]
pub unsafe fn copy_disjoint(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY (both arms): per the contract; `copy_backwards` wants more
    // than 128 bytes, disjoint buffers, which `aliases` and the arm check.
    unsafe {
        if n > 128 && aliases(src, dst, n) {
            copy_backwards(src, dst, n)
        } else {
            core::ptr::copy_nonoverlapping(src, dst, n)
        }
    }
}

/// Whether a forward copy of `n` bytes from `src` to `dst` would stall on
/// 4K aliasing: the destination lies 1 to 31 bytes above the source modulo
/// 4 KiB, so the loads of the source that follow each store match its low
/// 12 address bits, and the core waits for the store before each of them.
/// glibc's `memmove` copies forward there at a sixteenth of its speed or
/// less, up to the size where it turns to non-temporal stores. How far the
/// window reaches depends on the processor and on glibc's copy loop for it:
/// 1 to 15 bytes on one machine (131071 bytes: 38-48 us there against 2.3
/// at 0 or 16; `MPI_Allgather` of 131071 bytes took 40-73 us where 131072
/// took 5-7 us), 1 to 31 on a 2-core AMD EPYC (65536 bytes: 23-45 us
/// against 1.4-2.3 at 0 and at 32 to 4095; 262144 bytes: 134 against 7).
/// That is where two blocks that dlmalloc hands out one after the other
/// lie, 16 bytes apart modulo 4 KiB (each chunk's 16-byte header): a
/// gather's root copying its own piece from one into the other took
/// three times stock's whole `MPI_Gather` at 16-256 KiB. The buffers must
/// not overlap (a block copy of overlapping buffers would read bytes it
/// has already overwritten; those are `memmove`'s own case).
#[inline]
fn aliases(src: *const u8, dst: *mut u8, n: usize) -> bool {
    let (s, d) = (src as usize, dst as usize);
    let above = d.wrapping_sub(s) & 4095;
    (1..=31).contains(&above) && (d + n <= s || s + n <= d)
}

/// Copies `n` bytes (more than 128, the buffers disjoint) in 64-byte
/// blocks from the end to the start: each block is read whole before it
/// is written, and the loads that follow go to lower addresses, which no
/// pending store aliases; where nothing aliases it runs at 0.6 of
/// `memcpy`'s speed (65536 bytes in cache: 2.6-3.0 us against 1.5-1.6).
/// Measured against the alternatives (131071 bytes, destination 8 bytes
/// above the source modulo 4 KiB, the first machine): in cache
/// 3.2 us, `memcpy` 38, a forward copy loading one block ahead 2.7; with a
/// source another core has just written, 7.6 us, `memcpy` 39, 7.5 for
/// `memcpy` at an offset that does not alias; in an `MPI_Send`/`MPI_Recv`
/// ping-pong 26 us per message, `memcpy` 28-30, the load-ahead copy 41
/// (15.6 at a harmless offset: the rest of the penalty is not the copy
/// loop's).
///
/// # Safety
/// As `ptr::copy_nonoverlapping`, with `n > 128`.
#[inline(never)]
unsafe fn copy_backwards(src: *const u8, dst: *mut u8, n: usize) {
    type Block = [u128; 4];
    const B: usize = core::mem::size_of::<Block>();
    let mut end = n;
    // SAFETY (all): every block lies inside the `n` bytes of both buffers
    // (`end >= B` in the loop); the head is at most one block, and n > B.
    unsafe {
        while end >= B {
            end -= B;
            let v = (src.add(end) as *const Block).read_unaligned();
            (dst.add(end) as *mut Block).write_unaligned(v);
        }
        if end > 0 {
            // The first `end` bytes: one block read from the start covers
            // them (n > B); its tail rewrites bytes already copied, with
            // the same values.
            let v = (src as *const Block).read_unaligned();
            (dst as *mut Block).write_unaligned(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{aliases, copy_disjoint, copy_small};

    /// Large copies whose destination lies just above the source modulo
    /// 4 KiB go backwards and copy exactly; overlapping ones never do.
    #[test]
    fn copies_that_alias_go_backwards_and_are_exact() {
        // Lengths around the block size and its multiples, and a large one.
        for n in [129usize, 191, 192, 193, 255, 1000, 131071] {
            let src: Vec<u8> = (0..n + 8192).map(|i| (i * 31 + 7) as u8).collect();
            for d in [1usize, 3, 8, 15, 16, 17, 31, 32, 4095, 0] {
                for copy in [copy_small, copy_disjoint] {
                    let mut dst = vec![0u8; n + 8192];
                    // Place the destination `d` bytes above the source
                    // modulo 4 KiB.
                    let s = src.as_ptr() as usize;
                    let base = dst.as_ptr() as usize;
                    let off = (s.wrapping_add(d).wrapping_sub(base)) & 4095;
                    let to = dst[off..].as_mut_ptr();
                    assert_eq!(aliases(src.as_ptr(), to, n), (1..=31).contains(&d), "d={d}");
                    // SAFETY: `off + n` lies inside `dst`, `n` inside `src`.
                    unsafe { copy(src.as_ptr(), to, n) };
                    assert!(dst[off..off + n] == src[..n], "n={n} d={d}");
                    assert!(
                        dst[..off].iter().all(|&b| b == 0)
                            && dst[off + n..].iter().all(|&b| b == 0)
                    );
                }
            }
        }
        // Overlapping, destination 8 bytes above the source: `memmove`'s.
        let n = 131071;
        let buf = vec![0u8; 4 * n];
        let p = buf.as_ptr();
        // SAFETY: pointer arithmetic inside one buffer, not dereferenced.
        assert!(!aliases(p, unsafe { p.add(8) } as *mut u8, n));
    }

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
