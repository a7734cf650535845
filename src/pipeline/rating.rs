//! The stages that rate a net: its match against the net before it (and the last net's
//! against generation 0), and its climb on the variant's ladder with every generation refitted.

use super::stages::selfplay_net;
use super::PipelineConfig;
use crate::nets::NetResolver;
use crate::run_dir::{LadderRecord, LadderRow, MatchRecord, RunDir, SummaryMatch};
use crate::usage::Usage;
use anyhow::Result;
use std::sync::Arc;
use varzero_arena::ladder::{Ladder, LadderOptions};
use varzero_arena::PlayerSpec;
use varzero_arena::{random_openings, Arena, MatchConfig};
use varzero_rules::Variant;
use varzero_stats::{Pentanomial, Wdl};

/// Plays `me` against `opp` from random openings, each with both colours, and records the score
/// of `me` with a 95% interval (normal approximation over games).
#[allow(clippy::too_many_arguments)] // a private helper called twice; a struct would add nothing
fn play_match(
    v: &Arc<Variant>,
    resolver: &NetResolver,
    cfg: &PipelineConfig,
    generation: u32,
    me: &str,
    opp: &str,
    seed: u64,
    quiet: bool,
) -> Result<(MatchRecord, varzero_stats::EloEstimate)> {
    let (w, penta) = play_pairs(
        v,
        resolver,
        cfg,
        me,
        opp,
        cfg.match_games.div_ceil(2),
        seed,
        quiet,
    )?;
    let score = varzero_stats::score_interval(w.wins, w.draws, w.losses);
    let rec = MatchRecord {
        generation,
        opponent: opp.to_string(),
        games: w.games(),
        wins: w.wins,
        draws: w.draws,
        losses: w.losses,
        score: score.value,
        score_low: score.lower,
        score_high: score.upper,
        elo: w.elo().elo,
        accepted: !cfg.gating || score.value >= cfg.gate_score,
    };
    Ok((rec, penta.elo()))
}

/// `pairs` pairs of games of `me` against `opp` (each opening with both colours): the score of
/// `me` by games and by pairs.
#[allow(clippy::too_many_arguments)] // as play_match's, whose body it is
fn play_pairs(
    v: &Arc<Variant>,
    resolver: &NetResolver,
    cfg: &PipelineConfig,
    me: &str,
    opp: &str,
    pairs: u64,
    seed: u64,
    quiet: bool,
) -> Result<(Wdl, Pentanomial)> {
    let factory = |spec: &str| -> Result<_> {
        PlayerSpec::parse(spec)
            .and_then(|p| p.factory(spec, v, resolver, &cfg.search))
            .map_err(anyhow::Error::msg)
    };
    let openings = random_openings(v, pairs as usize, 4, seed).map_err(anyhow::Error::msg)?;
    let mc = MatchConfig {
        variant: v.clone(),
        games: pairs * 2,
        openings,
        concurrency: cfg.selfplay.threads.max(1),
        paired: true,
        verify_endings: false,
        sprt: None,
        done: Vec::new(),
        time_control: None,
    };
    varzero_eval_net::share_threads(mc.concurrency);
    let arena = Arena::new(mc, factory(me)?, factory(opp)?);
    let bar = crate::progress::progress_bar(quiet, pairs * 2, "games");
    let summary = arena.run(&mut |_, st| {
        bar.set_position(st.wdl.games());
        bar.set_message(format!(
            "{me} vs {opp}: W {} D {} L {}",
            st.wdl.wins, st.wdl.draws, st.wdl.losses
        ));
    });
    bar.finish_and_clear();
    Ok((summary.state.wdl, summary.state.penta))
}

