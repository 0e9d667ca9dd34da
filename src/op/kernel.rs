//! The predefined operations' own kernels: sum, max and min on `double`,
//! `float` and 32- and 64-bit integers, a plain loop written as both MPIs'
//! loops are (Open MPI's `op_base_functions.c`, MPICH's `MPIR_MAXF`/
//! `MPIR_SUM`), compiled for the widest vector unit the processor has
//! (Open MPI's `op` component's AVX-512 and AVX2 variants). Faster than
//! `MPI_Reduce_local`'s dispatch at small counts and as fast at large
//! ones, bit for bit the same.

use super::table::Pre;

/// The arithmetic a kernel needs.
pub(super) trait Num: Copy + PartialOrd {
    fn add(self, o: Self) -> Self;
}

impl Num for f64 {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self + o
    }
}
impl Num for f32 {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self + o
    }
}
macro_rules! wrapping_num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
        }
    )*};
}
wrapping_num!(i32, i64, u32, u64);

/// `inout = in op inout` elementwise (see [`body`]), with the widest
/// vector unit the processor has: the crate is built for the x86-64
/// baseline (SSE2, two doubles an instruction), and Open MPI's own `op`
/// component uses AVX-512 where it exists, which made its accumulates of
/// 64-128 KiB (L2-resident) 10-15% faster than heapmpi's. Every variant
/// runs the same elementwise loop, so the results are the same bits.
///
/// # Safety
/// `count` elements of `T` at each address, not overlapping.
#[inline(never)]
pub(super) unsafe fn kernel<T: Num>(p: Pre, inb: *const u8, inout: *mut u8, count: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        /// Below this many bytes the feature check is not worth it.
        const WIDE: usize = 256;
        if count * core::mem::size_of::<T>() >= WIDE {
            // `is_x86_feature_detected!` reads std's cached CPUID bits.
            if std::is_x86_feature_detected!("avx512f") {
                // SAFETY: the processor has AVX-512F; the contract is ours.
                return unsafe { kernel_avx512::<T>(p, inb, inout, count) };
            }
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: the processor has AVX2; the contract is ours.
                return unsafe { kernel_avx2::<T>(p, inb, inout, count) };
            }
        }
    }
    // SAFETY: per the contract.
    unsafe { body::<T>(p, inb, inout, count) }
}

/// [`body`] compiled for AVX-512F.
///
/// # Safety
/// As [`kernel`], on a processor with AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn kernel_avx512<T: Num>(p: Pre, inb: *const u8, inout: *mut u8, count: usize) {
    // SAFETY: per the contract.
    unsafe { body::<T>(p, inb, inout, count) }
}

/// [`body`] compiled for AVX2.
///
/// # Safety
/// As [`kernel`], on a processor with AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn kernel_avx2<T: Num>(p: Pre, inb: *const u8, inout: *mut u8, count: usize) {
    // SAFETY: per the contract.
    unsafe { body::<T>(p, inb, inout, count) }
}

