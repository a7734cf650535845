//! The stages that make a generation: its self-play games, and the net trained on the window
//! of the generations before it. Each resumes from what the run directory holds.

use super::PipelineConfig;
use crate::run_dir::{CpuKey, RunDir};
use crate::usage::{cpu_seconds, cpu_with_children, CpuMeter, Usage};
use anyhow::Result;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use varzero_rules::Variant;
use varzero_search::{Evaluator, MaterialEvaluator};
use varzero_selfplay::Generator;

/// The net self-play uses in generation `gen`: the newest accepted one before it.
pub fn selfplay_net(run: &RunDir, gen: u32) -> Result<Option<PathBuf>> {
    for g in (1..=gen).rev() {
        let m = run.model(g);
        let accepted = run.read_match(g)?.is_none_or(|r| r.accepted);
        if m.exists() && accepted {
            return Ok(Some(m));
        }
    }
    Ok(None)
}

/// Stage 1 of generation `gen`: its self-play games (resuming what is there), with the newest
/// accepted net, or the material evaluator in generation 0.
pub fn selfplay_generation(
    run: &RunDir,
    cfg: &PipelineConfig,
    v: &Arc<Variant>,
    gen: u32,
    quiet: bool,
) -> Result<()> {
    selfplay_games(run, cfg, v, gen, None, quiet)
}

