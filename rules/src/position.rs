//! The public position: one type for every variant, dispatching to the engine instantiated for
//! the bitboard word the board needs (`u64` up to 8x8, `u128` beyond).

use crate::bitboard::Bitboard;
use crate::engine::{Pos, StateData};
use crate::error::{ParseFenError, ParseMoveError};
use crate::geometry::{Color, Square};
use crate::moves::{Move, MoveList};
use crate::tables::Tables;
use crate::variant::Variant;
use std::sync::{Arc, OnceLock};

/// Bitboard words the engine is instantiated for, each with its per-variant table cache.
pub trait Word: Bitboard {
    fn tables(v: &Variant) -> Arc<Tables<Self>>;
}

/// Per-variant caches of the compiled tables for each word.
#[derive(Clone, Debug, Default)]
pub struct TableCache {
    small: OnceLock<Arc<Tables<u64>>>,
    large: OnceLock<Arc<Tables<u128>>>,
}

impl Word for u64 {
    fn tables(v: &Variant) -> Arc<Tables<u64>> {
        v.tables
            .small
            .get_or_init(|| Arc::new(Tables::new(v)))
            .clone()
    }
}

impl Word for u128 {
    fn tables(v: &Variant) -> Arc<Tables<u128>> {
        v.tables
            .large
            .get_or_init(|| Arc::new(Tables::new(v)))
            .clone()
    }
}

/// A position of any variant.
#[derive(Clone)]
pub enum Position {
    Small(Pos<u64>),
    Large(Pos<u128>),
}

macro_rules! dispatch {
    ($self:expr, $p:ident => $e:expr) => {
        match $self {
            Position::Small($p) => $e,
            Position::Large($p) => $e,
        }
    };
}

impl std::fmt::Debug for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Position({})", self.fen())
    }
}

impl Position {
    /// A position from a FEN in Fairy-Stockfish's conventions for the variant (Makruk's
    /// counting fields included); [`Position::fen`] writes it back as it was read.
    ///
    /// ```
    /// use varzero_rules::{Color, Position, Variant};
    /// let makruk = Variant::builtin("makruk").unwrap();
    /// let fen = "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - - 0 1";
    /// let p = Position::from_fen(&makruk, fen).unwrap();
    /// assert_eq!(p.fen(), fen);
    /// assert_eq!(p.side_to_move(), Color::White);
    /// assert_eq!(Position::start(&makruk).fen(), fen);
    /// assert!(Position::from_fen(&makruk, "rnsmksnr/8 w").is_err());
    /// ```
    pub fn from_fen(v: &Arc<Variant>, fen: &str) -> Result<Position, ParseFenError> {
        if v.size.squares() <= 64 {
            Ok(Position::Small(Pos::from_fen(
                v.clone(),
                u64::tables(v),
                fen,
            )?))
        } else {
            Ok(Position::Large(Pos::from_fen(
                v.clone(),
                u128::tables(v),
                fen,
            )?))
        }
    }

    pub fn start(v: &Arc<Variant>) -> Position {
        Position::from_fen(v, &v.start_fen)
            .expect("start FEN validated when the variant was compiled")
    }

    pub fn variant(&self) -> &Arc<Variant> {
        dispatch!(self, p => &p.v)
    }

    pub fn fen(&self) -> String {
        dispatch!(self, p => p.fen())
    }

    pub fn side_to_move(&self) -> Color {
        dispatch!(self, p => p.stm)
    }

    pub fn in_check(&self) -> bool {
        dispatch!(self, p => p.in_check())
    }

    /// Legal moves as perft counts them: no repetition or counting effects.
    pub fn legal_moves(&self) -> MoveList {
        let mut l = MoveList::new();
        dispatch!(self, p => p.generate_legal(&mut l));
        l
    }

    pub fn make(&mut self, m: Move) {
        dispatch!(self, p => p.make(m))
    }

    pub fn unmake(&mut self) {
        dispatch!(self, p => p.unmake())
    }

