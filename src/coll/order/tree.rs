//! The associations a reduction can take, as trees over the members
//! ([`Tree`]: leaves are members, inner nodes `left op right`): the shapes
//! the MPIs' algorithms give ([`Shape`]; Open MPI's `MPI_Reduce` trees of
//! `coll_base_topo.c`, [`Topo`]), built for `n` members and, for Open
//! MPI's ring, per block of elements ([`trees`]). The sources each shape
//! follows are listed in [`super`]'s docs.

use std::cell::RefCell;
use std::rc::Rc;

/// An association of `n` members' contributions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(in crate::coll) enum Shape {
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
pub(in crate::coll) enum Topo {
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

/// A binary tree over members: leaves are members, inner nodes combine
/// `left op right`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::coll) enum Tree {
    Leaf(usize),
    Op(Box<Tree>, Box<Tree>),
}

impl Tree {
    pub(super) fn op(l: Tree, r: Tree) -> Tree {
        Tree::Op(Box::new(l), Box::new(r))
    }

    /// `x0 op (x1 op (...))` over `members`.
    pub(super) fn right_fold(members: &[usize]) -> Tree {
        let (last, rest) = members.split_last().expect("at least one member");
        rest.iter()
            .rev()
            .fold(Tree::Leaf(*last), |acc, &m| Tree::op(Tree::Leaf(m), acc))
    }

    /// `((x0 op x1) op x2) ...` over `members`.
    pub(super) fn left_fold(members: &[usize]) -> Tree {
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
    pub(super) fn halving(lo: usize, size: usize) -> Tree {
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
pub(in crate::coll) type Trees = Rc<Vec<(usize, Tree)>>;

/// [`trees`], kept from the last call on this thread with the same shape
/// and members (and count, for the ring): a program repeats its reductions,
/// and building a tree allocates every node.
pub(in crate::coll) fn trees_cached(shape: Shape, n: usize, count: usize) -> Trees {
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
pub(in crate::coll) fn trees(shape: Shape, n: usize, count: usize) -> Vec<(usize, Tree)> {
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
}
