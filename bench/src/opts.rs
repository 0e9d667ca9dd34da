//! Command-line options.

use crate::benches::{self, Bench, Sizes};
use crate::suite;
use std::path::PathBuf;

pub const USAGE: &str = "\
usage: heapmpi-bench [options]        (normally run as bench/run [options])

Runs each benchmark with stock MPI and with heapmpi (LD_PRELOAD through
wrappers/heapmpirun), alternating in the same run, for Open MPI and MPICH,
and reports the median of the repetitions with the spread.

  --bench LIST      benchmarks, comma-separated (default: all):
                    latency, bw, bibw, mbw_mr, lat_sweep, bw_sweep,
                    lat_fresh (latency, the buffers rewritten each time),
                    lat_vector (latency of a strided datatype),
                    random_update, random_update4, random_update8,
                    coll, coll4, nbc (nonblocking collectives), rma,
                    rma_create, malloc; across --nodes also (and only
                    by default there): lat_pairs (a pair on one node and a
                    pair across nodes in one run), probe (ns of an
                    MPI_Iprobe to a remote rank); groups: p2p (the first four),
                    sweep (lat_sweep, bw_sweep, lat_fresh, lat_vector),
                    random,
                    collectives (coll, coll4), onesided (rma,
                    rma_create), all
  --mpi LIST        openmpi, mpich (Debian's; default: those installed), and
                    openmpi5, mpich5, impi: Open MPI 5.0, MPICH 5.0 and Intel
                    MPI 2021 from the Python wheels tests/run installs into
                    target/wheels/<name>, mpiabi: the MPI-5 standard ABI
                    (MPICH 5's mpicc_abi) (micro-benchmarks only: the
                    applications are Debian's, linked to Open MPI 4.1)
  --sizes MIN:MAX   message sizes in bytes, doubling; K/M suffixes allowed
                    (default 0:4M; bandwidth benchmarks start at 1; the
                    collectives and one-sided keep their sizes within MIN:MAX)
  --reps N          repetitions of every stock/heapmpi pair (default 5)
  --iter-scale F    multiply the OSU iteration and warm-up counts (default 1)
  --mbw-ranks N     ranks for mbw_mr (default 2 = one pair; more ranks than
                    cores runs oversubscribed and unbound)
  --quick           smoke test: 7 sizes (collectives, one-sided 4-5),
                    1 repetition, iterations x0.05, short LAMMPS run, fewer
                    limit trials; no timing claims
  --check           first run every benchmark in validation mode (-c: every
                    received byte checked) stock and heapmpi, plus mbw_mr at
                    4 ranks and the collectives at 3 and 4 ranks; exit 1 on
                    any mismatch (--quick: stock and heapmpi each on
                    one MPI per run, taking turns)
  --check-only      only the validation runs
  --apps LIST       applications of the suite, comma-separated (default:
                    all; --quick: lammps): lammps, hpcc, qe (Quantum
                    ESPRESSO pw.x), openfoam, cp2k, gromacs; all
  --no-app          skip every application
  --apps-only       only the applications (no micro-benchmarks, no limits)
  --app-reps N      runs of each application, stock and heapmpi alike,
                    alternating; the tables show the median (default 7;
                    --quick: 1)
  --app-ranks N     ranks of every application (default 2, bound to cores:
                    the physics must be identical; more ranks than cores run
                    oversubscribed and unbound, and heapmpi's physics must
                    lie within the spread of the stock runs)
  --app-steps N     LAMMPS MD steps (default 100000)
  --no-limits       skip measuring memcpy / cache-line limits
  --no-plots        skip SVG/PNG plots
  --no-build        use the already built libheapmpi and benchmark programs
  --heapmpi-env K=V give the heapmpi runs this HEAPMPI_* setting (repeatable;
                    e.g. HEAPMPI_CHECK=1 to measure what the check costs);
                    the report's header names it, and --publish refuses it
  --timeout SECS    kill a run after SECS seconds (default 600)
  --nodes N         run every MPI job across N namespace nodes on this
                    machine (tests/cluster/cluster, as root; ranks over TCP
                    between nodes, spread evenly, a node's ranks consecutive;
                    unbound); 1 (default): this machine as one node.
                    The collectives also run stock with the MPI's node-aware
                    algorithms (Open MPI coll/han, MPICH smp): a third
                    column, and heapmpi is held to the better stock
  --round-robin     with --nodes: deal ranks to the nodes in turn (rank r
                    on node r mod N: a node's ranks not consecutive, as
                    mpirun --map-by node and MPICH's -hosts a,b place them)
  --out DIR         results directory (default bench/results/<timestamp>,
                    with bench/results/latest pointing at it)
  --publish         after the run, write its report (machine, commit, date,
                    every table) to docs/figures.md at the root of the
                    checkout, replacing the file whole; refused when the run
                    is partial: --quick, --check-only, --bench, --sizes,
                    --no-limits, --apps-only, --no-app, some --apps, an MPI
                    or an application missing
  --publish-partial as --publish, and publish a partial run too (the file
                    says what was left out)
  -h, --help        this text
";

#[derive(Debug, Clone)]
pub struct Opts {
    pub benches: Vec<&'static Bench>,
    pub mpis: Vec<String>,
    pub mpis_given: bool,
    pub size_min: u64,
    pub size_max: u64,
    /// explicit size list (quick mode)
    pub size_list: Option<Vec<u64>>,
    pub reps: usize,
    pub iter_scale: f64,
    pub mbw_ranks: usize,
    pub quick: bool,
    /// `--heapmpi-env`: settings of every heapmpi run
    pub heapmpi_env: Vec<(String, String)>,
    pub check: bool,
    pub check_only: bool,
    pub app: bool,
    /// names of the applications to run (`suite::APPS` order is kept)
    pub apps: Vec<String>,
    pub apps_given: bool,
    pub apps_only: bool,
    pub app_reps: usize,
    pub app_ranks: usize,
    pub app_steps: u64,
    pub limits: bool,
    pub plots: bool,
    pub build: bool,
    pub timeout: f64,
    pub out: Option<PathBuf>,
    /// `--sizes` given: the micro-benchmarks ran part of their sizes
    pub sizes_given: bool,
    /// write the report to docs/figures.md (`--publish`)
    pub publish: bool,
    /// publish a partial run too (`--publish-partial`)
    pub publish_partial: bool,
    /// namespace nodes every MPI job goes across (`--nodes`; 1: none)
    pub nodes: usize,
    /// `--round-robin`: across `--nodes`, ranks dealt to the nodes in turn
    pub round_robin: bool,
    pub command_line: String,
}

pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let lower = lower.trim_end_matches("ib").trim_end_matches('b');
    let (num, mult) = if let Some(n) = lower.strip_suffix('k') {
        (n, 1u64 << 10)
    } else if let Some(n) = lower.strip_suffix('m') {
        (n, 1u64 << 20)
    } else if let Some(n) = lower.strip_suffix('g') {
        (n, 1u64 << 30)
    } else {
        (lower, 1)
    };
    num.trim()
        .parse::<u64>()
        .map(|n| n * mult)
        .map_err(|_| format!("bad size '{s}'"))
}

impl Opts {
    pub fn parse(args: &[String]) -> Result<Opts, String> {
        let mut o = Opts {
            benches: vec![],
            mpis: vec!["openmpi".into(), "mpich".into()],
            mpis_given: false,
            size_min: 0,
            size_max: 4 << 20,
            size_list: None,
            reps: 5,
            iter_scale: 1.0,
            mbw_ranks: 2,
            quick: false,
            heapmpi_env: vec![],
            check: false,
            check_only: false,
            app: true,
            apps: suite::APPS.iter().map(|a| a.name.to_string()).collect(),
            apps_given: false,
            apps_only: false,
            app_reps: 0,
            app_ranks: 2,
            app_steps: 100_000,
            limits: true,
            plots: true,
            build: true,
            timeout: 600.0,
            out: None,
            sizes_given: false,
            publish: false,
            publish_partial: false,
            nodes: 1,
            round_robin: false,
            command_line: args.join(" "),
        };
        let mut benches_given = false;
        let mut reps_given = false;
        let mut scale_given = false;
        let mut steps_given = false;
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_str();
            // --opt=value or --opt value
            let (name, inline) = match a.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
                _ => (a, None),
            };
            let mut value = || -> Result<String, String> {
                if let Some(v) = &inline {
                    return Ok(v.clone());
                }
                i += 1;
                args.get(i)
                    .cloned()
                    .ok_or_else(|| format!("{name} needs a value"))
            };
            match name {
                "-h" | "--help" => return Err(String::new()),
                "--bench" | "--benches" => {
                    let v = value()?;
                    o.benches.clear();
                    benches_given = true;
                    for n in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                        let names: Vec<&str> = match n {
                            "all" => benches::BENCHES.iter().map(|b| b.name).collect(),
                            "p2p" => vec!["latency", "bw", "bibw", "mbw_mr"],
                            "sweep" => vec!["lat_sweep", "bw_sweep", "lat_fresh", "lat_vector"],
                            "random" => vec!["random_update", "random_update4", "random_update8"],
                            "collectives" | "colls" => vec!["coll", "coll4"],
                            "onesided" | "one-sided" => vec!["rma", "rma_create"],
                            other => vec![other],
                        };
                        for n in names {
                            let b = benches::find(n).ok_or_else(|| {
                                format!(
                                    "unknown benchmark '{n}' (known: {})",
                                    benches::BENCHES
                                        .iter()
                                        .map(|b| b.name)
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                )
                            })?;
                            if !o.benches.iter().any(|x| x.name == b.name) {
                                o.benches.push(b);
                            }
                        }
                    }
                }
                "--mpi" | "--mpis" => {
                    let v = value()?;
                    o.mpis.clear();
                    o.mpis_given = true;
                    for n in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                        let n = match n.to_ascii_lowercase().as_str() {
                            "openmpi" | "ompi" | "open-mpi" => "openmpi",
                            "mpich" => "mpich",
                            "openmpi5" | "ompi5" => "openmpi5",
                            "mpich5" => "mpich5",
                            "impi" | "intel" | "intelmpi" => "impi",
                            "mpiabi" | "abi" => "mpiabi",
                            "all" => {
                                o.mpis = vec!["openmpi".into(), "mpich".into()];
                                continue;
                            }
                            _ => {
                                return Err(format!(
                                    "unknown MPI '{n}' (openmpi, mpich; openmpi5, mpich5, impi, mpiabi)"
                                ))
                            }
                        };
                        if !o.mpis.iter().any(|m| m == n) {
                            o.mpis.push(n.into());
                        }
                    }
                }
                "--sizes" => {
                    let v = value()?;
                    let (a, b) = v.split_once(':').ok_or("--sizes wants MIN:MAX")?;
                    o.size_min = parse_size(a)?;
                    o.size_max = parse_size(b)?;
                    if o.size_max < o.size_min || o.size_max > (1 << 30) {
                        return Err("--sizes: need MIN <= MAX <= 1G".into());
                    }
                    o.sizes_given = true;
                }
                "--reps" => {
                    o.reps = value()?.parse().map_err(|_| "--reps wants a number")?;
                    if o.reps == 0 {
                        return Err("--reps must be at least 1".into());
                    }
                    reps_given = true;
                }
                "--iter-scale" => {
                    o.iter_scale = value()?
                        .parse()
                        .map_err(|_| "--iter-scale wants a number")?;
                    if o.iter_scale <= 0.0 {
                        return Err("--iter-scale must be positive".into());
                    }
                    scale_given = true;
                }
                "--mbw-ranks" => {
                    o.mbw_ranks = value()?.parse().map_err(|_| "--mbw-ranks wants a number")?;
                    if o.mbw_ranks < 2 || o.mbw_ranks % 2 == 1 {
                        return Err("--mbw-ranks must be even and >= 2".into());
                    }
                }
                "--quick" => o.quick = true,
                "--check" => o.check = true,
                "--check-only" => {
                    o.check = true;
                    o.check_only = true;
                }
                "--no-app" | "--no-apps" => o.app = false,
                "--apps" | "--app" => {
                    let v = value()?;
                    o.apps.clear();
                    o.apps_given = true;
                    for n in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                        if n == "all" {
                            o.apps = suite::APPS.iter().map(|a| a.name.to_string()).collect();
                            continue;
                        }
                        let a = suite::find(n).ok_or_else(|| {
                            format!(
                                "unknown application '{n}' (known: {})",
                                suite::APPS
                                    .iter()
                                    .map(|a| a.name)
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        })?;
                        if !o.apps.iter().any(|x| x == a.name) {
                            o.apps.push(a.name.into());
                        }
                    }
                }
                "--apps-only" => o.apps_only = true,
                "--app-reps" => {
                    o.app_reps = value()?.parse().map_err(|_| "--app-reps wants a number")?;
                    if o.app_reps == 0 {
                        return Err("--app-reps must be at least 1".into());
                    }
                }
                "--app-ranks" => {
                    o.app_ranks = value()?.parse().map_err(|_| "--app-ranks wants a number")?;
                    if o.app_ranks < 2 {
                        return Err("--app-ranks must be at least 2".into());
                    }
                }
                "--app-steps" => {
                    o.app_steps = value()?.parse().map_err(|_| "--app-steps wants a number")?;
                    steps_given = true;
                }
                "--no-limits" => o.limits = false,
                "--no-plots" => o.plots = false,
                "--no-build" => o.build = false,
                "--heapmpi-env" => {
                    let kv = value()?;
                    match kv.split_once('=') {
                        Some((k, v)) if k.starts_with("HEAPMPI_") => {
                            o.heapmpi_env.push((k.to_string(), v.to_string()))
                        }
                        _ => {
                            return Err(format!("--heapmpi-env: '{kv}' is not HEAPMPI_NAME=VALUE"))
                        }
                    }
                }
                "--nodes" => {
                    o.nodes = value()?
                        .parse()
                        .ok()
                        .filter(|n| (1..=8).contains(n))
                        .ok_or("--nodes wants 1 to 8")?;
                }
                "--round-robin" => o.round_robin = true,
                "--timeout" => {
                    o.timeout = value()?.parse().map_err(|_| "--timeout wants seconds")?;
                }
                "--out" => o.out = Some(PathBuf::from(value()?)),
                "--publish" => o.publish = true,
                "--publish-partial" => {
                    o.publish = true;
                    o.publish_partial = true;
                }
                other => return Err(format!("unknown option '{other}'")),
            }
            i += 1;
        }
        if !benches_given {
            o.benches = benches::defaults(o.nodes);
        }
        if o.apps_only {
            o.benches.clear();
            o.limits = false;
            o.app = true;
        } else if o.benches.is_empty() {
            return Err("--bench: no benchmark selected".into());
        }
        if o.app && o.apps.is_empty() {
            return Err("--apps: no application selected".into());
        }
        if o.round_robin && o.nodes < 2 {
            return Err("--round-robin: across --nodes 2 or more only".into());
        }
        if let Some(out) = o.out.as_ref().filter(|_| o.nodes > 1) {
            // The ranks read the libraries copied there and write their
            // logs there, inside nodes that each mount their own.
            let abs = std::env::current_dir().unwrap_or_default().join(out);
            if abs.starts_with("/tmp") || abs.starts_with("/dev/shm") {
                return Err(format!(
                    "--out {}: across --nodes the results directory must not be under \
                     /tmp or /dev/shm (each node has its own)",
                    out.display()
                ));
            }
        }
        if o.quick {
            if !reps_given {
                o.reps = 1;
            }
            if !scale_given {
                o.iter_scale = 0.05;
            }
            if !o.sizes_given {
                o.size_list = Some(vec![0, 1, 64, 4096, 65536, 1 << 20, 4 << 20]);
            }
            if !steps_given {
                o.app_steps = 2000;
            }
            if !o.apps_given {
                o.apps = vec!["lammps".into()];
            }
        }
        if o.app_reps == 0 {
            o.app_reps = if o.quick { 1 } else { 7 };
        }
        Ok(o)
    }

    /// Message sizes for a benchmark (the sweeps and fixed lists ignore
    /// `--sizes` and `--quick`; the collectives and one-sided keep theirs
    /// within `--sizes` and have their own `--quick` lists).
    pub fn sizes_for(&self, b: &Bench) -> Vec<u64> {
        let within = |v: &[u64]| -> Vec<u64> {
            v.iter()
                .copied()
                .filter(|&s| s >= self.size_min && s <= self.size_max)
                .collect()
        };
        match b.sizes {
            Sizes::Sweep => return benches::sweep_sizes(),
            Sizes::Fixed(v) => return v.to_vec(),
            Sizes::Coll if self.quick => return within(benches::COLL_QUICK_SIZES),
            Sizes::Coll => return within(&benches::coll_sizes()),
            Sizes::CollFew => return within(benches::COLL_FEW_SIZES),
            Sizes::Rma if self.quick => return within(benches::RMA_QUICK_SIZES),
            Sizes::Rma => return within(&benches::rma_sizes()),
            Sizes::RmaFew => return within(benches::RMA_FEW_SIZES),
            Sizes::Nbc if self.quick => return within(benches::NBC_QUICK_SIZES),
            Sizes::Nbc => return within(benches::NBC_SIZES),
            Sizes::Doubling => {}
        }
        let mut v: Vec<u64> = match &self.size_list {
            Some(list) => list.clone(),
            None => {
                let mut v = Vec::new();
                let mut s = self.size_min;
                if s == 0 {
                    v.push(0);
                    s = 1;
                }
                while s <= self.size_max {
                    v.push(s);
                    s *= 2;
                }
                v
            }
        };
        v.retain(|&s| s >= b.min_size);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4M").unwrap(), 4 << 20);
        assert_eq!(parse_size("4MiB").unwrap(), 4 << 20);
        assert_eq!(parse_size("1k").unwrap(), 1024);
        assert_eq!(parse_size("17").unwrap(), 17);
        assert!(parse_size("x").is_err());
    }

    #[test]
    fn defaults_and_quick() {
        let o = Opts::parse(&[]).unwrap();
        assert_eq!(o.reps, 5);
        assert_eq!(
            o.benches.len(),
            benches::BENCHES.len() - benches::ACROSS_ONLY.len()
        );
        let n = Opts::parse(&["--nodes".into(), "2".into()]).unwrap();
        assert_eq!(n.benches.len(), benches::BENCHES.len());
        let lat = benches::find("latency").unwrap();
        let bw = benches::find("bw").unwrap();
        assert_eq!(o.sizes_for(lat).len(), 24);
        assert_eq!(o.sizes_for(bw).len(), 23);
        let q = Opts::parse(&["--quick".into(), "--bench".into(), "bw,latency".into()]).unwrap();
        assert_eq!(q.reps, 1);
        assert_eq!(q.benches.len(), 2);
        assert_eq!(q.sizes_for(bw)[0], 1);
        assert!(Opts::parse(&["--bench".into(), "nope".into()]).is_err());
        let coll = benches::find("coll").unwrap();
        assert_eq!(o.sizes_for(coll).len(), 23);
        assert_eq!(q.sizes_for(coll), vec![8, 1000, 65536, 1 << 20]);
        let c = Opts::parse(&["--bench=collectives".into(), "--sizes=1K:64K".into()]).unwrap();
        assert_eq!(c.benches.len(), 2);
        assert_eq!(c.sizes_for(coll)[0], 1024);
        assert_eq!(*c.sizes_for(coll).last().unwrap(), 65536);
        assert!(Opts::parse(&["--mbw-ranks=3".into()]).is_err());
        assert_eq!(o.apps.len(), suite::APPS.len());
        assert_eq!((o.app_reps, o.app_ranks), (7, 2));
        assert_eq!(q.apps, ["lammps"]);
        assert_eq!(q.app_reps, 1);
        let a = Opts::parse(&["--apps=pw.x,gmx,qe".into(), "--apps-only".into()]).unwrap();
        assert_eq!(a.apps, ["qe", "gromacs"]);
        assert!(a.benches.is_empty() && !a.limits && a.app);
        assert!(Opts::parse(&["--apps=nope".into()]).is_err());
        assert!(Opts::parse(&["--app-ranks=1".into()]).is_err());
        let rma = benches::find("rma").unwrap();
        assert_eq!(o.sizes_for(rma).len(), 26);
        assert_eq!(q.sizes_for(rma), vec![8, 1000, 65536, 1 << 20]);
        let r = Opts::parse(&["--bench=onesided".into(), "--sizes=1K:64K".into()]).unwrap();
        assert_eq!(r.benches.len(), 2);
        assert_eq!(r.sizes_for(rma)[0], 1024);
        assert_eq!(
            r.sizes_for(benches::find("rma_create").unwrap()),
            vec![4096, 65536]
        );
        let nbc = benches::find("nbc").unwrap();
        assert_eq!(o.sizes_for(nbc), benches::NBC_SIZES);
        assert_eq!(q.sizes_for(nbc), benches::NBC_QUICK_SIZES);
        let n = Opts::parse(&["--bench=nbc".into(), "--sizes=1000:64K".into()]).unwrap();
        assert_eq!(n.benches.len(), 1);
        assert_eq!(n.sizes_for(nbc)[..3], [1000, 1016, 1024]);
        assert_eq!(*n.sizes_for(nbc).last().unwrap(), 65536);
    }

    #[test]
    fn results_across_nodes_stay_out_of_the_nodes_own_tmp() {
        let args = |out: &str| -> Vec<String> {
            ["--nodes", "2", "--out", out].map(String::from).to_vec()
        };
        assert!(Opts::parse(&args("/tmp/r")).is_err());
        assert!(Opts::parse(&args("/dev/shm/r")).is_err());
        assert!(Opts::parse(&args("/work/r")).is_ok());
        let one = ["--out", "/tmp/r"].map(String::from).to_vec();
        assert!(Opts::parse(&one).is_ok());
    }
}
