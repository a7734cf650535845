//! A compiled variant: [`Variant`] with its pieces (parsed Betza movement), regions as square
//! sets and rule options resolved to piece indices, and how a variant file becomes one.
//!
//! This file holds the compiled types and the public ways to get a variant (built in, from a
//! file, from TOML text, with overrides). `Variant::compile` runs the compiler in the
//! submodules, one per concept, each recording what is wrong in a shared `Problems` list so
//! that every problem of a file is reported at once:
//! * `load`: built-in texts, files and the `extends` chain, merged into one TOML table;
//! * `sections`: the table cut into its sections, each deserialized; the board size;
//! * `regions`: `[regions]` as square sets per colour;
//! * `pieces`: letters, then each piece's movement, regions, promotion and rights;
//! * `rules`: `[rules]` resolved against the piece letters;
//! * `hash`: the rules hash that datasets and nets record;
//! * `start`: the start FEN, read by the engine as the last check.

use crate::betza::Atom;
use crate::error::VariantError;
use crate::geometry::{BoardSize, ByColor, Color, Square};
use crate::variant_file::{
    CountingMode, FaceOff, FirstMoveConfig, RepetitionRule, StalemateResult, VariantConfig,
};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

mod hash;
mod load;
mod pieces;
mod problems;
mod regions;
mod rules;
mod sections;
mod start;

pub use load::{canonical_name, BUILTIN};
use load::{inherit, load_table, parse_table, Origin};
use problems::Problems;

/// At most this many piece kinds per variant (the move encodes a promotion kind in 4 bits).
pub const MAX_KINDS: usize = 15;

/// A square set over the largest board; the engine converts it to its own bitboard word.
pub type SquareSet = u128;

#[derive(Clone, Debug)]
pub struct Promotion {
    pub zone: ByColor<SquareSet>,
    pub to: Vec<usize>,
    pub optional: bool,
}

/// A piece kind of a compiled variant.
#[derive(Clone, Debug)]
pub struct PieceDef {
    pub name: String,
    /// Upper-case FEN letter.
    pub letter: char,
    pub royal: bool,
    pub atoms: Vec<Atom>,
    /// Extra atoms while standing in a region (per colour, mirrored for Black), with the
    /// region's name (the piece-value fit counts the piece inside and outside apart).
    pub moves_in: Vec<(ByColor<SquareSet>, Vec<Atom>, String)>,
    /// Where the piece may stand; all squares when unrestricted.
    pub stand: ByColor<SquareSet>,
    pub promotion: Option<Promotion>,
    pub right_lost_to: Vec<usize>,
    /// First-move leaps onto an own pawn that steps forward in the same move.
    pub push_pawn: Vec<Atom>,
    pub chases: bool,
    pub value: f32,
}

impl PieceDef {
    /// A pawn-like piece: one that promotes. Its moves reset the half-move clock, and the
    /// counting rules ask whether any is left.
    pub fn is_pawn(&self) -> bool {
        self.promotion.is_some()
    }
    pub fn has_initial_moves(&self) -> bool {
        self.atoms.iter().any(|a| a.initial) || !self.push_pawn.is_empty()
    }
}

#[derive(Clone, Debug)]
pub struct CountingRules {
    pub mode: CountingMode,
    pub board_limit: u16,
    /// (kind, at least this many, limit in moves), first match wins.
    pub piece_limits: Vec<(usize, u8, u16)>,
    pub default_limit: u16,
}

#[derive(Clone, Debug)]
pub enum MaterialDrawRule {
    Only(Vec<usize>),
    AtMostOneOf(Vec<usize>),
}

#[derive(Clone, Debug)]
pub struct Rules {
    pub stalemate: StalemateResult,
    pub face_off: FaceOff,
    pub repetition: RepetitionRule,
    pub counting: CountingRules,
    pub checks_to_win: u8,
    pub move_limit: u32,
    pub first_move: FirstMoveConfig,
    pub insufficient_material: Vec<MaterialDrawRule>,
}

