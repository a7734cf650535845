//! Players of a match: an evaluator with a search budget (`material@400`, `uniform@100`), a
//! random mover (`random`), or an external engine speaking UCI (`uci:COMMAND ARGS@nodes=1000`,
//! or `fsf@nodes=1000` for the Fairy-Stockfish that `scripts/setup-fsf` builds).
//!
//! A spec is parsed into a [`PlayerFactory`], which makes one [`Player`] per concurrent game
//! slot. Evaluators are looked up by name through an [`EvaluatorResolver`]: the built-in one
//! knows `material` and `uniform`; another kind of evaluator (a network file, `net:FILE@800`)
//! is added by a resolver that answers for its names and falls back to [`BuiltinEvaluators`].
//! Another kind of player is one more arm in [`PlayerSpec`] and an implementation of the two
//! traits.

use crate::error::{Error, Result};
use crate::uci_client::{UciEngineConfig, UciPlayerFactory};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use varzero_rules::{Move, Position, Variant};
use varzero_search::{Evaluator, EvaluatorResolver, Limits, Rng, SearchConfig, Searcher};

/// Why a player produced no legal move: the game is lost by that player.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlayerError {
    /// The engine process died or closed its output.
    #[error("crash: {0}")]
    Crash(String),
    /// No answer within the time allowed.
    #[error("timeout: {0}")]
    Timeout(String),
    /// An illegal or malformed move, or none in a position with legal moves.
    #[error("illegal-move: {0}")]
    IllegalMove(String),
    /// The move came after the player's time ran out (a clocked match).
    #[error("time-forfeit: {0}")]
    TimeForfeit(String),
    /// Anything else (cannot start, protocol error).
    #[error("engine-error: {0}")]
    Failure(String),
}

impl PlayerError {
    /// The termination name recorded in the games table.
    pub fn termination(&self) -> &'static str {
        match self {
            PlayerError::Crash(_) => "crash",
            PlayerError::Timeout(_) => "timeout",
            PlayerError::IllegalMove(_) => "illegal-move",
            PlayerError::TimeForfeit(_) => "time-forfeit",
            PlayerError::Failure(_) => "engine-error",
        }
    }
    pub fn message(&self) -> &str {
        match self {
            PlayerError::Crash(m)
            | PlayerError::Timeout(m)
            | PlayerError::IllegalMove(m)
            | PlayerError::TimeForfeit(m)
            | PlayerError::Failure(m) => m,
        }
    }
}

/// The game so far, as a player sees it.
pub struct GameView<'a> {
    pub variant: &'a Arc<Variant>,
    /// The FEN the game started from and the UCI moves since.
    pub start_fen: &'a str,
    pub moves: &'a [String],
    /// The current position (with its history, for repetition rules).
    pub pos: &'a Position,
    /// Set when the match is stopping: a player may return early (the game is discarded).
    pub stop: &'a AtomicBool,
    /// The clocks, in a match with a time control.
    pub clock: Option<crate::clock::ClockView>,
}

/// One player instance, used by one game at a time.
pub trait Player: Send {
    /// Called before each game; an error loses the game (the slot's player is then recreated).
    fn new_game(&mut self) -> Result<(), PlayerError> {
        Ok(())
    }
    /// Seeds the player's randomness for the next game. The arena calls it before every game
    /// with a seed of that game and colour, so a game is the same whichever worker plays it and
    /// whatever was played before (a resumed match replays the games an uninterrupted one
    /// plays). A player without randomness ignores it.
    fn reseed(&mut self, _seed: u64) {}
    /// The move to play. The caller checks its legality.
    fn choose(&mut self, game: &GameView) -> Result<String, PlayerError>;
    /// False once the player cannot go on (a crashed engine): it is recreated for the next game.
    fn healthy(&self) -> bool {
        true
    }
    /// How the player itself scores a final position without legal moves, for the side to
    /// move (1 win, 0 draw, -1 loss), when it can say: an external engine asked to search it.
    /// A rule study compares it with our rules' result, so that an engine playing other rules
    /// than ours is reported, not trusted.
    fn judge_end(&mut self, _game: &GameView) -> Option<i8> {
        None
    }
    /// The player's own value of the position it last chose a move in, for the side to move
    /// there: w - l in [-1, 1] (an engine's last `score cp`/`score mate` converted), when it
    /// gave one. A teacher's games carry it as a second value target.
    fn last_value(&self) -> Option<f32> {
        None
    }
}

