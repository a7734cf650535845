//! Compiling a [`VariantConfig`] into a validated [`Variant`]: pieces with parsed movement,
//! regions as square sets, and the rule options resolved to piece indices.

use crate::betza::{self, Atom};
use crate::config::*;
use crate::error::{Problem, VariantError};
use crate::geometry::{BoardSize, ByColor, Color, Square, MAX_FILES, MAX_RANKS};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

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
    /// Extra atoms while standing in a region (per colour, mirrored for Black).
    pub moves_in: Vec<(ByColor<SquareSet>, Vec<Atom>)>,
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

/// The variant files shipped with varzero, compiled into the binary.
pub const BUILTIN: &[(&str, &str)] = &[
    ("makruk", include_str!("../../configs/variants/makruk.toml")),
    (
        "makruk-sutras",
        include_str!("../../configs/variants/makruk-sutras.toml"),
    ),
    (
        "ouk-chatrang",
        include_str!("../../configs/variants/ouk-chatrang.toml"),
    ),
    ("ouk", include_str!("../../configs/variants/ouk.toml")),
    (
        "kar-ouk",
        include_str!("../../configs/variants/kar-ouk.toml"),
    ),
    (
        "ouk-khmer-hill",
        include_str!("../../configs/variants/ouk-khmer-hill.toml"),
    ),
    (
        "xiangqi",
        include_str!("../../configs/variants/xiangqi.toml"),
    ),
    (
        "elephant-chess",
        include_str!("../../configs/variants/elephant-chess.toml"),
    ),
    (
        "ajax-xiangqi",
        include_str!("../../configs/variants/ajax-xiangqi.toml"),
    ),
    ("oxeli", include_str!("../../configs/variants/oxeli.toml")),
];

/// Names under which other programs know our variants (Fairy-Stockfish's `UCI_Variant`).
pub fn canonical_name(name: &str) -> &str {
    match name {
        "cambodian" => "ouk-chatrang",
        "karouk" => "kar-ouk",
        "ajaxxiangqi" => "ajax-xiangqi",
        "elephantchess" => "elephant-chess",
        other => other,
    }
}

fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// Where a file's `extends` is looked up.
enum Origin<'a> {
    Builtin,
    File(&'a Path),
}

/// The file's TOML table; a syntax error is reported as `FILE:LINE: message`.
fn parse_table(text: &str, file: &str) -> Result<toml::Table, VariantError> {
    text.parse().map_err(|e: toml::de::Error| {
        VariantError::single(crate::toml_location(file, text, &e), "", e.message())
    })
}

fn load_table(name: &str, origin: &Origin, depth: usize) -> Result<toml::Table, VariantError> {
    let err = |file: &str, reason: String| VariantError::single(file, "", reason);
    if depth > 8 {
        return Err(err(name, "`extends` chain is too long (a cycle?)".into()));
    }
    let (file, text) = match origin {
        Origin::Builtin => {
            let text = BUILTIN
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, t)| t.to_string())
                .ok_or_else(|| err(name, format!("no built-in variant '{name}'")))?;
            (format!("{name}.toml"), text)
        }
        Origin::File(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| err(&p.display().to_string(), format!("cannot read: {e}")))?;
            (p.display().to_string(), text)
        }
    };
    let mut table = parse_table(&text, &file)?;
    if let Some(parent) = table.remove("extends") {
        let Some(parent) = parent.as_str() else {
            return Err(VariantError::single(
                file,
                "extends",
                "must be a variant name",
            ));
        };
        let parent_origin = match origin {
            Origin::File(p) => {
                let sibling = p.with_file_name(format!("{parent}.toml"));
                if sibling.exists() && sibling != *p {
                    Some(sibling)
                } else {
                    None
                }
            }
            Origin::Builtin => None,
        };
        let mut base = match &parent_origin {
            Some(s) => load_table(parent, &Origin::File(s), depth + 1)?,
            None => load_table(canonical_name(parent), &Origin::Builtin, depth + 1)
                .map_err(|e| VariantError::single(&file, "extends", e.lines().join("; ")))?,
        };
        inherit(&mut base, table);
        table = base;
    }
    Ok(table)
}

