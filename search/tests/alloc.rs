//! Tree operations allocate nothing per playout once the arenas have grown (issue 4): a counting
//! global allocator watches a search loop (descend, evaluate from a reused buffer, back up) after
//! a warm-up search of the same size. (It found two: a history copy per repetition check and a
//! count vector per insufficient-material check, about 2 allocations per playout.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use varzero_rules::{Position, Variant};
use varzero_search::tree::{Leaf, Tree};
use varzero_search::SearchConfig;

struct Counting;

thread_local! {
    // Const-initialised and without a destructor: safe to touch from inside the allocator.
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, size: usize) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        System.realloc(p, l, size)
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocs() -> usize {
    ALLOCS.with(|c| c.get())
}

/// `playouts` playouts from the root of `tree` with uniform priors and a fixed value. Returns the
/// allocations made by playouts that expanded or passed through nodes, and by those that ended
/// on a new terminal node (a fourth-occurrence adjudication replays the cycle, which may
/// allocate; it happens once per such node).
fn search(
    tree: &mut Tree,
    pos: &mut Position,
    cfg: &SearchConfig,
    path: &mut Vec<u32>,
    playouts: usize,
    priors: &[f32],
) -> (usize, usize) {
    let (mut inner, mut terminal) = (0, 0);
    for _ in 0..playouts {
        let before = allocs();
        path.clear();
        let leaf = tree.descend(pos, cfg, path);
        if let Leaf::NeedsEval(node) = leaf {
            let n = tree.edges_of(node).len();
            tree.apply_evaluation(path, &priors[..n], [0.3, 0.4, 0.3]);
        }
        for _ in 1..path.len() {
            pos.unmake();
        }
        let n = allocs() - before;
        if leaf == Leaf::Terminal {
            terminal += n;
        } else {
            inner += n;
        }
    }
    (inner, terminal)
}

#[test]
fn playouts_do_not_allocate_once_warm() {
    const PLAYOUTS: usize = 4000;
    let cfg = SearchConfig::default();
    let priors = vec![1.0f32; 512];
    let mut report = Vec::new();
    for name in ["makruk", "xiangqi", "oxeli"] {
        let v = Variant::builtin(name).unwrap();
        let mut pos = Position::start(&v);
        let mut tree = Tree::new();
        let mut path = Vec::with_capacity(1024);
        // Warm-up: the arenas, the path and the position's history grow to this search's size.
        let _ = search(&mut tree, &mut pos, &cfg, &mut path, PLAYOUTS, &priors);
        tree.reset();
        let (n, terminal) = search(&mut tree, &mut pos, &cfg, &mut path, PLAYOUTS, &priors);
        assert!(
            tree.root().visits as usize >= PLAYOUTS / 2,
            "{name}: the search ran"
        );
        report.push(format!(
            "{name}: {n} allocations in {PLAYOUTS} playouts (+{terminal} in adjudicating new terminal nodes)"
        ));
        assert!(n <= 8, "{}", report.join("; "));
    }
    eprintln!("{}", report.join("; "));
}