    /// Number of moves made since this position was set up from a FEN.
    pub fn history_len(&self) -> usize {
        dispatch!(self, p => p.stack.len())
    }

    /// The moves made since the position was set up.
    pub fn history(&self) -> Vec<Move> {
        dispatch!(self, p => p.stack.iter().map(|u| u.mv).collect())
    }

    pub fn perft(&mut self, depth: u32) -> u64 {
        dispatch!(self, p => p.perft(depth))
    }

    /// Perft per root move.
    pub fn divide(&mut self, depth: u32) -> Vec<(Move, u64)> {
        let moves = self.legal_moves();
        moves
            .iter()
            .map(|&m| {
                self.make(m);
                let n = if depth <= 1 { 1 } else { self.perft(depth - 1) };
                self.unmake();
                (m, n)
            })
            .collect()
    }

    /// Repetition key: placement, side to move and check counts.
    pub fn key(&self) -> u64 {
        dispatch!(self, p => p.st.key)
    }

    /// Plies since the start of the game (from the FEN's full-move number).
    pub fn game_ply(&self) -> u32 {
        dispatch!(self, p => p.st.game_ply)
    }

    /// Counting state: (plies counted, limit in plies); limit 0 when no count runs.
    pub fn counting(&self) -> (u16, u16) {
        dispatch!(self, p => (p.st.count_ply, p.st.count_limit))
    }

    /// Checks each side still has to give (check-counting variants).
    pub fn checks_remaining(&self) -> [u8; 2] {
        dispatch!(self, p => p.st.checks)
    }

    pub fn rule50(&self) -> u16 {
        dispatch!(self, p => p.st.rule50)
    }

    /// Squares whose piece holds a first-move right.
    pub fn first_move_rights(&self) -> Vec<Square> {
        dispatch!(self, p => p.st.gates.squares().map(|s| Square(s as u8)).collect())
    }

    /// The piece on a square: (kind index, colour).
    pub fn piece_at(&self, sq: Square) -> Option<(usize, Color)> {
        let piece = dispatch!(self, p => p.board[sq.index()]);
        piece.is_some().then(|| (piece.kind(), piece.color()))
    }

    /// The square of `c`'s royal piece, if it has one on the board.
    pub fn king_square(&self, c: Color) -> Option<Square> {
        dispatch!(self, p => p.king_square(c)).map(|s| Square(s as u8))
    }

    /// Whether a piece of `c` whose kind is in the bit mask `kinds` attacks `sq` (a cheap
    /// test for evaluations: pins and the legality of the capture are not considered).
    pub fn attacked_by_kinds(&self, sq: Square, c: Color, kinds: u32) -> bool {
        dispatch!(self, p => p.attacked_by_kinds(sq.index(), c, kinds))
    }

    /// Squares `c`'s non-royal pieces could move to or capture on (pseudo-legal, summed).
    pub fn mobility(&self, c: Color) -> u32 {
        dispatch!(self, p => p.mobility(c))
    }

    /// Calls `f(square, kind)` for every piece of `c`.
    pub fn for_each_piece(&self, c: Color, mut f: impl FnMut(Square, usize)) {
        dispatch!(self, p => {
            for s in p.by_color[c as usize].squares() {
                f(Square(s as u8), p.board[s].kind());
            }
        })
    }

    /// Number of pieces of a kind and colour.
    pub fn count(&self, kind: usize, c: Color) -> u32 {
        dispatch!(self, p => p.pieces_of(kind, c).popcount())
    }

    pub fn uci(&self, m: Move) -> String {
        let v = self.variant();
        let letters: Vec<char> = v.pieces.iter().map(|p| p.letter).collect();
        m.uci(v.size, &letters)
    }

    /// A line of moves from this position, in UCI notation (each move written in the position
    /// it is played from).
    pub fn uci_line(&self, moves: &[Move]) -> Vec<String> {
        let mut p = self.clone();
        moves
            .iter()
            .map(|&m| {
                let s = p.uci(m);
                p.make(m);
                s
            })
            .collect()
    }

