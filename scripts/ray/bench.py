#!/usr/bin/env python3
"""Benchmarks of the Ray driver on this machine (docs/cluster.md quotes them). Medians of --runs.

1. Self-play throughput under the driver against bare `varzero pipeline --stage selfplay` at the
   same total thread count (bare: one process of N threads; driver: N tasks of one thread), and
   the driver's per-task overhead (a wave of tasks over a generation that is already complete).
2. Core utilisation of a small run in synchronous and asynchronous mode: the busy share of all
   cores (from /proc/stat) over the run.

    PYTHONPATH="$(scripts/setup-ray | tail -n 1)" VARZERO_BIN=... python3 scripts/ray/bench.py
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import ray

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver as drv  # noqa: E402

BIN = os.environ["VARZERO_BIN"]

RUN = """name = "bench"
variant = "{variant}"
generations = {generations}
games_per_generation = {games}
match_games = 4
match_playouts = 32
[search]
playouts = {playouts}
[selfplay]
threads = {threads}
games_per_worker = 8
[train]
steps = {steps}
batch_size = 128
[train.arch]
blocks = 2
channels = 32
"""


def cpu_busy():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def write(path, **kw):
    with open(path, "w") as f:
        f.write(RUN.format(**kw))
    return path


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--variant", default="xiangqi")
    p.add_argument("--games", type=int, default=32)
    p.add_argument("--playouts", type=int, default=200)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    a = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="varzero-ray-bench-")
    n = a.threads
    bare_cfg = write(os.path.join(tmp, "bare.toml"), variant=a.variant, generations=1, games=a.games,
                     playouts=a.playouts, threads=n, steps=10)
    task_cfg = write(os.path.join(tmp, "task.toml"), variant=a.variant, generations=1, games=a.games,
                     playouts=a.playouts, threads=1, steps=10)
    ray.init(log_to_driver=False, include_dashboard=False, num_cpus=n)
    bare, under, overhead = [], [], []
    for r in range(a.runs):
        d = os.path.join(tmp, f"bare-{r}")
        subprocess.run([BIN, "pipeline", "--quiet", "--config", bare_cfg, "--dir", d, "--stage", "open"], check=True)
        t = time.time()
        subprocess.run([BIN, "pipeline", "--quiet", "--config", bare_cfg, "--dir", d, "--stage", "selfplay",
                        "--gen", "0"], check=True, capture_output=True)
        bare.append(time.time() - t)
        d = os.path.join(tmp, f"ray-{r}")
        args = drv.parse(["--config", task_cfg, "--dir", d, "--bin", BIN, "--tasks", str(n)])
        dv = drv.Driver(args)
        subprocess.run(drv.varzero_cmd(args, "open"), check=True, capture_output=True)
        t = time.time()
        dv.selfplay(0)
        under.append(time.time() - t)
        # Again: every game is there, so what is timed is the tasks' own cost.
        t = time.time()
        dv.selfplay(0)
        overhead.append((time.time() - t) / (n + 1))
    b, u, o = statistics.median(bare), statistics.median(under), statistics.median(overhead)
    print(f"self-play, {a.variant}, {a.games} games at {a.playouts} playouts, {n} threads in all "
          f"(median of {a.runs}): bare {b:.1f} s, under the driver {u:.1f} s "
          f"({n} tasks of 1 thread + the whole-generation pass): throughput {100 * b / u:.1f}% of bare; "
          f"per-task overhead {o:.2f} s")
    ray.shutdown()

    run_cfg = write(os.path.join(tmp, "run.toml"), variant=a.variant, generations=3, games=a.games,
                    playouts=a.playouts // 2, threads=1, steps=300)
    for mode in ("sync", "async"):
        d = os.path.join(tmp, f"run-{mode}")
        b0, t0 = cpu_busy()
        w = time.time()
        env = {**os.environ}
        r = subprocess.run([sys.executable, drv.__file__, "--config", run_cfg, "--dir", d, "--bin", BIN,
                            "--mode", mode, "--tasks", str(n)], capture_output=True, text=True, env=env)
        if r.returncode != 0:
            sys.exit(r.stdout + r.stderr)
        b1, t1 = cpu_busy()
        wall = time.time() - w
        print(f"{mode:5}: a 3-generation run in {wall:.0f} s, cores busy {100 * (b1 - b0) / (t1 - t0):.0f}% "
              f"of {os.cpu_count()} ({(b1 - b0) / (t1 - t0) * (os.cpu_count() or 1):.2f} cores)")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
