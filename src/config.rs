//! Run-time settings, read once from `HEAPMPI_*` environment variables.
//!
//! This table is every `HEAPMPI_*` variable a user sets. The library reads
//! all but `HEAPMPI_MPI`, `HEAPMPI_LIB`, `HEAPMPI_ROOT` and
//! `HEAPMPI_VERBOSE`, which only the scripts in `wrappers/` read.
//! `docs/settings.md` holds the same table: the test
//! `docs_settings_md_matches_this_table` below fails when the two differ and
//! prints the table to paste there.
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `HEAPMPI_DISABLE=1` | pass everything straight to glibc and the real MPI; given to some nodes only, those nodes run without a heap and the others keep theirs | off |
//! | `HEAPMPI_HEAP_SIZE` | shared heap per node-local rank: bytes, or with a `K`/`M`/`G`/`T` suffix; from 256K to 16T | `64G` |
//! | `HEAPMPI_SHM` | where the heap's memory lives: `memfd` (an anonymous file the node's ranks open through `/proc`, bounded by memory, not by `/dev/shm`'s size) or `posix` (an object in `/dev/shm`, unlinked once every rank holds it); local rank 0's setting decides, and `memfd` falls back to `posix` where it cannot be shared | `memfd` |
//! | `HEAPMPI_STATS=1` | one line per rank on stderr at `MPI_Finalize`: the heap, its allocations, and what point-to-point, collectives and one-sided did (see "The `HEAPMPI_STATS` report") | off |
//! | `HEAPMPI_PROFILE=1\|FILE` | time every MPI call heapmpi defines and print one job-wide table on rank 0's stderr at `MPI_Finalize`; a file name also gets the table as CSV (if any rank asks, all take part; see "Where the time goes") | off |
//! | `HEAPMPI_P2P=0` | keep the shared heap but send point-to-point through the real MPI (if any rank has it, all ranks do) | on |
//! | `HEAPMPI_IMMEDIATE_MAX` | largest message sent inline with its header (immediate protocol); at most 128K-64 | `2K` |
//! | `HEAPMPI_SYNERGY_MIN` | smallest message the sender helps copy (synergistic protocol) | `256K` |
//! | `HEAPMPI_BLOCK_SIZE` | block size of the synergistic copy; from 4K to 1G | `128K` |
//! | `HEAPMPI_EAGER_MAX` | largest standard-mode send copied to a shared buffer once its sender has waited 50 µs for a receiver that has not taken it (programs that rely on eager buffering, as many do, do not deadlock) | `64K` |
//! | `HEAPMPI_QUEUE=lockfree\|lock` | discipline of each rank's global incoming queue (if any rank asks for `lock`, all use it) | `lockfree` |
//! | `HEAPMPI_FASTBOX_SIZE` | bytes of each per-pair fast box, rounded up to a power of two, at least 1K; `0`: no fast boxes | `16K` |
//! | `HEAPMPI_FASTBOX_MAX` | largest message sent through a fast box; at most `HEAPMPI_IMMEDIATE_MAX` and a quarter of the box less 32 B | `2K` |
//! | `HEAPMPI_COLL=0` | keep the collectives in the real MPI (if any rank has it, all ranks do) | on |
//! | `HEAPMPI_RMA=0` | keep one-sided communication (windows, `MPI_Alloc_mem`) in the real MPI (if any rank has it, all ranks do) | on |
//! | `HEAPMPI_COLL_INLINE` | bytes of collective payload carried inline in a rank's cell (up to 32 B share the flag's cache line, more start on the next line; larger payloads are read in place); at most 1M | `1K` |
//! | `HEAPMPI_COLL_RADIX` | fan-out (1 to 64) of the collectives' trees: the barrier's, used when a node has more than radix + 1 of the communicator's ranks or ranks outnumber cores, and that of small commutative `Reduce`/`Allreduce` on more than radix + 1 ranks | `4` |
//! | `HEAPMPI_MPI=openmpi\|mpich` | `heapmpirun`, `heapmpi-exec`, `heapmpicc`: which MPI when `ldd` of the program (or `MPICC`) does not tell, as for `python3 app.py` | `heapmpi-exec`: the launcher's variables, then the MPI of `mpirun` on `PATH`; `heapmpirun`: the latter |
//! | `HEAPMPI_LIB` | `heapmpirun`, `heapmpi-exec`: the library to preload | the build of the program's MPI |
//! | `HEAPMPI_ROOT` | `heapmpirun`, `heapmpi-exec`, `heapmpicc`: the checkout or installed tree to take builds from (the modules set it) | the wrapper's own |
//! | `HEAPMPI_VERBOSE=1` | `heapmpirun`, `heapmpi-exec`, `heapmpicc`: print the command or decision to stderr | off |
//! | `HEAPMPI_CHECK=1` | debugging: a canary after every block of the shared heap, checked at `free`, `realloc`, `malloc_usable_size` and when the block is a point-to-point buffer; other ranks' blocks read-only in each rank and a guard page after each rank's part, so a stale or wild pointer into another rank's memory faults; each hit aborts with one line naming the rank whose memory it is and the block (if any rank has it, all ranks do; [debugging](debugging.md)) | off |
//! | `HEAPMPI_TEST_NODE_SIZE=N` | test only: group world ranks into pretend nodes of N consecutive ranks, so multi-node paths run on one machine | off |
//! | `HEAPMPI_TEST_ADDR_CONFLICTS=N` | test only: the last node-local rank refuses the first N proposed heap addresses, to exercise the retry path | 0 |
//!
//! The snapshot is taken when the library is loaded (see `lib.rs`), so a
//! program that edits its environment later does not change heapmpi's
//! behaviour half-way; if the constructor did not run (static linking into an
//! unusual runtime) it is taken on first use instead.