/// A validated variant: everything the engine needs, independent of the bitboard word.
#[derive(Clone, Debug)]
pub struct Variant {
    pub name: String,
    pub description: String,
    pub reconstruction: bool,
    pub fairy_stockfish: Option<String>,
    pub size: BoardSize,
    pub pieces: Vec<PieceDef>,
    pub regions: BTreeMap<String, ByColor<SquareSet>>,
    pub rules: Rules,
    pub start_fen: String,
    /// The merged configuration (after `extends`), for display and hashing.
    pub config: VariantConfig,
    /// Hash of the rules (everything but name and description): datasets and nets record it.
    pub rules_hash: u64,
    /// Attack tables, built on first use for each bitboard word.
    pub tables: crate::position::TableCache,
}

impl Variant {
    /// A shipped variant by our name or Fairy-Stockfish's (`cambodian`, `karouk`).
    pub fn builtin(name: &str) -> Result<Arc<Variant>, VariantError> {
        let name = canonical_name(name);
        let table = load_table(name, &Origin::Builtin, 0)?;
        Self::compile(table, &format!("{name}.toml")).map(Arc::new)
    }

    pub fn builtin_names() -> impl Iterator<Item = &'static str> {
        BUILTIN.iter().map(|(n, _)| *n)
    }

    /// A user's variant file; `extends` finds a sibling file first, then a built-in variant.
    pub fn from_file(path: &Path) -> Result<Arc<Variant>, VariantError> {
        let table = load_table("", &Origin::File(path), 0)?;
        Self::compile(table, &path.display().to_string()).map(Arc::new)
    }

    /// A variant from TOML text (no `extends` to files; built-in parents only).
    pub fn from_toml_str(text: &str, file: &str) -> Result<Arc<Variant>, VariantError> {
        let mut table = parse_table(text, file)?;
        if let Some(parent) = table.remove("extends") {
            let parent = parent
                .as_str()
                .ok_or_else(|| VariantError::single(file, "extends", "must be a variant name"))?;
            let mut base = load_table(canonical_name(parent), &Origin::Builtin, 1)?;
            inherit(&mut base, table);
            table = base;
        }
        Self::compile(table, file).map(Arc::new)
    }

    /// This variant with `key=value` overrides applied (`rules.stalemate=draw`,
    /// `stalemate=draw` as a short form for a key under `rules`).
    pub fn with_overrides(&self, sets: &[String]) -> Result<Arc<Variant>, VariantError> {
        let file = format!("{} (overrides)", self.name);
        let mut table = toml::Table::try_from(&self.config)
            .map_err(|e| VariantError::single(&file, "", e.to_string()))?;
        for set in sets {
            let Some((key, value)) = varzero_settings::assignment(set) else {
                return Err(VariantError::single(
                    &file,
                    set.as_str(),
                    "expected KEY=VALUE",
                ));
            };
            let mut path: Vec<&str> = key.split('.').collect();
            if path.len() == 1 && !matches!(path[0], "name" | "start_fen" | "description") {
                path.insert(0, "rules");
            }
            let mut t = &mut table;
            for p in &path[..path.len() - 1] {
                t = t
                    .entry(p.to_string())
                    .or_insert_with(|| toml::Value::Table(Default::default()))
                    .as_table_mut()
                    .ok_or_else(|| VariantError::single(&file, key, "not a table"))?;
            }
            t.insert(path[path.len() - 1].to_string(), value);
        }
        Self::compile(table, &file).map(Arc::new)
    }

    pub fn kind_by_letter(&self, letter: char) -> Option<usize> {
        let up = letter.to_ascii_uppercase();
        self.pieces.iter().position(|p| p.letter == up)
    }

    pub fn royal_kind(&self) -> usize {
        self.pieces
            .iter()
            .position(|p| p.royal)
            .expect("validated: one royal piece")
    }

    /// Compiles a merged table (after `extends`) into a variant, section by section: every
    /// problem of the file is reported at once, except that nothing past the top level is
    /// checked when the top level does not parse or the board size is out of range.
    fn compile(table: toml::Table, file: &str) -> Result<Variant, VariantError> {
        let mut problems = Problems::new(file);
        let sections::Sections {
            top,
            pieces_raw,
            pieces: piece_cfgs,
            rules: rules_cfg,
        } = sections::split(table, &mut problems);
        let Some(top) = top else {
            return Err(problems.into_error());
        };
        let Some(size) = sections::board_size(&top, &mut problems) else {
            return Err(problems.into_error());
        };
        let regions = regions::compile(size, &top.regions, &mut problems);
        let letters = pieces::letters(&piece_cfgs, &mut problems);
        let cx = pieces::Context {
            regions: &regions,
            all: regions::all_squares(size),
            letters: &letters,
        };
        let pieces = pieces::compile(&piece_cfgs, &cx, &mut problems);
        let rules = rules::compile(&rules_cfg, &letters, &mut problems);

        let mut config = top.clone();
        config.pieces = pieces_raw;
        config.rules = rules_cfg;
        let rules_hash = hash::rules_hash(&config);

        problems.finish()?;
        let variant = Variant {
            name: top.name,
            description: top.description,
            reconstruction: top.reconstruction,
            fairy_stockfish: top.fairy_stockfish,
            size,
            pieces,
            regions,
            rules,
            start_fen: top.start_fen,
            config,
            rules_hash,
            tables: Default::default(),
        };
        start::settle(variant, file)
    }

    /// Whether the rules are the same in a left-right mirror (files reversed) and the start
    /// position is its own mirror: every move atom has its mirror twin with the same modality,
    /// every zone (regions, promotion zones, where a piece may stand or moves otherwise) is
    /// symmetric, and so is the start position. Then a position and its mirror have the same
    /// value and mirrored best moves, which is what mirror augmentation relies on. The Xiangqi
    /// family is; Makruk is not (its king and met stand on other files for each side).
    pub fn mirror_symmetric(self: &Arc<Self>) -> bool {
        let files = self.size.files as usize;
        let squares = files * self.size.ranks as usize;
        let mirror = |sq: usize| sq - sq % files + (files - 1 - sq % files);
        let set_symmetric =
            |set: SquareSet| (0..squares).all(|sq| (set >> sq & 1) == (set >> mirror(sq) & 1));
        let both = |b: &ByColor<SquareSet>| {
            set_symmetric(b[Color::White]) && set_symmetric(b[Color::Black])
        };
        let atoms_symmetric = |atoms: &[Atom]| {
            atoms
                .iter()
                .all(|a| atoms.contains(&Atom { dx: -a.dx, ..*a }))
        };
        let pieces = self.pieces.iter().all(|p| {
            atoms_symmetric(&p.atoms)
                && atoms_symmetric(&p.push_pawn)
                && both(&p.stand)
                && p.moves_in
                    .iter()
                    .all(|(z, a, _)| both(z) && atoms_symmetric(a))
                && p.promotion.as_ref().is_none_or(|pr| both(&pr.zone))
        });
        let Ok(start) = crate::Position::from_fen(self, &self.start_fen) else {
            return false;
        };
        let rights = start.first_move_rights();
        pieces
            && self.regions.values().all(both)
            && (0..squares).all(|sq| {
                let (a, b) = (Square(sq as u8), Square(mirror(sq) as u8));
                start.piece_at(a) == start.piece_at(b) && rights.contains(&a) == rights.contains(&b)
            })
    }

    /// Which side the colour index belongs to, for region lookups.
    pub fn region_mask(&self, name: &str, c: Color) -> Option<SquareSet> {
        self.regions.get(name).map(|r| r[c])
    }
}

#[cfg(test)]
mod mirror_tests {
    use super::Variant;

    #[test]
    fn xiangqi_is_its_own_mirror_and_makruk_is_not() {
        // Xiangqi's pieces, palace and river are symmetric about the e-file, and so is its
        // start; Makruk's and Ouk Chatrang's kings stand on d1 and e8, their met beside them.
        for name in ["xiangqi", "elephant-chess"] {
            assert!(Variant::builtin(name).unwrap().mirror_symmetric(), "{name}");
        }
        for name in ["makruk", "ouk-chatrang"] {
            assert!(
                !Variant::builtin(name).unwrap().mirror_symmetric(),
                "{name}"
            );
        }
    }
}