/// Stage 3: generation `next`'s net against the net self-play used before it (or the material
/// evaluator), recorded in `logs/match-gen-NNN.json` (nothing to do when it is there).
pub fn rate_generation(
    run: &RunDir,
    cfg: &PipelineConfig,
    v: &Arc<Variant>,
    next: u32,
    quiet: bool,
) -> Result<()> {
    if run.read_match(next)?.is_some() {
        return Ok(());
    }
    let usage = Usage::start();
    let resolver = NetResolver::new(&cfg.device);
    let me = format!("net:{}@{}", run.model(next).display(), cfg.match_playouts);
    let opp = match (selfplay_net(run, next - 1)?, &cfg.gen0) {
        (Some(p), _) => format!("net:{}@{}", p.display(), cfg.match_playouts),
        // The first net against the teacher it learnt from.
        (None, Some(teacher)) => teacher.clone(),
        (None, None) => format!("material@{}", cfg.match_playouts),
    };
    let (mut rec, _) = play_match(
        v,
        &resolver,
        cfg,
        next,
        &me,
        &opp,
        cfg.selfplay.seed ^ next as u64,
        quiet,
    )?;
    if next == 1 && cfg.gen0.is_some() {
        // A teacher cannot play our self-play (it gives no search targets), so there is no
        // earlier net to keep: the first net is always self-play's.
        rec.accepted = true;
    }
    run.write_match(&rec)?;
    let busy = usage.record(run, "match", next)?;
    println!("gen {next}: {} ({busy:.2} cores busy)", rec.line());
    Ok(())
}

/// The last generation against generation 0 (the material evaluator): what the loop gained.
/// A record of an earlier last generation (the run was extended since) is played again.
pub fn rate_last_against_gen0(
    run: &RunDir,
    cfg: &PipelineConfig,
    v: &Arc<Variant>,
    quiet: bool,
) -> Result<Option<MatchRecord>> {
    let last = cfg.generations;
    let opp = format!("material@{}", cfg.match_playouts);
    let games = cfg.match_games.div_ceil(2) * 2;
    // Played again when the run was extended or is rated at other match settings.
    let current = |r: &MatchRecord| r.generation == last && r.opponent == opp && r.games == games;
    let done = run.read_final_match()?.is_some_and(|r| current(&r));
    if last >= 2 && run.model(last).exists() && !done {
        let resolver = NetResolver::new(&cfg.device);
        let me = format!("net:{}@{}", run.model(last).display(), cfg.match_playouts);
        let (mut rec, _) = play_match(
            v,
            &resolver,
            cfg,
            last,
            &me,
            &opp,
            cfg.selfplay.seed ^ 0xf1a1,
            quiet,
        )?;
        rec.accepted = true; // gating is about the previous generation, not this one
        run.write_final_match(&rec)?;
    }
    Ok(run.read_final_match()?.filter(current))
}

/// Player settings that take the search's hand-written parts away: the net alone.
const RAW: &str = ",tactics=0,tactics_priors=0";

