"""The Slurm array job behind `autotune slurm`: which task tunes what, and the batch script.

Every task runs `autotune tune` and joins an optuna study in one shared storage. With one
workload and no sweep, all tasks join the same study and split one search between them. With a
grid (several workloads, or `--sweep key=v1,v2`), each point has its own study NAME/POINT and
the tasks are dealt out over the points (task i tunes point i mod P), so one report holds one
recipe per point.
"""

from __future__ import annotations

import itertools
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from autotune.errors import OptionsError

POINT_SEPARATOR = "/"  # study NAME/POINT: one study per sweep point, all found by NAME
POINT_ARGS = '"${point[@]}"'  # the bash array holding this task's point


@dataclass(frozen=True)
class SweepPoint:
    label: str | None  # None: the single point of a search split across tasks
    args: tuple[str, ...]  # `autotune tune` arguments that define the point (workload first)

    def study(self, base: str) -> str:
        return base if self.label is None else f"{base}{POINT_SEPARATOR}{self.label}"


def option_flag(key: str) -> str:
    return "--" + key.replace("_", "-")


def parse_sweep(text: str) -> tuple[str, list[str]]:
    """'batch_size=64,128,256' -> ('batch_size', ['64', '128', '256'])."""
    key, sep, values = text.partition("=")
    items = [v.strip() for v in values.split(",") if v.strip()]
    if not sep or not key.strip() or not items:
        raise OptionsError(
            f"--sweep {text!r}: use KEY=V1,V2,... (KEY an option of autotune tune,"
            " e.g. batch_size=64,128,256)"
        )
    return key.strip().replace("-", "_"), items


def sweep_points(workloads: list[str], sweeps: list[str]) -> list[SweepPoint]:
    """The grid: every workload crossed with every sweep value; labels name what varies."""
    axes: list[list[tuple[str, tuple[str, ...]]]] = [[(f"workload={w}", (w,)) for w in workloads]]
    for text in sweeps:
        key, values = parse_sweep(text)
        axes.append([(f"{key}={v}", (option_flag(key), v)) for v in values])
    points = []
    for combo in itertools.product(*axes):
        varying = [label for (label, _), axis in zip(combo, axes, strict=True) if len(axis) > 1]
        args = tuple(arg for _, part in combo for arg in part)
        points.append(SweepPoint(",".join(varying) or None, args))
    return points


def default_study_name() -> str:
    return time.strftime("autotune-%Y%m%d-%H%M%S")


class ArrayJob(BaseModel):
    """Everything the batch script needs; validated where the CLI hands it over."""

    model_config = ConfigDict(extra="forbid")

    workloads: list[str] = Field(min_length=1)
    sweeps: list[str] = Field(default_factory=list)
    array: int | None = Field(None, ge=1, description="tasks in the array (default: one per point)")
    cpus_per_task: int | None = Field(None, ge=1)
    gpus_per_task: int | None = Field(None, ge=1)
    partition: str | None = None
    time: str | None = None
    study: str = Field(default_factory=default_study_name)
    storage: str
    budget_s: float = Field(gt=0)
    tune_args: list[str] = Field(default_factory=list)
    results_dir: Path
    workdir: Path
    python: str
    pythonpath: str | None = None

    @field_validator("study")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        if not value or POINT_SEPARATOR in value or value != value.strip():
            raise ValueError(
                f"must be a plain name without {POINT_SEPARATOR!r} (it prefixes the"
                " sweep points' studies)"
            )
        return value

    @model_validator(mode="after")
    def _tasks_cover_points(self) -> ArrayJob:
        points = len(self.points())
        if self.array is not None and self.array % points:
            raise ValueError(
                f"--array {self.array} is not a multiple of the {points} sweep points:"
                " each point needs the same number of tasks"
            )
        return self

    def points(self) -> list[SweepPoint]:
        return sweep_points(self.workloads, self.sweeps)

    @property
    def tasks(self) -> int:
        return self.array or len(self.points())

    @property
    def mode(self) -> str:
        points = len(self.points())
        if points == 1:
            return f"one search split across {self.tasks} tasks"
        return f"a grid of {points} points, {self.tasks // points} task(s) per point"

    @property
    def log_pattern(self) -> Path:
        return self.results_dir / "slurm" / f"{self.study}-%A_%a.out"


def _directives(job: ArrayJob) -> list[str]:
    values = {
        "job-name": f"autotune-{job.study}",
        "array": f"0-{job.tasks - 1}",
        "ntasks": "1",
        "cpus-per-task": job.cpus_per_task,
        "gpus-per-task": job.gpus_per_task,
        "partition": job.partition,
        "time": job.time,
        "output": str(job.log_pattern),
    }
    return [f"#SBATCH --{key}={value}" for key, value in values.items() if value is not None]


def _command(job: ArrayJob, point_args: str) -> str:
    common = [job.python, "-m", "autotune", "tune"]
    tail = [
        "--storage",
        job.storage,
        "--budget",
        f"{job.budget_s:g}",
        "--results-dir",
        str(job.results_dir),
        *job.tune_args,
    ]
    return " ".join([*map(shlex.quote, common), point_args, *map(shlex.quote, tail)])


def render_script(job: ArrayJob) -> str:
    points = job.points()
    studies = job.study if len(points) == 1 else f"{job.study}{POINT_SEPARATOR}POINT"
    lines = [
        "#!/bin/bash",
        f"# Written by `autotune slurm`: {job.mode}; tasks join the optuna study {studies}"
        f" in {job.storage}.",
        f"# When the array is done: autotune report --study {shlex.quote(job.study)}"
        f" --storage {shlex.quote(job.storage)}",
        *_directives(job),
        "set -euo pipefail",
        f"cd {shlex.quote(str(job.workdir))}",
    ]
    if job.pythonpath:
        lines.append(f"export PYTHONPATH={shlex.quote(job.pythonpath)}")
    if len(points) == 1:
        lines.append(
            f"point=({' '.join(map(shlex.quote, points[0].args))}"
            f" --study {shlex.quote(points[0].study(job.study))})"
        )
    else:
        lines.append(f"case $(( SLURM_ARRAY_TASK_ID % {len(points)} )) in")
        for index, point in enumerate(points):
            args = " ".join(map(shlex.quote, (*point.args, "--study", point.study(job.study))))
            lines.append(f"  {index}) point=({args}) ;;")
        lines.append("esac")
    lines.append(f"exec {_command(job, POINT_ARGS)}")
    return "\n".join(lines) + "\n"


def submit(script: Path, wait: bool = False) -> str:
    """Submit with sbatch; the array job's id. `wait`: return when every task has ended."""
    sbatch = shutil.which("sbatch")
    if sbatch is None:
        raise OptionsError(
            "sbatch not found: run on a Slurm login node, or pass --dry-run to only"
            f" write the script ({script})"
        )
    command = [sbatch, "--parsable", *(["--wait"] if wait else []), str(script)]
    done = subprocess.run(command, capture_output=True, text=True)
    job_id = done.stdout.strip().split(";")[0]  # --parsable prints "id" or "id;cluster"
    if done.returncode != 0:
        if job_id:
            raise OptionsError(
                f"array job {job_id} ended with failed tasks; their logs are"
                f" next to the script ({script.parent})"
            )
        raise OptionsError(f"sbatch {script} failed: {done.stderr.strip() or done.returncode}")
    return job_id
