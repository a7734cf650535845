//! Regions (`[regions]`): named square sets written from White's side, compiled into a set per
//! colour (Black's mirrored across the middle rank). Pieces refer to them by name for where
//! they may stand, where they promote and where they gain moves.

use super::problems::Problems;
use super::SquareSet;
use crate::geometry::{BoardSize, ByColor, Square};
use std::collections::BTreeMap;

pub(super) type Regions = BTreeMap<String, ByColor<SquareSet>>;

/// Every region that parses; each one that does not is a problem under `regions.NAME`.
pub(super) fn compile(
    size: BoardSize,
    specs: &BTreeMap<String, String>,
    problems: &mut Problems,
) -> Regions {
    let mut regions = Regions::new();
    for (name, spec) in specs {
        match parse_region(size, spec) {
            Ok(white) => {
                let mut black = 0u128;
                for s in 0..size.squares() {
                    if white >> s & 1 == 1 {
                        black |= 1u128 << size.mirror(Square(s as u8)).index();
                    }
                }
                regions.insert(name.clone(), ByColor::new(white, black));
            }
            Err(e) => problems.push(&format!("regions.{name}"), e),
        }
    }
    regions
}

/// Every square of the board.
pub(super) fn all_squares(size: BoardSize) -> SquareSet {
    if size.squares() == 128 {
        !0
    } else {
        (1u128 << size.squares()) - 1
    }
}

/// `"a6:h8"`, `"d1:f3 e5"`: rectangles and single squares, separated by spaces or commas.
fn parse_region(size: BoardSize, spec: &str) -> Result<SquareSet, String> {
    let mut set = 0u128;
    for part in spec.split([' ', ',']).filter(|s| !s.is_empty()) {
        let (a, b) = part.split_once(':').unwrap_or((part, part));
        let sa = size
            .parse_square(a)
            .ok_or_else(|| format!("'{a}' is not a square of this board"))?;
        let sb = size
            .parse_square(b)
            .ok_or_else(|| format!("'{b}' is not a square of this board"))?;
        let (f0, f1) = (
            size.file_of(sa).min(size.file_of(sb)),
            size.file_of(sa).max(size.file_of(sb)),
        );
        let (r0, r1) = (
            size.rank_of(sa).min(size.rank_of(sb)),
            size.rank_of(sa).max(size.rank_of(sb)),
        );
        for r in r0..=r1 {
            for f in f0..=f1 {
                set |= 1u128 << size.square(f, r).index();
            }
        }
    }
    if set == 0 {
        return Err("region is empty".into());
    }
    Ok(set)
}