use std::sync::OnceLock;

/// Default shared-heap part per local rank. The region is virtual and pages
/// are committed only as the allocator grows into them, so a large default
/// costs address space only (47 bits = 128 TiB are available).
pub const DEFAULT_HEAP_SIZE: usize = 64 << 30;
/// Smallest accepted part (anything smaller is raised to this).
pub const MIN_HEAP_SIZE: usize = 256 << 10;
/// Largest accepted part.
pub const MAX_HEAP_SIZE: usize = 16 << 40;

/// Default of `HEAPMPI_IMMEDIATE_MAX`.
pub const DEFAULT_IMMEDIATE_MAX: usize = 2 << 10;
/// Largest accepted `HEAPMPI_IMMEDIATE_MAX` (the header pool's largest class).
pub const MAX_IMMEDIATE: usize = (128 << 10) - 64;
/// Default of `HEAPMPI_SYNERGY_MIN`.
pub const DEFAULT_SYNERGY_MIN: usize = 256 << 10;
/// Default of `HEAPMPI_BLOCK_SIZE`.
pub const DEFAULT_BLOCK_SIZE: usize = 128 << 10;
/// Default of `HEAPMPI_EAGER_MAX`.
pub const DEFAULT_EAGER_MAX: usize = 64 << 10;
/// Default of `HEAPMPI_FASTBOX_SIZE`.
pub const DEFAULT_FASTBOX_SIZE: usize = 16 << 10;
/// Default of `HEAPMPI_FASTBOX_MAX`.
pub const DEFAULT_FASTBOX_MAX: usize = 2 << 10;
/// Default of `HEAPMPI_COLL_INLINE`. Measured on 2 ranks with buffers
/// rewritten before every call (`bench/run` numbers flatter reads in place,
/// whose source stays in the reader's cache otherwise): at 2-4 KiB an
/// allreduce split over in-place reads takes 0.7-0.9 us against 1.1-1.5
/// through the cells, broadcast and allgather are even, and from 8 KiB
/// reads in place win everywhere.
pub const DEFAULT_COLL_INLINE: usize = 1 << 10;

