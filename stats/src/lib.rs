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

/// The median of `xs` (the upper middle for an even count), or `None` for none. Benchmarks
/// quote medians; the pipeline's summary uses it for the typical interval.
pub fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    Some(xs[xs.len() / 2])
}

pub use intervals::{
    erfc, score_interval, two_mean_z, two_proportion_z, two_sided_p, wilson, Difference, Interval,
    Z95,
};
pub use rng::Rng;

#[cfg(test)]
mod median_tests {
    #[test]
    fn median_is_the_middle_and_the_upper_middle_of_an_even_count() {
        assert_eq!(super::median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(super::median(vec![4.0, 1.0, 3.0, 2.0]), Some(3.0));
        assert_eq!(super::median(vec![]), None);
    }
}
