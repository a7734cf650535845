#!/usr/bin/env python3
"""Checks the cluster files that cannot run here (scripts/test runs this): the KubeRay RayJob
parses as YAML with the fields KubeRay needs, its Ray version is the one scripts/setup-ray
installs, and its driver command names files of the repository; the Slurm batch script passes
`bash -n` and starts the driver. And the cluster is safe by default (docs/cluster.md#what-an-attacker-on-the-network-can-do):
token authentication in every container and on Slurm, a NetworkPolicy that admits only the
job's own pods (and the operator to the dashboard), no Service beyond ClusterIP and no client
port, the binary mounted read-only everywhere, no fixed port, no 0.0.0.0, exclusive nodes."""

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
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    job = next((d for d in docs if d.get("kind") == "RayJob"), {})
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
            mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
            if not {"/shared/runs", "/shared/bin"} <= mounts and "/shared" not in mounts:
                fail(f"{path}: container {c['name']} does not mount the shared volume")
    for rel in re.findall(r"/shared/varzero/(\S+)", spec["entrypoint"]):
        if not os.path.exists(os.path.join(ROOT, rel)):
            fail(f"{path}: the entrypoint names {rel}, which the repository lacks")
    if "driver.py" not in spec["entrypoint"]:
        fail(f"{path}: the entrypoint does not run the driver")
    check_safety(path, job, docs)
    sbatch = os.path.join(HERE, "slurm.sbatch")
    r = subprocess.run(["bash", "-n", sbatch], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{sbatch}: {r.stderr.strip()}")
    text = open(sbatch).read()
    for need in ("#SBATCH --nodes", "$RAY start --head", "driver.py"):
        if need not in text:
            fail(f"{sbatch}: '{need}' missing")
    check_slurm_safety(sbatch, text)
    print("cluster manifests: rayjob.yaml and slurm.sbatch check, safe by default")


def check_safety(path, job, docs):
    spec = job["spec"]
    cluster = spec["rayClusterSpec"]
    head = cluster["headGroupSpec"]
    pods = [("head", head["template"])]
    pods += [(g["groupName"], g["template"]) for g in cluster["workerGroupSpecs"]]
    if "submitterPodTemplate" not in spec:
        fail(f"{path}: no submitterPodTemplate (the submitter needs the token and the job's label)")
    pods.append(("submitter", spec["submitterPodTemplate"]))
    policies = [d for d in docs if d.get("kind") == "NetworkPolicy"]
    if len(policies) != 1:
        fail(f"{path}: one NetworkPolicy expected beside the RayJob, found {len(policies)}")
    policy = policies[0]["spec"]
    selector = policy.get("podSelector", {}).get("matchLabels")
    if not selector:
        fail(f"{path}: the NetworkPolicy selects no pods by label")
    if "Ingress" not in policy.get("policyTypes", []):
        fail(f"{path}: the NetworkPolicy does not restrict ingress")
    for rule in policy.get("ingress", []):
        peers = rule.get("from")
        if not peers:
            fail(f"{path}: a NetworkPolicy ingress rule admits every source")
        for peer in peers:
            if "ipBlock" in peer:
                fail(f"{path}: a NetworkPolicy ingress rule admits an ipBlock")
            labels = peer.get("podSelector", {}).get("matchLabels")
            ports = sorted(p.get("port") for p in rule.get("ports", []))
            own = labels == selector and "namespaceSelector" not in peer
            operator = labels == {"app.kubernetes.io/name": "kuberay-operator"} and ports == [8265]
            if not (own or operator):
                fail(f"{path}: a NetworkPolicy ingress rule admits {peer} on ports {ports or 'all'}")
    for name, pod in pods:
        labels = pod.get("metadata", {}).get("labels", {})
        if any(labels.get(k) != v for k, v in selector.items()):
            fail(f"{path}: the {name} pods lack the label {selector} the NetworkPolicy protects")
        for c in pod["spec"]["containers"]:
            env = {e["name"]: e for e in c.get("env", [])}
            if env.get("RAY_AUTH_MODE", {}).get("value") != "token":
                fail(f"{path}: container {c['name']} ({name}) has no RAY_AUTH_MODE=token")
            if "secretKeyRef" not in env.get("RAY_AUTH_TOKEN", {}).get("valueFrom", {}):
                fail(f"{path}: container {c['name']} ({name}) takes RAY_AUTH_TOKEN from no Secret")
            for m in c.get("volumeMounts", []):
                covers = "/shared/bin/varzero".startswith(m["mountPath"].rstrip("/") + "/")
                if covers and not m.get("readOnly"):
                    fail(f"{path}: container {c['name']} ({name}) mounts {m['mountPath']} writable: "
                         "a job could replace /shared/bin/varzero")
            for p in c.get("ports", []):
                if p.get("containerPort") == 10001 or p.get("name") == "client":
                    fail(f"{path}: container {c['name']} exposes the Ray client server")
    if head.get("serviceType", "ClusterIP") != "ClusterIP" or head.get("enableIngress"):
        fail(f"{path}: the head is exposed beyond the cluster (serviceType, enableIngress)")
    if not any(p.get("containerPort") for c in head["template"]["spec"]["containers"]
               for p in c.get("ports", [])):
        fail(f"{path}: the head declares no ports, so KubeRay's Service exposes its defaults "
             "(the client server among them)")
    if "0.0.0.0" in str(head.get("rayStartParams", {})):
        fail(f"{path}: the head binds 0.0.0.0 explicitly")


def check_slurm_safety(sbatch, text):
    lines = [l for l in text.splitlines() if not l.lstrip().startswith("#") or l.startswith("#SBATCH")]
    body = "\n".join(lines)
    for need, why in (
        ("#SBATCH --exclusive", "nodes shared with other jobs"),
        ("export RAY_AUTH_MODE=token", "no token authentication"),
        ("--node-ip-address", "the head does not take the scheduler's address"),
        ("--include-dashboard=false", "the dashboard (and its Jobs API) runs"),
    ):
        if need not in body:
            fail(f"{sbatch}: '{need}' missing: {why}")
    if re.search(r"--port[= ]\d|port=\d|6379", body):
        fail(f"{sbatch}: a fixed port")
    if "0.0.0.0" in body:
        fail(f"{sbatch}: binds 0.0.0.0")


if __name__ == "__main__":
    main()
