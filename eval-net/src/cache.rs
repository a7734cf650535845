//! The evaluation cache (lc0's NNCache): a net's priors and value by a hash of exactly what the
//! net sees of a leaf, its encoded input planes, its side to move and its legal moves. A
//! transposition inside one tree, the same opening positions across self-play games, and the
//! positions of the previous move's tree that tree reuse dropped are then evaluated once.
//!
//! Direct-mapped and always-replace: a slot is the key's low bits, so a lookup is one probe and
//! the table never grows past its slot count. Each slot's prior vector keeps its capacity, so a
//! warm table allocates nothing.

use std::sync::atomic::{AtomicU64, Ordering};

/// Default slots: about 2^18 x (priors of a position + 40 bytes), 50 MB in Xiangqi.
pub const DEFAULT_ENTRIES: usize = 1 << 18;

#[derive(Default)]
struct Slot {
    key: u64,
    wdl: [f32; 3],
    priors: Vec<f32>,
}

pub struct EvalCache {
    slots: Vec<Slot>,
    mask: u64,
    pub lookups: AtomicU64,
    pub hits: AtomicU64,
}

/// One 64-bit mix step (a multiply and a rotation, as in wyhash-like hashes).
#[inline]
fn mix(h: u64, x: u64) -> u64 {
    (h ^ x)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(31)
        .wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

/// The key of one leaf: its nonzero inputs (index and bits; the planes are mostly zero), its
/// side to move and its moves in order. Never 0, which marks an empty slot.
pub fn key(input: &[f32], stm: u8, moves: &[varzero_rules::Move]) -> u64 {
    let mut h = mix(
        0x243F_6A88_85A3_08D3,
        input.len() as u64 ^ ((stm as u64) << 40),
    );
    for (i, &x) in input.iter().enumerate() {
        if x != 0.0 {
            h = mix(h, ((i as u64) << 32) | x.to_bits() as u64);
        }
    }
    h = mix(h, moves.len() as u64);
    for m in moves {
        h = mix(h, m.0 as u64);
    }
    h | 1
}

impl EvalCache {
    /// A table of `entries` slots, rounded up to a power of two (0: none).
    pub fn new(entries: usize) -> Option<EvalCache> {
        if entries == 0 {
            return None;
        }
        let n = entries.next_power_of_two();
        Some(EvalCache {
            slots: (0..n).map(|_| Slot::default()).collect(),
            mask: n as u64 - 1,
            lookups: AtomicU64::new(0),
            hits: AtomicU64::new(0),
        })
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Copies the entry of `key` into `priors` and returns its value, if it is there.
    pub fn get(&self, key: u64, priors: &mut Vec<f32>) -> Option<[f32; 3]> {
        self.lookups.fetch_add(1, Ordering::Relaxed);
        let s = &self.slots[(key & self.mask) as usize];
        if s.key != key {
            return None;
        }
        self.hits.fetch_add(1, Ordering::Relaxed);
        priors.extend_from_slice(&s.priors);
        Some(s.wdl)
    }

    pub fn put(&mut self, key: u64, priors: &[f32], wdl: [f32; 3]) {
        let s = &mut self.slots[(key & self.mask) as usize];
        s.key = key;
        s.wdl = wdl;
        s.priors.clear();
        s.priors.extend_from_slice(priors);
    }

    /// Hits over lookups since the table was made (0 before any lookup).
    pub fn hit_rate(&self) -> f64 {
        let l = self.lookups.load(Ordering::Relaxed);
        if l == 0 {
            0.0
        } else {
            self.hits.load(Ordering::Relaxed) as f64 / l as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use varzero_rules::Move;

    #[test]
    fn a_stored_entry_comes_back_and_a_collision_of_slots_replaces_it() {
        let mut c = EvalCache::new(3).unwrap();
        assert_eq!(c.len(), 4, "rounded up to a power of two");
        let mut p = Vec::new();
        assert_eq!(c.get(5, &mut p), None);
        c.put(5, &[0.25, 0.75], [0.5, 0.25, 0.25]);
        assert_eq!(c.get(5, &mut p), Some([0.5, 0.25, 0.25]));
        assert_eq!(p, vec![0.25, 0.75]);
        // 9 falls in 5's slot (9 & 3 == 5 & 3) and replaces it.
        c.put(9, &[1.0], [1.0, 0.0, 0.0]);
        p.clear();
        assert_eq!(c.get(5, &mut p), None);
        assert_eq!(c.get(9, &mut p), Some([1.0, 0.0, 0.0]));
        assert_eq!(p, vec![1.0]);
        assert!((c.hit_rate() - 0.5).abs() < 1e-12, "2 hits of 4 lookups");
        assert!(EvalCache::new(0).is_none());
    }

    #[test]
    fn the_key_sees_inputs_side_and_moves() {
        let x = [0.0, 1.0, 0.0, 0.5];
        let m = [Move(3), Move(7)];
        let k = key(&x, 0, &m);
        assert_eq!(k, key(&x, 0, &m));
        assert_ne!(k, key(&[0.0, 0.0, 1.0, 0.5], 0, &m), "another input square");
        assert_ne!(k, key(&x, 1, &m), "another side to move");
        assert_ne!(k, key(&x, 0, &[Move(7), Move(3)]), "moves in another order");
        assert_ne!(k, key(&x, 0, &m[..1]), "fewer moves");
        assert_ne!(k, 0);
    }
}
