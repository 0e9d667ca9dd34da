//! HPC Challenge in the application suite: the input
//! (bench/apps/hpcc/hpccinf.txt with the run's N and process grid), its
//! summary figures (every component) and its own verification lines.

use super::*;

pub(super) fn prepare_hpcc(ctx: &Ctx, bin: PathBuf) -> Result<Prepared, String> {
    let (p, q) = grid(ctx.ranks);
    let text = template(
        &ctx.src.join("hpcc/hpccinf.txt"),
        &[
            ("N", HPCC_N.to_string()),
            ("P", p.to_string()),
            ("Q", q.to_string()),
        ],
    )?;
    let input = ctx.dir.join("hpccinf.txt");
    write(&input, &text)?;
    Ok(Prepared {
        bin,
        args: vec![],
        env: vec![],
        files: vec![(input, "hpccinf.txt".into())],
        what: format!(
            "hpcc 1.5, every test: HPL N={HPCC_N} NB=80 on a {p}x{q} grid, PTRANS, \
             RandomAccess, STREAM, FFT, DGEMM, latency/bandwidth"
        ),
    })
}

/// (HPCC summary key, title, unit, scale, higher is better): every
/// component HPCC reports in its summary.
pub const HPCC_METRICS: &[(&str, &str, &str, f64, bool)] = &[
    ("HPL_Tflops", "HPL", "Gflop/s", 1e3, true),
    ("PTRANS_GBs", "PTRANS", "GB/s", 1.0, true),
    (
        "MPIRandomAccess_GUPs",
        "MPIRandomAccess",
        "GUP/s",
        1.0,
        true,
    ),
    (
        "MPIRandomAccess_LCG_GUPs",
        "MPIRandomAccess LCG",
        "GUP/s",
        1.0,
        true,
    ),
    ("MPIFFT_Gflops", "MPIFFT", "Gflop/s", 1.0, true),
    (
        "NaturallyOrderedRingLatency_usec",
        "naturally ordered ring latency",
        "us",
        1.0,
        false,
    ),
    (
        "RandomlyOrderedRingLatency_usec",
        "randomly ordered ring latency",
        "us",
        1.0,
        false,
    ),
    (
        "NaturallyOrderedRingBandwidth_GBytes",
        "naturally ordered ring bandwidth",
        "GB/s",
        1.0,
        true,
    ),
    (
        "RandomlyOrderedRingBandwidth_GBytes",
        "randomly ordered ring bandwidth",
        "GB/s",
        1.0,
        true,
    ),
    (
        "MinPingPongLatency_usec",
        "ping-pong latency min",
        "us",
        1.0,
        false,
    ),
    (
        "AvgPingPongLatency_usec",
        "ping-pong latency avg",
        "us",
        1.0,
        false,
    ),
    (
        "MaxPingPongLatency_usec",
        "ping-pong latency max",
        "us",
        1.0,
        false,
    ),
    (
        "MinPingPongBandwidth_GBytes",
        "ping-pong bandwidth min",
        "GB/s",
        1.0,
        true,
    ),
    (
        "AvgPingPongBandwidth_GBytes",
        "ping-pong bandwidth avg",
        "GB/s",
        1.0,
        true,
    ),
    (
        "MaxPingPongBandwidth_GBytes",
        "ping-pong bandwidth max",
        "GB/s",
        1.0,
        true,
    ),
    ("StarDGEMM_Gflops", "StarDGEMM", "Gflop/s", 1.0, true),
    ("SingleDGEMM_Gflops", "SingleDGEMM", "Gflop/s", 1.0, true),
    ("StarSTREAM_Copy", "StarSTREAM Copy", "GB/s", 1.0, true),
    ("StarSTREAM_Scale", "StarSTREAM Scale", "GB/s", 1.0, true),
    ("StarSTREAM_Add", "StarSTREAM Add", "GB/s", 1.0, true),
    ("StarSTREAM_Triad", "StarSTREAM Triad", "GB/s", 1.0, true),
    ("SingleSTREAM_Copy", "SingleSTREAM Copy", "GB/s", 1.0, true),
    (
        "SingleSTREAM_Scale",
        "SingleSTREAM Scale",
        "GB/s",
        1.0,
        true,
    ),
    ("SingleSTREAM_Add", "SingleSTREAM Add", "GB/s", 1.0, true),
    (
        "SingleSTREAM_Triad",
        "SingleSTREAM Triad",
        "GB/s",
        1.0,
        true,
    ),
    (
        "StarRandomAccess_GUPs",
        "StarRandomAccess",
        "GUP/s",
        1.0,
        true,
    ),
    (
        "SingleRandomAccess_GUPs",
        "SingleRandomAccess",
        "GUP/s",
        1.0,
        true,
    ),
    (
        "StarRandomAccess_LCG_GUPs",
        "StarRandomAccess LCG",
        "GUP/s",
        1.0,
        true,
    ),
    (
        "SingleRandomAccess_LCG_GUPs",
        "SingleRandomAccess LCG",
        "GUP/s",
        1.0,
        true,
    ),
    ("StarFFT_Gflops", "StarFFT", "Gflop/s", 1.0, true),
    ("SingleFFT_Gflops", "SingleFFT", "Gflop/s", 1.0, true),
];

