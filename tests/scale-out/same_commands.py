#!/usr/bin/python3
"""The Kubernetes shard and merge Jobs run the same servebench commands as the Slurm script:
renders deploy/kubernetes (render.sh), runs each Job's shell command with a stub `servebench`
that records its argv (JOB_COMPLETION_INDEX = 0..N-1), runs deploy/slurm/servebench.sbatch with
a stub `srun` (SLURM_PROCID = 0..N-1) and the same stub, and compares the argv lists with the
results directory and the start instant as the only differences.
usage: same_commands.py SOURCE_DIR"""
import os
import shlex
import subprocess
import sys
import tempfile

import yaml

SHARDS = 3
START_AT = "1764142800"

STUB = """#!/bin/sh
# Records its argv, one argument a line, named by the command and the shard.
printf '%s\\n' "$@" > "$ARGV_DIR/$1.${SLURM_PROCID:-${JOB_COMPLETION_INDEX:-merge}}"
"""
SRUN = """#!/bin/sh
# Slurm's srun for one node, without Slurm: runs the command once per task, in turn.
while [ "${1#-}" != "$1" ]; do shift; done
k=0
while [ "$k" -lt "$SLURM_NTASKS" ]; do SLURM_PROCID=$k "$@" || exit 1; k=$((k + 1)); done
"""


def write_exec(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)


def read_argvs(argv_dir, results):
    out = {}
    for name in sorted(os.listdir(argv_dir)):
        args = open(os.path.join(argv_dir, name)).read().splitlines()
        args = [a.replace(results, "/results") for a in args]
        if "--start-at" in args:
            i = args.index("--start-at") + 1
            assert args[i].isdigit(), f"{name}: --start-at {args[i]!r} is not unix seconds"
            args[i] = "T"
        out[name] = args
    return out


def main():
    src = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        stub_dir = os.path.join(tmp, "bin")
        os.makedirs(stub_dir)
        write_exec(os.path.join(stub_dir, "servebench"), STUB)
        write_exec(os.path.join(stub_dir, "srun"), SRUN)
        rendered = subprocess.run(
            [os.path.join(src, "deploy/kubernetes/render.sh"), "-n", str(SHARDS), "-t", START_AT,
             os.path.join(src, "deploy/kubernetes/overlays/simulator")],
            check=True, capture_output=True, text=True).stdout
        objs = {(o["kind"], o["metadata"]["name"].rsplit("-", 1)[0] if o["kind"] == "ConfigMap"
                 else o["metadata"]["name"]): o for o in yaml.safe_load_all(rendered) if o}
        env = {}
        for name in ("servebench-run", "servebench-shards"):
            env.update(objs[("ConfigMap", name)]["data"])
        assert env["SHARD_COUNT"] == str(SHARDS) and env["SERVEBENCH_START_AT"] == START_AT, env
        job = objs[("Job", "servebench-shards")]
        assert job["spec"]["completions"] == SHARDS == job["spec"]["parallelism"], job["spec"]
        k8s_results = os.path.join(tmp, "k8s-results")

        def run_job(job_name, argv_dir, extra_env):
            c = objs[("Job", job_name)]["spec"]["template"]["spec"]["containers"][0]
            assert c["command"] == ["/bin/sh", "-c"], c["command"]
            script = c["args"][0].replace("/results", k8s_results)
            subprocess.run(["/bin/sh", "-c", script], check=True, timeout=30,
                           env={**os.environ, **env, **extra_env, "ARGV_DIR": argv_dir,
                                "PATH": stub_dir + ":" + os.environ["PATH"]})

        k8s_argv = os.path.join(tmp, "k8s-argv")
        os.makedirs(k8s_argv)
        for k in range(SHARDS):
            run_job("servebench-shards", k8s_argv, {"JOB_COMPLETION_INDEX": str(k)})
            os.makedirs(os.path.join(k8s_results, f"shard-{k}"))
            open(os.path.join(k8s_results, f"shard-{k}", "result.json"), "w").close()
        run_job("servebench-merge", k8s_argv, {})

        slurm_argv = os.path.join(tmp, "slurm-argv")
        os.makedirs(slurm_argv)
        slurm_results = os.path.join(tmp, "slurm-results")
        subprocess.run(
            ["bash", os.path.join(src, "deploy/slurm/servebench.sbatch"), slurm_results]
            + shlex.split(env["SERVEBENCH_RUN_FLAGS"]),
            check=True, timeout=30, capture_output=True,
            env={**os.environ, "SLURM_NTASKS": str(SHARDS), "ARGV_DIR": slurm_argv,
                 "SERVEBENCH": os.path.join(stub_dir, "servebench"),
                 "PATH": stub_dir + ":" + os.environ["PATH"]})
        a = read_argvs(k8s_argv, k8s_results)
        b = read_argvs(slurm_argv, slurm_results)
        expected = ["merge.merge"] + [f"run.{k}" for k in range(SHARDS)]
        assert sorted(a) == sorted(b) == expected, (sorted(a), sorted(b))
        for k in range(SHARDS):
            assert a[f"run.{k}"] == b[f"run.{k}"], \
                f"shard {k}: kubernetes runs {a[f'run.{k}']}\n  slurm runs {b[f'run.{k}']}"
            assert a[f"run.{k}"][:3] == ["run", "--shard", f"{k}/{SHARDS}"], a[f"run.{k}"]
        assert a["merge.merge"] == b["merge.merge"], (a["merge.merge"], b["merge.merge"])
    print(f"kubernetes and slurm run the same {SHARDS} shard commands and merge: "
          + " ".join(shlex.quote(x) for x in a["run.1"]))


if __name__ == "__main__":
    main()
