//! The search core: PUCT Monte-Carlo tree search in the AlphaZero/lc0/KataGo tradition over
//! the rules core, free of I/O, datasets and polars. `Evaluator` is where a network plugs in
//! (`uniform` and `material`, a quiescence search over material in `tactics`, bootstrap the
//! pipeline); `tree` holds the nodes, PUCT selection
//! (the formula is in `Tree::select_edge`), virtual loss, terminal scoring by the rules and the
//! MCTS solver's proofs; `round` is the one batched playout round (gather, evaluate, scatter);
//! `searcher` searches one position at a time for players and the UCI engine, under limits;
//! `gumbel` is the Gumbel root (top-k, sequential halving, completed-Q targets), an option;
//! `time` is how much of a clock a move may spend.
//! Values are win/draw/loss triples.
#![forbid(unsafe_code)]

pub mod config;
pub mod evaluator;
pub mod gumbel;
pub mod round;
pub mod searcher;
pub mod tactics;
pub mod time;
pub mod tree;

pub use config::{PriorMix, RootSearch, SearchConfig, TargetPriors, MIN_POLICY_TEMPERATURE};
pub use evaluator::{
    hint_priors, Batch, BuiltinEvaluators, Evaluation, Evaluator, EvaluatorResolver,
    MaterialEvaluator, ResolveError, TacticalBlend, UniformEvaluator,
};
pub use gumbel::GumbelParams;
pub use round::{best_move, Round};
pub use searcher::{Limits, RootLine, SearchInfo, Searcher};
pub use tactics::Tactics;
pub use tree::{GumbelScratch, Leaf, NodeState, Proof, Tree};
pub use varzero_stats::Rng;
