//! What one invocation measured: every run's parsed table, the machine's
//! limits, the applications, the validation runs and what went wrong. The
//! steps that run fill it; the report and the plots read it.

use crate::app::AppResult;
use crate::runner::Variant;
use std::collections::BTreeMap;

/// One run's parsed output: size -> values.
pub type Table = BTreeMap<u64, Vec<f64>>;

/// Everything measured in one invocation.
#[derive(Default)]
pub struct Results {
    /// (bench, mpi, variant) -> one table per repetition that succeeded
    pub runs: BTreeMap<(&'static str, String, Variant), Vec<Table>>,
    /// ranks used per benchmark
    pub ranks: BTreeMap<&'static str, usize>,
    /// human-readable failures (runs that failed, validation errors)
    pub failures: Vec<String>,
    /// heapmpi runs in which not every rank reported `active`
    pub heap_not_active: Vec<String>,
    pub limits: Option<Limits>,
    /// the application suite, in suite order
    pub apps: Vec<AppResult>,
    /// validation: (what, passed)
    pub checks: Vec<(String, bool)>,
    /// validation runs left out on purpose, and why
    pub check_notes: Vec<String>,
    /// (bench, mpi) -> the collectives' paths across nodes (`crate::paths`)
    pub paths: BTreeMap<(&'static str, String), Vec<PathRow>>,
}

/// One routine's line of a profile: calls in all, and how they were served.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathRow {
    pub routine: String,
    pub calls: u64,
    pub heap: u64,
    /// real MPI: members on another node
    pub remote: u64,
    /// real MPI: arguments heapmpi leaves to it (a reduction whose order
    /// it does not reproduce, a datatype, an error)
    pub args: u64,
    /// real MPI, every other reason (passed: heapmpi off for the call, as
    /// for a rank alone on its node; unknown communicator; real objects)
    pub other: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// (size, one core GB/s, two cores GB/s)
    pub memcpy: Vec<(u64, f64, f64)>,
    pub cacheline_best_ns: f64,
    pub cacheline_median_ns: f64,
}

impl Results {
    /// The applications' results, and their failures and physics
    /// differences among the run's failures.
    pub fn add_apps(&mut self, apps: Vec<AppResult>) {
        self.apps = apps;
        for a in &self.apps {
            self.failures
                .extend(a.failures.iter().map(|f| format!("{}: {f}", a.title)));
            if let Some(v) = &a.verdict {
                if !v.ok {
                    self.failures.push(format!(
                        "{}: physics of heapmpi {} stock's: {}\n  reproduce: {}",
                        a.title,
                        if v.exact {
                            "differs from"
                        } else {
                            "outside the spread of"
                        },
                        v.difference.as_deref().unwrap_or("-"),
                        a.repro.as_deref().unwrap_or("-")
                    ));
                }
            }
        }
    }
}
