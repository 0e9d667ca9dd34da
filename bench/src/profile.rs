//! HEAPMPI_PROFILE: where the application table's "MPI share" and
//! "accelerated share" columns come from.
//!
//! The driver sets `HEAPMPI_PROFILE=<run directory>/heapmpi-profile.csv` for
//! every heapmpi run of an application; at `MPI_Finalize` the library
//! (src/profile.rs of the root crate, docs/settings.md "Where the time goes") writes
//! the job's table there as CSV, one row per MPI routine and a `total` row:
//!
//! ```text
//! family,routine,calls,bytes,time_s,max_rank_s,pct_mpi,heap_calls,heap_time_pct,passed,...
//! collective,MPI_Alltoall,12268,319517288,10.18,5.38,65.839,12268,100.000,0,...
//! total,all,20463,338568492,15.46,11.23,68.827,19430,99.943,,,,,
//! ```
//!
//! In the `total` row `pct_mpi` is the MPI time as a share of the ranks' wall
//! time and `heap_time_pct` the share of that MPI time served through the
//! heap, both in percent: the two columns. One more run passes every call
//! to the real MPI ([`REAL_MPI`]) with the profile on: its `pct_mpi` is
//! the stock transport's MPI share, from which the table's bound (the
//! wall-time speedup if MPI took no time) follows. Every file of the run directory
//! whose name starts with `heapmpi-profile` is read; a run without one shows
//! `-`.

use std::fs;
use std::path::Path;

pub const VAR: &str = "HEAPMPI_PROFILE";
pub const FILE: &str = "heapmpi-profile.csv";

/// With these, heapmpi passes every call to the real MPI (and still
/// profiles them): the stock transport's MPI share.
pub const REAL_MPI: [(&str, &str); 3] = [
    ("HEAPMPI_P2P", "0"),
    ("HEAPMPI_COLL", "0"),
    ("HEAPMPI_RMA", "0"),
];

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

/// Shares from the texts of one or more profile CSV files: the mean over
/// their `total` rows.
pub fn parse(texts: &[String]) -> Option<Shares> {
    let (mut mpi, mut heap) = (vec![], vec![]);
    for text in texts {
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let Some(header) = lines.next() else { continue };
        let cols: Vec<String> = header
            .split(',')
            .map(|c| c.trim().to_ascii_lowercase())
            .collect();
        let col = |name: &str| cols.iter().position(|c| c == name);
        let Some(fam) = col("family") else { continue };
        let (pm, ht) = (col("pct_mpi"), col("heap_time_pct"));
        for l in lines {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            if f.get(fam).is_some_and(|x| x.eq_ignore_ascii_case("total")) {
                let num = |i: Option<usize>| {
                    i.and_then(|i| f.get(i)?.parse::<f64>().ok())
                        .filter(|x| x.is_finite())
                };
                mpi.extend(num(pm).map(|x| x / 100.0));
                heap.extend(num(ht).map(|x| x / 100.0));
            }
        }
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    if mpi.is_empty() && heap.is_empty() {
        return None;
    }
    Some(Shares {
        mpi_share: mean(&mpi),
        accel_share: mean(&heap),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_total_row() {
        let a = "family,routine,calls,bytes,time_s,max_rank_s,pct_mpi,heap_calls,heap_time_pct,passed\n\
                 collective,MPI_Alltoall,12268,319517288,10.18,5.38,65.839,12268,100.000,0\n\
                 total,all,20463,338568492,15.46,11.23,68.827,19430,99.943,\n";
        let s = parse(&[a.to_string()]).unwrap();
        assert!((s.mpi_share.unwrap() - 0.68827).abs() < 1e-12);
        assert!((s.accel_share.unwrap() - 0.99943).abs() < 1e-12);
        let b = "family,routine,pct_mpi,heap_time_pct\ntotal,all,20,50\n";
        let s = parse(&[a.to_string(), b.to_string()]).unwrap();
        assert!((s.mpi_share.unwrap() - (0.68827 + 0.2) / 2.0).abs() < 1e-12);
        assert_eq!(parse(&[]), None);
        assert_eq!(parse(&["x,y\n1,2\n".to_string()]), None);
        assert_eq!(parse(&["family,routine\np2p,MPI_Send\n".to_string()]), None);
    }
}
