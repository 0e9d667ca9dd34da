//! Progress lines on stderr while the runs go: which run, how far, how
//! long, and the time left.

use crate::runner::Outcome;
use std::io::Write;
use std::time::Instant;

/// Progress lines on stderr: which run, how far, how long.
pub struct Progress {
    total: usize,
    done: usize,
    start: Instant,
    run_secs: f64,
}

impl Progress {
    /// `total` runs planned.
    pub fn new(total: usize) -> Progress {
        Progress {
            total,
            done: 0,
            start: Instant::now(),
            run_secs: 0.0,
        }
    }

    /// `runs` of the plan will not be made.
    pub fn skip(&mut self, runs: usize) {
        self.total = self.total.saturating_sub(runs);
    }

    pub fn begin(&mut self, what: &str) {
        self.done += 1;
        let el = self.start.elapsed().as_secs_f64();
        let eta = if self.done > 1 {
            let avg = self.run_secs / (self.done - 1) as f64;
            format!(
                ", eta ~{}",
                fmt_dur(avg * (self.total + 1).saturating_sub(self.done) as f64)
            )
        } else {
            String::new()
        };
        eprint!(
            "[{:>3}/{:<3} {}{}] {} ... ",
            self.done,
            self.total,
            fmt_dur(el),
            eta,
            what
        );
        let _ = std::io::stderr().flush();
    }
    pub fn end(&mut self, o: &Outcome, note: &str) {
        self.run_secs += o.secs;
        if o.ok {
            eprintln!("{:.1} s{}", o.secs, note);
        } else {
            eprintln!(
                "FAILED ({}) after {:.1} s, see {}",
                o.error,
                o.secs,
                o.log.display()
            );
        }
    }
}

pub fn fmt_dur(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}
