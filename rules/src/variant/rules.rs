//! Rules (`[rules]`): the rule options resolved against the pieces (the counting rules' piece
//! limits and the insufficient-material rules name pieces by letter) and range-checked.

use super::pieces::Letters;
use super::problems::Problems;
use super::{CountingRules, MaterialDrawRule, Rules};
use crate::variant_file::{CountingMode, MaterialDraw, RulesConfig};

pub(super) fn compile(cfg: &RulesConfig, letters: &Letters, problems: &mut Problems) -> Rules {
    // Counting (docs/rules.md#counting): the pieces' honour limits name the strong side's
    // pieces by letter. Counting is defined in terms of pawns being left; a variant without
    // pawns still counts (none is ever left).
    let mut piece_limits = Vec::new();
    if cfg.counting.mode != CountingMode::None {
        for (i, pl) in cfg.counting.piece_limits.iter().enumerate() {
            match letters.kind_of(&pl.piece) {
                Some(k) => piece_limits.push((k, pl.count, pl.limit)),
                None => problems.push(
                    &format!("rules.counting.piece_limits[{i}].piece"),
                    format!("no piece with letter '{}'", pl.piece),
                ),
            }
        }
    }
    let mut insufficient = Vec::new();
    for (i, md) in cfg.insufficient_material.iter().enumerate() {
        let ls = match md {
            MaterialDraw::Only(l) | MaterialDraw::AtMostOneOf(l) => l,
        };
        let mut ks = Vec::new();
        for l in ls {
            match letters.kind_of(l) {
                Some(k) => ks.push(k),
                None => problems.push(
                    &format!("rules.insufficient_material[{i}]"),
                    format!("no piece with letter '{l}'"),
                ),
            }
        }
        insufficient.push(match md {
            MaterialDraw::Only(_) => MaterialDrawRule::Only(ks),
            MaterialDraw::AtMostOneOf(_) => MaterialDrawRule::AtMostOneOf(ks),
        });
    }
    if cfg.checks_to_win > 9 {
        problems.push(
            "rules.checks_to_win",
            "at most 9 (the FEN field holds one digit)",
        );
    }
    Rules {
        stalemate: cfg.stalemate,
        face_off: cfg.face_off,
        repetition: cfg.repetition,
        counting: CountingRules {
            mode: cfg.counting.mode,
            board_limit: cfg.counting.board_limit,
            piece_limits,
            default_limit: cfg.counting.default_limit,
        },
        checks_to_win: cfg.checks_to_win,
        move_limit: cfg.move_limit,
        first_move: cfg.first_move.clone(),
        insufficient_material: insufficient,
    }
}
