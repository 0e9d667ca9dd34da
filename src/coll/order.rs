//! The order in which a reduction combines the members' contributions, so
//! that floating-point sums and products come out bit for bit as the MPI
//! underneath computes them.
//!
//! Addition and multiplication of floating-point numbers are commutative
//! but not associative: `(x0 + x1) + (x2 + x3)` and `x0 + (x1 + (x2 + x3))`
//! may differ in the last bits, and a simulation that sums its energy over
//! four ranks then prints, or iterates on, a different number than stock.
//! Each MPI's algorithms fix an association (and a different one per
//! algorithm, which each MPI picks by communicator size and message size);
//! heapmpi, which reads every member's input directly, can evaluate any
//! association at the same cost, so it evaluates the stock one. Only
//! operations where the order shows need it ([`Reducer::exact`] tells):
//! integer arithmetic, `MAX`/`MIN`, the logical and bitwise operations and
//! `MAXLOC`/`MINLOC` give the same bits in any order, and keep heapmpi's own
//! fastest order.
//!
//! The associations, read from the sources and checked against stock runs
//! at 3 and 4 ranks (`tests/c/coll_order.c`):
//!
//! - **Balanced** — recursive doubling (Thakur, Rabenseifner and Gropp,
//!   "Optimization of collective communication operations in MPICH",
//!   IJHPCA 2005) and Rabenseifner's reduce-scatter + allgather: with `p`
//!   the largest power of two at most `n` and `r = n - p`, members `2i` and
//!   `2i + 1` (`i < r`) are combined first, then the `p` values pairwise,
//!   neighbours first (distance 1, 2, 4, ...). Open MPI 4.1's
//!   `allreduce_intra_recursivedoubling` and `_redscat_allgather`, MPICH
//!   4.0's `MPIR_Allreduce_intra_recursive_doubling` and
//!   `_reduce_scatter_allgather`, and MPICH's `_reduce_scatter_gather`
//!   for `MPI_Reduce`.
//! - **Binomial** — MPICH's `MPIR_Reduce_intra_binomial`, on ranks
//!   relative to the root (for a commutative operation): at distance 1, 2,
//!   4, ... a member passes its partial result to the one `distance` below;
//!   the same as balanced but for some sizes (5: `((x0 + x1) + (x2 + x3)) +
//!   x4`, not `((x0 + x1) + x2) + (x3 + x4)`).
//! - **Ring** — Open MPI's `allreduce_intra_ring` (and `_ring_segmented`,
//!   whose phases keep the ring's blocks): the elements are cut into `n`
//!   blocks (the first `count % n` one element longer); block `b` is
//!   folded from the left starting at member `b`:
//!   `((xb + xb+1) + xb+2) + ...`, indices modulo `n`.
//! - **Right fold** — `x0 op (x1 op (... op xn-1))`: Open MPI's
//!   `reduce_intra_basic_linear` (and so its linear allreduce), and
//!   heapmpi's own order elsewhere.
//!
//! - **Open MPI's `MPI_Reduce` trees** — chain, pipeline, binary,
//!   binomial and in-order binary trees (`coll_base_topo.c`), each node
//!   combining its children as `ompi_coll_base_reduce_generic` does (see
//!   [`Topo`]).
//!
//! Which algorithm runs follows the MPI's fixed decision: Open MPI 4.1's
//! `coll_tuned_decision_fixed.c` (by communicator size and bytes), MPICH
//! 4.0's `MPIR_Allreduce_intra_auto` / `MPIR_Reduce_intra_auto` (2048 bytes,
//! a power of two of elements, a predefined operation). A choice heapmpi
//! does not evaluate (Open MPI's Rabenseifner `MPI_Reduce`, which its
//! decision picks only for a few bytes of a small type on three members)
//! is reported as `None`, and the call goes to the real MPI when the order
//! shows.

use std::cell::RefCell;
use std::rc::Rc;

use super::op::Reducer;

