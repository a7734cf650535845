//! Self-play: PUCT Monte-Carlo tree search in the AlphaZero/lc0/KataGo tradition over the rules
//! core, and the generator that turns compute into training data. Values are win/draw/loss
//! triples; terminal positions are scored by the rules (counting, repetition, check wins...);
//! leaves of many games are gathered into one batch per evaluator call. The `Evaluator` trait
//! is where a neural network plugs in; `uniform` and `material` bootstrap the pipeline.

pub mod arena;
pub mod config;
pub mod evaluator;
pub mod external;
pub mod generator;
pub mod mcts;
pub mod players;
pub mod rng;
pub mod search;
pub mod stats;
pub mod study;
pub mod uci_engine;

pub use config::{SearchConfig, SelfplayConfig};
pub use evaluator::{Batch, Evaluation, Evaluator, MaterialEvaluator, UniformEvaluator};
pub use generator::{best_move, play_game, FinishedGame, Generator, Stats, Summary};
pub use mcts::Tree;
pub use rng::Rng;
