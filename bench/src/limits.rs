//! The machine's own limits, without MPI: runs bench/c/limits.c (memcpy on
//! one and two cores, a cache line bounced between two cores) and parses
//! what it prints.

use crate::opts::Opts;
use crate::progress::Progress;
use crate::results::{Limits, Results};
use crate::runner::Runner;
use std::path::Path;
use std::process::Command;

/// Measure the limits (one run of `limits`) into `res.limits`.
pub fn measure(
    opts: &Opts,
    runner: &Runner,
    bin_dir: &Path,
    progress: &mut Progress,
    res: &mut Results,
) {
    progress.begin("machine limits (memcpy 1/2 cores, cache-line ping-pong)");
    let mut cmd = Command::new(bin_dir.join("limits"));
    if opts.quick {
        cmd.args(["-r", "2", "-t", "5"]);
    }
    let o = runner.run_plain(cmd, "limits");
    progress.end(&o, "");
    if o.ok {
        res.limits = Some(parse(&o.stdout));
    } else {
        res.failures.push(format!("limits: {}", o.error));
    }
}

fn parse(out: &str) -> Limits {
    let mut l = Limits::default();
    for line in out.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["memcpy", s, a, b] => {
                if let (Ok(s), Ok(a), Ok(b)) =
                    (s.parse::<u64>(), a.parse::<f64>(), b.parse::<f64>())
                {
                    l.memcpy.push((s, a / 1e3, b / 1e3));
                }
            }
            ["cacheline", best, med] => {
                l.cacheline_best_ns = best.parse().unwrap_or(0.0);
                l.cacheline_median_ns = med.parse().unwrap_or(0.0);
            }
            _ => {}
        }
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse() {
        let l = parse("# x\nmemcpy 1024 45000 90000\ncacheline 51.0 60.5\n");
        assert_eq!(l.memcpy, vec![(1024, 45.0, 90.0)]);
        assert_eq!(l.cacheline_best_ns, 51.0);
    }
}
