//! Which association the MPI underneath uses for a reduction: its fixed
//! decisions by communicator size and bytes (Open MPI 4.1's
//! `coll_tuned_decision_fixed.c`, MPICH 4.0's `MPIR_Allreduce_intra_auto`
//! and `MPIR_Reduce_intra_auto`), the scans' orders (Open MPI's linear
//! fold, MPICH's recursive doubling), and whether the environment changed
//! the MPI's rules, in which case heapmpi cannot know the association.

use super::super::op::Reducer;
use super::tree::{Shape, Topo, Tree};

/// Whether the MPI picks its collective algorithms by its built-in rules:
/// not when the environment changes them (Open MPI's `OMPI_MCA_coll*`
/// parameters: component selection, `coll_tuned_use_dynamic_rules`, forced
/// algorithms; MPICH's `MPIR_CVAR_*` for reductions, scans and collective
/// selection files). Then heapmpi cannot know the association, and
/// reductions where it shows go to the real MPI. Read once: the MPI reads
/// its parameters once at initialisation too.
pub(in crate::coll) fn rules_are_default() -> bool {
    static DEFAULT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DEFAULT.get_or_init(|| {
        !std::env::vars_os().any(|(k, _)| {
            let k = k.to_string_lossy();
            changes_selection(&k)
        })
    })
}

/// Whether an environment variable named `k` changes how the MPI picks
/// its reduction algorithms.
fn changes_selection(k: &str) -> bool {
    if let Some(rest) = k.strip_prefix("OMPI_MCA_") {
        return rest.starts_with("coll");
    }
    if let Some(rest) = k.strip_prefix("MPIR_CVAR_") {
        return ["REDUCE", "SCAN", "COLL", "SMP", "CH4_", "POSIX"]
            .iter()
            .any(|w| rest.contains(w));
    }
    false
}

/// What the MPI does for a reduction of `count` elements of `bytes` bytes
/// in all, over `n` members; `root` for `MPI_Reduce`, `None` for
/// `MPI_Allreduce`. `None`: an association heapmpi does not evaluate.
pub(in crate::coll) fn stock(
    n: usize,
    count: usize,
    bytes: usize,
    root: Option<usize>,
    red: &Reducer,
) -> Option<Shape> {
    if n <= 2 || red.exact() {
        return Some(Shape::RightFold);
    }
    if !rules_are_default() {
        return None;
    }
    if crate::version::open_mpi() {
        openmpi(n, count, bytes, root, red.commute)
    } else {
        Some(mpich(n, count, bytes, root, red))
    }
}

/// MPICH 4.0 (`maint/tuning/coll/mpir/generic.json` and
/// `ch4/generic.json`): recursive doubling up to 2048 bytes (or with fewer
/// elements than the power of two, or a user operation), Rabenseifner
/// above. `MPI_Reduce` on a commutative operation up to 2048 bytes is the
/// binomial tree on ranks relative to the root; above, ch4's "alpha"
/// composition reduces to rank 0 (Rabenseifner for a predefined operation,
/// the binomial tree otherwise) and sends the result to the root; a
/// non-commutative one is the binomial tree from rank 0.
fn mpich(n: usize, count: usize, bytes: usize, root: Option<usize>, red: &Reducer) -> Shape {
    let pof2 = 1usize << (usize::BITS - 1 - n.leading_zeros());
    let rabenseifner = bytes > 2048 && red.predefined() && count >= pof2;
    match root {
        Some(r) if bytes <= 2048 && red.commute => Shape::Binomial(r),
        Some(_) if !rabenseifner => Shape::Binomial(0),
        _ => Shape::Balanced(0),
    }
}