/// The run's closing matches (`logs/summary.json`), so that a reader sees what the loop learnt
/// apart from what the search adds: the last net against net 1, raw (the nets' own priors and
/// values, no quiescence blend) and, when the run's search blends, with that search; and the
/// last net against generation 0's player (the final match, with the run's search), with nets
/// 1, N/3 and 2N/3 against it too from six nets on (Elo against CPU-hours). Each is played once; a row whose players or number of games changed (the run was extended, or is
/// closed at other match settings) is played again.
pub fn closing_matches(
    run: &RunDir,
    cfg: &PipelineConfig,
    v: &Arc<Variant>,
    last_vs_gen0: Option<&MatchRecord>,
    quiet: bool,
) -> Result<Vec<SummaryMatch>> {
    let last = cfg.generations;
    if last < 2 || !run.model(last).exists() || !run.model(1).exists() {
        return Ok(Vec::new());
    }
    let p = cfg.match_playouts;
    let net = |g: u32| format!("net:{}@{p}", run.model(g).display());
    let blended = cfg.search.tactics > 0.0 || cfg.search.tactics_priors > 0.0;
    let games = cfg.match_games.div_ceil(2) * 2;
    let mut plan = vec![(
        format!("net {last} vs net 1, raw"),
        format!("{}{RAW}", net(last)),
        format!("{}{RAW}", net(1)),
    )];
    if blended {
        plan.push((
            format!("net {last} vs net 1, with the search"),
            net(last),
            net(1),
        ));
    }
    let mut done = run.read_summary()?.unwrap_or_default();
    let mut rows = Vec::new();
    let resolver = NetResolver::new(&cfg.device);
    for (i, (label, me, opp)) in plan.into_iter().enumerate() {
        if let Some(r) = take_played(&mut done, &label, &me, &opp, games) {
            rows.push(r);
            continue;
        }
        let (rec, pairs) = play_match(
            v,
            &resolver,
            cfg,
            last,
            &me,
            &opp,
            cfg.selfplay.seed ^ 0x5a3e ^ i as u64,
            quiet,
        )?;
        rows.push(summary_row(label, me, opp, &rec, &pairs));
        run.write_summary(&rows)?;
    }
    // Whether the run kept learning, not only whether its last net is good: the last third of
    // the nets against the first third, raw, net `last - t + i` against net `i` for each i,
    // the match's pairs spread over the t pairings and pooled. Needs two nets a third (with
    // one, it is the first row again).
    let t = last / 3;
    if t >= 2 && (1..=last).all(|g| run.model(g).exists()) {
        let first_late = last - t + 1;
        let models = run.models();
        let label = format!("nets {first_late}..{last} vs nets 1..{t}, raw");
        let me = format!("nets {first_late}..{last} of {}@{p}{RAW}", models.display());
        let opp = format!("nets 1..{t} of {}@{p}{RAW}", models.display());
        let split = split_pairs(games / 2, t);
        let games = 2 * split.iter().sum::<u64>();
        if let Some(r) = take_played(&mut done, &label, &me, &opp, games) {
            rows.push(r);
        } else {
            let (mut w, mut penta) = (Wdl::default(), Pentanomial::default());
            for (i, pairs) in (1..=t).zip(split) {
                let (wi, pi) = play_pairs(
                    v,
                    &resolver,
                    cfg,
                    &format!("{}{RAW}", net(last - t + i)),
                    &format!("{}{RAW}", net(i)),
                    pairs,
                    cfg.selfplay.seed ^ 0x7e1d ^ ((i as u64) << 8),
                    quiet,
                )?;
                w.merge(&wi);
                penta.merge(&pi);
            }
            let e = penta.elo();
            rows.push(SummaryMatch {
                label,
                player: me,
                opponent: opp,
                games: w.games(),
                wins: w.wins,
                draws: w.draws,
                losses: w.losses,
                score: w.points() / w.games().max(1) as f64,
                elo: e.elo,
                elo_low: e.lower,
                elo_high: e.upper,
                generation: None,
                cpu_hours: None,
            });
            run.write_summary(&rows)?;
        }
    }
    // Elo against CPU-hours without the ladder: nets 1, N/3 and 2N/3 against the final match's
    // opponent on its openings (the same seed), so that with the last net they draw the run's
    // curve. From six nets on, as the thirds.
    let suffix = if blended {
        ", with the search"
    } else {
        ", raw"
    };
    // The final match is against material self-play's player, which is generation 0's only
    // when the run had no teacher.
    let gen0_name = |opp: &str| match cfg.gen0 {
        None => "generation 0's player".to_string(),
        Some(_) => opp.to_string(),
    };
    if let Some(r) = last_vs_gen0 {
        if last >= 6 {
            let mut marks = vec![1, last / 3, 2 * last / 3];
            marks.dedup();
            for g in marks.into_iter().filter(|&g| run.model(g).exists()) {
                let label = format!("net {g} vs {}{suffix}", gen0_name(&r.opponent));
                let me = net(g);
                let cpu_hours = Some(run.cpu_hours_to(g)?);
                if let Some(mut d) = take_played(&mut done, &label, &me, &r.opponent, r.games) {
                    d.generation = Some(g);
                    d.cpu_hours = cpu_hours;
                    rows.push(d);
                    continue;
                }
                let (rec, pairs) = play_match(
                    v,
                    &resolver,
                    cfg,
                    g,
                    &me,
                    &r.opponent,
                    cfg.selfplay.seed ^ 0xf1a1,
                    quiet,
                )?;
                rows.push(SummaryMatch {
                    generation: Some(g),
                    cpu_hours,
                    ..summary_row(label, me, r.opponent.clone(), &rec, &pairs)
                });
                run.write_summary(&rows)?;
            }
        }
        rows.push(SummaryMatch {
            label: format!("net {last} vs {}{suffix}", gen0_name(&r.opponent)),
            player: net(last),
            opponent: r.opponent.clone(),
            games: r.games,
            wins: r.wins,
            draws: r.draws,
            losses: r.losses,
            score: r.score,
            elo: r.elo,
            elo_low: varzero_stats::elo_from_score(r.score_low),
            elo_high: varzero_stats::elo_from_score(r.score_high),
            generation: Some(last),
            cpu_hours: Some(run.cpu_hours_to(last)?),
        });
    }
    run.write_summary(&rows)?;
    Ok(rows)
}