/// The settings heapmpi runs with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Everything passes through (`HEAPMPI_DISABLE`).
    pub disable: bool,
    /// Bytes of shared heap per node-local rank (`HEAPMPI_HEAP_SIZE`).
    pub heap_size: usize,
    /// The heap's memory is a memfd shared through `/proc` (`HEAPMPI_SHM`,
    /// default) rather than a POSIX object in `/dev/shm`.
    pub shm_memfd: bool,
    /// Print per-rank statistics at `MPI_Finalize` (`HEAPMPI_STATS`).
    pub stats: bool,
    /// Canaries after the shared heap's blocks (`HEAPMPI_CHECK`).
    pub check: bool,
    /// Time every MPI call and print the job's profile at `MPI_Finalize`
    /// (`HEAPMPI_PROFILE`): `None` off, `Some("")` on stderr, `Some(file)`
    /// on stderr and as CSV in `file`.
    pub profile: Option<String>,
    /// Point-to-point through heapmpi (`HEAPMPI_P2P`).
    pub p2p: bool,
    /// Largest inline payload (`HEAPMPI_IMMEDIATE_MAX`).
    pub immediate_max: usize,
    /// Smallest synergistic message (`HEAPMPI_SYNERGY_MIN`).
    pub synergy_min: usize,
    /// Synergistic block size (`HEAPMPI_BLOCK_SIZE`).
    pub block_size: usize,
    /// Largest standard send staged when its receiver is late
    /// (`HEAPMPI_EAGER_MAX`).
    pub eager_max: usize,
    /// Lock-free global queue (`HEAPMPI_QUEUE=lockfree`, default) or locked.
    pub queue_lockfree: bool,
    /// Bytes of each fast box (`HEAPMPI_FASTBOX_SIZE`, 0: none).
    pub fastbox_size: usize,
    /// Largest fast-box message (`HEAPMPI_FASTBOX_MAX`).
    pub fastbox_max: usize,
    /// Collectives through heapmpi (`HEAPMPI_COLL`).
    pub coll: bool,
    /// One-sided communication through heapmpi (`HEAPMPI_RMA`).
    pub rma: bool,
    /// Inline bytes per collective cell (`HEAPMPI_COLL_INLINE`).
    pub coll_inline: usize,
    /// Fan-out of the collectives' trees (`HEAPMPI_COLL_RADIX`).
    pub coll_radix: usize,
    /// Test only: group world ranks into pretend nodes of this size.
    pub test_node_size: Option<usize>,
    /// Test only: how many proposed addresses one rank pretends to have in use.
    pub test_addr_conflicts: u32,
    /// Problems found while reading the variables, reported once at init.
    pub problems: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            disable: false,
            heap_size: DEFAULT_HEAP_SIZE,
            shm_memfd: true,
            stats: false,
            check: false,
            profile: None,
            p2p: true,
            immediate_max: DEFAULT_IMMEDIATE_MAX,
            synergy_min: DEFAULT_SYNERGY_MIN,
            block_size: DEFAULT_BLOCK_SIZE,
            eager_max: DEFAULT_EAGER_MAX,
            queue_lockfree: true,
            fastbox_size: DEFAULT_FASTBOX_SIZE,
            fastbox_max: DEFAULT_FASTBOX_MAX,
            coll: true,
            rma: true,
            coll_inline: DEFAULT_COLL_INLINE,
            coll_radix: 4,
            test_node_size: None,
            test_addr_conflicts: 0,
            problems: Vec::new(),
        }
    }
}

/// True for the usual spellings of "on"; false for unset, empty, `0`, `no`,
/// `off`, `false`.
fn flag(v: Option<&str>) -> bool {
    match v.map(str::trim) {
        None | Some("") => false,
        Some(s) => !matches!(
            s.to_ascii_lowercase().as_str(),
            "0" | "no" | "off" | "false"
        ),
    }
}

/// `HEAPMPI_PROFILE`: off for unset and the "off" words, stderr only for
/// the "on" words (`1`, `yes`, `on`, `true`), else a file name for the CSV.
fn profile_setting(v: Option<&str>) -> Option<String> {
    let s = v.map(str::trim).filter(|s| flag(Some(s)))?;
    if matches!(s.to_ascii_lowercase().as_str(), "1" | "yes" | "on" | "true") {
        Some(String::new())
    } else {
        Some(s.to_string())
    }
}

