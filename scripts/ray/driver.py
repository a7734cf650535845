#!/usr/bin/env python3
"""varzero on a Ray cluster: the pipeline of a run config, with the `varzero` binary as the worker.

The driver holds no state of its own: every stage is a `varzero pipeline --stage ...` command
that reads and writes the run directory (on a filesystem every node sees: NFS, Lustre, a
ReadWriteMany volume), skips what is already there, and makes each file appear by rename. So a
task rerun after a lost node writes no game twice (game i is the same game whoever plays it, and
a range skips the games already in the directory), and a driver killed and started again
resumes the run where it stopped.

Synchronous mode (the default) runs the generations of `varzero pipeline` one after another:
self-play of a generation as tasks over game ranges, then training (a task that asks for a GPU
when the run's device is CUDA), the gating match and the ladder. Its games are, move for move,
those of `varzero pipeline` with the same config. Asynchronous mode works as KataGo's
self-hosted loop: self-play tasks keep playing with the newest accepted net while the trainer
trains the next one as soon as a generation's games are in; it keeps every core busy, and its
games depend on timing.

    PYTHONPATH="$(scripts/setup-ray | tail -n 1)" python3 scripts/ray/driver.py \\
        --config configs/runs/tiny.toml --dir /shared/runs/tiny [--address auto] [--mode async]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib

import ray


def varzero_cmd(args, stage, extra=()):
    cmd = [args.bin, "pipeline", "--quiet", "--config", args.config, "--dir", args.dir]
    for p in args.param:
        cmd += ["--param", p]
    return cmd + ["--stage", stage, *[str(x) for x in extra]]


def die_with_parent():
    # The command dies with the Ray worker that started it (Linux's PR_SET_PDEATHSIG): a task
    # lost with its node or its driver leaves no writer behind to race the task's retry.
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)
    except OSError:
        pass


# Retried on a lost node (max_retries) and on a failed command (retry_exceptions): a stage is
# idempotent, so a rerun only finishes what the lost one left.
@ray.remote(max_retries=3, retry_exceptions=True)
def stage_task(cmd, env):
    t = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env},
                       preexec_fn=die_with_parent)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[-2000:]}")
    return {"cmd": cmd, "stdout": r.stdout, "seconds": time.time() - t}


def effective_config(args):
    """Opens the run directory (`--stage open`, in the driver's process) and reads back the
    config varzero wrote there: the file with every --param applied and checked by varzero
    itself, so the driver plans with the same numbers the stages run with, and a --param varzero
    refuses (an unknown key, a bad value) stops the driver with varzero's message. The paths come
    from varzero too (`--stage layout`): the driver never spells the run directory's layout."""
    for stage in ("open", "layout"):
        r = subprocess.run(varzero_cmd(args, stage), capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(r.stderr.strip() or f"driver: varzero exited {r.returncode}")
    layout = json.loads(r.stdout)
    with open(layout["files"]["config"], "rb") as f:
        return tomllib.load(f), layout


class Driver:
    def __init__(self, args):
        self.args = args
        self.cfg, self.layout = effective_config(args)
        self.threads = int(self.cfg.get("selfplay", {}).get("threads", 1))
        self.games = int(self.cfg["games_per_generation"])
        self.games0 = int(self.cfg.get("gen0_games", self.games))
        self.generations = int(self.cfg["generations"])
        self.ladder = bool(self.cfg.get("ladder", {}).get("enabled", False))
        self.cuda = str(self.cfg.get("device", "cpu")).startswith("cuda")
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.tasks = args.tasks or max(1, cpus // self.threads)
        self.gpu = ray.cluster_resources().get("GPU", 0) >= 1
        self.env = {"VARZERO_CACHE": os.environ.get("VARZERO_CACHE", "")}
        if self.cuda and not self.gpu:
            sys.exit("driver: the run's device is CUDA but the cluster has no GPU")
        self.log(
            f"{self.cfg['name']}: {self.generations} generations of {self.games} games, "
            f"{self.tasks} self-play tasks of {self.threads} threads, "
            f"training on {'GPU' if self.cuda else 'CPU'}, mode {args.mode}"
        )

    def log(self, msg):
        print(f"driver: {msg}", flush=True)

    def remote(self, stage, extra=(), cpus=None, gpus=0.0):
        return stage_task.options(num_cpus=cpus if cpus is not None else 1, num_gpus=gpus).remote(
            varzero_cmd(self.args, stage, extra), self.env
        )

    def run_stage(self, stage, extra=(), cpus=None, gpus=0.0):
        r = ray.get(self.remote(stage, extra, cpus, gpus))
        out = r["stdout"].strip()
        if out:
            self.log(out.splitlines()[-1])
        return r

    def games_of(self, gen):
        return self.games0 if gen == 0 else self.games

    def net_gpus(self, fraction):
        return fraction if self.cuda else 0.0

    def ranges(self, start, end, n):
        step = max(1, -(-(end - start) // n))
        return [(a, min(a + step, end)) for a in range(start, end, step)]

    def selfplay(self, gen):
        t = time.time()
        refs = [
            self.remote(
                "selfplay",
                ["--gen", gen, "--range", f"{a}..{b}"],
                cpus=self.threads,
                gpus=self.net_gpus(1.0 / self.tasks) if gen > 0 else 0.0,
            )
            for a, b in self.ranges(0, self.games_of(gen), self.tasks)
        ]
        ray.get(refs)
        # The whole generation once more, in one task: it finds every game there (or plays what
        # is missing) and removes what a killed task left half-written.
        self.run_stage("selfplay", ["--gen", gen], cpus=self.threads, gpus=self.net_gpus(0.5) if gen else 0.0)
        self.log(f"gen {gen}: self-play {time.time() - t:.1f} s")

    def train_rate(self, nxt):
        self.run_stage("train", ["--gen", nxt], cpus=1, gpus=1.0 if self.cuda else 0.0)
        self.run_stage("rate", ["--gen", nxt], cpus=1, gpus=self.net_gpus(0.5))
        if self.ladder:
            self.run_stage("ladder", ["--gen", nxt], cpus=1, gpus=self.net_gpus(0.5))
        self.run_stage("report", cpus=1)

    def run_sync(self):
        for gen in range(self.generations):
            self.selfplay(gen)
            if gen == 0 and self.ladder:
                self.run_stage("ladder", ["--gen", 0], cpus=1)
            self.train_rate(gen + 1)

    def games_in(self, gen):
        d = self.layout["files"]["selfplay"][gen]
        if not os.path.isdir(d):
            return set()
        r = subprocess.run([self.args.bin, "games", d], capture_output=True, text=True, check=True)
        return {int(line.split("\t", 1)[0]) for line in r.stdout.splitlines() if line}

    def run_async(self):
        chunk = self.args.chunk or max(1, self.games // (2 * self.tasks))
        # Generation 0 (the material player) as in the synchronous loop: nothing to wait for.
        self.selfplay(0)
        if self.ladder:
            self.run_stage("ladder", ["--gen", 0], cpus=1)
        current = 0  # the generation whose net self-play uses now
        done = {0: self.games_in(0)}
        nxt = {0: max(done[0], default=-1) + 1}
        playing = {}  # ref -> (gen, start, end)
        trainer = None  # (ref, generation being made, step)
        busy_since = time.time()
        while True:
            if trainer is None and current < self.generations:
                have = done.setdefault(current, self.games_in(current))
                if len(have) >= self.games_of(current):
                    trainer = (self.remote("train", ["--gen", current + 1], cpus=1,
                                           gpus=1.0 if self.cuda else 0.0), current + 1, "train")
                    self.log(f"training gen {current + 1} on {len(have)} games of gen {current}")
            if current >= self.generations and trainer is None:
                break
            while len(playing) < self.tasks and current < self.generations:
                if current not in nxt:
                    nxt[current] = max(done.setdefault(current, self.games_in(current)), default=-1) + 1
                a = nxt[current]
                nxt[current] = a + chunk
                ref = self.remote("selfplay", ["--gen", current, "--range", f"{a}..{a + chunk}"],
                                  cpus=self.threads,
                                  gpus=self.net_gpus(1.0 / self.tasks) if current else 0.0)
                playing[ref] = (current, a, a + chunk)
            refs = list(playing) + ([trainer[0]] if trainer else [])
            ready, _ = ray.wait(refs, num_returns=1)
            for ref in ready:
                if ref in playing:
                    g, a, b = playing.pop(ref)
                    ray.get(ref)
                    done.setdefault(g, set()).update(range(a, b))
                    continue
                ray.get(ref)
                _, gen, step = trainer
                follow = {"train": "rate", "rate": "ladder" if self.ladder else None,
                          "ladder": None}[step]
                if follow:
                    trainer = (self.remote(follow, ["--gen", gen], cpus=1,
                                           gpus=self.net_gpus(0.5)), gen, follow)
                else:
                    self.run_stage("report", cpus=1)
                    self.log(f"gen {gen} ready after {time.time() - busy_since:.1f} s; self-play moves to it")
                    trainer = None
                    current = gen
        # What the last self-play chunks were playing is finished; nothing is in flight.
        ray.get(list(playing))

    def main(self):
        # The run directory was opened (created, or checked to hold this run) by __init__.
        t = time.time()
        if self.args.mode == "sync":
            self.run_sync()
        else:
            self.run_async()
        self.run_stage("finish", cpus=1, gpus=self.net_gpus(0.5))
        self.log(f"done in {time.time() - t:.1f} s: {self.args.dir}")


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", required=True, help="run config (configs/runs/*.toml)")
    p.add_argument("--dir", required=True, help="run directory, on a filesystem every node sees")
    p.add_argument("--param", action="append", default=[], help="KEY=VALUE, any key varzero pipeline --param takes (passed to every stage)")
    p.add_argument("--address", default=None, help="Ray cluster address (default: RAY_ADDRESS, or a local Ray)")
    p.add_argument("--bin", default=os.environ.get("VARZERO_BIN") or shutil.which("varzero") or "varzero",
                   help="the varzero binary on every node (default: VARZERO_BIN, or varzero on PATH)")
    p.add_argument("--tasks", type=int, default=0, help="self-play tasks at once (default: cluster CPUs / selfplay.threads)")
    p.add_argument("--mode", choices=["sync", "async"], default="sync")
    p.add_argument("--chunk", type=int, default=0, help="games per asynchronous self-play task")
    return p.parse_args(argv)


def main(argv=None):
    args = parse(argv)
    args.config = os.path.abspath(args.config)
    args.dir = os.path.abspath(args.dir)
    ray.init(address=args.address, log_to_driver=False, include_dashboard=False)
    try:
        Driver(args).main()
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