/// Makes players; shared by the match's worker threads.
pub trait PlayerFactory: Send + Sync {
    /// The spec as given (shown in reports and recorded in the games table).
    fn name(&self) -> String;
    /// A new player; `seed` seeds its randomness (reseeded before each game, [`Player::reseed`]).
    fn create(&self, seed: u64) -> Result<Box<dyn Player>, PlayerError>;
    /// Checks once, before a match, that players can be made (an engine starts and knows the
    /// variant). The default makes one player.
    fn check(&self) -> Result<(), PlayerError> {
        self.create(0).map(|_| ())
    }
}

/// A player under another name (a generation's net is `gen-003@64` on the ladder, whatever
/// the path of its file).
pub fn named(
    name: &str,
    inner: std::sync::Arc<dyn PlayerFactory>,
) -> std::sync::Arc<dyn PlayerFactory> {
    std::sync::Arc::new(Named {
        name: name.to_string(),
        inner,
    })
}

struct Named {
    name: String,
    inner: std::sync::Arc<dyn PlayerFactory>,
}

impl PlayerFactory for Named {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn create(&self, seed: u64) -> Result<Box<dyn Player>, PlayerError> {
        self.inner.create(seed)
    }
    fn check(&self) -> Result<(), PlayerError> {
        self.inner.check()
    }
}

/// `base` with the `KEY=VALUE` pairs of a player spec set (values read as TOML: numbers,
/// booleans, else strings), checked like a config's `[search]` table.
fn with_overrides(
    base: &SearchConfig,
    pairs: &[(String, String)],
) -> std::result::Result<SearchConfig, String> {
    if pairs.is_empty() {
        return Ok(base.clone());
    }
    let mut table = toml::Table::try_from(base).map_err(|e| e.to_string())?;
    for (k, v) in pairs {
        if !table.contains_key(k) {
            return Err(format!("unknown search setting '{k}'"));
        }
        table.insert(k.clone(), varzero_settings::value_of(v));
    }
    let cfg: SearchConfig = table
        .try_into()
        .map_err(|e: toml::de::Error| e.message().to_string())?;
    let mut p = varzero_settings::Problems::default();
    cfg.check("search", &mut p);
    if p.is_empty() {
        Ok(cfg)
    } else {
        Err(p.to_string())
    }
}

/// A parsed player spec.
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerSpec {
    /// `EVALUATOR@PLAYOUTS[,KEY=VALUE...]` (`material@400`; the evaluator name may contain
    /// `:`); `EVALUATOR@clock` searches until the match's clock says (playouts
    /// [`CLOCK_PLAYOUTS`]). The pairs override the search config's keys for this player only:
    /// `net:a.safetensors@64,root=gumbel` against `net:a.safetensors@64` compares two searches.
    Search {
        evaluator: String,
        playouts: u32,
        search: Vec<(String, String)>,
    },
    /// `random`.
    Random,
    /// `uci:COMMAND ARGS[@key=value,...]`.
    Uci(UciEngineConfig),
}

