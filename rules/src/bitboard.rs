//! Bitboards over any board of up to 128 squares. The engine is generic over the word so that
//! boards that fit (8x8) run on `u64` and larger ones (9x9, 9x10, 10x12) on `u128`.

use std::fmt::Debug;
use std::hash::Hash;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

/// A set of squares, one bit per square index (`rank * files + file`).
pub trait Bitboard:
    Copy
    + Eq
    + Hash
    + Default
    + Debug
    + Send
    + Sync
    + 'static
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + BitAndAssign
    + BitOrAssign
    + BitXorAssign
{
    const ZERO: Self;
    const CAPACITY: usize;
    fn bit(sq: usize) -> Self;
    fn lsb(self) -> usize;
    fn msb(self) -> usize;
    fn popcount(self) -> u32;
    #[inline(always)]
    fn is_empty(self) -> bool {
        self == Self::ZERO
    }
    #[inline(always)]
    fn any(self) -> bool {
        self != Self::ZERO
    }
    #[inline(always)]
    fn has(self, sq: usize) -> bool {
        (self & Self::bit(sq)).any()
    }
    fn more_than_one(self) -> bool;
    /// Removes and returns the lowest square.
    #[inline(always)]
    fn pop_lsb(&mut self) -> usize {
        let s = self.lsb();
        self.clear_lsb();
        s
    }
    fn clear_lsb(&mut self);
    /// Iterator over the squares, lowest first.
    #[inline(always)]
    fn squares(self) -> Squares<Self> {
        Squares(self)
    }
}

pub struct Squares<B>(B);

impl<B: Bitboard> Iterator for Squares<B> {
    type Item = usize;
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.0.is_empty() {
            None
        } else {
            Some(self.0.pop_lsb())
        }
    }
}

macro_rules! impl_bitboard {
    ($t:ty) => {
        impl Bitboard for $t {
            const ZERO: Self = 0;
            const CAPACITY: usize = <$t>::BITS as usize;
            #[inline(always)]
            fn bit(sq: usize) -> Self {
                1 << sq
            }
            #[inline(always)]
            fn lsb(self) -> usize {
                self.trailing_zeros() as usize
            }
            #[inline(always)]
            fn msb(self) -> usize {
                (<$t>::BITS - 1 - self.leading_zeros()) as usize
            }
            #[inline(always)]
            fn popcount(self) -> u32 {
                self.count_ones()
            }
            #[inline(always)]
            fn more_than_one(self) -> bool {
                self & self.wrapping_sub(1) != 0
            }
            #[inline(always)]
            fn clear_lsb(&mut self) {
                *self &= self.wrapping_sub(1);
            }
        }
    };
}

impl_bitboard!(u64);
impl_bitboard!(u128);

#[cfg(test)]
mod tests {
    use super::*;

    fn check<B: Bitboard>() {
        let b = B::bit(3) | B::bit(B::CAPACITY - 1);
        assert_eq!(b.lsb(), 3);
        assert_eq!(b.msb(), B::CAPACITY - 1);
        assert_eq!(b.popcount(), 2);
        assert!(b.more_than_one());
        assert_eq!(b.squares().collect::<Vec<_>>(), vec![3, B::CAPACITY - 1]);
        assert!(!B::bit(7).more_than_one());
        assert!(B::ZERO.is_empty());
    }

    #[test]
    fn both_words() {
        check::<u64>();
        check::<u128>();
    }
}