/// An association of `n` members' contributions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Shape {
    /// `x0 op (x1 op (... op xn-1))`.
    RightFold,
    /// Pairs first, then a balanced tree, over the members in rank order
    /// rotated to start at the given member.
    Balanced(usize),
    /// A binomial tree over the members in rank order rotated to start
    /// at the given member: the first power of two at most half the
    /// members, then the rest, each the same way.
    Binomial(usize),
    /// Open MPI's ring: block `b` folded from the left from member `b`.
    Ring,
    /// An Open MPI `MPI_Reduce` tree run by `ompi_coll_base_reduce_generic`
    /// (see [`Topo`]), rooted at `root` (the in-order tree ignores it), for
    /// a commutative operation or not.
    Generic {
        topo: Topo,
        root: usize,
        commute: bool,
    },
}

/// The trees of Open MPI 4.1's `coll_base_topo.c` that its `MPI_Reduce`
/// algorithms hand to `ompi_coll_base_reduce_generic`. Each node combines
/// its children's partial results in the order it lists them: for a
/// commutative operation `c[k-1] op (... (c[1] op (own op c[0])))` (the
/// first child is received straight into the accumulator), otherwise
/// `c[k-1] op (... (c[0] op own))`. Segmenting the message changes which
/// bytes travel together, not this association.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Topo {
    /// `build_chain` with fan-out 1 (the pipeline algorithm, and the chain
    /// algorithm with the fixed decision's fan-out 0): each member, in rank
    /// order from the root, is the parent of the next.
    Chain,
    /// `build_tree(2)`: a binary tree filled level by level on ranks
    /// relative to the root; the member at level `l` has children at
    /// `+2^l` and `+2 * 2^l`.
    Binary,
    /// `build_in_order_bmtree`: on ranks `v` relative to the root, the
    /// children of `v` are `v ^ 1, v ^ 2, v ^ 4, ...` up to `v`'s lowest set
    /// bit.
    Binomial,
    /// `build_in_order_bintree`: rooted at the last rank, whose children are
    /// the roots of the upper part (`n / 2 .. n - 1`, left) and of the
    /// lower half (`0 .. n / 2`, right), recursively; operands stay in rank
    /// order, so it serves non-commutative operations.
    InOrderBinary,
}