impl PlayerSpec {
    /// A player as the command line and the configs name it.
    ///
    /// ```
    /// use varzero_arena::PlayerSpec;
    /// let p = PlayerSpec::parse("material@400,root=gumbel").unwrap();
    /// assert_eq!(
    ///     p,
    ///     PlayerSpec::Search {
    ///         evaluator: "material".into(),
    ///         playouts: 400,
    ///         search: vec![("root".into(), "gumbel".into())],
    ///     }
    /// );
    /// assert_eq!(PlayerSpec::parse("random").unwrap(), PlayerSpec::Random);
    /// // A typo fails here, before a match starts.
    /// assert!(PlayerSpec::parse("material@400,rot=gumbel").is_err());
    /// assert!(PlayerSpec::parse("material@0").is_err());
    /// ```
    pub fn parse(spec: &str) -> Result<PlayerSpec> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err(Error::Spec("empty player spec".into()));
        }
        if let Some(rest) = spec.strip_prefix("uci:") {
            return UciEngineConfig::parse(rest).map(PlayerSpec::Uci);
        }
        // `fsf@nodes=N`: Fairy-Stockfish where setup-fsf put it, named the same on every
        // machine (ladder results are cached by player name).
        if let Some(rest) = spec.strip_prefix("fsf@") {
            let path = crate::uci_client::fairy_stockfish_path().ok_or_else(|| {
                Error::Spec(format!(
                    "player '{spec}': no Fairy-Stockfish found (run scripts/setup-fsf or set \
                     VARZERO_FSF)"
                ))
            })?;
            let mut cfg = UciEngineConfig::parse(&format!("fsf@{rest}"))?;
            cfg.command = vec![path.display().to_string()];
            cfg.fairy_stockfish = true;
            return Ok(PlayerSpec::Uci(cfg));
        }
        if spec == "random" {
            return Ok(PlayerSpec::Random);
        }
        let (ev, n) = spec.rsplit_once('@').ok_or_else(|| {
            Error::Spec(format!(
                "player '{spec}': expected EVALUATOR@PLAYOUTS, random, or uci:COMMAND"
            ))
        })?;
        let mut parts = n.split(',');
        let n = parts.next().unwrap_or_default();
        let playouts: u32 = if n.trim() == "clock" {
            CLOCK_PLAYOUTS
        } else {
            n.trim()
                .parse()
                .ok()
                .filter(|&p| p > 0 && p < CLOCK_PLAYOUTS)
                .ok_or_else(|| {
                    Error::Spec(format!(
                        "player '{spec}': playouts '{n}' must be a positive number, or clock"
                    ))
                })?
        };
        let mut search = Vec::new();
        for kv in parts {
            let (k, v) = varzero_settings::split_assignment(kv).ok_or_else(|| {
                Error::Spec(format!(
                    "player '{spec}': '{kv}' is not KEY=VALUE (a search setting)"
                ))
            })?;
            search.push((k.to_string(), v.to_string()));
        }
        // Checked here, so a typo fails before a match starts.
        with_overrides(&SearchConfig::default(), &search)
            .map_err(|e| Error::Spec(format!("player '{spec}': {e}")))?;
        Ok(PlayerSpec::Search {
            evaluator: ev.trim().to_string(),
            playouts,
            search,
        })
    }

    /// The factory for this spec: evaluators come from `resolver`, searches use `search` (its
    /// playouts replaced by the spec's; root noise is never used in a match).
    pub fn factory(
        &self,
        spec: &str,
        variant: &Arc<Variant>,
        resolver: &dyn EvaluatorResolver,
        search: &SearchConfig,
    ) -> Result<Arc<dyn PlayerFactory>> {
        Ok(match self {
            PlayerSpec::Search {
                evaluator,
                playouts,
                search: overrides,
            } => {
                let ev = resolver.resolve(evaluator, variant)?.ok_or_else(|| {
                    Error::Spec(format!(
                        "player '{spec}': unknown evaluator '{evaluator}' (known: {})",
                        resolver.known().join(", ")
                    ))
                })?;
                let mut cfg = with_overrides(search, overrides)
                    .map_err(|e| Error::Spec(format!("player '{spec}': {e}")))?;
                cfg.playouts = *playouts;
                Arc::new(SearchPlayerFactory {
                    name: spec.to_string(),
                    evaluator: varzero_search::TacticalBlend::for_search(ev, variant, &cfg),
                    cfg,
                })
            }
            PlayerSpec::Random => Arc::new(RandomPlayerFactory),
            PlayerSpec::Uci(c) => {
                let mut c = c.clone();
                let has_path = c.options.iter().any(|(k, _)| k == "VariantPath");
                if c.fairy_stockfish && !has_path {
                    let name = c.variant_name(variant);
                    if let Some(p) = crate::uci_client::fsf_variant_path(&name) {
                        c.options
                            .push(("VariantPath".into(), p.display().to_string()));
                    }
                }
                Arc::new(UciPlayerFactory::new(spec, c, variant.clone()))
            }
        })
    }
}

/// The playouts of `EVALUATOR@clock`: no limit but the match's clock.
pub const CLOCK_PLAYOUTS: u32 = u32::MAX;

impl PlayerSpec {
    /// Whether the player needs the match's clock to know when to move (`@clock`).
    pub fn needs_clock(&self) -> bool {
        match self {
            PlayerSpec::Search { playouts, .. } => *playouts == CLOCK_PLAYOUTS,
            PlayerSpec::Random => false,
            PlayerSpec::Uci(c) => {
                c.clock && c.nodes.is_none() && c.movetime.is_none() && c.depth.is_none()
            }
        }
    }
}

/// Parses a spec and makes its factory.
pub fn parse_player(
    spec: &str,
    variant: &Arc<Variant>,
    resolver: &dyn EvaluatorResolver,
    search: &SearchConfig,
) -> Result<Arc<dyn PlayerFactory>> {
    PlayerSpec::parse(spec)?.factory(spec, variant, resolver, search)
}