    /// Reads a UCI move and checks it is legal (perft legality; see `game_moves` for the
    /// repetition-aware list). A promotion without its suffix is accepted when unambiguous.
    pub fn parse_uci(&self, s: &str) -> Result<Move, ParseMoveError> {
        let size = self.variant().size;
        let (from, rest) = size
            .parse_square_prefix(s)
            .ok_or_else(|| ParseMoveError::Syntax(s.into()))?;
        let (to, rest) = size
            .parse_square_prefix(rest)
            .ok_or_else(|| ParseMoveError::Syntax(s.into()))?;
        let promo = match rest.len() {
            0 => None,
            1 => Some(
                self.variant()
                    .kind_by_letter(rest.chars().next().unwrap())
                    .ok_or_else(|| ParseMoveError::Syntax(s.into()))?,
            ),
            _ => return Err(ParseMoveError::Syntax(s.into())),
        };
        let legal = self.legal_moves();
        let candidates: Vec<Move> = legal
            .iter()
            .copied()
            .filter(|m| m.from() == from.index() && m.to() == to.index())
            .filter(|m| promo.is_none() || m.promotion() == promo)
            .collect();
        match candidates.as_slice() {
            [m] => Ok(*m),
            [] => Err(ParseMoveError::Illegal(s.into())),
            many => many
                .iter()
                .find(|m| m.promotion().is_none())
                .copied()
                .ok_or_else(|| ParseMoveError::Illegal(s.into())),
        }
    }

    /// Makes a move given in UCI notation.
    pub fn play_uci(&mut self, s: &str) -> Result<Move, ParseMoveError> {
        let m = self.parse_uci(s)?;
        self.make(m);
        Ok(m)
    }

    /// A text diagram for debugging.
    pub fn diagram(&self) -> String {
        let v = self.variant().clone();
        let size = v.size;
        let mut s = String::new();
        for r in (0..size.ranks).rev() {
            s.push_str(&format!("{:>2} ", r + 1));
            for f in 0..size.files {
                let ch = match self.piece_at(size.square(f, r)) {
                    None => '.',
                    Some((k, Color::White)) => v.pieces[k].letter,
                    Some((k, Color::Black)) => v.pieces[k].letter.to_ascii_lowercase(),
                };
                s.push(' ');
                s.push(ch);
            }
            s.push('\n');
        }
        s.push_str("   ");
        for f in 0..size.files {
            s.push(' ');
            s.push((b'a' + f) as char);
        }
        s.push('\n');
        s
    }

    /// Plies since the last irreversible move (capture or pawn move).
    pub(crate) fn reversible_plies(&self) -> u16 {
        dispatch!(self, p => p.st.rule50)
    }

    /// Earlier occurrences of the current position in the history (a position cannot repeat
    /// across a capture or pawn move, so the search stops at the last one). Called at every
    /// node of a search: it walks the undo stack in place.
    pub fn repetitions(&self) -> usize {
        dispatch!(self, p => p.repetitions())
    }

    pub(crate) fn states(&self) -> Vec<(u64, u16)> {
        // (key, rule50) of every earlier position, oldest first, then the current one.
        dispatch!(self, p => {
            let mut v: Vec<(u64, u16)> = p.stack.iter().map(|u| state_key(&u.prev)).collect();
            v.push(state_key(&p.st));
            v
        })
    }

    /// Whether a piece of `c` on `sq` is protected against the piece on `by`: another piece of
    /// `c` could recapture once `by` has taken.
    pub(crate) fn defended(&self, sq: usize, c: Color, by: usize) -> bool {
        dispatch!(self, p => p.defended(sq, c, by))
    }

    /// The enemy-occupied squares attacked by the piece standing on `from`.
    pub(crate) fn piece_attacks(&self, from: usize) -> Vec<usize> {
        dispatch!(self, p => p.piece_attacks(from))
    }
}

fn state_key<B: Bitboard>(s: &StateData<B>) -> (u64, u16) {
    (s.key, s.rule50)
}
