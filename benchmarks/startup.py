"""Benchmark the whole-process time of one forecast against llm-analysis on the same question.

Issue #21: ``trainbill forecast --params 70e9 --tokens 1.4e12 --gpu h100 --gpus 512 --json``, as
a process (interpreter start, imports, catalog, forecast, JSON), should take at most half of
llm-analysis's time for the same question: a 70B Llama-2 trained on 1.4e12 tokens over 512
H100 SXM GPUs (llm-analysis answers with the training time and GPU-hours; trainbill with the
time and the itemised bill). Both run as subprocesses, interleaved, ``--runs`` times each; the
medians of wall time and of CPU seconds (user + system of the child, steadier than wall on a
shared machine) are printed, with the ratio trainbill / llm-analysis, and the least CPU time
of each. Compare ratios from one run: on a heavily loaded machine (more runnable processes
than cores) every figure grows and the differences shrink.

llm-analysis is not a trainbill dependency: install it into a scratch virtual environment and
point ``--llm-python`` (or ``LLM_ANALYSIS_PYTHON``) at that environment's interpreter::

    python -m venv /tmp/llmvenv && /tmp/llmvenv/bin/pip install llm-analysis
    python benchmarks/startup.py --llm-python /tmp/llmvenv/bin/python [--runs 9]

Without it, only trainbill's times are printed. ``--baseline-src DIR`` also times the same
forecast from another checkout's ``src`` (``--baseline-src /path/to/main/src``: before and after
a change, interleaved, under the same load). ``--importtime`` also prints the ten slowest
imports of one trainbill run (``python -X importtime``), the first place to look when the
ratio regresses. ``--floor`` also times the dependency floor: a process with trainbill's
start-up settings (``trainbill.__main__``) that only imports the third-party libraries the
forecast needs (NumPy with its random generators, Typer) and does nothing else; trainbill can
come no closer to llm-analysis than that without dropping one of those libraries. (pydantic
was one until the plan schema became plain Python: importing it and building the plan's
validators was ~0.13 s of CPU, a third of the process.)

Children run with bytecode writing on (``PYTHONDONTWRITEBYTECODE`` is not passed on): an
installed trainbill has its ``.pyc`` files, and the warm-up run writes them for a checkout.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TRAINBILL = [
    "-m", "trainbill", "forecast", "--params", "70e9", "--tokens", "1.4e12",
    "--gpu", "h100", "--gpus", "512", "--json",
]  # fmt: skip

#: The same run in llm-analysis's terms: its packaged Llama-2-70B config, H100 SXM, 512 GPUs,
#: 1.4e12 tokens; tensor parallel 8 within a node, ZeRO-3 and selective recomputation so that
#: the model fits (without them it reports a negative batch size).
LLM_ANALYSIS = [
    "-m", "llm_analysis.analysis", "train",
    "--model_name", "upstage_Llama-2-70b-instruct-v2", "--gpu_name", "h100-sxm-80gb",
    "--total_num_gpus", "512", "--total_num_tokens", "1.4e12", "--tp_size", "8",
    "--ds_zero", "3", "--activation_recomputation", "2", "--log_level", "ERROR",
]  # fmt: skip

#: The floor: trainbill's own start-up settings, then only the third-party imports of
#: ``trainbill forecast --json`` (no Rich: ``--json`` draws nothing).
FLOOR = [
    "-c",
    (
        "import sys; from trainbill.__main__ import _prepare; _prepare(sys.argv[1:])\n"
        "import numpy, numpy.random, typer\n"
    ),
    "forecast",
]


def run_once(python: str, args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one child process; fails loudly if it fails."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [python, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        msg = f"{' '.join(args[:3])} exited {proc.returncode}: {err.decode()[-2000:]}"
        raise SystemExit(msg)
    return wall, usage.ru_utime + usage.ru_stime


def importtime(python: str, env: dict[str, str], top: int = 10) -> list[tuple[int, str]]:
    """The ``top`` slowest imports (cumulative microseconds) of one trainbill run."""
    proc = subprocess.run(
        [python, "-X", "importtime", *TRAINBILL],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    rows: list[tuple[int, str]] = []
    for line in proc.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    """Run both processes interleaved and print the medians and the ratios."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=9, help="runs of each process (median taken)")
    ap.add_argument(
        "--llm-python",
        default=os.environ.get("LLM_ANALYSIS_PYTHON"),
        help="interpreter of an environment with llm-analysis installed",
    )
    ap.add_argument("--baseline-src", help="also time trainbill from this src directory")
    ap.add_argument("--importtime", action="store_true", help="also list the slowest imports")
    ap.add_argument("--floor", action="store_true", help="also time the dependency floor")
    opts = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for name in ("TRAINBILL_CATALOG", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    subjects = {"trainbill": (sys.executable, TRAINBILL, env)}
    if opts.baseline_src:
        subjects["baseline"] = (sys.executable, TRAINBILL, {**env, "PYTHONPATH": opts.baseline_src})
    if opts.floor:
        subjects["floor"] = (sys.executable, FLOOR, env)
    if opts.llm_python:
        subjects["llm-analysis"] = (opts.llm_python, LLM_ANALYSIS, env)
    for python, args, sub_env in subjects.values():  # warm the bytecode and file caches
        run_once(python, args, sub_env)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in subjects}
    for _ in range(opts.runs):
        for name, (python, args, sub_env) in subjects.items():
            times[name].append(run_once(python, args, sub_env))
    med: dict[str, tuple[float, float]] = {}
    for name, samples in times.items():
        med[name] = (
            statistics.median(w for w, _ in samples),
            statistics.median(c for _, c in samples),
        )
        least = min(c for _, c in samples)  # the run least slowed by other load
        print(
            f"{name:>13}: wall {med[name][0]:.3f} s, CPU {med[name][1]:.3f} s (median of "
            f"{opts.runs}; least CPU {least:.3f} s)"
        )
    if "llm-analysis" in med:
        (tw, tc), (lw, lc) = med["trainbill"], med["llm-analysis"]
        print(f"trainbill / llm-analysis: wall {tw / lw:.2f}x, CPU {tc / lc:.2f}x (goal <= 0.5x)")
        for name in ("baseline", "floor"):
            if name in med:
                (bw, bc) = med[name]
                print(f"{name:>9} / llm-analysis: wall {bw / lw:.2f}x, CPU {bc / lc:.2f}x")
    else:
        print("llm-analysis: not measured (give --llm-python; see the module docstring)")
    if opts.importtime:
        print("slowest imports of one trainbill run (cumulative, -X importtime):")
        for us, name in importtime(sys.executable, env):
            print(f"  {us / 1e3:8.1f} ms  {name.strip()}")


if __name__ == "__main__":
    main()
