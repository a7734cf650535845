//! FEN reading and writing, Fairy-Stockfish compatible: first-move rights in the castling field
//! (files of the holders' back-rank squares), the counting limit and count in the en-passant and
//! half-move fields, and the check-count field (`1+1`) of check-counting variants.

use crate::bitboard::Bitboard;
use crate::engine::Pos;
use crate::error::ParseFenError;
use crate::geometry::{Color, Square};
use crate::tables::Tables;
use crate::variant::Variant;
use crate::variant_file::CountingMode;
use std::sync::Arc;

impl<B: Bitboard> Pos<B> {
    pub(crate) fn from_fen(
        v: Arc<Variant>,
        t: Arc<Tables<B>>,
        fen: &str,
    ) -> Result<Pos<B>, ParseFenError> {
        use ParseFenError as E;
        let mut p = Pos::empty(v.clone(), t);
        let size = v.size;
        let mut fields = fen.split_whitespace();
        let board = fields.next().ok_or(E::Empty)?;
        let ranks: Vec<&str> = board.split('/').collect();
        if ranks.len() != size.ranks as usize {
            return Err(E::Board(format!(
                "{} ranks, expected {}",
                ranks.len(),
                size.ranks
            )));
        }
        for (i, rank_str) in ranks.iter().enumerate() {
            let rank = size.ranks - 1 - i as u8;
            let mut file: u32 = 0;
            let mut chars = rank_str.chars().peekable();
            while let Some(ch) = chars.next() {
                if ch.is_ascii_digit() {
                    let mut n = ch.to_digit(10).unwrap();
                    while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                        n = n.saturating_mul(10).saturating_add(d);
                        chars.next();
                    }
                    if n == 0 {
                        return Err(E::Board(format!("rank {}: empty-square count 0", rank + 1)));
                    }
                    file = file.saturating_add(n);
                } else if ch.is_ascii_alphabetic() {
                    let kind = v
                        .kind_by_letter(ch)
                        .ok_or_else(|| E::Board(format!("'{ch}' is not a piece of {}", v.name)))?;
                    if file >= size.files as u32 {
                        return Err(E::Board(format!(
                            "rank {} has more than {} squares",
                            rank + 1,
                            size.files
                        )));
                    }
                    let c = if ch.is_ascii_uppercase() {
                        Color::White
                    } else {
                        Color::Black
                    };
                    p.put(size.square(file as u8, rank).index(), kind, c);
                    file += 1;
                } else {
                    return Err(E::Board(format!(
                        "rank {}: unexpected character '{ch}'",
                        rank + 1
                    )));
                }
                if file > size.files as u32 {
                    return Err(E::Board(format!(
                        "rank {} has more than {} squares",
                        rank + 1,
                        size.files
                    )));
                }
            }
            if file != size.files as u32 {
                return Err(E::Board(format!(
                    "rank {} has {} squares, expected {}",
                    rank + 1,
                    file,
                    size.files
                )));
            }
        }
        match fields.next() {
            None | Some("w") => p.stm = Color::White,
            Some("b") => p.stm = Color::Black,
            Some(other) => return Err(E::SideToMove(other.into())),
        }
        if p.stm == Color::Black {
            p.st.key ^= p.t.zobrist_side;
        }
        // Variants without first-move rights ignore the field's letters, as Fairy-Stockfish does.
        let has_rights = v.pieces.iter().any(|p| p.has_initial_moves());
        if let Some(rights) = fields.next() {
            if rights != "-" {
                for ch in rights.chars() {
                    let (c, f) = match ch {
                        'A'..='Z' => (Color::White, ch as u8 - b'A'),
                        'a'..='z' => (Color::Black, ch as u8 - b'a'),
                        _ => return Err(E::Rights(format!("unexpected character '{ch}'"))),
                    };
                    if f >= size.files {
                        return Err(E::Rights(format!("'{ch}' is not a file of this board")));
                    }
                    let rank = if c == Color::White { 0 } else { size.ranks - 1 };
                    let sq = size.square(f, rank).index();
                    // As Fairy-Stockfish: a right is kept only where an own piece stands.
                    if has_rights && p.by_color[c as usize].has(sq) {
                        p.st.gates |= B::bit(sq);
                    }
                }
            }
        }
        let counting = v.rules.counting.mode != CountingMode::None;
        if let Some(f4) = fields.next() {
            if f4 != "-" {
                if counting && f4.bytes().all(|b| b.is_ascii_digit()) {
                    p.st.count_limit = f4
                        .parse()
                        .map_err(|_| E::Counting(format!("'{f4}' is too large")))?;
                } else if counting {
                    return Err(E::Counting(format!(
                        "'{f4}': expected '-' or a counting limit in plies"
                    )));
                } else if size.parse_square(f4).is_none() {
                    return Err(E::Counting(format!("'{f4}': expected '-' or a square")));
                }
            }
        }
        let mut next = fields.next();
        if v.rules.checks_to_win > 0 {
            p.st.checks = [v.rules.checks_to_win; 2];
            if let Some(f) = next.filter(|f| f.contains('+')) {
                let (a, b) = f.split_once('+').unwrap();
                let parse = |s: &str| s.parse::<u8>().ok().filter(|&n| n <= 9);
                match (parse(a), parse(b)) {
                    (Some(w), Some(bl)) => p.st.checks = [w, bl],
                    _ => return Err(E::Checks(format!("'{f}': expected two digits such as 1+1"))),
                }
                next = fields.next();
            }
            for c in 0..2 {
                p.st.key ^= p.t.zobrist_checks[c][p.st.checks[c] as usize];
            }
        }
        if let Some(h) = next {
            let n: u16 = h.parse().map_err(|_| E::HalfmoveClock(h.into()))?;
            if p.st.count_limit != 0 {
                p.st.count_ply = n;
            } else {
                p.st.rule50 = n;
            }
        }
        if let Some(fm) = fields.next() {
            // Bounded so that plies fit comfortably; real games are far shorter.
            let n: u32 = fm
                .parse()
                .ok()
                .filter(|&n| n <= 1_000_000)
                .ok_or_else(|| E::FullmoveNumber(fm.into()))?;
            p.st.game_ply = 2 * n.max(1).saturating_sub(1) + (p.stm == Color::Black) as u32;
        } else {
            p.st.game_ply = (p.stm == Color::Black) as u32;
        }
        let rest: Vec<&str> = fields.collect();
        if !rest.is_empty() {
            return Err(E::TrailingFields(rest.join(" ")));
        }
        // Legality of the position itself.
        for c in Color::BOTH {
            let n = p.pieces_of(p.royal, c).popcount();
            if n != 1 {
                return Err(E::Illegal(format!(
                    "{c} has {n} {}s, expected one",
                    v.pieces[p.royal].name
                )));
            }
        }
        for (k, piece) in v.pieces.iter().enumerate() {
            for c in Color::BOTH {
                let stand = p.t.pieces[k * 2 + c as usize].stand;
                if (p.pieces_of(k, c) & !stand).any() {
                    let sq = (p.pieces_of(k, c) & !stand).lsb();
                    return Err(E::Illegal(format!(
                        "{c} {} on {} is outside the squares it may stand on",
                        piece.name,
                        size.name(Square(sq as u8))
                    )));
                }
            }
        }
        if p.in_check_color(!p.stm) && !p.checks_exhausted() {
            return Err(E::Illegal(format!(
                "{} is not to move but is in check",
                !p.stm
            )));
        }
        Ok(p)
    }

    pub fn fen(&self) -> String {
        let size = self.v.size;
        let mut s = String::new();
        for r in (0..size.ranks).rev() {
            let mut empty = 0;
            for f in 0..size.files {
                let piece = self.board[size.square(f, r).index()];
                if piece.is_none() {
                    empty += 1;
                    continue;
                }
                if empty > 0 {
                    s.push_str(&empty.to_string());
                    empty = 0;
                }
                let l = self.v.pieces[piece.kind()].letter;
                s.push(if piece.color() == Color::White {
                    l
                } else {
                    l.to_ascii_lowercase()
                });
            }
            if empty > 0 {
                s.push_str(&empty.to_string());
            }
            if r > 0 {
                s.push('/');
            }
        }
        s.push(' ');
        s.push(self.stm.fen_char());
        s.push(' ');
        let mut rights = String::new();
        for c in Color::BOTH {
            let rank = if c == Color::White { 0 } else { size.ranks - 1 };
            for f in 0..size.files {
                let sq = size.square(f, rank).index();
                if self.st.gates.has(sq) && self.by_color[c as usize].has(sq) {
                    let ch = (b'a' + f) as char;
                    rights.push(if c == Color::White {
                        ch.to_ascii_uppercase()
                    } else {
                        ch
                    });
                }
            }
        }
        s.push_str(if rights.is_empty() { "-" } else { &rights });
        if self.st.count_limit != 0 {
            s.push_str(&format!(" {}", self.st.count_limit));
        } else {
            s.push_str(" -");
        }
        if self.v.rules.checks_to_win > 0 {
            s.push_str(&format!(" {}+{}", self.st.checks[0], self.st.checks[1]));
        }
        let half = if self.st.count_limit != 0 {
            self.st.count_ply
        } else {
            self.st.rule50
        };
        let full = 1 + (self.st.game_ply - (self.stm == Color::Black) as u32) / 2;
        s.push_str(&format!(" {half} {full}"));
        s
    }
}
