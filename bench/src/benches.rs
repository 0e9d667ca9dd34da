//! The benchmark registry: which C program runs a benchmark, how its output
//! columns map to metrics, and how they are shown.
//!
//! Adding a benchmark is one entry here plus its C program in `bench/c/`
//! (listed in [`PROGRAMS`]), printing `size value [value2 ...]` lines. A
//! benchmark without a message size (barrier) prints size 0. The collectives
//! are one program run per launch (`osu_coll all`): one column per
//! collective, each a metric of the `coll` / `coll4` benchmark; the
//! nonblocking collectives likewise (`osu_coll nbc`: the metrics of `nbc`,
//! a time and an overlap column per collective); the one-sided operations
//! likewise (`osu_rma all`: the metrics of `rma` / `rma_create`).

/// What a metric's plot overlays from the machine limits.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// time per operation: cache-line one-way latency and the one-copy floor
    Latency,
    /// bytes per second: memcpy one core and two cores
    Bandwidth,
    /// operations per second: no overlay
    Rate,
    /// time per collective call: cache-line one-way latency only (the
    /// one-copy floor depends on the collective and the ranks)
    Coll,
    /// a percentage (overlap of a nonblocking collective with computation):
    /// linear axis, no overlay; tables compare by difference in points
    Percent,
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
    /// how the program takes its arguments
    pub style: Style,
    /// which sizes it runs
    pub sizes: Sizes,
    /// ranks (0: 2, or `--mbw-ranks` for mbw_mr); more than the cores run
    /// oversubscribed and unbound
    pub ranks: usize,
    /// iteration counts (Osu style only)
    pub iters: Iters,
    pub metrics: &'static [Metric],
}

/// Iteration counts of an OSU-style program.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Iters {
    /// the program's OMB defaults, times `--iter-scale`
    Osu,
    /// these iterations and warm-up ones at every size, times
    /// `--iter-scale` (oversubscribed runs: a stock MPI that busy-polls
    /// takes milliseconds a call there)
    Fixed { iters: u32, skip: u32 },
}

/// How a program takes its arguments.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Style {
    /// OSU-style: -m/-s sizes, -O, -f iteration factor, -c validation
    Osu,
    /// malloc_bench: one argument, the scale of its time budget
    TimeScale,
    /// random_update: -s batch limits, -f update-count factor, -c
    Batches,
}

/// The sizes a benchmark runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Sizes {
    /// `--sizes MIN:MAX`, doubling (default 0 or 1 B to 4 MiB)
    Doubling,
    /// NetPIPE's perturbed sweep: every power of two from 1 B to 64 KiB and
    /// its neighbours 3 bytes below and above (`sweep_sizes`)
    Sweep,
    /// these
    Fixed(&'static [u64]),
    /// collectives: 4 B to 1 MiB doubling and a few sizes off the powers of
    /// two ([`coll_sizes`]); validation adds every size's ±1 neighbours
    Coll,
    /// collectives at more ranks than cores: a few sizes
    /// ([`COLL_FEW_SIZES`]); validation checks [`COLL_FEW_CHECK_SIZES`] and
    /// their ±1 neighbours
    CollFew,
    /// one-sided: 1 B to 1 MiB doubling and a few sizes off the powers of two
    /// ([`rma_sizes`]; `--quick`: [`RMA_QUICK_SIZES`]); validation adds every
    /// size's ±1 neighbours
    Rma,
    /// one-sided, second window kind: a few sizes ([`RMA_FEW_SIZES`]), all
    /// of them in `--quick` too; validation adds their ±1 neighbours
    RmaFew,
    /// nonblocking collectives: [`NBC_SIZES`] (`--quick`:
    /// [`NBC_QUICK_SIZES`]); validation adds every size's ±1 neighbours
    Nbc,
}

/// Sizes off the powers of two that the collectives also run.
pub const COLL_ODD_SIZES: &[u64] = &[3, 1000, 5000, 65539];

