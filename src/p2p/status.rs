//! Filling `MPI_Status` objects the way the real MPI's own setters do,
//! without calling them on every receive.
//!
//! A status carries hidden fields besides `MPI_SOURCE`, `MPI_TAG` and
//! `MPI_ERROR`: the count (read back by `MPI_Get_count`/`MPI_Get_elements`)
//! and the cancelled flag. Their layout differs between MPIs (Open MPI:
//! `_cancelled`, `_ucount`; MPICH: `count_lo`, `count_hi_and_cancelled`).
//! heapmpi sets them through `PMPI_Status_set_elements_x` and
//! `PMPI_Status_set_cancelled`, two calls into the library per receive.
//!
//! For the common case (not cancelled, fewer than 2^31 bytes) both MPIs
//! write a run of bytes that is zero except for the count as a
//! little-endian 32-bit integer. At init, [`learn`] runs the real setters on
//! statuses prefilled with different bytes and several counts, finds that
//! run, and checks its prediction against the setters' result for every
//! case; only then does [`write_hidden`] write the bytes itself. Anything
//! unexpected keeps the setter calls.

use core::mem::{offset_of, size_of};
use std::sync::OnceLock;

use mpi_sys as ffi;

/// The learned layout: bytes `[lo, hi)` of the status are what the setters
/// write; all zero except the count, a little-endian `u32` at `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    lo: usize,
    hi: usize,
    at: usize,
}

static LAYOUT: OnceLock<Option<Layout>> = OnceLock::new();

/// Counts the prediction is checked with (all below 2^31).
const PROBE_COUNTS: [u32; 6] = [0x1234_5678, 0, 1, 8, 0x00ff_00ff, 0x7fff_ffff];
/// Prefill bytes the prediction is checked with.
const PROBE_FILLS: [u8; 3] = [0x00, 0xff, 0x5a];

/// Finds the layout from `run(fill, count)`, which returns the bytes of a
/// status prefilled with `fill` after the real setters stored `count`
/// bytes, not cancelled. `public` are the byte ranges of the public fields.
pub fn learn_from(
    size: usize,
    public: &[(usize, usize)],
    mut run: impl FnMut(u8, u32) -> Vec<u8>,
) -> Option<Layout> {
    let is_public = |i: usize| public.iter().any(|&(o, n)| i >= o && i < o + n);
    let a = run(0x00, PROBE_COUNTS[0]);
    let b = run(0xff, PROBE_COUNTS[0]);
    if a.len() != size || b.len() != size {
        return None;
    }
    // Bytes the setters wrote read the same whatever was there before.
    let set: Vec<usize> = (0..size)
        .filter(|&i| a[i] == b[i] && !is_public(i))
        .collect();
    let (&lo, &last) = (set.first()?, set.last()?);
    let hi = last + 1;
    if set.len() != hi - lo || hi - lo < 4 {
        return None;
    }
    let want = PROBE_COUNTS[0].to_le_bytes();
    let at = (lo..=hi - 4).find(|&k| a[k..k + 4] == want)?;
    let layout = Layout { lo, hi, at };
    for &fill in &PROBE_FILLS {
        for &count in &PROBE_COUNTS {
            let mut predicted = vec![fill; size];
            layout.apply(&mut predicted, count);
            if run(fill, count) != predicted {
                return None;
            }
        }
    }
    Some(layout)
}

impl Layout {
    /// Writes the hidden bytes of a status image.
    fn apply(&self, image: &mut [u8], count: u32) {
        image[self.lo..self.hi].fill(0);
        image[self.at..self.at + 4].copy_from_slice(&count.to_le_bytes());
    }
}

