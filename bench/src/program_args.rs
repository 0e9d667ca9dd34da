//! The command line each C benchmark program gets: its mode, its sizes and
//! iteration counts for a timing run, or the validation flags for a check
//! run; and the ranks a benchmark runs on.

use crate::benches::{self, sweep_sizes, Bench, Iters, Sizes, Style};
use crate::opts::Opts;

/// Time-budget scale of malloc_bench (1 = 50 ms per pattern and size).
pub const MALLOC_SCALE: f64 = 1.0;

pub fn program_args(opts: &Opts, b: &Bench, validate: bool) -> Vec<String> {
    let mut a: Vec<String> = b.mode_args.iter().map(|s| s.to_string()).collect();
    let list = |v: Vec<u64>| {
        v.iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    match b.style {
        Style::TimeScale => {
            // malloc_bench: one argument, the scale of its time budget (each
            // pattern and size runs for 50 ms x scale, so glibc's slow batch
            // pattern at >= 4 KiB cannot stretch the run).
            a.push(format!(
                "{}",
                if validate {
                    0.01
                } else {
                    MALLOC_SCALE * opts.iter_scale
                }
            ));
            return a;
        }
        Style::Batches => {
            a.extend(["-s".into(), list(opts.sizes_for(b))]);
            if validate {
                // every update checked; the program caps the count
                a.extend(["-c".into(), "-f".into(), "0.05".into()]);
            } else if b.ranks > 0 {
                // the same number of updates in all, whatever the ranks
                let f = opts.iter_scale * 2.0 / b.ranks as f64;
                a.extend(["-f".into(), format!("{f}")]);
            }
            return a;
        }
        Style::Osu => {}
    }
    if validate {
        let within = |v: &[u64]| -> Vec<u64> {
            v.iter()
                .copied()
                .filter(|&s| s >= opts.size_min && s <= opts.size_max)
                .collect()
        };
        match b.sizes {
            Sizes::Sweep => a.extend(["-s".into(), list(sweep_sizes())]),
            // every size the benchmark runs (not only --quick's) and its
            // ±1 neighbours
            Sizes::Coll => {
                a.extend([
                    "-s".into(),
                    list(within(&benches::coll_sizes())),
                    "-O".into(),
                ]);
            }
            Sizes::CollFew => {
                a.extend([
                    "-s".into(),
                    list(within(benches::COLL_FEW_CHECK_SIZES)),
                    "-O".into(),
                ]);
            }
            Sizes::Rma => {
                a.extend([
                    "-s".into(),
                    list(within(&benches::rma_sizes())),
                    "-O".into(),
                ]);
            }
            Sizes::RmaFew => {
                a.extend([
                    "-s".into(),
                    list(within(benches::RMA_FEW_SIZES)),
                    "-O".into(),
                ]);
            }
            Sizes::Nbc => {
                a.extend(["-s".into(), list(within(benches::NBC_SIZES)), "-O".into()]);
            }
            _ => {
                // every size of the range plus its odd neighbours
                let lo = opts.size_min.max(b.min_size);
                a.extend(["-m".into(), format!("{lo}:{}", opts.size_max), "-O".into()]);
            }
        }
        // few iterations; one-sided fewer still (40 at small sizes, 4 above
        // 8 KiB: every iteration fills, reads back and checks its own slot,
        // and the target checks every slot and guard byte afterwards)
        let f = if b.is_rma() { "0.004" } else { "0.01" };
        a.extend(["-c".into(), "-f".into(), f.into()]);
        if let Iters::Fixed { .. } = b.iters {
            // oversubscribed: every call may wait for a time slice
            a.extend(["-i".into(), "4".into(), "-x".into(), "1".into()]);
        }
        if b.side_by_side() {
            // rank 0 names each collective (operation) and size on stderr
            // before it runs: a hang shows where in the log
            a.push("-v".into());
        }
        return a;
    }
    a.push("-s".into());
    a.push(list(opts.sizes_for(b)));
    match b.iters {
        Iters::Osu => {
            if opts.iter_scale != 1.0 {
                a.extend(["-f".into(), format!("{}", opts.iter_scale)]);
            }
        }
        Iters::Fixed { iters, skip } => {
            let n = |x: u32| ((x as f64 * opts.iter_scale).round() as u64).max(1);
            a.extend([
                "-i".into(),
                n(iters).to_string(),
                "-x".into(),
                n(skip).to_string(),
            ]);
        }
    }
    a
}

pub fn bench_ranks(opts: &Opts, b: &Bench) -> usize {
    if b.name == "mbw_mr" {
        opts.mbw_ranks
    } else if b.ranks > 0 {
        b.ranks
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args() {
        let o = Opts::parse(&["--quick".into()]).unwrap();
        let b = benches::find("bw").unwrap();
        let a = program_args(&o, b, false);
        assert_eq!(a[0], "bw");
        assert_eq!(a[1], "-s");
        assert!(a[2].starts_with("1,64,"));
        let c = program_args(&o, b, true);
        assert!(c.contains(&"-c".to_string()) && c.contains(&"1:4194304".to_string()));
        let coll = benches::find("coll").unwrap();
        let a = program_args(&o, coll, false);
        assert_eq!(a[..3], ["all", "-s", "8,1000,65536,1048576"]);
        let c = program_args(&o, coll, true);
        assert!(c.contains(&"-O".to_string()) && c[2].starts_with("3,4,8,16,"));
        let rma = benches::find("rma").unwrap();
        assert_eq!(
            program_args(&o, rma, false)[..3],
            ["all", "-s", "8,1000,65536,1048576"]
        );
        let c = program_args(&o, rma, true);
        assert!(c[2].starts_with("1,2,3,4,8,") && c.contains(&"0.004".to_string()));
        let a = program_args(&o, benches::find("rma_create").unwrap(), false);
        assert_eq!(
            a[..5],
            ["all", "-W", "create", "-s", "8,1000,4096,65536,1048576"]
        );
        let coll4 = benches::find("coll4").unwrap();
        let a = program_args(&Opts::parse(&[]).unwrap(), coll4, false);
        assert_eq!(a[3..], ["-i", "20", "-x", "2"]);
        let a = program_args(&o, coll4, false);
        assert_eq!(a[3..], ["-i", "1", "-x", "1"]);
        let nbc = benches::find("nbc").unwrap();
        let a = program_args(&o, nbc, false);
        assert_eq!(a[..4], ["nbc", "-e", "-s", "8,1024,1032,65536,1048576"]);
        let a = program_args(&Opts::parse(&[]).unwrap(), nbc, false);
        assert_eq!(a.len(), 4); // OMB's iteration counts
        let c = program_args(&o, nbc, true);
        assert!(c[3].starts_with("4,8,100,1000,1016,1024,1025,1032,"));
        assert!(["-O", "-c", "-v"]
            .iter()
            .all(|x| c.contains(&x.to_string())));
    }
}
