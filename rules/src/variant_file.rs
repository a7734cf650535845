//! Variant files as written (`VariantConfig`, serde with `deny_unknown_fields`), before they are
//! compiled into a validated [`crate::Variant`]. Rule options are serde enums, never strings
//! interpreted by hand.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A variant file. Pieces and regions are TOML tables keyed by name, so a file that `extends`
/// another overrides single pieces (`[pieces.khun] betza = "..."`) and keeps the rest.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct VariantConfig {
    pub name: String,
    /// Another variant (built in, or a file `NAME.toml` beside this one) this file starts from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extends: Option<String>,
    #[serde(default)]
    pub description: String,
    /// Marks a reconstructed game whose rules no source gives in full.
    #[serde(default)]
    pub reconstruction: bool,
    /// Fairy-Stockfish's name for the same rules, if it has them (`UCI_Variant`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fairy_stockfish: Option<String>,
    pub board: BoardConfig,
    pub start_fen: String,
    /// Named regions from White's side as squares and rectangles (`"a6:h8"`, `"d1:f3"`,
    /// `"a1 c1:d2"`); Black's copy is mirrored across the middle rank.
    #[serde(default)]
    pub regions: BTreeMap<String, String>,
    /// Pieces in order; the order fixes the piece indices (and the network's planes).
    pub pieces: toml::Table,
    #[serde(default)]
    pub rules: RulesConfig,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BoardConfig {
    pub files: u8,
    pub ranks: u8,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PieceConfig {
    /// FEN letter, upper case (Black's is the lower case).
    pub letter: String,
    /// Movement in Betza notation (see the `betza` module).
    pub betza: String,
    /// The piece that must not be left in check (exactly one per side).
    #[serde(default)]
    pub royal: bool,
    /// Region the piece may never leave (palace, own half).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stand: Option<String>,
    /// Extra moves while the piece stands in a region (the soldier across the river).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moves_in: Vec<RegionMoves>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promotion: Option<PromotionConfig>,
    /// The first-move right of this piece is lost when an enemy piece with one of these letters
    /// ends a move on a square from which it would attack this piece on an empty board
    /// (Cambodian: the king's jump is lost to a rook move onto its rank or file).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub right_lost_to: Vec<String>,
    /// First-move leaps (Betza, leaps only) onto the square of an own pawn that steps one
    /// square forward in the same move (Makruk's Sut Met `fD`, Sut Ma `N`). Needs the piece to
    /// hold its first-move right.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_pawn: Option<String>,
    /// Whether the piece's attacks count as a chase for the xiangqi repetition rule (the
    /// soldier's do not; royal pieces never chase).
    #[serde(default = "yes")]
    pub chases: bool,
    /// Material value for the material evaluator and analysis (soldier/pawn = 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f32>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RegionMoves {
    pub region: String,
    pub betza: String,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PromotionConfig {
    /// Entering this region promotes.
    pub region: String,
    /// Letters of the pieces it may become.
    pub to: Vec<String>,
    /// Whether the piece may also stay as it is.
    #[serde(default)]
    pub optional: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StalemateResult {
    /// The stalemated side loses (xiangqi, Oxeli).
    Loss,
    #[default]
    Draw,
    /// The stalemated side wins.
    Win,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaceOff {
    #[default]
    None,
    /// Kings may not face each other on an open file (xiangqi's flying general).
    File,
    /// Nor on an open rank, file or diagonal (Oxeli).
    All,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RepetitionRule {
    /// The third occurrence of a position is a draw.
    #[default]
    Draw,
    /// A move that would make the fourth occurrence is illegal.
    ForbidFourth,
    /// At the fourth occurrence, perpetual check or chase loses, otherwise a draw
    /// (docs/rules.md#repetition-xiangqi).
    Xiangqi,
    /// Repetition has no effect.
    None,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CountingMode {
    #[default]
    None,
    /// Thai counting: the board's honour once no unpromoted pawn is left.
    Makruk,
    /// Cambodian counting: the board's honour from three pieces or fewer, limits one lower.
    Cambodian,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CountingConfig {
    pub mode: CountingMode,
    /// Board's honour limit in moves.
    #[serde(default = "default_board_limit")]
    pub board_limit: u16,
    /// Pieces' honour limits, first match wins: the strong side has at least `count` pieces of
    /// `piece` (a letter).
    #[serde(default = "default_piece_limits")]
    pub piece_limits: Vec<PieceLimit>,
    /// Pieces' honour limit when no entry matches.
    #[serde(default = "default_board_limit")]
    pub default_limit: u16,
}

fn default_board_limit() -> u16 {
    64
}

fn default_piece_limits() -> Vec<PieceLimit> {
    let l = |piece: &str, count, limit| PieceLimit {
        piece: piece.into(),
        count,
        limit,
    };
    vec![
        l("R", 2, 8),
        l("R", 1, 16),
        l("S", 2, 22),
        l("N", 2, 32),
        l("S", 1, 44),
    ]
}

impl Default for CountingConfig {
    fn default() -> Self {
        CountingConfig {
            mode: CountingMode::None,
            board_limit: 64,
            piece_limits: default_piece_limits(),
            default_limit: 64,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PieceLimit {
    pub piece: String,
    pub count: u8,
    pub limit: u16,
}

/// A material configuration in which neither side can mate: the game is drawn at once.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub enum MaterialDraw {
    /// Every piece on the board other than the kings is one of these letters (any number).
    Only(Vec<String>),
    /// At most one piece besides the kings, and it is one of these letters.
    AtMostOneOf(Vec<String>),
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FirstMoveConfig {
    /// A royal piece may not use its first-move moves while in check.
    #[serde(default = "yes")]
    pub royal_not_in_check: bool,
    /// The first capture of the game ends every first-move right of both sides (`ouk`).
    #[serde(default)]
    pub end_on_capture: bool,
}

fn yes() -> bool {
    true
}

impl Default for FirstMoveConfig {
    fn default() -> Self {
        toml::from_str("").expect("all first-move options have defaults")
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RulesConfig {
    #[serde(default)]
    pub stalemate: StalemateResult,
    #[serde(default)]
    pub face_off: FaceOff,
    #[serde(default)]
    pub repetition: RepetitionRule,
    #[serde(default)]
    pub counting: CountingConfig,
    /// A side that has given this many checks wins (Kar Ouk: 1); 0 is off. Adds the
    /// Fairy-Stockfish check-count field to the FEN.
    #[serde(default)]
    pub checks_to_win: u8,
    /// Self-play adjudicates a draw after this many plies.
    #[serde(default = "default_move_limit")]
    pub move_limit: u32,
    #[serde(default)]
    pub first_move: FirstMoveConfig,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub insufficient_material: Vec<MaterialDraw>,
}

fn default_move_limit() -> u32 {
    400
}

impl Default for RulesConfig {
    fn default() -> Self {
        toml::from_str("").expect("all rule options have defaults")
    }
}
