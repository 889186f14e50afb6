"""The rule: the pipeline is device-bound when the device works nearly all of the step (or the
rate has reached a measured device ceiling); otherwise the device idles for a real part of the
step, and what holds the pipeline back is the largest cause of that idling:

input     the step waits for the loader;
transfer  host->device copies (timed on the device) take the step;
host      the host works outside those and the device: Python, kernel launches, bookkeeping.
Device time is its busy time where known, else the step's wall time (where the host is the device).
When the two largest shares are close, a measured ceiling the rate has reached decides.
"""

from __future__ import annotations

from dataclasses import dataclass

from autotune.diagnosis.evidence import Evidence

BOTTLENECKS = ("input", "transfer", "device", "host")
PART_OF = {"input": "wait", "transfer": "copy", "device": "compute", "host": "other"}
IDLE_CAUSES = ("input", "transfer", "host")
# Device busy at least this share of the step: what idling is left is within what tuning the input
# pipeline can recover at best, and the device's own speed sets the rate (why is the GPU idle? it
# mostly is not).
DEVICE_BOUND_PCT = 80.0
CLOSE_CALL_PCT = 10.0  # shares closer than this (percentage points) are a close call
CEILING_REACHED_PCT = 90.0


@dataclass(frozen=True)
class Verdict:
    bottleneck: str
    runner_up: str
    costs: dict[str, float]  # share of the step each candidate accounts for, percent
    evidence: Evidence

    @property
    def close_call(self) -> bool:
        return abs(self.costs[self.bottleneck] - self.costs[self.runner_up]) < CLOSE_CALL_PCT


def ceiling_reached(evidence: Evidence) -> str | None:
    """'device' or 'input' when the rate is at a measured ceiling of that side, else None."""
    device, loader = evidence.of_device_ceiling_pct, evidence.of_loader_ceiling_pct
    if device is not None and device >= CEILING_REACHED_PCT:
        return "device"
    if loader is not None and loader >= CEILING_REACHED_PCT:
        return "input"
    return None


def decide(evidence: Evidence) -> Verdict:
    pcts = evidence.split.pcts()
    costs = {b: pcts[PART_OF[b]] or 0.0 for b in BOTTLENECKS}
    reached = ceiling_reached(evidence)
    by_cost = sorted(BOTTLENECKS, key=lambda b: costs[b], reverse=True)
    if costs["device"] >= DEVICE_BOUND_PCT or reached == "device":
        first = "device"
    else:
        first = max(IDLE_CAUSES, key=lambda b: costs[b])
    second = next(b for b in by_cost if b != first)
    if abs(costs[first] - costs[second]) < CLOSE_CALL_PCT and reached == second:
        first, second = second, first
    return Verdict(first, second, costs, evidence)


def reason(verdict: Verdict) -> str:
    """The verdict's main evidence as one sentence."""
    e = verdict.evidence
    share = verdict.costs[verdict.bottleneck]
    text = {
        "input": f"the step waits for data {share:.0f}% of the time",
        "transfer": f"host->device copies take {share:.0f}% of the step (CUDA-event time)",
        "device": (
            f"the device computes {share:.0f}% of the step (measured as {e.split.compute_basis})"
        ),
        "host": f"the host spends {share:.0f}% of the step outside data wait, copy and device work",
    }[verdict.bottleneck]
    if verdict.bottleneck != "device":
        text += f"; the device idles {100 - verdict.costs['device']:.0f}% of the step"
    if e.of_device_ceiling_pct is not None:
        what = "the target rate" if e.target_rate else "the device ceiling"
        text += f"; the rate is {e.of_device_ceiling_pct:.0f}% of {what}"
    if verdict.close_call:
        text += f" (close call: {verdict.runner_up} takes {verdict.costs[verdict.runner_up]:.0f}%)"
    return text