/// Whether the MPI picks its collective algorithms by its built-in rules:
/// not when the environment changes them (Open MPI's `OMPI_MCA_coll*`
/// parameters: component selection, `coll_tuned_use_dynamic_rules`, forced
/// algorithms; MPICH's `MPIR_CVAR_*` for reductions, scans and collective
/// selection files). Then heapmpi cannot know the association, and
/// reductions where it shows go to the real MPI. Read once: the MPI reads
/// its parameters once at initialisation too.
pub(super) fn rules_are_default() -> bool {
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
pub(super) fn stock(
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
pub(super) fn scan_tree(me: usize, inclusive: bool, red: &Reducer) -> Tree {
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

/// A binary tree over members: leaves are members, inner nodes combine
/// `left op right`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Tree {
    Leaf(usize),
    Op(Box<Tree>, Box<Tree>),
}

impl Tree {
    fn op(l: Tree, r: Tree) -> Tree {
        Tree::Op(Box::new(l), Box::new(r))
    }

    /// `x0 op (x1 op (...))` over `members`.
    fn right_fold(members: &[usize]) -> Tree {
        let (last, rest) = members.split_last().expect("at least one member");
        rest.iter()
            .rev()
            .fold(Tree::Leaf(*last), |acc, &m| Tree::op(Tree::Leaf(m), acc))
    }

    /// `((x0 op x1) op x2) ...` over `members`.
    fn left_fold(members: &[usize]) -> Tree {
        let (first, rest) = members.split_first().expect("at least one member");
        rest.iter()
            .fold(Tree::Leaf(*first), |acc, &m| Tree::op(acc, Tree::Leaf(m)))
    }

    /// Recursive doubling's association over `members`.
    fn balanced(members: &[usize]) -> Tree {
        let n = members.len();
        let pof2 = 1usize << (usize::BITS - 1 - n.leading_zeros());
        let rem = n - pof2;
        let mut level: Vec<Tree> = (0..rem)
            .map(|i| Tree::op(Tree::Leaf(members[2 * i]), Tree::Leaf(members[2 * i + 1])))
            .chain(members[2 * rem..].iter().map(|&m| Tree::Leaf(m)))
            .collect();
        while level.len() > 1 {
            let mut next = Vec::with_capacity(level.len() / 2);
            let mut it = level.into_iter();
            while let (Some(a), Some(b)) = (it.next(), it.next()) {
                next.push(Tree::op(a, b));
            }
            level = next;
        }
        level.pop().expect("at least one member")
    }

    /// Members `lo..lo + size` (`size` a power of two) combined in halves,
    /// recursively.
    fn halving(lo: usize, size: usize) -> Tree {
        if size == 1 {
            return Tree::Leaf(lo);
        }
        Tree::op(
            Tree::halving(lo, size / 2),
            Tree::halving(lo + size / 2, size / 2),
        )
    }

    /// The binomial tree's association over `members`.
    fn binomial(members: &[usize]) -> Tree {
        if members.len() == 1 {
            return Tree::Leaf(members[0]);
        }
        let n = members.len();
        let p = 1usize << (usize::BITS - 1 - (n - 1).leading_zeros());
        Tree::op(Tree::binomial(&members[..p]), Tree::binomial(&members[p..]))
    }

    /// The association of Open MPI's `ompi_coll_base_reduce_generic` on
    /// tree `topo` over members `0..n` (see [`Topo`]).
    fn generic(topo: Topo, n: usize, root: usize, commute: bool) -> Tree {
        let kids: Vec<Vec<usize>> = match topo {
            Topo::InOrderBinary => {
                let mut kids = vec![Vec::new(); n];
                in_order_children(0, n, &mut kids);
                kids
            }
            _ => (0..n)
                .map(|m| {
                    let v = (m + n - root) % n;
                    let rel: Vec<usize> = match topo {
                        Topo::Chain => (v + 1 < n).then_some(v + 1).into_iter().collect(),
                        Topo::Binary => {
                            // calculate_level: floor(log2(v + 1)).
                            let delta = 1usize << (usize::BITS - 1 - (v + 1).leading_zeros());
                            [v + delta, v + 2 * delta]
                                .into_iter()
                                .filter(|&c| c < n)
                                .collect()
                        }
                        _ => {
                            let mut c = Vec::new();
                            let mut mask = 1;
                            while mask < n && v & mask == 0 {
                                if v | mask < n {
                                    c.push(v | mask);
                                }
                                mask <<= 1;
                            }
                            c
                        }
                    };
                    rel.into_iter().map(|c| (c + root) % n).collect()
                })
                .collect(),
        };
        let top = if topo == Topo::InOrderBinary {
            n - 1
        } else {
            root
        };
        Tree::generic_node(top, &kids, commute)
    }

    /// Member `m`'s partial result in `reduce_generic` (see [`Topo`]).
    fn generic_node(m: usize, kids: &[Vec<usize>], commute: bool) -> Tree {
        let mut it = kids[m].iter();
        let Some(&first) = it.next() else {
            return Tree::Leaf(m);
        };
        let c0 = Tree::generic_node(first, kids, commute);
        let start = if commute {
            Tree::op(Tree::Leaf(m), c0)
        } else {
            Tree::op(c0, Tree::Leaf(m))
        };
        it.fold(start, |acc, &c| {
            Tree::op(Tree::generic_node(c, kids, commute), acc)
        })
    }

    /// Whether the tree is `x0 op (x1 op (...))` over `0..n` (heapmpi's
    /// in-place fold needs no temporaries for it).
    pub fn is_right_fold(&self) -> bool {
        let mut t = self;
        let mut next = 0;
        loop {
            match t {
                Tree::Leaf(m) => return *m == next,
                Tree::Op(l, r) => {
                    if **l != Tree::Leaf(next) {
                        return false;
                    }
                    next += 1;
                    t = r;
                }
            }
        }
    }
}

/// Fills `kids` for the in-order binary tree over members `lo..lo + size`
/// (`build_in_order_bintree`): the subtree's root is its last member; its
/// first child the root of the upper part (`lo + size / 2 .. lo + size -
/// 1`), its second the root of the lower half (`lo .. lo + size / 2`).
/// With two members the lower member is the only (first) child.
fn in_order_children(lo: usize, size: usize, kids: &mut [Vec<usize>]) {
    if size <= 1 {
        return;
    }
    let parent = lo + size - 1;
    let right = size / 2;
    let left = size - right - 1;
    if left > 0 {
        kids[parent].push(lo + right + left - 1);
        in_order_children(lo + right, left, kids);
    }
    if right > 0 {
        kids[parent].push(lo + right - 1);
        in_order_children(lo, right, kids);
    }
}

/// The trees of a reduction, shared.
pub(super) type Trees = Rc<Vec<(usize, Tree)>>;

/// [`trees`], kept from the last call on this thread with the same shape
/// and members (and count, for the ring): a program repeats its reductions,
/// and building a tree allocates every node.
pub(super) fn trees_cached(shape: Shape, n: usize, count: usize) -> Trees {
    type Key = (Shape, usize, usize);
    thread_local! {
        static LAST: RefCell<Option<(Key, Trees)>> = const { RefCell::new(None) };
    }
    let key = (shape, n, if shape == Shape::Ring { count } else { 0 });
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((k, t)) = last.as_ref() {
            if *k == key {
                return t.clone();
            }
        }
        let t = Rc::new(trees(shape, n, count));
        *last = Some((key, t.clone()));
        t
    })
}