/// Learns the real MPI's layout (once, after `MPI_Init`).
pub fn learn() {
    LAYOUT.get_or_init(|| {
        let size = size_of::<ffi::MPI_Status>();
        let public = [
            (offset_of!(ffi::MPI_Status, MPI_SOURCE), 4),
            (offset_of!(ffi::MPI_Status, MPI_TAG), 4),
            (offset_of!(ffi::MPI_Status, MPI_ERROR), 4),
        ];
        learn_from(size, &public, |fill, count| {
            let mut st = core::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
            // SAFETY: every byte is initialised by the fill; MPI_Status is
            // plain data; the setters take a valid status and datatype.
            unsafe {
                core::ptr::write_bytes(st.as_mut_ptr() as *mut u8, fill, size);
                let p = st.as_mut_ptr();
                if ffi::PMPI_Status_set_elements_x(p, ffi::RSMPI_UINT8_T, count as ffi::MPI_Count)
                    != 0
                    || ffi::PMPI_Status_set_cancelled(p, 0) != 0
                {
                    return Vec::new();
                }
                core::slice::from_raw_parts(p as *const u8, size).to_vec()
            }
        })
    });
}

/// Sets the count (`bytes` of `MPI_BYTE`-like elements) and cancelled flag
/// of `out` exactly as the real MPI's setters would.
///
/// # Safety
/// `out` points at a writable `MPI_Status`.
#[inline]
pub unsafe fn write_hidden(out: *mut ffi::MPI_Status, bytes: u64, cancelled: bool) {
    if let Some(Some(l)) = LAYOUT.get() {
        if !cancelled && bytes <= i32::MAX as u64 {
            let p = out as *mut u8;
            // SAFETY: `[lo, hi)` lies inside the status (learned from its
            // size), `at + 4 ≤ hi`; the caller's contract.
            unsafe {
                core::ptr::write_bytes(p.add(l.lo), 0, l.hi - l.lo);
                (p.add(l.at) as *mut u32).write_unaligned((bytes as u32).to_le());
            }
            return;
        }
    }
    // SAFETY: the caller's contract; the setters are the real MPI's own.
    unsafe {
        ffi::PMPI_Status_set_elements_x(out, ffi::RSMPI_UINT8_T, bytes as ffi::MPI_Count);
        ffi::PMPI_Status_set_cancelled(out, cancelled as core::ffi::c_int);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Open MPI 4's `ompi_status_public_t`: SOURCE, TAG, ERROR,
    /// `_cancelled` (int), `_ucount` (size_t).
    fn ompi(fill: u8, count: u32) -> Vec<u8> {
        let mut s = vec![fill; 24];
        s[12..16].copy_from_slice(&0i32.to_le_bytes());
        s[16..24].copy_from_slice(&(count as u64).to_le_bytes());
        s
    }

    /// MPICH 4's `MPI_Status`: `count_lo`, `count_hi_and_cancelled`,
    /// SOURCE, TAG, ERROR.
    fn mpich(fill: u8, count: u32) -> Vec<u8> {
        let mut s = vec![fill; 20];
        s[0..4].copy_from_slice(&count.to_le_bytes());
        s[4..8].copy_from_slice(&0u32.to_le_bytes());
        s
    }

    #[test]
    fn learns_open_mpi_and_mpich_layouts() {
        let public = [(0, 4), (4, 4), (8, 4)];
        assert_eq!(
            learn_from(24, &public, ompi),
            Some(Layout {
                lo: 12,
                hi: 24,
                at: 16
            })
        );
        let public = [(8, 4), (12, 4), (16, 4)];
        assert_eq!(
            learn_from(20, &public, mpich),
            Some(Layout {
                lo: 0,
                hi: 8,
                at: 0
            })
        );
    }

    #[test]
    fn refuses_layouts_it_cannot_predict() {
        let public = [(0, 4), (4, 4), (8, 4)];
        // A setter that keeps a byte of the old contents inside the run.
        let keeps = |fill: u8, count: u32| {
            let mut s = ompi(fill, count);
            s[13] = fill;
            s
        };
        assert_eq!(learn_from(24, &public, keeps), None);
        // A count stored in another encoding (big-endian).
        let big = |fill: u8, count: u32| {
            let mut s = ompi(fill, count);
            s[16..24].copy_from_slice(&(count as u64).to_be_bytes());
            s
        };
        assert_eq!(learn_from(24, &public, big), None);
        // Setters that failed.
        assert_eq!(learn_from(24, &public, |_, _| Vec::new()), None);
    }
}