/// A closing row of a match just played: its score by games, its Elo by game pairs.
fn summary_row(
    label: String,
    player: String,
    opponent: String,
    rec: &MatchRecord,
    pairs: &varzero_stats::EloEstimate,
) -> SummaryMatch {
    SummaryMatch {
        label,
        player,
        opponent,
        games: rec.games,
        wins: rec.wins,
        draws: rec.draws,
        losses: rec.losses,
        score: rec.score,
        elo: pairs.elo,
        elo_low: pairs.lower,
        elo_high: pairs.upper,
        generation: None,
        cpu_hours: None,
    }
}

/// Takes out of `done` (an earlier summary) the row of this very match, if it was played: same
/// label, players and number of games.
fn take_played(
    done: &mut Vec<SummaryMatch>,
    label: &str,
    player: &str,
    opponent: &str,
    games: u64,
) -> Option<SummaryMatch> {
    let i = done.iter().position(|r| {
        r.label == label && r.player == player && r.opponent == opponent && r.games == games
    })?;
    Some(done.swap_remove(i))
}

/// `pairs` pairs of games spread over `t` pairings as evenly as they go, the first ones taking
/// the remainder; every pairing plays at least one pair.
fn split_pairs(pairs: u64, t: u32) -> Vec<u64> {
    let t = u64::from(t.max(1));
    (0..t)
        .map(|i| (pairs / t + u64::from(i < pairs % t)).max(1))
        .collect()
}

/// `logs/matches.csv`, rebuilt from the per-generation records and `last`.
pub fn write_matches_csv(
    run: &RunDir,
    cfg: &PipelineConfig,
    last: Option<MatchRecord>,
) -> Result<()> {
    let mut rows = Vec::new();
    for g in 1..=cfg.generations {
        rows.extend(run.read_match(g)?);
    }
    rows.extend(last);
    run.write_matches_csv(&rows)
}

