"""What `autotune verify` found, as typed JSON and as Markdown."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from autotune.decision.thresholds import RECORDED_WITHIN
from autotune.verify.steady import SteadySummary

# The difference a recipe's recorded rate may have from the verified one (the bench's target).
MAX_DIFFERENCE_PCT = 100 * RECORDED_WITHIN


class VerifiedConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: str  # "tuned" or "defaults"
    label: str
    params: dict[str, Any]
    samples_per_s: list[float]  # every round, in order
    median: float
    spread: float  # (max - min) / median of the rounds
    recorded_samples_per_s: float | None  # what the recipe says

    @property
    def difference_pct(self) -> float | None:
        """100 x (recorded - verified) / verified: positive when the recipe overstated."""
        if self.recorded_samples_per_s is None or not self.median:
            return None
        return 100 * (self.recorded_samples_per_s - self.median) / self.median

    @classmethod
    def from_summary(
        cls, role: str, summary: SteadySummary, recorded: float | None
    ) -> VerifiedConfig:
        return cls(role=role, recorded_samples_per_s=recorded, **summary.as_dict())


class Verification(BaseModel):
    model_config = ConfigDict(extra="forbid")

    created: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    recipe: str | None  # the recipe file verified (None: a Recipe object from Python)
    workload: str  # the spec it was rebuilt from, or the workload's name
    workload_name: str | None
    device: str
    usable_cpus: int
    seconds: float  # each timed window
    rounds: int
    settle_s: float
    tuned: VerifiedConfig
    defaults: VerifiedConfig | None  # None when the tuned configuration is PyTorch's defaults
    recorded_samples_per_s: float | None  # None: the recipe has no measured rate
    # The recipe's own error at its measured noise (Measured.samples_per_s_error_pct); None: unknown
    recorded_error_pct: float | None = None
    verified_samples_per_s: float
    difference_pct: float | None  # 100 x (recorded - verified) / verified; None: not measured
    recorded_speedup: float | None
    verified_speedup: float | None
    notes: list[str] = Field(default_factory=list)
    files: dict[str, str] = Field(default_factory=dict)

    @property
    def within_target(self) -> bool | None:
        """None where there is no difference to judge (nothing recorded, or nothing verified)."""
        return (
            None if self.difference_pct is None else abs(self.difference_pct) <= MAX_DIFFERENCE_PCT
        )

    def _difference(self) -> str:
        if self.difference_pct is None:
            return "n/a (recorded vs verified: nothing to compare)"
        own = (
            ""
            if self.recorded_error_pct is None
            else f"; the recipe stated ±{self.recorded_error_pct:g}% from burst noise"
        )
        return (
            f"{self.difference_pct:+.1f}% (recorded vs verified;"
            f" {'within' if self.within_target else 'outside'} ±{MAX_DIFFERENCE_PCT:g}%{own})"
        )

    def summary_lines(self) -> list[str]:
        t = self.tuned
        rounds = ", ".join(f"{r:.1f}" for r in t.samples_per_s)
        lines = [
            f"recorded:  {_rate(self.recorded_samples_per_s)} samples/s ({t.label},"
            " the recipe's figure)",
            f"verified:  {self.verified_samples_per_s:.1f} samples/s (median of {self.rounds}"
            f" x {self.seconds:g} s windows: {rounds})",
            f"difference: {self._difference()}",
        ]
        if self.defaults is not None:
            d = self.defaults
            rounds = ", ".join(f"{r:.1f}" for r in d.samples_per_s)
            lines.append(
                f"defaults:  {d.median:.1f} samples/s verified ({rounds})"
                + (f", {d.recorded_samples_per_s:.1f} recorded" if d.recorded_samples_per_s else "")
            )
        if self.verified_speedup is not None:
            recorded = f" (recorded {self.recorded_speedup:.2f}x)" if self.recorded_speedup else ""
            lines.append(f"speed-up:  {self.verified_speedup:.2f}x verified{recorded}")
        lines += [f"note: {n}" for n in self.notes]
        return lines

    def to_markdown(self) -> str:
        rows = [
            "| configuration | role | samples/s per round | verified (median) | recorded |"
            " recorded vs verified |",
            "|---|---|---|---:|---:|---:|",
        ]
        for c in (self.tuned, self.defaults):
            if c is None:
                continue
            diff = c.difference_pct
            rows.append(
                f"| {c.label} | {c.role} | {', '.join(f'{r:.1f}' for r in c.samples_per_s)} |"
                f" {c.median:.1f} |"
                f" {_rate(c.recorded_samples_per_s)} |"
                f" {'n/a' if diff is None else f'{diff:+.1f}%'} |"
            )
        speedup = (
            "n/a"
            if self.verified_speedup is None
            else f"{self.verified_speedup:.2f}x"
            + (f" (recorded {self.recorded_speedup:.2f}x)" if self.recorded_speedup else "")
        )
        parts = [
            f"# autotune verify: {self.workload_name or self.workload}",
            "",
            f"Recipe `{self.recipe or '(in memory)'}`, workload `{self.workload}`, on {self.device}"
            f" with {self.usable_cpus} usable CPUs; {self.created:%Y-%m-%d %H:%M} UTC.",
            "",
            f"- recorded: **{_rate(self.recorded_samples_per_s)}** samples/s",
            f"- verified: **{self.verified_samples_per_s:.1f}** samples/s (median of {self.rounds}"
            f" rounds)",
            f"- difference: **{self._difference()}** (target ±{MAX_DIFFERENCE_PCT:g}%)",
            f"- verified speed-up over PyTorch's defaults: **{speedup}**",
            "",
            *rows,
            "",
            "How it was measured: a plain training loop, not autotune's burst runner — the"
            " DataLoader with the configuration, its batches moved with the transfer knobs,"
            " the workload's step; epochs re-iterated as training does. Each measurement"
            f" settles first (worker start-up, then at least {self.settle_s:g} s and 3 x"
            " num_workers x prefetch_factor batches), then times a"
            f" {self.seconds:g} s window; the configurations alternate, round after round.",
        ]
        if self.notes:
            parts += ["", *(f"- note: {n}" for n in self.notes)]
        return "\n".join(parts) + "\n"

    def write(self, out_dir: Path, stem: str) -> tuple[Path, Path]:
        out_dir.mkdir(parents=True, exist_ok=True)
        js, md = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
        self.files = {"json": str(js), "md": str(md)}
        js.write_text(self.model_dump_json(indent=2) + "\n")
        md.write_text(self.to_markdown())
        return js, md


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"