/// A file that `extends` another takes its keys, except `fairy_stockfish`: a derived game has
/// other rules than the one Fairy-Stockfish knows by that name, unless the file says so itself
/// (so a match against a UCI engine never announces `ouk` as `makruk`).
fn inherit(base: &mut toml::Table, child: toml::Table) {
    if !child.contains_key("fairy_stockfish") {
        base.remove("fairy_stockfish");
    }
    merge(base, child);
}

/// Deep merge: tables merge key by key, anything else is replaced.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
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
            let Some((key, value)) = set.split_once('=') else {
                return Err(VariantError::single(
                    &file,
                    set.as_str(),
                    "expected KEY=VALUE",
                ));
            };
            let mut path: Vec<&str> = key.trim().split('.').collect();
            if path.len() == 1 && !matches!(path[0], "name" | "start_fen" | "description") {
                path.insert(0, "rules");
            }
            let value: toml::Value = format!("v = {}", value.trim())
                .parse::<toml::Table>()
                .ok()
                .and_then(|mut t| t.remove("v"))
                .unwrap_or_else(|| toml::Value::String(value.trim().to_string()));
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

    fn compile(table: toml::Table, file: &str) -> Result<Variant, VariantError> {
        let problems: std::cell::RefCell<Vec<Problem>> = Default::default();
        let p = |key: &str, reason: String| {
            problems.borrow_mut().push(Problem {
                key: key.into(),
                reason,
            })
        };

        // Top level, section by section, so one bad section does not hide the others.
        let mut top = table.clone();
        let pieces_raw = match top.remove("pieces") {
            Some(toml::Value::Table(t)) => t,
            Some(_) => {
                p("pieces", "must be a table of pieces".into());
                toml::Table::new()
            }
            None => {
                p("pieces", "missing".into());
                toml::Table::new()
            }
        };
        let rules_raw = top.remove("rules");
        let mut top_probe = top.clone();
        top_probe.insert("pieces".into(), toml::Value::Table(toml::Table::new()));
        let cfg_top: Option<VariantConfig> = match top_probe.try_into::<VariantConfig>() {
            Ok(c) => Some(c),
            Err(e) => {
                p("", e.message().trim().to_string());
                None
            }
        };
        let rules_cfg: RulesConfig = match rules_raw.clone().map(|r| r.try_into::<RulesConfig>()) {
            None => RulesConfig::default(),
            Some(Ok(r)) => r,
            Some(Err(e)) => {
                p("rules", e.message().trim().to_string());
                RulesConfig::default()
            }
        };
        let mut piece_cfgs: Vec<(String, PieceConfig)> = Vec::new();
        for (name, v) in &pieces_raw {
            match v.clone().try_into::<PieceConfig>() {
                Ok(pc) => piece_cfgs.push((name.clone(), pc)),
                Err(e) => p(&format!("pieces.{name}"), e.message().trim().to_string()),
            }
        }
        let Some(cfg_top) = cfg_top else {
            return Err(VariantError {
                file: file.into(),
                problems: problems.take(),
            });
        };
        let size = BoardSize {
            files: cfg_top.board.files,
            ranks: cfg_top.board.ranks,
        };
        if !(1..=MAX_FILES).contains(&size.files) {
            p(
                "board.files",
                format!("{} files: must be 1 to {MAX_FILES}", size.files),
            );
        }
        if !(1..=MAX_RANKS).contains(&size.ranks) {
            p(
                "board.ranks",
                format!("{} ranks: must be 1 to {MAX_RANKS}", size.ranks),
            );
        }
        if !problems.borrow().is_empty()
            && (size.files == 0
                || size.ranks == 0
                || size.files > MAX_FILES
                || size.ranks > MAX_RANKS)
        {
            return Err(VariantError {
                file: file.into(),
                problems: problems.take(),
            });
        }

        // Regions.
        let mut regions: BTreeMap<String, ByColor<SquareSet>> = BTreeMap::new();
        for (name, spec) in &cfg_top.regions {
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
                Err(e) => p(&format!("regions.{name}"), e),
            }
        }
        let all: SquareSet = if size.squares() == 128 {
            !0
        } else {
            (1u128 << size.squares()) - 1
        };
        let region = |name: &str| regions.get(name).copied();

        // Letters first, so pieces can refer to each other.
        let mut letters: Vec<char> = Vec::new();
        for (name, pc) in &piece_cfgs {
            let key = format!("pieces.{name}.letter");
            let mut chars = pc.letter.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) if c.is_ascii_uppercase() => {
                    if letters.contains(&c) {
                        p(&key, format!("letter '{c}' is used by another piece"));
                    }
                    letters.push(c);
                }
                _ => {
                    p(
                        &key,
                        format!("'{}' is not a single upper-case letter", pc.letter),
                    );
                    letters.push('?');
                }
            }
        }
        if piece_cfgs.len() > MAX_KINDS {
            p(
                "pieces",
                format!(
                    "{} pieces: at most {MAX_KINDS} are supported",
                    piece_cfgs.len()
                ),
            );
        }
        let kind_of = |l: &str| -> Option<usize> {
            let mut c = l.chars();
            match (c.next(), c.next()) {
                (Some(ch), None) => letters.iter().position(|&x| x == ch.to_ascii_uppercase()),
                _ => None,
            }
        };

        let mut pieces = Vec::new();
        for (name, pc) in &piece_cfgs {
            let key = |k: &str| format!("pieces.{name}.{k}");
            let atoms = match betza::parse(&pc.betza) {
                Ok(a) => a,
                Err(e) => {
                    p(&key("betza"), format!("'{}' {e}", pc.betza));
                    Vec::new()
                }
            };
            let mut moves_in = Vec::new();
            for (i, rm) in pc.moves_in.iter().enumerate() {
                let r = region(&rm.region);
                if r.is_none() {
                    p(
                        &key(&format!("moves_in[{i}].region")),
                        format!("no region '{}'", rm.region),
                    );
                }
                match betza::parse(&rm.betza) {
                    Ok(a) => {
                        if a.iter().any(|a| a.rider || a.initial) {
                            p(
                                &key(&format!("moves_in[{i}].betza")),
                                "region moves may only be leaps".into(),
                            );
                        }
                        if let Some(r) = r {
                            moves_in.push((r, a));
                        }
                    }
                    Err(e) => p(
                        &key(&format!("moves_in[{i}].betza")),
                        format!("'{}' {e}", rm.betza),
                    ),
                }
            }
            let stand = match &pc.stand {
                None => ByColor::new(all, all),
                Some(r) => region(r).unwrap_or_else(|| {
                    p(&key("stand"), format!("no region '{r}'"));
                    ByColor::new(all, all)
                }),
            };
            let promotion = pc.promotion.as_ref().and_then(|pr| {
                let zone = region(&pr.region);
                if zone.is_none() {
                    p(
                        &key("promotion.region"),
                        format!("no region '{}'", pr.region),
                    );
                }
                let mut to = Vec::new();
                for l in &pr.to {
                    match kind_of(l) {
                        Some(k) => to.push(k),
                        None => p(&key("promotion.to"), format!("no piece with letter '{l}'")),
                    }
                }
                if pr.to.is_empty() {
                    p(&key("promotion.to"), "names no piece".into());
                }
                zone.map(|zone| Promotion {
                    zone,
                    to,
                    optional: pr.optional,
                })
            });
            let mut right_lost_to = Vec::new();
            for l in &pc.right_lost_to {
                match kind_of(l) {
                    Some(k) => right_lost_to.push(k),
                    None => p(&key("right_lost_to"), format!("no piece with letter '{l}'")),
                }
            }
            let push_pawn = match &pc.push_pawn {
                None => Vec::new(),
                Some(b) => match betza::parse(b) {
                    Ok(a) if a.iter().all(|a| !a.rider && !a.lame && !a.hopper) => a,
                    Ok(_) => {
                        p(
                            &key("push_pawn"),
                            format!("'{b}': only plain leaps are allowed"),
                        );
                        Vec::new()
                    }
                    Err(e) => {
                        p(&key("push_pawn"), format!("'{b}' {e}"));
                        Vec::new()
                    }
                },
            };
            let default_value = if pc.royal { 0.0 } else { 1.0 };
            pieces.push(PieceDef {
                name: name.clone(),
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
            });
        }
        let royals = pieces.iter().filter(|p| p.royal).count();
        if royals != 1 && !piece_cfgs.is_empty() {
            p(
                "pieces",
                format!("exactly one piece must be royal, found {royals}"),
            );
        }

        // Rules.
        let mut piece_limits = Vec::new();
        if rules_cfg.counting.mode != CountingMode::None {
            for (i, pl) in rules_cfg.counting.piece_limits.iter().enumerate() {
                match kind_of(&pl.piece) {
                    Some(k) => piece_limits.push((k, pl.count, pl.limit)),
                    None => p(
                        &format!("rules.counting.piece_limits[{i}].piece"),
                        format!("no piece with letter '{}'", pl.piece),
                    ),
                }
            }
            if !pieces.iter().any(|p| p.is_pawn()) {
                // Counting is defined in terms of pawns being left; without any it still works.
            }
        }
        let mut insufficient = Vec::new();
        for (i, md) in rules_cfg.insufficient_material.iter().enumerate() {
            let ls = match md {
                MaterialDraw::Only(l) | MaterialDraw::AtMostOneOf(l) => l,
            };
            let mut ks = Vec::new();
            for l in ls {
                match kind_of(l) {
                    Some(k) => ks.push(k),
                    None => p(
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
        if rules_cfg.checks_to_win > 9 {
            p(
                "rules.checks_to_win",
                "at most 9 (the FEN field holds one digit)".into(),
            );
        }
        let rules = Rules {
            stalemate: rules_cfg.stalemate,
            face_off: rules_cfg.face_off,
            repetition: rules_cfg.repetition,
            counting: CountingRules {
                mode: rules_cfg.counting.mode,
                board_limit: rules_cfg.counting.board_limit,
                piece_limits,
                default_limit: rules_cfg.counting.default_limit,
            },
            checks_to_win: rules_cfg.checks_to_win,
            move_limit: rules_cfg.move_limit,
            first_move: rules_cfg.first_move.clone(),
            insufficient_material: insufficient,
        };

        let mut config = cfg_top.clone();
        config.pieces = pieces_raw.clone();
        config.rules = rules_cfg;
        let mut hashed = config.clone();
        hashed.name.clear();
        hashed.description.clear();
        hashed.fairy_stockfish = None;
        let rules_hash = fnv(toml::to_string(&hashed).unwrap_or_default().as_bytes());

        if !problems.borrow().is_empty() {
            return Err(VariantError {
                file: file.into(),
                problems: problems.take(),
            });
        }
        let variant = Variant {
            name: cfg_top.name.clone(),
            description: cfg_top.description.clone(),
            reconstruction: cfg_top.reconstruction,
            fairy_stockfish: cfg_top.fairy_stockfish.clone(),
            size,
            pieces,
            regions,
            rules,
            start_fen: cfg_top.start_fen.clone(),
            config,
            rules_hash,
            tables: Default::default(),
        };
        // The start position must be a legal position of this variant. The compiled start FEN
        // is the one positions write (a file may leave out a field with a default, such as
        // Kar Ouk's check count); the config keeps the file's text, so overrides re-derive it.
        let mut variant = variant;
        match crate::Position::from_fen(&Arc::new(variant.clone()), &variant.start_fen) {
            Ok(p) => variant.start_fen = p.fen(),
            Err(e) => return Err(VariantError::single(file, "start_fen", e.to_string())),
        }
        Ok(variant)
    }

    /// Which side the colour index belongs to, for region lookups.
    pub fn region_mask(&self, name: &str, c: Color) -> Option<SquareSet> {
        self.regions.get(name).map(|r| r[c])
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