/// Summary keys that are verification results (compared, not timed).
pub(super) const HPCC_CHECK_KEYS: &[&str] = &[
    "Success",
    "PTRANS_residual",
    "MPIRandomAccess_Errors",
    "MPIRandomAccess_LCG_Errors",
    "MPIFFT_maxErr",
];

pub(super) fn hpcc_summary(text: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let mut inside = false;
    for l in text.lines() {
        let t = l.trim();
        if t.starts_with("Begin of Summary section") {
            inside = true;
        } else if t.starts_with("End of Summary section") {
            break;
        } else if inside {
            if let Some((k, v)) = t.split_once('=') {
                m.insert(k.trim().to_string(), v.trim().to_string());
            }
        }
    }
    m
}

/// HPCC's own verification: the residual checks (PASSED/FAILED), the
/// errors RandomAccess found, and the summary's verification values.
/// Timings on the same lines (PTRANS's TIME and GB/s columns) are dropped.
pub fn hpcc_verification(text: &str) -> Vec<String> {
    let mut v = vec![];
    for l in text.lines() {
        let t = l.trim();
        let verdict = t.contains("PASSED") || t.contains("FAILED");
        if t.starts_with("Found ") && t.contains(" errors in ") {
            v.push(norm(t));
        } else if verdict && t.starts_with("CPU") {
            // PTRANS prints a test's CPU row only when its CPU time is above
            // 0 (clock ticks): a fast transpose has none. Its verdict and
            // residual are those of the WALL row before it.
            continue;
        } else if verdict && t.starts_with("WALL") {
            // PTRANS: TIME M N MB NB P Q TIME CHECK GB/s RESID
            let f: Vec<&str> = t.split_whitespace().collect();
            let keep: Vec<&str> = f
                .iter()
                .enumerate()
                .filter(|(i, _)| *i <= 6 || *i == 8 || *i == 10)
                .map(|(_, s)| *s)
                .collect();
            v.push(format!("PTRANS {}", keep.join(" ")));
        } else if verdict || t.contains("residual checks") {
            v.push(norm(t));
        }
    }
    let s = hpcc_summary(text);
    for k in HPCC_CHECK_KEYS {
        if let Some(x) = s.get(*k) {
            v.push(format!("{k}={x}"));
        }
    }
    v
}

pub(super) fn extract_hpcc(text: &str) -> Result<Extract, String> {
    let s = hpcc_summary(text);
    if s.is_empty() {
        return Err("no summary section in hpccoutf.txt".into());
    }
    let physics = hpcc_verification(text);
    if !physics.iter().any(|l| l.contains("PASSED")) {
        return Err("no PASSED/FAILED verification line in hpccoutf.txt".into());
    }
    let mut metrics = vec![];
    for (key, title, unit, scale, hib) in HPCC_METRICS {
        if let Some(x) = s.get(*key).and_then(|x| x.parse::<f64>().ok()) {
            if x.is_finite() && x > 0.0 {
                metrics.push((AppMetric::new(key, title, unit, *hib), x * scale));
            }
        }
    }
    Ok(Extract { physics, metrics })
}
