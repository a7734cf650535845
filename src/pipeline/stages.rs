//! The stages that make a generation: its self-play games, and the net trained on the window
//! of the generations before it. Each resumes from what the run directory holds.

use super::PipelineConfig;
use crate::run_dir::{CpuKey, RunDir};
use crate::usage::{cpu_seconds, cpu_with_children, Usage};
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
        };
        // The teacher's engines are child processes: their CPU time is the stage's.
        let cpu = cpu_with_children();
        let s = crate::engine_games::play(v, &g, &cfg.search, &sp, &mut |_, _| {})?;
        run.add_cpu(
            &CpuKey::selfplay(gen, range.as_ref()),
            cpu_with_children() - cpu,
        )?;
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
    let cpu = cpu_seconds();
    let s = match &range {
        None => crate::progress::run_with_progress(g, &sp, cfg.games(gen), quiet)?,
        Some(r) => g.run_range(&sp, r.clone(), true)?,
    };
    // Ranges run at once in other processes: each records its CPU time in its own file.
    run.add_cpu(&CpuKey::selfplay(gen, range.as_ref()), cpu_seconds() - cpu)?;
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
    let data: Vec<PathBuf> = (0..next).map(|g| run.selfplay(g)).collect();
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
    let cpu = cpu_seconds();
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
    run.add_cpu(&CpuKey::train(next), cpu_seconds() - cpu)?;
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