/// Collective sizes: 4 B ..= 1 MiB doubling plus [`COLL_ODD_SIZES`], sorted.
pub fn coll_sizes() -> Vec<u64> {
    let mut v: Vec<u64> = (2..=20).map(|k| 1u64 << k).collect();
    v.extend_from_slice(COLL_ODD_SIZES);
    v.sort_unstable();
    v.dedup();
    v
}

/// Collective sizes of `--quick` (2 ranks).
pub const COLL_QUICK_SIZES: &[u64] = &[8, 1000, 65536, 1 << 20];

/// Collective sizes at more ranks than cores (timing).
pub const COLL_FEW_SIZES: &[u64] = &[8, 1000, 65536, 1 << 20];

/// Collective sizes at more ranks than cores (validation; with ±1): both
/// sides of the inline limit (4 KiB) and of the fold chunk (32 KiB).
pub const COLL_FEW_CHECK_SIZES: &[u64] = &[8, 1000, 4096, 32768, 65536, 1 << 20];

/// Nonblocking collective sizes: small, both sides of 1 KiB (heapmpi takes
/// payloads up to 1 KiB through the heap, larger ones go to the real MPI;
/// reductions move size/8 doubles, so 1016 and 1032 B are 127 and 129
/// doubles, 1025 B is 128), off the powers of two, and large ones up to
/// 1 MiB (the 64 KiB-1 MiB target).
pub const NBC_SIZES: &[u64] = &[
    4,
    8,
    100,
    1000,
    1016,
    1024,
    1025,
    1032,
    2048,
    4096,
    5000,
    16384,
    65536,
    65539,
    262_144,
    1 << 20,
];

/// Nonblocking collective sizes of `--quick`.
pub const NBC_QUICK_SIZES: &[u64] = &[8, 1024, 1032, 65536, 1 << 20];

/// Sizes off the powers of two that the one-sided benchmark also runs.
pub const RMA_ODD_SIZES: &[u64] = &[3, 100, 1000, 5000, 100_000];

/// One-sided sizes: 1 B ..= 1 MiB doubling plus [`RMA_ODD_SIZES`], sorted.
pub fn rma_sizes() -> Vec<u64> {
    let mut v: Vec<u64> = (0..=20).map(|k| 1u64 << k).collect();
    v.extend_from_slice(RMA_ODD_SIZES);
    v.sort_unstable();
    v.dedup();
    v
}

/// One-sided sizes of `--quick`.
pub const RMA_QUICK_SIZES: &[u64] = &[8, 1000, 65536, 1 << 20];

/// Sizes of the second window kind (`rma_create`), quick or not: 8 B (the
/// headline figures), both sides of 4 KiB, and large ones.
pub const RMA_FEW_SIZES: &[u64] = &[8, 1000, 4096, 65536, 1 << 20];

/// NetPIPE-style sizes: 2^k - 3, 2^k, 2^k + 3 for 2^k in 1 B ..= 64 KiB
/// (those >= 1).
pub fn sweep_sizes() -> Vec<u64> {
    let mut v = vec![];
    for k in 0..=16 {
        let p = 1u64 << k;
        for s in [p.saturating_sub(3), p, p + 3] {
            if s >= 1 && !v.contains(&s) {
                v.push(s);
            }
        }
    }
    v.sort_unstable();
    v
}

impl Bench {
    /// Sizes are message sizes (plotted on a log size axis).
    pub fn has_sizes(&self) -> bool {
        self.style == Style::Osu
    }

    /// A collective benchmark (`osu_coll`): one metric per collective,
    /// compared with the faster stock MPI too.
    pub fn is_coll(&self) -> bool {
        matches!(self.sizes, Sizes::Coll | Sizes::CollFew | Sizes::Nbc)
    }

    /// The nonblocking collectives (`osu_coll nbc`): time and overlap
    /// columns.
    pub fn is_nbc(&self) -> bool {
        self.sizes == Sizes::Nbc
    }

