//! HEAPMPI_PROFILE hook: where the application table's "MPI share" and
//! "accelerated share" columns come from.
//!
//! The library does not write a profile yet. The driver already sets
//! `HEAPMPI_PROFILE=<run directory>/heapmpi-profile.csv` for every heapmpi
//! run of an application and, after the run, reads every file of the run
//! directory whose name starts with `heapmpi-profile` (one file, or one per
//! rank such as `heapmpi-profile.csv.0`, `heapmpi-profile.csv.1`). Until the
//! library writes them the two columns show `-`.
//!
//! Expected format (what the library side is asked to write; see
//! bench/README.md): CSV with a header line naming the columns, in any order,
//! one row per rank and MPI call family (mpiP/IPM style):
//!
//! ```text
//! rank,family,calls,time_s,bytes,heap_calls,heap_time_s,heap_bytes
//! 0,wall,1,12.5,0,0,0,0
//! 0,allreduce,4000,1.9,32000,4000,1.7,32000
//! 0,send,1000,0.4,8192000,1000,0.4,8192000
//! ```
//!
//! - `family` `wall`: `time_s` is the rank's time from MPI_Init to
//!   MPI_Finalize;
//! - every other family: `time_s` spent inside those calls, `heap_time_s`
//!   the part of it in calls heapmpi ran itself (shared heap), `bytes` /
//!   `heap_bytes` likewise.
//!
//! MPI share = sum of `time_s` over the MPI families / sum of the `wall`
//! rows; accelerated share = sum of `heap_time_s` / sum of `time_s` over the
//! MPI families (by bytes, `heap_bytes` / `bytes`, when the time columns are
//! absent).

use std::fs;
use std::path::Path;

pub const VAR: &str = "HEAPMPI_PROFILE";
pub const FILE: &str = "heapmpi-profile.csv";

/// What one run's profile says.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Shares {
    /// time in MPI / wall time, summed over the ranks
    pub mpi_share: Option<f64>,
    /// of the MPI time (or bytes), the part heapmpi ran on the shared heap
    pub accel_share: Option<f64>,
}

/// The environment variable for a heapmpi run in `run_dir`.
pub fn env(run_dir: &Path) -> (String, String) {
    (
        VAR.to_string(),
        run_dir.join(FILE).to_string_lossy().into_owned(),
    )
}

/// The shares from the profile file(s) a run left in `run_dir`, if any.
pub fn read(run_dir: &Path) -> Option<Shares> {
    let mut texts = vec![];
    for e in fs::read_dir(run_dir).ok()?.flatten() {
        if e.file_name()
            .to_string_lossy()
            .starts_with("heapmpi-profile")
        {
            if let Ok(t) = fs::read_to_string(e.path()) {
                texts.push(t);
            }
        }
    }
    parse(&texts)
}

/// Shares from the texts of one or more profile CSV files.
pub fn parse(texts: &[String]) -> Option<Shares> {
    let (mut wall, mut time, mut heap_time, mut bytes, mut heap_bytes) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let (mut have_time, mut have_heap_time, mut have_bytes) = (false, false, false);
    let mut any = false;
    for text in texts {
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let Some(header) = lines.next() else { continue };
        let cols: Vec<String> = header
            .split(',')
            .map(|c| c.trim().to_ascii_lowercase())
            .collect();
        let col = |name: &str| cols.iter().position(|c| c == name);
        let Some(fam) = col("family") else { continue };
        let (t, ht, b, hb) = (
            col("time_s"),
            col("heap_time_s"),
            col("bytes"),
            col("heap_bytes"),
        );
        for l in lines {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            let num = |i: Option<usize>| i.and_then(|i| f.get(i)?.parse::<f64>().ok());
            let Some(family) = f.get(fam) else { continue };
            any = true;
            if family.eq_ignore_ascii_case("wall") {
                if let Some(x) = num(t) {
                    wall += x;
                }
                continue;
            }
            if let Some(x) = num(t) {
                time += x;
                have_time = true;
            }
            if let Some(x) = num(ht) {
                heap_time += x;
                have_heap_time = true;
            }
            if let (Some(x), Some(y)) = (num(b), num(hb)) {
                bytes += x;
                heap_bytes += y;
                have_bytes = true;
            }
        }
    }
    if !any {
        return None;
    }
    let mpi_share = (have_time && wall > 0.0).then(|| time / wall);
    let accel_share = if have_time && have_heap_time && time > 0.0 {
        Some(heap_time / time)
    } else if have_bytes && bytes > 0.0 {
        Some(heap_bytes / bytes)
    } else {
        None
    };
    Some(Shares {
        mpi_share,
        accel_share,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_families() {
        let a = "rank,family,calls,time_s,bytes,heap_calls,heap_time_s,heap_bytes\n\
                 0,wall,1,10,0,0,0,0\n0,allreduce,4,2,32,4,1.5,32\n0,send,1,1,100,1,0.5,50\n";
        let b = "family,rank,time_s,heap_time_s\nwall,1,10\nrecv,1,3,3\n";
        let s = parse(&[a.to_string(), b.to_string()]).unwrap();
        assert!((s.mpi_share.unwrap() - 6.0 / 20.0).abs() < 1e-12);
        assert!((s.accel_share.unwrap() - 5.0 / 6.0).abs() < 1e-12);
        // bytes only
        let c = "rank,family,bytes,heap_bytes\n0,send,100,25\n";
        let s = parse(&[c.to_string()]).unwrap();
        assert_eq!(s.mpi_share, None);
        assert_eq!(s.accel_share, Some(0.25));
        assert_eq!(parse(&[]), None);
        assert_eq!(parse(&["x,y\n1,2\n".to_string()]), None);
    }
}
