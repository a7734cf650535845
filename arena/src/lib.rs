//! Matches between players: the arena (`matches`: games in pairs of the same opening with
//! colours swapped, several at once, scored with the statistics of `varzero-stats`, written
//! as a games table that a killed match resumes from), the players (`players`: a search with
//! an evaluator, random, or an external engine) and the UCI client that drives an external
//! engine such as Fairy-Stockfish as a separate program (`uci_client`), and the ladder that
//! rates any player on one Elo scale per variant (`ladder`); `clock` holds time controls in
//! cutechess's notation and the clocks of a game.
// The one exception, allowed where it is: prctl(PR_SET_PDEATHSIG) in `uci_client`.
#![deny(unsafe_code)]

pub mod clock;
mod error;
pub mod ladder;
pub mod matches;
pub mod players;
pub mod uci_client;

pub use clock::{ClockView, GameClock, MoveTime, TimeControl};
pub use error::{Error, Result};
pub use matches::{
    random_openings, read_openings, Arena, GameWriter, MatchConfig, MatchGame, MatchState,
    MatchSummary,
};
pub use players::{parse_player, PlayerFactory, PlayerSpec};