/// `inout = in op inout` elementwise, written exactly as both MPIs' loops
/// are (Open MPI's `op_base_functions.c`, MPICH's `MPIR_MAXF`/`MPIR_SUM`),
/// so that NaNs and signed zeros come out bit for bit the same:
/// `inout = inout + in`, `inout = inout > in ? inout : in`,
/// `inout = inout < in ? inout : in`. Always inlined, so that each caller
/// compiles it for its own target features.
///
/// # Safety
/// `count` elements of `T` at each address, not overlapping.
#[inline(always)]
unsafe fn body<T: Num>(p: Pre, inb: *const u8, inout: *mut u8, count: usize) {
    let a = inb as *const T;
    let b = inout as *mut T;
    // SAFETY: per the contract (unaligned reads and writes).
    unsafe {
        match p {
            Pre::Sum => {
                for i in 0..count {
                    b.add(i)
                        .write_unaligned(b.add(i).read_unaligned().add(a.add(i).read_unaligned()));
                }
            }
            Pre::Max => {
                for i in 0..count {
                    let (x, y) = (a.add(i).read_unaligned(), b.add(i).read_unaligned());
                    b.add(i).write_unaligned(if y > x { y } else { x });
                }
            }
            Pre::Min => {
                for i in 0..count {
                    let (x, y) = (a.add(i).read_unaligned(), b.add(i).read_unaligned());
                    b.add(i).write_unaligned(if y < x { y } else { x });
                }
            }
            _ => unreachable!("kernels exist for sum, max and min only"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dispatched kernels (AVX-512/AVX2 from 256 bytes) give the same
    /// bits as the plain elementwise rule at every length, alignment and
    /// tail, NaNs and signed zeros included.
    #[test]
    fn wide_kernels_match_the_elementwise_rule() {
        macro_rules! check {
            ($t:ty, $vals:expr, $bits:expr) => {{
                let vals: Vec<$t> = $vals;
                let pick = |i: usize, k: usize| vals[(i * 7 + k * 3 + i / 5) % vals.len()];
                for p in [Pre::Sum, Pre::Max, Pre::Min] {
                    for count in [0usize, 1, 31, 64, 65, 127, 200, 257, 1000] {
                        for skew in [0usize, 1] {
                            // Byte buffers with a skew: unaligned elements.
                            let sz = core::mem::size_of::<$t>();
                            let mut a = vec![0u8; (count + 1) * sz];
                            let mut b = vec![0u8; (count + 1) * sz];
                            let mut want = Vec::with_capacity(count);
                            for i in 0..count {
                                let (x, y) = (pick(i, 0), pick(i, 1));
                                // SAFETY: inside the buffers.
                                unsafe {
                                    (a.as_mut_ptr().add(skew + i * sz) as *mut $t)
                                        .write_unaligned(x);
                                    (b.as_mut_ptr().add(skew + i * sz) as *mut $t)
                                        .write_unaligned(y);
                                }
                                want.push(match p {
                                    Pre::Sum => y.add(x),
                                    Pre::Max => {
                                        if y > x {
                                            y
                                        } else {
                                            x
                                        }
                                    }
                                    _ => {
                                        if y < x {
                                            y
                                        } else {
                                            x
                                        }
                                    }
                                });
                            }
                            // SAFETY: `count` elements at each address.
                            unsafe {
                                kernel::<$t>(
                                    p,
                                    a.as_ptr().add(skew),
                                    b.as_mut_ptr().add(skew),
                                    count,
                                )
                            };
                            for (i, w) in want.iter().enumerate() {
                                // SAFETY: inside the buffer.
                                let got = unsafe {
                                    (b.as_ptr().add(skew + i * sz) as *const $t).read_unaligned()
                                };
                                assert_eq!(
                                    $bits(got),
                                    $bits(*w),
                                    "{p:?} count {count} element {i}"
                                );
                            }
                        }
                    }
                }
            }};
        }
        let f = vec![
            1.5f64,
            -0.0,
            0.0,
            f64::NAN,
            -3.25,
            f64::INFINITY,
            1e300,
            -1e-300,
            7.0,
        ];
        check!(f64, f.clone(), f64::to_bits);
        check!(f32, f.iter().map(|&x| x as f32).collect(), f32::to_bits);
        let i = vec![i64::MAX, i64::MIN, -1, 0, 1, 42, -42, 1 << 40];
        check!(i64, i.clone(), |x| x);
        check!(i32, i.iter().map(|&x| x as i32).collect(), |x| x);
        check!(u32, i.iter().map(|&x| x as u32).collect(), |x| x);
        check!(u64, i.iter().map(|&x| x as u64).collect(), |x| x);
    }

    #[test]
    fn kernels() {
        let a = [1.0f64, -2.0, f64::NAN, 4.0];
        let mut b = [0.5f64, 3.0, 1.0, f64::NAN];
        // SAFETY: four f64s each.
        unsafe { kernel::<f64>(Pre::Sum, a.as_ptr().cast(), b.as_mut_ptr().cast(), 4) };
        assert_eq!(&b[..2], &[1.5, 1.0]);
        assert!(b[2].is_nan() && b[3].is_nan());
        // NaN in `inout` loses to the input, as in both MPIs' loops.
        let mut m = [f64::NAN, 1.0];
        // SAFETY: two f64s each.
        unsafe {
            kernel::<f64>(
                Pre::Max,
                [2.0f64, f64::NAN].as_ptr().cast(),
                m.as_mut_ptr().cast(),
                2,
            )
        };
        assert_eq!(m[0], 2.0);
        assert!(m[1].is_nan());
        let a = [5i32, -7, 3];
        let mut b = [4i32, -9, 3];
        // SAFETY: three i32s each.
        unsafe { kernel::<i32>(Pre::Max, a.as_ptr().cast(), b.as_mut_ptr().cast(), 3) };
        assert_eq!(b, [5, -7, 3]);
        let mut c = [i32::MAX, 0, 0];
        // SAFETY: three i32s each.
        unsafe {
            kernel::<i32>(
                Pre::Sum,
                [1i32, 2, 3].as_ptr().cast(),
                c.as_mut_ptr().cast(),
                3,
            )
        };
        assert_eq!(c, [i32::MIN, 2, 3]);
        let mut d = [2u64, 9];
        // SAFETY: two u64s each.
        unsafe {
            kernel::<u64>(
                Pre::Min,
                [3u64, 1].as_ptr().cast(),
                d.as_mut_ptr().cast(),
                2,
            )
        };
        assert_eq!(d, [2, 1]);
    }
}