/// Parses a byte count such as `4096`, `64K`, `512M`, `2G`, `1T` (binary
/// multiples; an optional trailing `B`/`iB` is accepted).
pub fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let s = s
        .strip_suffix("iB")
        .or_else(|| s.strip_suffix("ib"))
        .or_else(|| s.strip_suffix('B'))
        .or_else(|| s.strip_suffix('b'))
        .unwrap_or(s);
    let (digits, shift) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 10),
        'm' | 'M' => (&s[..s.len() - 1], 20),
        'g' | 'G' => (&s[..s.len() - 1], 30),
        't' | 'T' => (&s[..s.len() - 1], 40),
        _ => (s, 0),
    };
    let n: usize = digits.trim().parse().ok()?;
    n.checked_mul(1usize << shift)
}

impl Config {
    /// Reads the settings through `get` (the environment, or a table in tests).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Config {
        let mut c = Config {
            disable: flag(get("HEAPMPI_DISABLE").as_deref()),
            stats: flag(get("HEAPMPI_STATS").as_deref()),
            check: flag(get("HEAPMPI_CHECK").as_deref()),
            profile: profile_setting(get("HEAPMPI_PROFILE").as_deref()),
            ..Config::default()
        };
        if let Some(v) = get("HEAPMPI_HEAP_SIZE") {
            match parse_size(&v) {
                Some(0) => c
                    .problems
                    .push("HEAPMPI_HEAP_SIZE=0 is not a heap size; using the default".into()),
                Some(n) => c.heap_size = n.clamp(MIN_HEAP_SIZE, MAX_HEAP_SIZE),
                None => c.problems.push(format!(
                    "HEAPMPI_HEAP_SIZE={v:?} is not a size (examples: 1073741824, 512M, 2G); using the default"
                )),
            }
        }
        if let Some(v) = get("HEAPMPI_SHM") {
            match v.trim().to_ascii_lowercase().as_str() {
                "memfd" | "" => c.shm_memfd = true,
                "posix" | "shm" | "dev-shm" => c.shm_memfd = false,
                _ => c.problems.push(format!(
                    "HEAPMPI_SHM={v:?} is not 'memfd' or 'posix'; using memfd"
                )),
            }
        }
        if let Some(v) = get("HEAPMPI_P2P") {
            c.p2p = v.trim().is_empty() || flag(Some(&v));
        }
        if let Some(v) = get("HEAPMPI_COLL") {
            c.coll = v.trim().is_empty() || flag(Some(&v));
        }
        if let Some(v) = get("HEAPMPI_RMA") {
            c.rma = v.trim().is_empty() || flag(Some(&v));
        }
        let mut size_var = |name: &str, slot: &mut usize, lo: usize, hi: usize| {
            if let Some(v) = get(name) {
                match parse_size(&v) {
                    Some(n) => *slot = n.clamp(lo, hi),
                    None => c.problems.push(format!(
                        "{name}={v:?} is not a size (examples: 4096, 64K, 1M); using the default"
                    )),
                }
            }
        };
        let (mut imm, mut syn, mut blk, mut eager) =
            (c.immediate_max, c.synergy_min, c.block_size, c.eager_max);
        size_var("HEAPMPI_IMMEDIATE_MAX", &mut imm, 0, MAX_IMMEDIATE);
        size_var("HEAPMPI_SYNERGY_MIN", &mut syn, 0, usize::MAX);
        size_var("HEAPMPI_BLOCK_SIZE", &mut blk, 4096, 1 << 30);
        size_var("HEAPMPI_EAGER_MAX", &mut eager, 0, usize::MAX);
        (c.immediate_max, c.synergy_min, c.block_size, c.eager_max) = (imm, syn, blk, eager);
        let mut coll_inline = c.coll_inline;
        size_var("HEAPMPI_COLL_INLINE", &mut coll_inline, 0, 1 << 20);
        c.coll_inline = coll_inline;
        let (mut fb_size, mut fb_max) = (c.fastbox_size, c.fastbox_max);
        size_var("HEAPMPI_FASTBOX_SIZE", &mut fb_size, 0, 1 << 30);
        size_var("HEAPMPI_FASTBOX_MAX", &mut fb_max, 0, MAX_IMMEDIATE);
        c.fastbox_size = match fb_size {
            0 => 0,
            n => n.max(1 << 10).next_power_of_two(),
        };
        c.fastbox_max = fb_max
            .min(c.immediate_max)
            .min((c.fastbox_size / 4).saturating_sub(crate::p2p::fastbox::REC_HDR));
        if let Some(v) = get("HEAPMPI_COLL_RADIX") {
            match v.trim().parse::<usize>() {
                Ok(n) if (1..=64).contains(&n) => c.coll_radix = n,
                _ => c.problems.push(format!(
                    "HEAPMPI_COLL_RADIX={v:?} is not a fan-out from 1 to 64; using 4"
                )),
            }
        }
        if let Some(v) = get("HEAPMPI_QUEUE") {
            match v.trim().to_ascii_lowercase().as_str() {
                "lockfree" | "lock-free" | "" => c.queue_lockfree = true,
                "lock" | "locked" => c.queue_lockfree = false,
                _ => c.problems.push(format!(
                    "HEAPMPI_QUEUE={v:?} is not 'lockfree' or 'lock'; using lockfree"
                )),
            }
        }
        if let Some(v) = get("HEAPMPI_TEST_NODE_SIZE") {
            match v.trim().parse::<usize>() {
                Ok(n) if n >= 1 => c.test_node_size = Some(n),
                _ => c.problems.push(format!(
                    "HEAPMPI_TEST_NODE_SIZE={v:?} is not a positive integer; ignored"
                )),
            }
        }
        if let Some(v) = get("HEAPMPI_TEST_ADDR_CONFLICTS") {
            match v.trim().parse::<u32>() {
                Ok(n) => c.test_addr_conflicts = n,
                Err(_) => c.problems.push(format!(
                    "HEAPMPI_TEST_ADDR_CONFLICTS={v:?} is not a count; ignored"
                )),
            }
        }
        c
    }

    /// Reads the settings from the process environment.
    pub fn from_env() -> Config {
        Config::from_lookup(|k| std::env::var(k).ok())
    }
}