/// Self-play of generation `gen`: the games of `range` only (`None`: all of them; a range is
/// played beside other writers of the same directory, see [`Generator::run_range`]).
pub fn selfplay_games(
    run: &RunDir,
    cfg: &PipelineConfig,
    v: &Arc<Variant>,
    gen: u32,
    range: Option<std::ops::Range<u64>>,
    quiet: bool,
) -> Result<()> {
    let sp = run.selfplay(gen);
    // Ranges share the generation's directory; the whole pass holds it alone (it removes what
    // killed range writers left), so it waits for range writers still at work there (a task
    // retried while its first attempt still runs), saying for whom.
    let _lock = match &range {
        Some(_) => varzero_datasets::DirLock::acquire(&sp, varzero_datasets::LockMode::Shared)?,
        None => varzero_datasets::DirLock::wait(
            &sp,
            varzero_datasets::LockMode::Exclusive,
            &mut |holder| {
                eprintln!(
                    "note: {} is in use by {holder}: waiting for it",
                    sp.display()
                )
            },
        )?,
    };
    let usage = Usage::start();
    if let (0, Some(spec)) = (gen, &cfg.gen0) {
        let t = Instant::now();
        let g = crate::engine_games::EngineGames {
            players: [spec.clone(), spec.clone()],
            games: cfg.games(0),
            random_plies: 4,
            seed: cfg.selfplay.seed,
            concurrency: cfg.selfplay.threads,
            device: cfg.device.clone(),
            positions: true,
            range: range.clone(),
            time_control: None,
        };
        // The teacher's engines are child processes: their CPU time is the stage's.
        let meter = CpuMeter::start(
            run,
            CpuKey::selfplay(gen, range.as_ref()),
            cpu_with_children,
            CpuMeter::FLUSH,
        );
        let s = crate::engine_games::play(v, &g, &cfg.search, &sp, &mut |_, _| {})?;
        meter.finish()?;
        let busy = if range.is_none() {
            usage.record(run, "selfplay", gen)?
        } else {
            usage.cores()
        };
        println!(
            "gen 0: the teacher {spec}: {} games ({} already there), {} failures, {:.0} s, {busy:.2} cores busy",
            s.played,
            s.already,
            s.failures.len(),
            t.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    let net = selfplay_net(run, gen)?;
    let ev: Arc<dyn Evaluator> = match &net {
        Some(p) => crate::nets::net_evaluator(p, v, &cfg.device)?,
        None => Arc::new(MaterialEvaluator::new(v)),
    };
    let mut sp_cfg = cfg.selfplay.clone();
    sp_cfg.seed = cfg.selfplay.seed.wrapping_add(gen as u64 * 1_000_003);
    let t = Instant::now();
    varzero_eval_net::share_threads(cfg.selfplay.threads);
    let mut search = cfg.search.clone();
    if let (None, Some(p)) = (&net, cfg.gen0_playouts) {
        search.playouts = p;
    }
    let g = Arc::new(Generator::new(v.clone(), ev.clone(), search, sp_cfg));
    let ev_id = g.evaluator.id();
    // Ranges run at once in other processes: each records its CPU time in its own file.
    let meter = CpuMeter::start(
        run,
        CpuKey::selfplay(gen, range.as_ref()),
        cpu_seconds,
        CpuMeter::FLUSH,
    );
    let s = match &range {
        None => crate::progress::run_with_progress(g, &sp, cfg.games(gen), quiet)?,
        Some(r) => g.run_range(&sp, r.clone(), true)?,
    };
    meter.finish()?;
    let busy = if range.is_none() {
        usage.record(run, "selfplay", gen)?
    } else {
        usage.cores()
    };
    println!(
        "gen {gen}{}: self-play with {}: {} games ({} already there), {} positions, {:.0} s, {busy:.2} cores busy",
        range
            .as_ref()
            .map(|r| format!(" games {}..{}", r.start, r.end))
            .unwrap_or_default(),
        ev_id,
        s.games_played,
        s.games_already_done,
        s.positions,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Reanalyse (MuZero) for net `gen` (the file `net`): `cfg.reanalyse` positions drawn from
/// the self-play generations before `gen` (a teacher's generation 0 aside, its targets are the
/// teacher's), searched again with that net as self-play searches (no noise), written as one
/// shard to `reanalyse/gen-NNN`. Done once: a directory that holds its shard is kept.
pub fn reanalyse_generation(
    run: &RunDir,
    cfg: &PipelineConfig,
    v: &Arc<Variant>,
    gen: u32,
    net: &std::path::Path,
    quiet: bool,
) -> Result<()> {
    let dir = run.reanalyse(gen);
    let first = if cfg.gen0.is_some() { 1 } else { 0 };
    if cfg.reanalyse == 0 || gen <= first {
        return Ok(());
    }
    let (done, _) = varzero_datasets::list_shards(&dir).unwrap_or_default();
    if !done.is_empty() {
        return Ok(());
    }
    let from: Vec<PathBuf> = (first..gen).map(|g| run.selfplay(g)).collect();
    let (lf, _) = varzero_datasets::scan_positions_window_dirs(&from, usize::MAX)?;
    let Some(lf) = lf else {
        return Ok(());
    };
    let df = lf.collect()?;
    let mut all = varzero_datasets::positions_from_frame(&df)?;
    // Sorted as the trainer sorts, so the draw depends only on the games.
    all.sort_by_key(|r| (r.game_id, r.ply));
    let n = cfg.reanalyse.min(all.len());
    let mut rng = varzero_stats::Rng::new(varzero_stats::Rng::derive(
        cfg.selfplay.seed ^ 0x5245_414e,
        gen as u64,
    ));
    // A partial Fisher-Yates shuffle: the first n are a uniform draw without replacement.
    for i in 0..n {
        let j = i + rng.below(all.len() - i);
        all.swap(i, j);
    }
    all.truncate(n);
    let t = Instant::now();
    let meter = CpuMeter::start(run, CpuKey::train(gen + 1), cpu_seconds, CpuMeter::FLUSH);
    let ev = crate::nets::net_evaluator(net, v, &cfg.device)?;
    varzero_eval_net::share_threads(cfg.selfplay.threads);
    let run_cfg = varzero_selfplay::SelfplayConfig {
        noise: false,
        ..cfg.selfplay.clone()
    };
    let gen_ = varzero_selfplay::Generator::new(v.clone(), ev, cfg.search.clone(), run_cfg);
    let bar = crate::progress::progress_bar(quiet, n as u64, "positions");
    let stats = gen_.stats.clone();
    let fresh = std::thread::scope(|s| {
        let h = s.spawn(|| gen_.reanalyse(&all));
        while !h.is_finished() {
            bar.set_position(stats.positions.load(std::sync::atomic::Ordering::Relaxed));
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        h.join().expect("reanalyse does not panic")
    });
    bar.finish_and_clear();
    // One game record per position, so the directory reads as any dataset: ids 0..n.
    let mut positions = Vec::with_capacity(fresh.len());
    let mut games = Vec::with_capacity(fresh.len());
    for (i, r) in fresh.into_iter().enumerate() {
        games.push(varzero_datasets::GameRecord {
            game_id: i as u64,
            variant: r.variant.clone(),
            rules_hash: r.rules_hash.clone(),
            result: "*".into(),
            termination: "reanalysed".into(),
            plies: 1,
            seed: 0,
            evaluator: r.evaluator.clone(),
            search: serde_json::to_string(&cfg.search).unwrap_or_default(),
            start_fen: r.fen.clone(),
            moves: String::new(),
        });
        positions.push(varzero_datasets::PositionRecord {
            game_id: i as u64,
            ..r
        });
    }
    let rules = varzero_datasets::DatasetRules::new(&v.name, v.rules_hash);
    varzero_datasets::claim(&dir, &rules)?;
    varzero_datasets::write_shard(&dir, 0, "reanalyse", &positions, &games)?;
    meter.finish()?;
    println!(
        "gen {gen}: reanalysed {} positions of generations {first}..{} with net {gen} in {:.0} s",
        positions.len(),
        gen - 1,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Stage 2: the net of generation `next`, trained on the window of generations `0..next`
/// (resuming from its checkpoint; nothing to do when its model is there).
pub fn train_generation(
    run: &RunDir,
    cfg: &PipelineConfig,
    v: &Arc<Variant>,
    next: u32,
    quiet: bool,
) -> Result<()> {
    let model = run.model(next);
    if model.exists() {
        return Ok(());
    }
    let net = selfplay_net(run, next - 1)?;
    if let Some(n) = &net {
        reanalyse_generation(run, cfg, v, next - 1, n, quiet)?;
    }
    let mut data: Vec<PathBuf> = (0..next).map(|g| run.selfplay(g)).collect();
    // Reanalysed positions count as self-play (after generation 0) in the batch mix.
    data.extend((1..next).map(|g| run.reanalyse(g)).filter(|d| d.exists()));
    let out = run.training(next);
    let usage = Usage::start();
    varzero_eval_net::share_threads(1);
    let mut train = cfg.train.clone();
    if let (1, Some(n)) = (next, cfg.gen1_steps) {
        train.steps = n;
    }
    if let (1, Some(w)) = (next, cfg.gen1_window) {
        train.window = w;
    }
    train.selfplay_share =
        varzero_trainer::selfplay_share_at(train.selfplay_share, train.teacher_decay, next);
    let bar = crate::progress::progress_bar(quiet, train.steps, "steps");
    let t = Instant::now();
    let meter = CpuMeter::start(run, CpuKey::train(next), cpu_seconds, CpuMeter::FLUSH);
    let summary = varzero_trainer::train(
        v,
        &data,
        &out,
        net.as_deref(),
        &train,
        varzero_eval_net::parse_device(&cfg.device).map_err(anyhow::Error::msg)?,
        &mut |l| {
            bar.set_position(l.step);
            bar.set_message(format!(
                "loss {:.3}  acc {:.2}/{:.2}  {:.0} samples/s",
                l.loss, l.policy_acc, l.value_acc, l.samples_per_s
            ));
        },
    )?;
    bar.finish_and_clear();
    meter.finish()?;
    for ext in ["json", "safetensors"] {
        crate::copy_atomic(
            &summary.model.with_extension(ext),
            &model.with_extension(ext),
        )?;
    }
    let (f, l) = (
        summary.first.unwrap_or_default(),
        summary.last.unwrap_or_default(),
    );
    // The run's copies of the log and its curves (a missing chart is no reason to stop a run).
    let _ = crate::copy_atomic(&out.join("train_log.csv"), &run.train_log(next));
    let _ = crate::copy_atomic(&out.join("train_curves.png"), &run.train_curves(next));
    let busy = usage.record(run, "train", next)?;
    println!(
        "gen {next}: trained {} steps on {} positions{} in {:.0} s ({busy:.2} cores busy): loss {:.3} -> {:.3}, policy acc {:.2} -> {:.2}",
        summary.steps_done,
        summary.samples,
        if summary.mirrored { ", mirrored" } else { "" },
        t.elapsed().as_secs_f64(),
        f.loss,
        l.loss,
        f.policy_acc,
        l.policy_acc
    );
    Ok(())
}