/// Open MPI 4.1's `coll/tuned` fixed decisions (the component that runs
/// collectives within a node by default).
fn openmpi(
    n: usize,
    count: usize,
    bytes: usize,
    root: Option<usize>,
    commute: bool,
) -> Option<Shape> {
    match root {
        None => {
            let alg = openmpi_allreduce_alg(n, bytes, commute);
            Some(match alg {
                3 | 6 => Shape::Balanced(0),
                4 | 5 if count < n => Shape::Balanced(0),
                4 | 5 => Shape::Ring,
                1 => Shape::RightFold,
                // 2: the tuned reduce, then a broadcast.
                _ => openmpi(n, count, bytes, Some(0), commute)?,
            })
        }
        Some(root) => {
            let generic = |topo| Shape::Generic {
                topo,
                root,
                commute,
            };
            match openmpi_reduce_alg(n, bytes, commute) {
                1 => Some(Shape::RightFold),
                2 | 3 => Some(generic(Topo::Chain)),
                4 => Some(generic(Topo::Binary)),
                5 => Some(generic(Topo::Binomial)),
                6 => Some(generic(Topo::InOrderBinary)),
                // `reduce_intra_redscat_gather` falls back to the linear
                // algorithm with fewer elements than the largest power of
                // two of members (or a non-commutative operation); its own
                // association (for a few bytes of a small type) is not
                // evaluated here.
                _ => {
                    let pof2 = 1usize << (usize::BITS - 1 - n.leading_zeros());
                    (count < pof2 || !commute).then_some(Shape::RightFold)
                }
            }
        }
    }
}

/// `ompi_coll_tuned_allreduce_intra_dec_fixed` of Open MPI 4.1: 1 basic
/// linear, 2 nonoverlapping, 3 recursive doubling, 4 ring, 5 segmented
/// ring, 6 Rabenseifner.
fn openmpi_allreduce_alg(n: usize, b: usize, commute: bool) -> u8 {
    if !commute {
        return match n {
            0..=3 => {
                if b < 131072 {
                    3
                } else {
                    1
                }
            }
            4..=7 => 3,
            8..=15 => {
                if b < 1048576 {
                    3
                } else {
                    2
                }
            }
            16..=127 => 3,
            128..=255 => match b {
                0..=131071 => 2,
                131072..=524287 => 3,
                _ => 2,
            },
            256..=511 => match b {
                0..=4095 => 2,
                4096..=524287 => 3,
                _ => 2,
            },
            _ => {
                if b < 2048 {
                    2
                } else {
                    3
                }
            }
        };
    }
    match n {
        0..=3 => match b {
            0..=7 => 4,
            8..=4095 => 3,
            4096..=8191 => 4,
            8192..=16383 => 3,
            16384..=65535 => 4,
            65536..=262143 => 5,
            _ => 6,
        },
        4..=7 => match b {
            0..=15 => 4,
            16..=8191 => 3,
            _ => 6,
        },
        8..=15 => {
            if b < 8192 {
                3
            } else {
                6
            }
        }
        16..=31 => match b {
            0..=63 => 5,
            64..=4095 => 3,
            _ => 6,
        },
        32..=63 => {
            if b < 128 {
                5
            } else {
                6
            }
        }
        64..=127 => {
            if b < 262144 {
                3
            } else {
                6
            }
        }
        128..=255 => match b {
            0..=131071 => 2,
            131072..=262143 => 3,
            _ => 6,
        },
        256..=511 => {
            if b < 4096 {
                2
            } else {
                6
            }
        }
        512..=2047 => match b {
            0..=2047 => 2,
            2048..=16383 => 3,
            _ => 6,
        },
        // Larger communicators: never on one node; any non-linear answer
        // sends the call to the real MPI when the order shows.
        _ => 2,
    }
}