static CONFIG: OnceLock<Config> = OnceLock::new();

/// The process's settings (read on first call).
pub fn get() -> &'static Config {
    CONFIG.get_or_init(Config::from_env)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(pairs: &[(&str, &str)]) -> Config {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("64K"), Some(64 << 10));
        assert_eq!(parse_size("512m"), Some(512 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("2GiB"), Some(2 << 30));
        assert_eq!(parse_size("1TB"), Some(1 << 40));
        assert_eq!(parse_size(" 8 M "), Some(8 << 20));
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("G"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("1.5G"), None);
        assert_eq!(parse_size("99999999999999999999T"), None);
        assert_eq!(parse_size("18014398509481984T"), None); // overflows
    }

    #[test]
    fn defaults_and_flags() {
        let c = cfg(&[]);
        assert_eq!(c, Config::default());
        assert!(cfg(&[("HEAPMPI_DISABLE", "1")]).disable);
        assert!(cfg(&[("HEAPMPI_DISABLE", "yes")]).disable);
        assert!(!cfg(&[("HEAPMPI_DISABLE", "0")]).disable);
        assert!(!cfg(&[("HEAPMPI_DISABLE", "")]).disable);
        assert!(!cfg(&[("HEAPMPI_STATS", "off")]).stats);
        assert!(cfg(&[("HEAPMPI_STATS", "1")]).stats);
        assert_eq!(cfg(&[]).profile, None);
        assert_eq!(cfg(&[("HEAPMPI_PROFILE", "0")]).profile, None);
        assert_eq!(
            cfg(&[("HEAPMPI_PROFILE", "1")]).profile.as_deref(),
            Some("")
        );
        assert_eq!(
            cfg(&[("HEAPMPI_PROFILE", "/tmp/p.csv")]).profile.as_deref(),
            Some("/tmp/p.csv")
        );
    }

    #[test]
    fn heap_size_bounds_and_problems() {
        assert_eq!(cfg(&[("HEAPMPI_HEAP_SIZE", "4M")]).heap_size, 4 << 20);
        assert_eq!(cfg(&[("HEAPMPI_HEAP_SIZE", "1K")]).heap_size, MIN_HEAP_SIZE);
        assert_eq!(
            cfg(&[("HEAPMPI_HEAP_SIZE", "1000T")]).heap_size,
            MAX_HEAP_SIZE
        );
        let c = cfg(&[("HEAPMPI_HEAP_SIZE", "lots")]);
        assert_eq!(c.heap_size, DEFAULT_HEAP_SIZE);
        assert_eq!(c.problems.len(), 1);
        let c = cfg(&[
            ("HEAPMPI_TEST_NODE_SIZE", "0"),
            ("HEAPMPI_TEST_ADDR_CONFLICTS", "x"),
        ]);
        assert_eq!(c.test_node_size, None);
        assert_eq!(c.problems.len(), 2);
        assert_eq!(
            cfg(&[("HEAPMPI_TEST_NODE_SIZE", "2")]).test_node_size,
            Some(2)
        );
    }

    #[test]
    fn fast_box_sizes_are_powers_of_two_and_payloads_fit() {
        let c = cfg(&[]);
        assert_eq!((c.fastbox_size, c.fastbox_max), (16 << 10, 2 << 10));
        let c = cfg(&[("HEAPMPI_FASTBOX_SIZE", "5000")]);
        assert_eq!(c.fastbox_size, 8192);
        // A quarter of the box, less a record header.
        assert_eq!(c.fastbox_max, 2048 - 32);
        let c = cfg(&[("HEAPMPI_FASTBOX_SIZE", "10")]);
        assert_eq!((c.fastbox_size, c.fastbox_max), (1024, 256 - 32));
        let c = cfg(&[("HEAPMPI_FASTBOX_SIZE", "0")]);
        assert_eq!((c.fastbox_size, c.fastbox_max), (0, 0));
        // Never above the immediate limit.
        let c = cfg(&[("HEAPMPI_IMMEDIATE_MAX", "100")]);
        assert_eq!(c.fastbox_max, 100);
        let c = cfg(&[("HEAPMPI_FASTBOX_MAX", "64")]);
        assert_eq!(c.fastbox_max, 64);
    }

    /// The table of this module's doc, as it must appear in
    /// `docs/settings.md`: the lines starting `//! |`, without the `//! `.
    fn settings_table() -> String {
        include_str!("config.rs")
            .lines()
            .take_while(|l| l.starts_with("//!"))
            .filter_map(|l| l.strip_prefix("//! "))
            .filter(|l| l.starts_with('|'))
            .map(|l| format!("{l}\n"))
            .collect()
    }

    /// `docs/settings.md` is generated from the table above: it must hold
    /// that table exactly (one run of lines starting with `|`), with prose
    /// around it.
    #[test]
    fn docs_settings_md_matches_this_table() {
        let want = settings_table();
        assert!(
            want.starts_with("| variable | meaning | default |\n|---|"),
            "no settings table in src/config.rs's module doc"
        );
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/settings.md");
        let doc =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
        let lines: Vec<&str> = doc.lines().collect();
        let first = lines
            .iter()
            .position(|l| l.starts_with("| variable |"))
            .unwrap_or(lines.len());
        let have: String = lines[first..]
            .iter()
            .take_while(|l| l.starts_with('|'))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(
            have == want,
            "docs/settings.md's table differs from the one in src/config.rs's module doc \
             (the source of truth); replace the table in docs/settings.md with:\n\n{want}"
        );
        let rest = lines[first..]
            .iter()
            .filter(|l| l.starts_with("| variable |"))
            .count();
        assert_eq!(
            rest, 1,
            "docs/settings.md must hold the settings table once"
        );
    }

    /// Every variable this file reads (a `"HEAPMPI_..."` literal outside
    /// the tests) is in the table.
    #[test]
    fn every_variable_read_here_is_in_the_table() {
        let table = settings_table();
        let src = include_str!("config.rs");
        let code = &src[..src.find("#[cfg(test)]").unwrap()];
        let mut read = 0;
        for part in code.split("\"HEAPMPI_").skip(1) {
            let end = part
                .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                .unwrap_or(part.len());
            let name = &part[..end];
            assert!(
                table.contains(&format!("`HEAPMPI_{name}")),
                "HEAPMPI_{name} is read in src/config.rs but not in its settings table"
            );
            read += 1;
        }
        assert!(read >= 18, "found only {read} variables read");
    }
}
