#!/usr/bin/env python3
"""Checks the cluster files that cannot run here (scripts/test runs this): the KubeRay RayJob
parses as YAML with the fields KubeRay needs, its Ray version is the one scripts/setup-ray
installs, and its driver command names files of the repository; the Slurm batch script passes
`bash -n` and starts the driver."""

import os
import re
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def fail(msg):
    sys.exit(f"check_manifests: {msg}")


def main():
    path = os.path.join(HERE, "rayjob.yaml")
    job = yaml.safe_load(open(path))
    if job.get("apiVersion") != "ray.io/v1" or job.get("kind") != "RayJob":
        fail(f"{path}: apiVersion ray.io/v1, kind RayJob expected")
    spec = job["spec"]
    want = re.search(r'want="([^"]+)"', open(os.path.join(ROOT, "scripts", "setup-ray")).read())[1]
    cluster = spec["rayClusterSpec"]
    if cluster["rayVersion"] != want:
        fail(f"{path}: rayVersion {cluster['rayVersion']}, scripts/setup-ray installs {want}")
    groups = [cluster["headGroupSpec"]] + cluster["workerGroupSpecs"]
    for g in groups:
        for c in g["template"]["spec"]["containers"]:
            if want not in c["image"]:
                fail(f"{path}: image {c['image']} is not Ray {want}")
            if not any(m["mountPath"] == "/shared" for m in c.get("volumeMounts", [])):
                fail(f"{path}: container {c['name']} does not mount /shared")
    for rel in re.findall(r"/shared/varzero/(\S+)", spec["entrypoint"]):
        if not os.path.exists(os.path.join(ROOT, rel)):
            fail(f"{path}: the entrypoint names {rel}, which the repository lacks")
    if "driver.py" not in spec["entrypoint"]:
        fail(f"{path}: the entrypoint does not run the driver")
    sbatch = os.path.join(HERE, "slurm.sbatch")
    r = subprocess.run(["bash", "-n", sbatch], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{sbatch}: {r.stderr.strip()}")
    text = open(sbatch).read()
    for need in ("#SBATCH --nodes", "$RAY start --head", "driver.py"):
        if need not in text:
            fail(f"{sbatch}: '{need}' missing")
    print("cluster manifests: rayjob.yaml and slurm.sbatch check")


if __name__ == "__main__":
    main()