/// The trees a reduction of `count` elements over members `0..n` uses, by
/// element range: `(first element, tree)` in increasing order, the first at
/// element 0. One entry but for the ring (one per block).
pub(super) fn trees(shape: Shape, n: usize, count: usize) -> Vec<(usize, Tree)> {
    let all: Vec<usize> = (0..n).collect();
    match shape {
        Shape::RightFold => vec![(0, Tree::right_fold(&all))],
        Shape::Balanced(root) => {
            let rot: Vec<usize> = (0..n).map(|j| (root + j) % n).collect();
            vec![(0, Tree::balanced(&rot))]
        }
        Shape::Binomial(root) => {
            let rot: Vec<usize> = (0..n).map(|j| (root + j) % n).collect();
            vec![(0, Tree::binomial(&rot))]
        }
        Shape::Generic {
            topo,
            root,
            commute,
        } => vec![(0, Tree::generic(topo, n, root, commute))],
        Shape::Ring => {
            // COLL_BASE_COMPUTE_BLOCKCOUNT: the first `count % n` blocks
            // hold one element more.
            let late = count / n;
            let split = count % n;
            let mut start = 0;
            (0..n)
                .map(|b| {
                    let rot: Vec<usize> = (0..n).map(|j| (b + j) % n).collect();
                    let e = (start, Tree::left_fold(&rot));
                    start += late + usize::from(b < split);
                    e
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(m: usize) -> Tree {
        Tree::Leaf(m)
    }

    #[test]
    fn balanced_pairs_the_extra_members_first() {
        // 4: (0 1) (2 3); 3: ((0 1) 2); 6: ((0 1) (2 3)) ((4) (5)).
        assert_eq!(
            Tree::balanced(&[0, 1, 2, 3]),
            Tree::op(Tree::op(leaf(0), leaf(1)), Tree::op(leaf(2), leaf(3)))
        );
        assert_eq!(
            Tree::balanced(&[0, 1, 2]),
            Tree::op(Tree::op(leaf(0), leaf(1)), leaf(2))
        );
        assert_eq!(
            Tree::balanced(&[0, 1, 2, 3, 4, 5]),
            Tree::op(
                Tree::op(Tree::op(leaf(0), leaf(1)), Tree::op(leaf(2), leaf(3))),
                Tree::op(leaf(4), leaf(5))
            )
        );
    }

    #[test]
    fn binomial_splits_at_the_largest_power_of_two() {
        let b4 = Tree::op(Tree::op(leaf(0), leaf(1)), Tree::op(leaf(2), leaf(3)));
        assert_eq!(Tree::binomial(&[0, 1, 2, 3]), b4);
        assert_eq!(Tree::binomial(&[0, 1, 2, 3, 4]), Tree::op(b4, leaf(4)));
        assert_eq!(
            Tree::binomial(&[2, 0, 1]),
            Tree::op(Tree::op(leaf(2), leaf(0)), leaf(1))
        );
    }

    #[test]
    fn ring_blocks_start_at_their_owner() {
        let t = trees(Shape::Ring, 3, 8);
        let starts: Vec<usize> = t.iter().map(|e| e.0).collect();
        assert_eq!(starts, vec![0, 3, 6]);
        assert_eq!(
            t[1].1,
            Tree::op(Tree::op(leaf(1), leaf(2)), leaf(0)),
            "block 1 folds 1, 2, 0"
        );
    }

    #[test]
    fn openmpi_reduce_trees() {
        let g = |topo, n, root, commute| Tree::generic(topo, n, root, commute);
        let op = Tree::op;
        // Binary, 4 members from 0: 0 has children 1 and 2, 1 has 3.
        assert_eq!(
            g(Topo::Binary, 4, 0, true),
            op(leaf(2), op(leaf(0), op(leaf(1), leaf(3))))
        );
        // Relative to root 2: 2 has 3 and 0, 3 has 1.
        assert_eq!(
            g(Topo::Binary, 4, 2, true),
            op(leaf(0), op(leaf(2), op(leaf(3), leaf(1))))
        );
        // Binomial: 0 has 1 and 2, 2 has 3.
        assert_eq!(
            g(Topo::Binomial, 4, 0, true),
            op(op(leaf(2), leaf(3)), op(leaf(0), leaf(1)))
        );
        // The chain folds from the root's side.
        assert_eq!(
            g(Topo::Chain, 3, 1, true),
            op(leaf(1), op(leaf(2), leaf(0)))
        );
        // In order (the diagrams of coll_base_topo.c): 3 has 2 and 1, 1 has 0.
        assert_eq!(
            g(Topo::InOrderBinary, 4, 0, false),
            op(op(leaf(0), leaf(1)), op(leaf(2), leaf(3)))
        );
        let mut kids = vec![Vec::new(); 9];
        in_order_children(0, 9, &mut kids);
        assert_eq!(kids[8], vec![7, 3]);
        assert_eq!(kids[7], vec![6, 5]);
        assert_eq!(kids[5], vec![4]);
        assert_eq!(kids[3], vec![2, 1]);
        assert_eq!(kids[1], vec![0]);
        // A binary tree of 7, the diagram's: 1 has 3 and 5, 2 has 4 and 6.
        let t = g(Topo::Binary, 7, 0, true);
        assert_eq!(
            t,
            op(
                op(leaf(6), op(leaf(2), leaf(4))),
                op(leaf(0), op(leaf(5), op(leaf(1), leaf(3))))
            )
        );
    }

    #[test]
    fn right_fold_is_recognised() {
        assert!(trees(Shape::RightFold, 5, 9)[0].1.is_right_fold());
        assert!(!trees(Shape::Balanced(0), 4, 9)[0].1.is_right_fold());
        assert!(trees(Shape::Balanced(0), 2, 9)[0].1.is_right_fold());
    }

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
