//! The batch mix: which window positions a step trains on. By default every position of the
//! window is equally likely, so a generation's 100 self-play games (1 to 2% of a window that is
//! mostly a teacher's) are 1 to 2% of every batch, and each net is mostly its parent trained on
//! the teacher again (docs/runs.md, "Where it ends"). With a self-play share `s`, each batch
//! holds `round(s * batch)` positions drawn from the self-play generations (every data directory
//! after the first) and the rest from the first directory (generation 0: the teacher's games, or
//! material self-play); the pipeline may shrink generation 0's share generation by generation.

use crate::data::Samples;
use varzero_stats::Rng;

/// Window positions split by where they came from.
pub struct BatchMix {
    /// Positions of the first data directory.
    first: Vec<usize>,
    /// Positions of every later directory.
    later: Vec<usize>,
    share: f64,
}

impl BatchMix {
    pub fn new(samples: &Samples, selfplay_share: f64) -> Self {
        let (first, later) = (0..samples.items.len()).partition(|&i| samples.items[i].source == 0);
        BatchMix {
            first,
            later,
            share: selfplay_share,
        }
    }

    /// Whether batches are drawn in the two shares (a share is set and both parts hold
    /// positions); otherwise every position is equally likely.
    pub fn mixed(&self) -> bool {
        self.share > 0.0 && !self.first.is_empty() && !self.later.is_empty()
    }

    /// Positions of a batch of `n` drawn from the later directories.
    pub fn later_count(&self, n: usize) -> usize {
        if self.mixed() {
            ((n as f64 * self.share).round() as usize).min(n)
        } else {
            0
        }
    }

    /// The window indices of one batch of `n`. Unmixed, the draw is the one the trainer has
    /// always made (uniform over the window), so a run without a share trains as before.
    pub fn draw(&self, rng: &mut Rng, n: usize) -> Vec<usize> {
        if !self.mixed() {
            let len = self.first.len() + self.later.len();
            return (0..n).map(|_| rng.below(len)).collect();
        }
        let k = self.later_count(n);
        let mut idx: Vec<usize> = (0..k)
            .map(|_| self.later[rng.below(self.later.len())])
            .collect();
        idx.extend((k..n).map(|_| self.first[rng.below(self.first.len())]));
        idx
    }
}

/// The self-play share of net `generation`'s batches: none for net 1 (there is no self-play
/// yet), then generation 0's share `1 - share` shrinks by `decay` for each generation after
/// net 2, so net g >= 2 trains with generation 0 at `(1 - share) * decay^(g - 2)`.
pub fn selfplay_share_at(share: f64, decay: f64, generation: u32) -> f64 {
    if share <= 0.0 || generation < 2 {
        return 0.0;
    }
    let steps = generation.saturating_sub(2) as i32;
    1.0 - (1.0 - share) * decay.powi(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Sample;

    fn samples(sources: &[u32]) -> Samples {
        let v = varzero_rules::Variant::builtin("makruk").unwrap();
        Samples {
            variant: v,
            items: sources
                .iter()
                .map(|&source| Sample {
                    fen: String::new(),
                    policy: Vec::new(),
                    legal: Vec::new(),
                    wdl: [0.0; 3],
                    source,
                    next: None,
                })
                .collect(),
        }
    }

    #[test]
    fn a_share_fixes_each_batch_count() {
        // 6 positions of generation 0, 2 of generation 1 and 2 of generation 2.
        let s = samples(&[0, 0, 0, 0, 0, 0, 1, 1, 2, 2]);
        let mix = BatchMix::new(&s, 0.25);
        assert!(mix.mixed());
        // round(0.25 * 8) = 2 later positions and 6 of generation 0, in every batch.
        assert_eq!(mix.later_count(8), 2);
        // round(0.25 * 10) = round(2.5) = 3.
        assert_eq!(mix.later_count(10), 3);
        let mut rng = Rng::new(7);
        for _ in 0..50 {
            let idx = mix.draw(&mut rng, 8);
            assert_eq!(idx.len(), 8);
            assert_eq!(idx.iter().filter(|&&i| i >= 6).count(), 2);
        }
        // Uniform draws would give later positions 4 of 10 of the time: 2 of 8 is the share.
    }

    #[test]
    fn without_a_share_or_a_part_the_draw_is_uniform_as_before() {
        let s = samples(&[0, 0, 0, 1]);
        let mut a = Rng::new(3);
        let mut b = Rng::new(3);
        let old: Vec<usize> = (0..64).map(|_| a.below(4)).collect();
        assert_eq!(BatchMix::new(&s, 0.0).draw(&mut b, 64), old);
        // Generation 0 alone (net 1): the share has nothing to draw from.
        let only = samples(&[0, 0, 0]);
        let mix = BatchMix::new(&only, 0.5);
        assert!(!mix.mixed());
        assert_eq!(mix.later_count(256), 0);
    }

    #[test]
    fn generation_zero_share_decays_by_hand() {
        // share 0.5, decay 0.5: net 2 trains with generation 0 at 0.5, net 3 at 0.25,
        // net 4 at 0.125, so self-play at 0.5, 0.75 and 0.875.
        assert_eq!(
            selfplay_share_at(0.5, 0.5, 1),
            0.0,
            "net 1 has no self-play"
        );
        assert_eq!(selfplay_share_at(0.5, 0.5, 2), 0.5);
        assert_eq!(selfplay_share_at(0.5, 0.5, 3), 0.75);
        assert_eq!(selfplay_share_at(0.5, 0.5, 4), 0.875);
        // No decay: a fixed share; no share: the uniform window.
        assert!((selfplay_share_at(0.3, 1.0, 9) - 0.3).abs() < 1e-12);
        assert_eq!(selfplay_share_at(0.0, 0.5, 9), 0.0);
    }
}