/// MCTS with an evaluator, a fixed number of root visits per move.
pub struct SearchPlayerFactory {
    pub name: String,
    pub evaluator: Arc<dyn Evaluator>,
    pub cfg: SearchConfig,
}

impl PlayerFactory for SearchPlayerFactory {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn create(&self, _seed: u64) -> Result<Box<dyn Player>, PlayerError> {
        Ok(Box::new(SearchPlayer {
            searcher: Searcher::new(self.evaluator.clone(), self.cfg.clone()),
            playouts: self.cfg.playouts as u64,
        }))
    }
}

pub struct SearchPlayer {
    pub searcher: Searcher,
    pub playouts: u64,
}

impl Player for SearchPlayer {
    fn new_game(&mut self) -> Result<(), PlayerError> {
        self.searcher.clear();
        Ok(())
    }
    fn choose(&mut self, game: &GameView) -> Result<String, PlayerError> {
        let mut limits = Limits {
            playouts: (self.playouts != CLOCK_PLAYOUTS as u64).then_some(self.playouts),
            ..Limits::default()
        };
        // Under a clock: the engine's own time management (the UCI engine's rule), with smart
        // pruning; a playout limit, if the spec gave one, still holds.
        if let Some(c) = &game.clock {
            let white = game.pos.side_to_move() == varzero_rules::Color::White;
            limits.time = Some(match c.movetime {
                Some(t) => t.saturating_sub(Duration::from_millis(
                    varzero_search::time::MOVE_OVERHEAD_MS,
                )),
                None => {
                    let (left, inc) = c.mine(white);
                    let (left, inc, mtg) = (
                        left.as_millis() as u64,
                        inc.as_millis() as u64,
                        c.movestogo.map(u64::from),
                    );
                    limits.time_cap = Some(varzero_search::time::move_cap(left, inc, mtg));
                    varzero_search::time::move_budget(left, inc, mtg)
                }
            });
            limits.smart_pruning = true;
        } else if limits.playouts.is_none() {
            return Err(PlayerError::Failure(
                "a player of the clock (@clock) in a match without one".into(),
            ));
        }
        let info = self
            .searcher
            .search(game.pos, &limits, game.stop, &mut |_| {});
        let m: Move = info
            .best
            .ok_or_else(|| PlayerError::Failure("the search found no move".into()))?;
        Ok(game.pos.uci(m))
    }
}

/// Uniformly random game moves.
pub struct RandomPlayerFactory;

impl PlayerFactory for RandomPlayerFactory {
    fn name(&self) -> String {
        "random".into()
    }
    fn create(&self, seed: u64) -> Result<Box<dyn Player>, PlayerError> {
        Ok(Box::new(RandomPlayer {
            rng: Rng::new(Rng::derive(0x7261_6e64, seed)),
        }))
    }
}

pub struct RandomPlayer {
    rng: Rng,
}

impl Player for RandomPlayer {
    fn reseed(&mut self, seed: u64) {
        self.rng = Rng::new(Rng::derive(0x7261_6e64, seed));
    }
    fn choose(&mut self, game: &GameView) -> Result<String, PlayerError> {
        let mut pos = game.pos.clone();
        let moves = pos.game_moves();
        if moves.is_empty() {
            return Err(PlayerError::Failure("no legal move".into()));
        }
        let m = moves.as_slice()[self.rng.below(moves.len())];
        Ok(pos.uci(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use varzero_search::RootSearch;

    fn run_config() -> SearchConfig {
        SearchConfig {
            root: RootSearch::Gumbel,
            gumbel_c_scale: 0.1,
            c_puct: 1.5,
            fpu_reduction: 0.25,
            tactics: 0.5,
            tactics_priors: 0.5,
            ..SearchConfig::default()
        }
    }

    fn pair(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    /// A player's settings go through TOML and back: a value set to what it already was must
    /// leave every other setting (f32s, enums) exactly as the run config had it, or a match
    /// measuring one setting would measure two (docs/runs.md, stop 53's control row).
    #[test]
    fn an_override_to_the_same_value_changes_nothing() {
        let base = run_config();
        assert_eq!(
            with_overrides(&base, &[pair("c_puct", "1.5")]).unwrap(),
            base
        );
    }

    #[test]
    fn an_override_changes_its_setting_alone() {
        let base = run_config();
        let got = with_overrides(&base, &[pair("gumbel_considered", "32")]).unwrap();
        assert_eq!(got.gumbel_considered, 32);
        assert_eq!(
            SearchConfig {
                gumbel_considered: base.gumbel_considered,
                ..got
            },
            base
        );
    }
}