/// Stage 4 (with `[ladder] enabled`): generation `gen` climbs the ladder from where the one
/// before it stopped, and the ratings of every generation are refitted: `ladder/ratings.csv`,
/// `logs/ladder.csv` (generation, Elo, interval, CPU-hours) and `logs/ladder.png`.
pub fn ladder_generation(
    run: &RunDir,
    cfg: &PipelineConfig,
    v: &Arc<Variant>,
    gen: u32,
    quiet: bool,
) -> Result<()> {
    let s = &cfg.ladder;
    if !s.enabled {
        return Ok(());
    }
    let playouts = s.playouts.unwrap_or(cfg.match_playouts);
    let mut o = LadderOptions::new(&run.ladder_dir());
    o.rungs = s.rungs.clone();
    o.rung_dir = s.rung_dir.clone();
    o.anchor = s.anchor.clone();
    o.games = s.games;
    o.concurrency = cfg.selfplay.threads.max(1);
    o.seed = cfg.selfplay.seed ^ 0x1add;
    let l = Ladder::open(v, &o)?;
    let name = format!("gen-{gen:03}@{playouts}");
    let mut busy = None;
    let make = crate::nets::player_maker(v, &cfg.search, true, &cfg.device);
    // One climb: `spec` rated as `player`, from where the generations before it stopped (nets
    // rarely fall far), its record written by `write`.
    let climb = |player: &str,
                 spec: &str,
                 read: &dyn Fn(u32) -> Result<Option<LadderRecord>>,
                 write: &dyn Fn(&LadderRecord) -> Result<()>|
     -> Result<()> {
        let p = varzero_arena::players::named(player, make(spec)?);
        let mut start = 0;
        for g in (0..gen).rev() {
            if let Some(r) = read(g)? {
                start = r.top_rung.unwrap_or(0);
                break;
            }
        }
        varzero_eval_net::share_threads(o.concurrency);
        let top = crate::progress::with_ladder_progress(quiet, &l, |progress| {
            l.rate_one(&p, start, &make, progress)
        })?;
        write(&LadderRecord {
            generation: gen,
            player: player.to_string(),
            top_rung: top,
        })
    };
    if run.read_ladder_record(gen)?.is_none() {
        let usage = Usage::start();
        let spec = if gen == 0 {
            cfg.gen0
                .clone()
                .unwrap_or_else(|| format!("material@{playouts}"))
        } else {
            format!("net:{}@{playouts}", run.model(gen).display())
        };
        climb(&name, &spec, &|g| run.read_ladder_record(g), &|r| {
            run.write_ladder_record(r)
        })?;
        busy = Some(usage.record(run, "ladder", gen)?);
    }
    // The net alone, without the search's tactical blend: what it learned, apart from the search.
    let blends = cfg.search.tactics > 0.0 || cfg.search.tactics_priors > 0.0;
    if s.raw && blends && gen >= 1 && run.read_ladder_raw_record(gen)?.is_none() {
        climb(
            &format!("{name}-raw"),
            &format!(
                "net:{}@{playouts},tactics=0,tactics_priors=0",
                run.model(gen).display()
            ),
            &|g| run.read_ladder_raw_record(g),
            &|r| run.write_ladder_raw_record(r),
        )?;
    }
    let ratings = l.ratings()?;
    l.write_ratings(&ratings)?;
    let mut rows = Vec::new();
    let mut points = Vec::new();
    for g in 0..=cfg.generations {
        // The search's rating, then the raw one (readers that want one row per generation take
        // the first); the chart follows the search's.
        let records = [run.read_ladder_record(g)?, run.read_ladder_raw_record(g)?];
        for (k, r) in records.iter().enumerate() {
            let Some(x) = r
                .as_ref()
                .and_then(|r| ratings.iter().find(|x| x.player == r.player))
            else {
                continue;
            };
            let h = run.cpu_hours_to(g)?;
            rows.push(LadderRow {
                generation: g,
                player: x.player.clone(),
                elo: x.elo,
                error95: x.error,
                games: x.games,
                cpu_hours: h,
            });
            if k == 0 {
                points.push(varzero_trainer::EloPoint {
                    generation: g,
                    cpu_hours: h,
                    elo: x.elo,
                    error: x.error,
                });
            }
        }
    }
    run.write_ladder_csv(&rows)?;
    let rungs: Vec<(String, f64)> = ratings
        .iter()
        .filter(|x| x.rung)
        .map(|x| (x.player.clone(), x.elo))
        .collect();
    let png = run.ladder_png();
    let tmp = png.with_file_name("ladder.tmp.png");
    varzero_trainer::elo_curves(&points, &rungs, &tmp).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::anyhow!("cannot draw {}: {e}", png.display())
    })?;
    if tmp.exists() {
        std::fs::rename(&tmp, &png)?;
    }
    if let Some(p) = points.last() {
        let raw = rows
            .iter()
            .rfind(|r| r.generation == gen && r.player.ends_with("-raw"))
            .map(|r| format!(", raw {:+.0} +- {:.0}", r.elo, r.error95))
            .unwrap_or_default();
        println!(
            "gen {gen}: ladder {:+.0} +- {:.0} Elo{raw} ({} = 0){}",
            p.elo,
            p.error,
            l.cfg.anchor,
            busy.map(|b| format!(", {b:.2} cores busy"))
                .unwrap_or_default()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::split_pairs;

    #[test]
    fn pairs_are_spread_over_the_pairings() {
        // 7 pairs over 3 pairings: 7 = 3 * 2 + 1, the first one takes the extra pair.
        assert_eq!(split_pairs(7, 3), [3, 2, 2]);
        assert_eq!(split_pairs(30, 5), [6; 5]);
        // Fewer pairs than pairings: each still plays one.
        assert_eq!(split_pairs(2, 3), [1, 1, 1]);
    }
}
