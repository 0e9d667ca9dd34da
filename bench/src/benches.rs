//! The benchmark registry: which C program runs a benchmark, how its output
//! columns map to metrics, and how they are shown.
//!
//! Adding a benchmark (the collective and one-sided ones of later issues:
//! barrier, allreduce, bcast, put/get latency and bandwidth) is one entry
//! here plus its C program in `bench/c/` (listed in [`PROGRAMS`]), printing
//! `size value [value2]` lines. A benchmark without a message size (barrier)
//! prints size 0.

/// What a metric's plot overlays from the machine limits.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// time per operation: cache-line one-way latency and the one-copy floor
    Latency,
    /// bytes per second: memcpy one core and two cores
    Bandwidth,
    /// operations per second: no overlay
    Rate,
}

#[derive(Clone, Copy, Debug)]
pub struct Metric {
    /// file-name suffix ("" for the benchmark's main metric)
    pub key: &'static str,
    /// title in tables and plots
    pub title: &'static str,
    /// unit shown (after `scale` is applied)
    pub unit: &'static str,
    /// index of the value column after `size` in the program's output
    pub column: usize,
    /// multiply the program's value by this to get `unit`
    pub scale: f64,
    pub higher_is_better: bool,
    pub kind: Kind,
}

#[derive(Clone, Copy, Debug)]
pub struct Bench {
    pub name: &'static str,
    /// one line for the README / --help
    pub what: &'static str,
    /// C program in bench/c/ (without .c)
    pub program: &'static str,
    /// first arguments (the mode)
    pub mode_args: &'static [&'static str],
    /// message sizes start here (0 for latency, 1 for bandwidth)
    pub min_size: u64,
    /// the program takes -m/-s/-f/-c (OSU-style); otherwise a scale argument
    pub osu_style: bool,
    pub metrics: &'static [Metric],
}

impl Bench {
    /// Sizes are meaningful (plotted on a log size axis).
    pub fn has_sizes(&self) -> bool {
        self.osu_style
    }
}

const LAT_US: Metric = Metric {
    key: "",
    title: "latency",
    unit: "us",
    column: 0,
    scale: 1.0,
    higher_is_better: false,
    kind: Kind::Latency,
};

const BW_GBS: Metric = Metric {
    key: "",
    title: "bandwidth",
    unit: "GB/s",
    column: 0,
    scale: 1e-3, // MB/s -> GB/s
    higher_is_better: true,
    kind: Kind::Bandwidth,
};

pub const BENCHES: &[Bench] = &[
    Bench {
        name: "latency",
        what: "ping-pong MPI_Send/MPI_Recv, half the round trip (osu_latency)",
        program: "osu_p2p",
        mode_args: &["latency"],
        min_size: 0,
        osu_style: true,
        metrics: &[LAT_US],
    },
    Bench {
        name: "bw",
        what: "window of 64 MPI_Isend -> MPI_Irecv, MPI_Waitall, 4-byte ack (osu_bw)",
        program: "osu_p2p",
        mode_args: &["bw"],
        min_size: 1,
        osu_style: true,
        metrics: &[BW_GBS],
    },
    Bench {
        name: "bibw",
        what: "both ranks send a window of 64 to each other at once (osu_bibw)",
        program: "osu_p2p",
        mode_args: &["bibw"],
        min_size: 1,
        osu_style: true,
        metrics: &[Metric { title: "bidirectional bandwidth", ..BW_GBS }],
    },
    Bench {
        name: "mbw_mr",
        what: "ranks/2 pairs, rank i -> i+n/2, window of 64: aggregate bandwidth and message rate (osu_mbw_mr)",
        program: "osu_p2p",
        mode_args: &["mbw_mr"],
        min_size: 1,
        osu_style: true,
        metrics: &[
            Metric { title: "multi-pair bandwidth", ..BW_GBS },
            Metric {
                key: "rate",
                title: "message rate",
                unit: "Mmsg/s",
                column: 1,
                scale: 1e-6,
                higher_is_better: true,
                kind: Kind::Rate,
            },
        ],
    },
    Bench {
        name: "malloc",
        what: "malloc/free throughput of rank 0 after MPI_Init: shared heap vs glibc",
        program: "malloc_bench",
        mode_args: &[],
        min_size: 16,
        osu_style: false,
        metrics: &[
            Metric {
                key: "pair",
                title: "malloc+free pair",
                unit: "Mops/s",
                column: 0,
                scale: 1.0,
                higher_is_better: true,
                kind: Kind::Rate,
            },
            Metric {
                key: "batch",
                title: "malloc x1024 then free x1024",
                unit: "Mops/s",
                column: 1,
                scale: 1.0,
                higher_is_better: true,
                kind: Kind::Rate,
            },
        ],
    },
];

/// C programs built per MPI with mpicc.<mpi>.
pub const PROGRAMS: &[&str] = &["osu_p2p", "malloc_bench"];

pub fn find(name: &str) -> Option<&'static Bench> {
    BENCHES.iter().find(|b| b.name == name)
}
