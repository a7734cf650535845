//! The rows of the two tables and their conversion to and from polars frames.

use polars::prelude::*;

/// Key of the schema version in each Parquet file's key-value metadata.
pub const SCHEMA_KEY: &str = "varzero.schema";
/// Versions of the two tables; bump on any change of columns or meaning.
pub const POSITIONS_SCHEMA: &str = "positions/1";
pub const GAMES_SCHEMA: &str = "games/1";

/// One position of a self-play game, a training sample.
#[derive(Clone, Debug, PartialEq)]
pub struct PositionRecord {
    pub game_id: u64,
    pub ply: u32,
    pub variant: String,
    /// Hash of the variant's rules (`Variant::rules_hash`), hex.
    pub rules_hash: String,
    pub fen: String,
    /// Sparse policy target: moves (UCI) and their probabilities (root visit shares).
    pub policy_moves: Vec<String>,
    pub policy_probs: Vec<f32>,
    /// Game result from the side to move's view, one-hot win/draw/loss.
    pub result_wdl: [f32; 3],
    /// Root value of the search from the side to move's view (win/draw/loss).
    pub root_wdl: [f32; 3],
    pub visits: u32,
    /// A full search whose visits are a policy target (false: a cheap playout-cap search).
    pub full_search: bool,
    pub evaluator: String,
}

/// One finished game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    pub game_id: u64,
    pub variant: String,
    pub rules_hash: String,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    pub termination: String,
    pub plies: u32,
    pub seed: u64,
    pub evaluator: String,
    /// Search settings as JSON.
    pub search: String,
    pub start_fen: String,
    /// UCI moves separated by spaces.
    pub moves: String,
}

fn list_col<T, F>(name: &str, rows: &[T], f: F) -> Column
where
    F: Fn(&T) -> Series,
{
    let series: Vec<Series> = rows.iter().map(f).collect();
    let mut s = Series::new(name.into(), series);
    s.rename(name.into());
    s.into()
}

/// Refuses a position whose policy, result or root value is not finite, naming its game and
/// ply: nothing non-finite is ever written, since training on it fails much later and far from
/// the cause (a net that evaluates to NaN, a search that divides by zero).
fn check_finite(rows: &[PositionRecord]) -> PolarsResult<()> {
    for r in rows {
        let field = if r.policy_probs.iter().any(|x| !x.is_finite()) {
            "policy_probs"
        } else if r.result_wdl.iter().any(|x| !x.is_finite()) {
            "result_wdl"
        } else if r.root_wdl.iter().any(|x| !x.is_finite()) {
            "root_wdl"
        } else {
            continue;
        };
        return Err(PolarsError::ComputeError(
            format!(
                "game {} ply {}: {field} is not finite (NaN or infinity): the position is not written",
                r.game_id, r.ply
            )
            .into(),
        ));
    }
    Ok(())
}

pub(crate) fn positions_frame(rows: &[PositionRecord]) -> PolarsResult<DataFrame> {
    check_finite(rows)?;
    let u64c = |n: &str, f: &dyn Fn(&PositionRecord) -> u64| {
        Column::new(n.into(), rows.iter().map(f).collect::<Vec<_>>())
    };
    let strc = |n: &str, f: &dyn Fn(&PositionRecord) -> &str| {
        Column::new(n.into(), rows.iter().map(f).collect::<Vec<_>>())
    };
    let f32c = |n: &str, f: &dyn Fn(&PositionRecord) -> f32| {
        Column::new(n.into(), rows.iter().map(f).collect::<Vec<_>>())
    };
    DataFrame::new_infer_height(vec![
        u64c("game_id", &|r| r.game_id),
        Column::new("ply".into(), rows.iter().map(|r| r.ply).collect::<Vec<_>>()),
        strc("variant", &|r| &r.variant),
        strc("rules_hash", &|r| &r.rules_hash),
        strc("fen", &|r| &r.fen),
        list_col("policy_moves", rows, |r| {
            Series::new("".into(), r.policy_moves.clone())
        }),
        list_col("policy_probs", rows, |r| {
            Series::new("".into(), r.policy_probs.clone())
        }),
        f32c("result_w", &|r| r.result_wdl[0]),
        f32c("result_d", &|r| r.result_wdl[1]),
        f32c("result_l", &|r| r.result_wdl[2]),
        f32c("root_w", &|r| r.root_wdl[0]),
        f32c("root_d", &|r| r.root_wdl[1]),
        f32c("root_l", &|r| r.root_wdl[2]),
        Column::new(
            "visits".into(),
            rows.iter().map(|r| r.visits).collect::<Vec<_>>(),
        ),
        Column::new(
            "full_search".into(),
            rows.iter().map(|r| r.full_search).collect::<Vec<_>>(),
        ),
        strc("evaluator", &|r| &r.evaluator),
    ])
}

