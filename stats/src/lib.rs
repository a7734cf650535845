//! Statistics and random numbers, in one place (as KataGo keeps `core/elo.h`): Elo from match
//! results with intervals, the pentanomial SPRT (`elo`), ratings of many players from all their
//! games (`bradley_terry`, the ladder's fit), Wilson and normal intervals and
//! z-tests (`intervals`), and the one deterministic generator every stage draws from (`rng`).
//! No I/O and no dependencies beyond serde: the search, the arena, the studies, the analysis
//! and the pipeline all call it.
#![forbid(unsafe_code)]

pub mod bradley_terry;
pub mod elo;
pub mod intervals;
pub mod rng;

pub use elo::*;
pub use intervals::{
    erfc, score_interval, two_mean_z, two_proportion_z, two_sided_p, wilson, Difference, Interval,
    Z95,
};
pub use rng::Rng;
