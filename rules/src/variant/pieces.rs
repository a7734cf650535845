//! Pieces (`[pieces.NAME]`): letters first, so that pieces can refer to each other by letter
//! (promotion, lost rights) and the rules can name them; then each piece's Betza movement,
//! region moves, standing region, promotion, lost rights and pawn push, resolved to indices.

use super::problems::Problems;
use super::regions::Regions;
use super::{PieceDef, Promotion, SquareSet, MAX_KINDS};
use crate::betza::{self, Atom};
use crate::geometry::ByColor;
use crate::variant_file::PieceConfig;

/// The pieces' FEN letters in file order (`'?'` for a piece whose letter is not valid), which
/// resolve a letter written anywhere in the file to a piece index.
pub(super) struct Letters(Vec<char>);

impl Letters {
    /// The piece a letter names (either case).
    pub(super) fn kind_of(&self, l: &str) -> Option<usize> {
        let mut c = l.chars();
        match (c.next(), c.next()) {
            (Some(ch), None) => self.0.iter().position(|&x| x == ch.to_ascii_uppercase()),
            _ => None,
        }
    }
}

/// Each piece's letter: a single upper-case letter, used by no other piece. Also checks the
/// number of pieces.
pub(super) fn letters(cfgs: &[(String, PieceConfig)], problems: &mut Problems) -> Letters {
    let mut letters: Vec<char> = Vec::new();
    for (name, pc) in cfgs {
        let key = format!("pieces.{name}.letter");
        let mut chars = pc.letter.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii_uppercase() => {
                if letters.contains(&c) {
                    problems.push(&key, format!("letter '{c}' is used by another piece"));
                }
                letters.push(c);
            }
            _ => {
                problems.push(
                    &key,
                    format!("'{}' is not a single upper-case letter", pc.letter),
                );
                letters.push('?');
            }
        }
    }
    if cfgs.len() > MAX_KINDS {
        problems.push(
            "pieces",
            format!("{} pieces: at most {MAX_KINDS} are supported", cfgs.len()),
        );
    }
    Letters(letters)
}

/// What a piece refers to outside itself.
pub(super) struct Context<'a> {
    pub(super) regions: &'a Regions,
    /// Every square of the board (where an unrestricted piece may stand).
    pub(super) all: SquareSet,
    pub(super) letters: &'a Letters,
}

/// Every piece, in file order; then the check that exactly one is royal.
pub(super) fn compile(
    cfgs: &[(String, PieceConfig)],
    cx: &Context,
    problems: &mut Problems,
) -> Vec<PieceDef> {
    let pieces: Vec<PieceDef> = cfgs
        .iter()
        .map(|(name, pc)| piece(name, pc, cx, problems))
        .collect();
    let royals = pieces.iter().filter(|p| p.royal).count();
    if royals != 1 && !cfgs.is_empty() {
        problems.push(
            "pieces",
            format!("exactly one piece must be royal, found {royals}"),
        );
    }
    pieces
}

fn piece(name: &str, pc: &PieceConfig, cx: &Context, problems: &mut Problems) -> PieceDef {
    let key = |k: &str| format!("pieces.{name}.{k}");
    let atoms = match betza::parse(&pc.betza) {
        Ok(a) => a,
        Err(e) => {
            problems.push(&key("betza"), format!("'{}' {e}", pc.betza));
            Vec::new()
        }
    };
    let moves_in = moves_in(pc, &key, cx, problems);
    let stand = match &pc.stand {
        None => ByColor::new(cx.all, cx.all),
        Some(r) => cx.regions.get(r).copied().unwrap_or_else(|| {
            problems.push(&key("stand"), format!("no region '{r}'"));
            ByColor::new(cx.all, cx.all)
        }),
    };
    let promotion = promotion(pc, &key, cx, problems);
    let mut right_lost_to = Vec::new();
    for l in &pc.right_lost_to {
        match cx.letters.kind_of(l) {
            Some(k) => right_lost_to.push(k),
            None => problems.push(&key("right_lost_to"), format!("no piece with letter '{l}'")),
        }
    }
    let push_pawn = push_pawn(pc, &key, problems);
    let default_value = if pc.royal { 0.0 } else { 1.0 };
    PieceDef {
        name: name.to_string(),
        letter: pc.letter.chars().next().unwrap_or('?').to_ascii_uppercase(),
        royal: pc.royal,
        atoms,
        moves_in,
        stand,
        promotion,
        right_lost_to,
        push_pawn,
        chases: pc.chases && !pc.royal,
        value: pc.value.unwrap_or(default_value),
    }
}

/// `moves_in`: extra leaps while standing in a region (an unknown region drops the entry).
fn moves_in(
    pc: &PieceConfig,
    key: &dyn Fn(&str) -> String,
    cx: &Context,
    problems: &mut Problems,
) -> Vec<(ByColor<SquareSet>, Vec<Atom>, String)> {
    let mut moves_in = Vec::new();
    for (i, rm) in pc.moves_in.iter().enumerate() {
        let r = cx.regions.get(&rm.region).copied();
        if r.is_none() {
            problems.push(
                &key(&format!("moves_in[{i}].region")),
                format!("no region '{}'", rm.region),
            );
        }
        match betza::parse(&rm.betza) {
            Ok(a) => {
                if a.iter().any(|a| a.rider || a.initial) {
                    problems.push(
                        &key(&format!("moves_in[{i}].betza")),
                        "region moves may only be leaps",
                    );
                }
                if let Some(r) = r {
                    moves_in.push((r, a, rm.region.clone()));
                }
            }
            Err(e) => problems.push(
                &key(&format!("moves_in[{i}].betza")),
                format!("'{}' {e}", rm.betza),
            ),
        }
    }
    moves_in
}

/// `promotion`: the zone and the pieces a pawn may become (`None` without a known zone).
fn promotion(
    pc: &PieceConfig,
    key: &dyn Fn(&str) -> String,
    cx: &Context,
    problems: &mut Problems,
) -> Option<Promotion> {
    let pr = pc.promotion.as_ref()?;
    let zone = cx.regions.get(&pr.region).copied();
    if zone.is_none() {
        problems.push(
            &key("promotion.region"),
            format!("no region '{}'", pr.region),
        );
    }
    let mut to = Vec::new();
    for l in &pr.to {
        match cx.letters.kind_of(l) {
            Some(k) => to.push(k),
            None => problems.push(&key("promotion.to"), format!("no piece with letter '{l}'")),
        }
    }
    if pr.to.is_empty() {
        problems.push(&key("promotion.to"), "names no piece");
    }
    zone.map(|zone| Promotion {
        zone,
        to,
        optional: pr.optional,
    })
}

/// `push_pawn`: first-move leaps onto an own pawn, plain leaps only.
fn push_pawn(pc: &PieceConfig, key: &dyn Fn(&str) -> String, problems: &mut Problems) -> Vec<Atom> {
    let Some(b) = &pc.push_pawn else {
        return Vec::new();
    };
    match betza::parse(b) {
        Ok(a) if a.iter().all(|a| !a.rider && !a.lame && !a.hopper) => a,
        Ok(_) => {
            problems.push(
                &key("push_pawn"),
                format!("'{b}': only plain leaps are allowed"),
            );
            Vec::new()
        }
        Err(e) => {
            problems.push(&key("push_pawn"), format!("'{b}' {e}"));
            Vec::new()
        }
    }
}
