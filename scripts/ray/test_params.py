#!/usr/bin/env python3
"""The driver's --param handling, without a cluster (Ray is stubbed; the varzero binary is
real), run by scripts/test:

1. every --param reaches the driver's plan (games, generation 0's games, threads, the ladder),
   including keys the base config leaves out, because the driver plans from the config.toml
   varzero wrote with them applied;
2. a --param varzero refuses (an unknown key, a bad value) stops the driver with a non-zero exit
   and varzero's message naming the key, and leaves no config.toml.

    VARZERO_BIN=... python3 scripts/ray/test_params.py
"""

import os
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ["VARZERO_BIN"]

# The driver needs only `ray.remote` at import time; nothing here schedules a task.
stub = types.ModuleType("ray")
stub.remote = lambda **_: (lambda f: f)
sys.modules["ray"] = stub
sys.path.insert(0, HERE)
import driver  # noqa: E402

CONFIG = """name = "params"
variant = "makruk"
generations = 2
games_per_generation = 8
[selfplay]
threads = 1
"""


def args(tmp, *params):
    a = driver.parse(["--config", os.path.join(tmp, "run.toml"), "--dir", os.path.join(tmp, "run"),
                      "--bin", BIN, *sum((["--param", p] for p in params), [])])
    return a


def main():
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "run.toml"), "w") as f:
            f.write(CONFIG)
        cfg, layout = driver.effective_config(args(tmp, "games_per_generation=6", "gen0_games=10",
                                                   "selfplay.threads=2", "ladder.enabled=true",
                                                   "generations=3"))
        # The paths come from varzero (--stage layout), one per generation 0..=3.
        sp = layout["files"]["selfplay"]
        assert len(sp) == 4 and sp[3].endswith(os.path.join("selfplay", "gen-003")), sp
        assert layout["files"]["config"].startswith(tmp), layout["files"]["config"]
        assert cfg["games_per_generation"] == 6, cfg
        assert cfg["gen0_games"] == 10, cfg
        assert cfg["selfplay"]["threads"] == 2, cfg
        assert cfg["ladder"]["enabled"] is True, cfg
        assert cfg["generations"] == 3, cfg
        for bad, key in (("nonsense_key=1", "nonsense_key"), ("selfplay.threads=many", "selfplay.threads")):
            d = os.path.join(tmp, f"bad-{key}")
            a = driver.parse(["--config", os.path.join(tmp, "run.toml"), "--dir", d, "--bin", BIN,
                              "--param", bad])
            try:
                driver.effective_config(a)
            except SystemExit as e:
                assert e.code not in (0, None), e.code
                assert key in str(e.code), e.code
            else:
                raise AssertionError(f"--param {bad} was taken")
            assert not os.path.exists(os.path.join(d, "config.toml")), d
    print("driver --param: every key reaches the plan; refused keys stop the driver")


if __name__ == "__main__":
    main()