pub(crate) fn games_frame(rows: &[GameRecord]) -> PolarsResult<DataFrame> {
    let strc = |n: &str, f: &dyn Fn(&GameRecord) -> &str| {
        Column::new(n.into(), rows.iter().map(f).collect::<Vec<_>>())
    };
    DataFrame::new_infer_height(vec![
        Column::new(
            "game_id".into(),
            rows.iter().map(|r| r.game_id).collect::<Vec<_>>(),
        ),
        strc("variant", &|r| &r.variant),
        strc("rules_hash", &|r| &r.rules_hash),
        strc("result", &|r| &r.result),
        strc("termination", &|r| &r.termination),
        Column::new(
            "plies".into(),
            rows.iter().map(|r| r.plies).collect::<Vec<_>>(),
        ),
        Column::new(
            "seed".into(),
            rows.iter().map(|r| r.seed).collect::<Vec<_>>(),
        ),
        strc("evaluator", &|r| &r.evaluator),
        strc("search", &|r| &r.search),
        strc("start_fen", &|r| &r.start_fen),
        strc("moves", &|r| &r.moves),
    ])
}

fn str_at(df: &DataFrame, col: &str, i: usize) -> PolarsResult<String> {
    Ok(df
        .column(col)?
        .str()?
        .get(i)
        .unwrap_or_default()
        .to_string())
}

/// Rows of a positions frame (all columns of the schema).
pub fn positions_from_frame(df: &DataFrame) -> PolarsResult<Vec<PositionRecord>> {
    let n = df.height();
    let game_id = df.column("game_id")?.u64()?.clone();
    let ply = df.column("ply")?.u32()?.clone();
    let visits = df.column("visits")?.u32()?.clone();
    let full = df.column("full_search")?.bool()?.clone();
    let f = |c: &str| -> PolarsResult<Float32Chunked> { Ok(df.column(c)?.f32()?.clone()) };
    let (rw, rd, rl, vw, vd, vl) = (
        f("result_w")?,
        f("result_d")?,
        f("result_l")?,
        f("root_w")?,
        f("root_d")?,
        f("root_l")?,
    );
    let pm = df.column("policy_moves")?.list()?.clone();
    let pp = df.column("policy_probs")?.list()?.clone();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let moves: Vec<String> = match pm.get_as_series(i) {
            Some(s) => {
                let ca = s.str()?;
                (0..ca.len())
                    .map(|j| ca.get(j).unwrap_or_default().to_string())
                    .collect()
            }
            None => vec![],
        };
        let probs: Vec<f32> = match pp.get_as_series(i) {
            Some(s) => {
                let ca = s.f32()?;
                (0..ca.len())
                    .map(|j| ca.get(j).unwrap_or_default())
                    .collect()
            }
            None => vec![],
        };
        out.push(PositionRecord {
            game_id: game_id.get(i).unwrap_or_default(),
            ply: ply.get(i).unwrap_or_default(),
            variant: str_at(df, "variant", i)?,
            rules_hash: str_at(df, "rules_hash", i)?,
            fen: str_at(df, "fen", i)?,
            policy_moves: moves,
            policy_probs: probs,
            result_wdl: [
                rw.get(i).unwrap_or(0.0),
                rd.get(i).unwrap_or(0.0),
                rl.get(i).unwrap_or(0.0),
            ],
            root_wdl: [
                vw.get(i).unwrap_or(0.0),
                vd.get(i).unwrap_or(0.0),
                vl.get(i).unwrap_or(0.0),
            ],
            visits: visits.get(i).unwrap_or_default(),
            full_search: full.get(i).unwrap_or_default(),
            evaluator: str_at(df, "evaluator", i)?,
        });
    }
    Ok(out)
}

/// Rows of a games frame.
pub fn games_from_frame(df: &DataFrame) -> PolarsResult<Vec<GameRecord>> {
    let n = df.height();
    let game_id = df.column("game_id")?.u64()?.clone();
    let plies = df.column("plies")?.u32()?.clone();
    let seed = df.column("seed")?.u64()?.clone();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(GameRecord {
            game_id: game_id.get(i).unwrap_or_default(),
            variant: str_at(df, "variant", i)?,
            rules_hash: str_at(df, "rules_hash", i)?,
            result: str_at(df, "result", i)?,
            termination: str_at(df, "termination", i)?,
            plies: plies.get(i).unwrap_or_default(),
            seed: seed.get(i).unwrap_or_default(),
            evaluator: str_at(df, "evaluator", i)?,
            search: str_at(df, "search", i)?,
            start_fen: str_at(df, "start_fen", i)?,
            moves: str_at(df, "moves", i)?,
        });
    }
    Ok(out)
}