/// `ompi_coll_tuned_reduce_intra_dec_fixed` of Open MPI 4.1: 1 linear,
/// 2 chain, 3 pipeline, 4 binary, 5 binomial, 6 in-order binary, 7
/// Rabenseifner (reduce-scatter and gather).
fn openmpi_reduce_alg(n: usize, b: usize, commute: bool) -> u8 {
    if !commute {
        return match n {
            0..=3 => {
                if b < 8 {
                    6
                } else {
                    1
                }
            }
            4..=7 => 1,
            8..=15 => match b {
                0..=1023 => 6,
                1024..=8191 => 1,
                8192..=16383 => 6,
                16384..=262143 => 1,
                _ => 6,
            },
            128..=255 if (512..1024).contains(&b) => 1,
            _ => 6,
        };
    }
    match n {
        0..=3 => match b {
            0..=7 => 7,
            8..=15 => 4,
            16..=31 => 3,
            32..=262143 => 1,
            262144..=524287 => 3,
            524288..=1048575 => 2,
            _ => 3,
        },
        4..=7 => match b {
            0..=4095 => 4,
            4096..=65535 => 2,
            65536..=262143 => 5,
            262144..=524287 => 1,
            524288..=1048575 => 5,
            _ => 1,
        },
        8..=15 if b < 8192 => 4,
        16..=31 if b < 4096 => 4,
        256..=511 if (8192..16384).contains(&b) => 6,
        2048..=4095 if matches!(b, 512..=1023 | 8192..=16383) => 6,
        4096.. if matches!(b, 16..=31 | 1024..=2047 | 8192..=16383) => 6,
        _ => 5,
    }
}

/// The association of member `me`'s result of `MPI_Scan` (`inclusive`) or
/// `MPI_Exscan` (members `0..me`, at least one): Open MPI 4.1's linear
/// scans (`mca_coll_basic_scan_intra`, `_exscan_intra`: each member
/// passes its prefix up) fold from the left, `((x0 op x1) op x2) ...`;
/// MPICH 4.0's recursive doubling (`MPIR_Scan_intra_recursive_doubling`,
/// `MPIR_Exscan_intra_recursive_doubling`) combines, at distance 1, 2, 4,
/// ..., the partial result of the aligned block of members just below:
/// member 6 gets `((x0 + x1) + (x2 + x3)) + ((x4 + x5) + x6)`.
pub(in crate::coll) fn scan_tree(me: usize, inclusive: bool, red: &Reducer) -> Tree {
    let members: Vec<usize> = (0..me + usize::from(inclusive)).collect();
    if members.len() <= 2 || red.exact() {
        return Tree::right_fold(&members);
    }
    if crate::version::open_mpi() {
        return Tree::left_fold(&members);
    }
    let mut acc = inclusive.then_some(Tree::Leaf(me));
    let mut mask = 1;
    while mask <= me {
        if me & mask != 0 {
            let lo = me & !(2 * mask - 1);
            let block = Tree::halving(lo, mask);
            acc = Some(match acc {
                None => block,
                Some(a) => Tree::op(block, a),
            });
        }
        mask <<= 1;
    }
    acc.expect("at least one member")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_parameters_are_recognised() {
        assert!(changes_selection("OMPI_MCA_coll_tuned_use_dynamic_rules"));
        assert!(changes_selection("OMPI_MCA_coll"));
        assert!(!changes_selection("OMPI_MCA_btl"));
        assert!(changes_selection("MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM"));
        assert!(changes_selection(
            "MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE"
        ));
        assert!(!changes_selection("MPIR_CVAR_ASYNC_PROGRESS"));
        assert!(!changes_selection("HEAPMPI_STATS"));
    }

    #[test]
    fn openmpi_decisions_at_four_ranks() {
        // Doubles: every count is recursive doubling, Rabenseifner, or
        // the ring below 16 bytes, which falls back to recursive doubling
        // with fewer elements than members.
        for c in [1, 100, 1000, 10_000, 100_000] {
            assert_eq!(
                openmpi(4, c, 8 * c, None, true),
                Some(Shape::Balanced(0)),
                "{c}"
            );
        }
        assert_eq!(openmpi(3, 1000, 8000, None, true), Some(Shape::Ring));
        assert_eq!(
            openmpi(4, 100, 800, Some(1), true),
            Some(Shape::Generic {
                topo: Topo::Binary,
                root: 1,
                commute: true
            })
        );
        assert_eq!(openmpi_allreduce_alg(3, 8000, true), 4);
        assert_eq!(openmpi_reduce_alg(3, 800, true), 1);
        assert_eq!(openmpi_reduce_alg(4, 800, true), 4);
    }
}
