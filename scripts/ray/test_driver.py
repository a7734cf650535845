#!/usr/bin/env python3
"""Tests of the Ray driver on a cluster of three nodes on this machine (ray.cluster_utils:
a head without CPUs for tasks, two workers with one CPU each), run by scripts/test:

1. a tiny run's games equal, move for move, those of `varzero pipeline` with the same config;
2. with a worker node removed in the middle of self-play the run finishes, every game index
   appears exactly once, and no temporary file is left;
3. a driver killed in the middle and started again resumes the run, and the games are again
   those of `varzero pipeline`;
4. the cluster runs with token authentication on (RAY_AUTH_MODE=token, as slurm.sbatch and
   rayjob.yaml start it), and a client without the token is refused.

    PYTHONPATH="$(scripts/setup-ray | tail -n 1)" VARZERO_BIN=... python3 scripts/ray/test_driver.py
"""

import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time

# Every node, the driver and this process get the token from the environment, as on Slurm and
# KubeRay; set before Ray is imported, which reads the mode once.
os.environ["RAY_AUTH_MODE"] = "token"
os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)

from ray.cluster_utils import Cluster  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ["VARZERO_BIN"]

CONFIG = """name = "ray-ci"
variant = "makruk"
generations = 2
games_per_generation = {games}
match_games = 2
match_playouts = 4
[search]
playouts = {playouts}
[selfplay]
threads = 1
games_per_worker = 2
[train]
steps = 4
batch_size = 16
[train.arch]
blocks = 1
channels = 8
"""


def games(run, gen):
    """id, result, ending and moves of each game of a generation (not the players' names, which
    hold the run directory)."""
    d = os.path.join(run, "selfplay", f"gen-{gen:03d}")
    out = subprocess.run([BIN, "games", d], capture_output=True, text=True, check=True).stdout
    return [tuple(line.split("\t")[i] for i in (0, 1, 2, 5)) for line in out.splitlines()]


def temporaries(run):
    found = []
    for root, dirs, files in os.walk(run):
        for n in dirs + files:
            if n.startswith(".tmp-") or n.endswith(".tmp"):
                found.append(os.path.join(root, n))
    return found


def driver(cfg, run, address, **popen):
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    cmd = [sys.executable, os.path.join(HERE, "driver.py"), "--config", cfg, "--dir", run,
           "--address", address]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, **popen)


def wait_ok(p, what):
    out, _ = p.communicate(timeout=600)
    assert p.returncode == 0, f"{what}: driver exited {p.returncode}:\n{out}"
    return out


def shards(run, gen):
    d = os.path.join(run, "selfplay", f"gen-{gen:03d}")
    return [n for n in os.listdir(d) if not n.startswith(".") and n[0].isdigit()] if os.path.isdir(d) else []


UNAUTHENTICATED = """
import ray
try:
    ray.init(address={address!r}, log_to_driver=False)
except Exception as e:
    print("refused:", type(e).__name__)
else:
    print("connected")
"""


def unauthenticated_client(address, home):
    """A client with no token (none in its environment, none in its home directory)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env["HOME"] = home
    r = subprocess.run([sys.executable, "-c", UNAUTHENTICATED.format(address=address)],
                       env=env, capture_output=True, text=True, timeout=120)
    return r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr[-500:]


def main():
    tmp = tempfile.mkdtemp(prefix="varzero-ray-")
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
    cluster.wait_for_nodes()
    try:
        cfg = os.path.join(tmp, "ci.toml")
        with open(cfg, "w") as f:
            f.write(CONFIG.format(games=8, playouts=8))
        # 4. No token, no cluster.
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        said = unauthenticated_client(cluster.address, home)
        assert said.startswith("refused"), f"a client without the token: {said}"
        print("ok: token authentication is on; a client without the token is refused")

        single = os.path.join(tmp, "single")
        subprocess.run([BIN, "pipeline", "--quiet", "--config", cfg, "--dir", single],
                       check=True, capture_output=True)

        # 1. The same games as one machine.
        run = os.path.join(tmp, "ray")
        wait_ok(driver(cfg, run, cluster.address), "equal games")
        for gen in (0, 1):
            a, b = games(single, gen), games(run, gen)
            assert len(a) == 8 and a == b, f"gen {gen}: the cluster's games differ from one machine's"
        assert os.path.exists(os.path.join(run, "models", "gen-002.safetensors"))
        print("ok: the cluster's games equal varzero pipeline's, move for move")

        # 2. A worker node removed in the middle of self-play.
        big = os.path.join(tmp, "big.toml")
        with open(big, "w") as f:
            f.write(CONFIG.format(games=24, playouts=48))
        run2 = os.path.join(tmp, "lost-node")
        p = driver(big, run2, cluster.address)
        deadline = time.time() + 300
        while len(shards(run2, 0)) < 2:
            assert p.poll() is None, "the run ended before a node could be removed"
            assert time.time() < deadline, "no self-play shard within 300 s"
            time.sleep(0.2)
        cluster.remove_node(workers[0])
        wait_ok(p, "lost node")
        for gen in (0, 1):
            ids = [int(g[0]) for g in games(run2, gen)]
            assert sorted(ids) == list(range(24)), f"gen {gen}: game ids {sorted(ids)}"
        left = temporaries(run2)
        assert not left, f"temporary files left: {left}"
        print(f"ok: a node removed after {len(shards(run2, 0))}+ shards; every game once, no temporary file")
        workers[0] = cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()

        # 3. The driver killed and started again.
        run3 = os.path.join(tmp, "restart")
        p = driver(cfg, run3, cluster.address, start_new_session=True)
        deadline = time.time() + 300
        while not os.path.exists(os.path.join(run3, "models", "gen-001.safetensors")):
            assert p.poll() is None, "the run ended before the driver could be killed"
            assert time.time() < deadline, "no model within 300 s"
            time.sleep(0.2)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        out = wait_ok(driver(cfg, run3, cluster.address), "restart")
        for gen in (0, 1):
            assert games(single, gen) == games(run3, gen), f"gen {gen} differs after the restart"
        assert "done in" in out, out
        print("ok: a killed driver, started again, finishes the run with the same games")
    finally:
        cluster.shutdown()
    print("all Ray driver tests passed")


if __name__ == "__main__":
    main()