    /// A one-sided benchmark (`osu_rma`): one metric per operation,
    /// compared with the better stock MPI too.
    pub fn is_rma(&self) -> bool {
        matches!(self.sizes, Sizes::Rma | Sizes::RmaFew)
    }

    /// Reported as one table per metric with every MPI side by side
    /// (stock, heapmpi, heapmpi / its stock, heapmpi / the better stock).
    pub fn side_by_side(&self) -> bool {
        self.is_coll() || self.is_rma()
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

const MSG_RATE: Metric = Metric {
    key: "rate",
    title: "message rate",
    unit: "Mmsg/s",
    column: 1,
    scale: 1e-6,
    higher_is_better: true,
    kind: Kind::Rate,
};

const UPDATES: Metric = Metric {
    key: "",
    title: "updates",
    unit: "Mupdates/s",
    column: 0,
    scale: 1.0,
    higher_is_better: true,
    kind: Kind::Rate,
};

/// One metric per collective: column k of `osu_coll all`'s output.
const fn coll(key: &'static str, title: &'static str, column: usize) -> Metric {
    Metric {
        key,
        title,
        unit: "us",
        column,
        scale: 1.0,
        higher_is_better: false,
        kind: Kind::Coll,
    }
}

/// The collectives of `osu_coll all`, in its column order.
pub const COLL_METRICS: &[Metric] = &[
    coll("barrier", "barrier", 0),
    coll("bcast", "bcast", 1),
    coll("bcast_rot", "bcast, rotating root", 2),
    coll("reduce", "reduce", 3),
    coll("allreduce", "allreduce", 4),
    coll("allgather", "allgather", 5),
    coll("alltoall", "alltoall", 6),
    coll("gather", "gather", 7),
    coll("scatter", "scatter", 8),
    coll("halo", "neighbour halo exchange, 2-D grid", 9),
];

/// A nonblocking collective's overlap with computation: column k of
/// `osu_coll nbc`'s output, OMB's overlap in percent.
const fn overlap(key: &'static str, title: &'static str, column: usize) -> Metric {
    Metric {
        key,
        title,
        unit: "%",
        column,
        scale: 1.0,
        higher_is_better: true,
        kind: Kind::Percent,
    }
}

/// A nonblocking collective's time not overlapped (`osu_coll -e`): column
/// k, overall minus computation, us, the averages over the ranks.
const fn exposed(key: &'static str, title: &'static str, column: usize) -> Metric {
    Metric {
        key,
        title,
        unit: "us",
        column,
        scale: 1.0,
        higher_is_better: false,
        kind: Kind::Coll,
    }
}

/// The nonblocking collectives of `osu_coll nbc -e`, in its column order:
/// each one's pure communication time (post + MPI_Wait at once, us per
/// call, max over the ranks), its overlap with computation (OMB, %), and
/// the time it left exposed in that run (overall - computation, us): a
/// faster pure time lowers the overlap percentage of the same exposed
/// time, so the two are read together. ibarrier has no message size (size
/// 0).
pub const NBC_METRICS: &[Metric] = &[
    coll("ibarrier", "ibarrier, pure communication", 0),
    overlap("ibarrier_ovl", "ibarrier overlap with computation", 1),
    exposed("ibarrier_exp", "ibarrier time not overlapped", 2),
    coll("ibcast", "ibcast, pure communication", 3),
    overlap("ibcast_ovl", "ibcast overlap with computation", 4),
    exposed("ibcast_exp", "ibcast time not overlapped", 5),
    coll("ireduce", "ireduce, pure communication", 6),
    overlap("ireduce_ovl", "ireduce overlap with computation", 7),
    exposed("ireduce_exp", "ireduce time not overlapped", 8),
    coll("iallreduce", "iallreduce, pure communication", 9),
    overlap("iallreduce_ovl", "iallreduce overlap with computation", 10),
    exposed("iallreduce_exp", "iallreduce time not overlapped", 11),
];

/// One-sided latency: column k of `osu_rma all`'s output, us per
/// iteration on the origin.
const fn rma_lat(key: &'static str, title: &'static str, column: usize) -> Metric {
    Metric {
        key,
        title,
        unit: "us",
        column,
        scale: 1.0,
        higher_is_better: false,
        kind: Kind::Latency,
    }
}

/// One-sided bandwidth: column k of `osu_rma all`'s output, MB/s -> GB/s.
const fn rma_bw(key: &'static str, title: &'static str, column: usize) -> Metric {
    Metric {
        key,
        title,
        unit: "GB/s",
        column,
        scale: 1e-3,
        higher_is_better: true,
        kind: Kind::Bandwidth,
    }
}

/// The operations of `osu_rma all`, in its column order. fence, fop and cas
/// have no message size (size 0 in the output and the tables).
pub const RMA_METRICS: &[Metric] = &[
    Metric {
        kind: Kind::Coll,
        ..rma_lat("fence", "fence alone", 0)
    },
    rma_lat("put_fence", "fence + put + fence", 1),
    rma_lat("get_fence", "fence + get + fence", 2),
    rma_lat("put_lock", "lock(exclusive) + put + unlock", 3),
    rma_lat("get_lock", "lock(exclusive) + get + unlock", 4),
    rma_lat("put_flush", "put + flush (in lock_all)", 5),
    rma_lat("get_flush", "get + flush (in lock_all)", 6),
    rma_lat("acc_lock", "lock(exclusive) + accumulate + unlock", 7),
    rma_lat("acc_flush", "accumulate + flush (in lock_all)", 8),
    Metric {
        kind: Kind::Coll,
        ..rma_lat("fop", "fetch_and_op int64 + flush", 9)
    },
    Metric {
        kind: Kind::Coll,
        ..rma_lat("cas", "compare_and_swap int64 + flush", 10)
    },
    rma_bw("put_bw", "put bandwidth, 64 puts per flush", 11),
    rma_bw("get_bw", "get bandwidth, 64 gets per flush", 12),
];

/// Benchmarks that mean something only across nodes: in the default set
/// only with `--nodes` (named with `--bench`, they run anywhere).
pub const ACROSS_ONLY: &[&str] = &["lat_pairs", "probe"];

/// The benchmarks a run makes when `--bench` does not say: all, those of
/// [`ACROSS_ONLY`] only across nodes.
pub fn defaults(nodes: usize) -> Vec<&'static Bench> {
    BENCHES
        .iter()
        .filter(|b| nodes > 1 || !ACROSS_ONLY.contains(&b.name))
        .collect()
}

pub const BENCHES: &[Bench] = &[
    Bench {
        name: "latency",
        what: "ping-pong MPI_Send/MPI_Recv, half the round trip (osu_latency)",
        program: "osu_p2p",
        mode_args: &["latency"],
        min_size: 0,
        style: Style::Osu,
        sizes: Sizes::Doubling,
        ranks: 0,
        iters: Iters::Osu,
        metrics: &[LAT_US],
    },
    Bench {
        name: "bw",
        what: "window of 64 MPI_Isend -> MPI_Irecv, MPI_Waitall, 4-byte ack (osu_bw)",
        program: "osu_p2p",
        mode_args: &["bw"],
        min_size: 1,
        style: Style::Osu,
        sizes: Sizes::Doubling,
        ranks: 0,
        iters: Iters::Osu,
        metrics: &[BW_GBS],
    },
    Bench {
        name: "bibw",
        what: "both ranks send a window of 64 to each other at once (osu_bibw)",
        program: "osu_p2p",
        mode_args: &["bibw"],
        min_size: 1,
        style: Style::Osu,
        sizes: Sizes::Doubling,
        ranks: 0,
        iters: Iters::Osu,
        metrics: &[Metric { title: "bidirectional bandwidth", ..BW_GBS }],
    },
    Bench {
        name: "mbw_mr",
        what: "ranks/2 pairs, rank i -> i+n/2, window of 64: aggregate bandwidth and message rate (osu_mbw_mr)",
        program: "osu_p2p",
        mode_args: &["mbw_mr"],
        min_size: 1,
        style: Style::Osu,
        sizes: Sizes::Doubling,
        ranks: 0,
        iters: Iters::Osu,
        metrics: &[
            Metric { title: "multi-pair bandwidth", ..BW_GBS },
            MSG_RATE,
        ],
    },
    Bench {
        name: "lat_pairs",
        what: "latency as above at 4 ranks, rank 0 with rank 1 then with rank 2 in the same run: across --nodes 2 (a node's ranks consecutive) a pair on one node and a pair across nodes",
        program: "osu_p2p",
        mode_args: &["latency", "-p", "1,2"],
        min_size: 0,
        style: Style::Osu,
        sizes: Sizes::Fixed(&[0, 8, 1000, 4096, 9000, 65536, 100_000, 1_048_576]),
        ranks: 4,
        iters: Iters::Osu,
        metrics: &[
            Metric { key: "r1", title: "latency, ranks 0-1 (one node)", ..LAT_US },
            Metric { key: "r2", title: "latency, ranks 0-2 (two nodes)", column: 1, ..LAT_US },
        ],
    },
    Bench {
        name: "probe",
        what: "MPI_Iprobe by rank 0 for a message rank 1 never sends, ns per call: across nodes, heapmpi's time minus stock's is what it adds to a call for a remote peer (its routing decision)",
        program: "osu_p2p",
        mode_args: &["probe"],
        min_size: 0,
        style: Style::Osu,
        sizes: Sizes::Fixed(&[0]),
        ranks: 2,
        iters: Iters::Osu,
        metrics: &[Metric { title: "MPI_Iprobe to a remote rank", unit: "ns", ..LAT_US }],
    },
    Bench {
        name: "lat_sweep",
        what: "latency as above at every power of two 1 B-64 KiB and 3 bytes either side (NetPIPE-style)",
        program: "osu_p2p",
        mode_args: &["latency"],
        min_size: 1,
        style: Style::Osu,
        sizes: Sizes::Sweep,
        ranks: 0,
        iters: Iters::Osu,
        metrics: &[LAT_US],
    },
    Bench {
        name: "lat_fresh",
        what: "latency as above, each rank rewriting its send buffer before every send as an application packing fresh data does (OMB's buffers stay in cache; the time includes the rewrite)",
        program: "osu_p2p",
        mode_args: &["latency", "-t"],
        min_size: 1,
        style: Style::Osu,
        sizes: Sizes::Fixed(&[
            8, 1000, 2048, 4096, 9000, 16384, 65536, 100_000, 262_144, 1_048_576,
        ]),
        ranks: 0,
        iters: Iters::Osu,
        metrics: &[LAT_US],
    },
    Bench {
        name: "lat_vector",
        what: "latency of a strided message, a matrix column as halo exchanges send it: MPI_Type_vector(size/8, 1, 2, MPI_DOUBLE), every other 8 bytes of a buffer twice the size (each MPI packs and unpacks it its own way; heapmpi copies by the two layouts)",
        program: "osu_p2p",
        mode_args: &["latency", "-v"],
        min_size: 8,
        style: Style::Osu,
        sizes: Sizes::Fixed(&[
            64, 1000, 4096, 9000, 16384, 65536, 100_000, 262_144, 1_048_576,
        ]),
        ranks: 0,
        iters: Iters::Osu,
        metrics: &[LAT_US],
    },
    Bench {
        name: "bw_sweep",
        what: "small-message bandwidth and message rate, window of 64 (osu_mbw_mr, one pair), sizes as lat_sweep",
        program: "osu_p2p",
        mode_args: &["mbw_mr"],
        min_size: 1,
        style: Style::Osu,
        sizes: Sizes::Sweep,
        ranks: 2,
        iters: Iters::Osu,
        metrics: &[
            Metric { title: "small-message bandwidth", ..BW_GBS },
            MSG_RATE,
        ],
    },
    Bench {
        name: "random_update",
        what: "HPCC RandomAccess MPI kernel: batches of 8-byte updates to random ranks, Isend + Irecv(ANY_SOURCE) polled by Test; size = updates per message",
        program: "random_update",
        mode_args: &[],
        min_size: 1,
        style: Style::Batches,
        sizes: Sizes::Fixed(&[1, 8, 64, 1024]),
        ranks: 2,
        iters: Iters::Osu,
        metrics: &[UPDATES],
    },
    Bench {
        name: "random_update4",
        what: "random_update at 4 ranks on the cores there are (oversubscribed stress)",
        program: "random_update",
        mode_args: &[],
        min_size: 1,
        style: Style::Batches,
        sizes: Sizes::Fixed(&[8, 64, 1024]),
        ranks: 4,
        iters: Iters::Osu,
        metrics: &[UPDATES],
    },
    Bench {
        name: "random_update8",
        what: "random_update at 8 ranks on the cores there are (oversubscribed stress)",
        program: "random_update",
        mode_args: &[],
        min_size: 1,
        style: Style::Batches,
        sizes: Sizes::Fixed(&[8, 64, 1024]),
        ranks: 8,
        iters: Iters::Osu,
        metrics: &[UPDATES],
    },
    Bench {
        name: "coll",
        what: "collectives (osu_barrier, osu_bcast, osu_reduce, osu_allreduce, osu_allgather, osu_alltoall, osu_gather, osu_scatter; bcast also with a rotating root; a halo exchange, MPI_Neighbor_alltoall on a periodic 2-D Cartesian grid): us per call, max over ranks",
        program: "osu_coll",
        mode_args: &["all"],
        min_size: 3,
        style: Style::Osu,
        sizes: Sizes::Coll,
        ranks: 2,
        iters: Iters::Osu,
        metrics: COLL_METRICS,
    },
    Bench {
        name: "coll4",
        what: "the collectives at 4 ranks on the cores there are (oversubscribed, unbound), a few sizes, 20 iterations after 2 warm-up ones",
        program: "osu_coll",
        mode_args: &["all"],
        min_size: 3,
        style: Style::Osu,
        sizes: Sizes::CollFew,
        ranks: 4,
        iters: Iters::Fixed { iters: 20, skip: 2 },
        metrics: COLL_METRICS,
    },
    Bench {
        name: "nbc",
        what: "nonblocking collectives at 2 ranks (osu_ibarrier, osu_ibcast, osu_ireduce, osu_iallreduce): pure communication time (post + MPI_Wait, us per call, max over ranks) and OMB's overlap with a dummy computation of that length (%)",
        program: "osu_coll",
        mode_args: &["nbc", "-e"],
        min_size: 3,
        style: Style::Osu,
        sizes: Sizes::Nbc,
        ranks: 2,
        iters: Iters::Osu,
        metrics: NBC_METRICS,
    },
    Bench {
        name: "rma",
        what: "one-sided, window from MPI_Win_allocate, rank 0 -> rank 1: fence alone; put/get in fence epochs, lock/unlock, flush; accumulate; fetch_and_op; compare_and_swap (us); put/get bandwidth, 64 per flush (osu_put_latency, osu_get_latency, osu_acc_latency, osu_fop_latency, osu_cas_latency, osu_put_bw, osu_get_bw)",
        program: "osu_rma",
        mode_args: &["all"],
        min_size: 1,
        style: Style::Osu,
        sizes: Sizes::Rma,
        ranks: 2,
        iters: Iters::Osu,
        metrics: RMA_METRICS,
    },
    Bench {
        name: "rma_create",
        what: "the one-sided operations on a window from MPI_Alloc_mem + MPI_Win_create, a few sizes",
        program: "osu_rma",
        mode_args: &["all", "-W", "create"],
        min_size: 1,
        style: Style::Osu,
        sizes: Sizes::RmaFew,
        ranks: 2,
        iters: Iters::Osu,
        metrics: RMA_METRICS,
    },
    Bench {
        name: "malloc",
        what: "malloc/free throughput of rank 0 after MPI_Init: shared heap vs glibc",
        program: "malloc_bench",
        mode_args: &[],
        min_size: 16,
        style: Style::TimeScale,
        sizes: Sizes::Doubling,
        ranks: 0,
        iters: Iters::Osu,
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
pub const PROGRAMS: &[&str] = &[
    "osu_p2p",
    "osu_coll",
    "osu_rma",
    "malloc_bench",
    "random_update",
];

pub fn find(name: &str) -> Option<&'static Bench> {
    BENCHES.iter().find(|b| b.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep() {
        let v = sweep_sizes();
        assert_eq!(&v[..8], &[1, 2, 4, 5, 7, 8, 11, 13]);
        assert_eq!(&v[v.len() - 3..], &[65533, 65536, 65539]);
        assert!(v.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn colls() {
        let v = coll_sizes();
        assert_eq!(v.len(), 23);
        assert_eq!(&v[..3], &[3, 4, 8]);
        assert_eq!(*v.last().unwrap(), 1 << 20);
        assert!(v.contains(&65539) && v.contains(&1000));
        let b = find("coll").unwrap();
        assert!(b.is_coll() && !find("latency").unwrap().is_coll());
        for (i, m) in COLL_METRICS.iter().enumerate() {
            assert_eq!(m.column, i);
        }
    }

    #[test]
    fn nbc() {
        let b = find("nbc").unwrap();
        assert!(b.is_coll() && b.is_nbc() && b.side_by_side() && !find("coll").unwrap().is_nbc());
        assert_eq!(b.mode_args, ["nbc", "-e"]);
        assert!(NBC_SIZES.windows(2).all(|w| w[0] < w[1]));
        // both sides of the 1 KiB heap limit, off the powers of two, up to 1 MiB
        for s in [1000, 1016, 1024, 1025, 1032, 65539, 1 << 20] {
            assert!(NBC_SIZES.contains(&s));
        }
        assert!(NBC_QUICK_SIZES.iter().all(|s| NBC_SIZES.contains(s)));
        // time, overlap, exposed time, ... in osu_coll -e's column order
        for (i, m) in NBC_METRICS.iter().enumerate() {
            assert_eq!(m.column, i);
            let (ovl, exp) = (i % 3 == 1, i % 3 == 2);
            assert_eq!(m.key.ends_with("_ovl"), ovl);
            assert_eq!(m.key.ends_with("_exp"), exp);
            assert_eq!(m.kind == Kind::Percent, ovl);
            assert_eq!(m.higher_is_better, ovl);
            if ovl || exp {
                let base = NBC_METRICS[i - i % 3].key;
                assert_eq!(m.key, format!("{base}_{}", if ovl { "ovl" } else { "exp" }));
            }
        }
    }

    #[test]
    fn rma() {
        let v = rma_sizes();
        assert_eq!(v.len(), 26);
        assert_eq!(&v[..4], &[1, 2, 3, 4]);
        assert_eq!(*v.last().unwrap(), 1 << 20);
        assert!(v.contains(&100_000) && v.contains(&5000));
        for name in ["rma", "rma_create"] {
            let b = find(name).unwrap();
            assert!(b.is_rma() && b.side_by_side() && !b.is_coll());
        }
        for (i, m) in RMA_METRICS.iter().enumerate() {
            assert_eq!(m.column, i);
        }
        assert!(find("coll").unwrap().side_by_side() && !find("bw").unwrap().side_by_side());
    }
}
