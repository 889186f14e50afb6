"""The climb's plan: the configurations to measure, in order, each judged against the best so far
(the strategy is described in policy.py). A mixin of HillClimb: it reads the climb's state
(best, measured, range, tuned, settings) and is driven by its verdicts."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Generator

from autotune.decision.cost import cost
from autotune.decision.thresholds import MATTERS_SHARE
from autotune.decision.worker_range import Evidence, WorkerRange
from autotune.online.climb_types import (
    UNCAPPED,
    WORKER_LADDER,
    ClimbSettings,
    Request,
    Verdict,
    with_value,
)
from autotune.online.measurement import NOT_RUN, Measurement
from autotune.online.predict import needed_workers
from autotune.space.config import LoaderConfig
from autotune.space.knobs import BY_NAME


class ClimbPlan:
    settings: ClimbSettings
    range: WorkerRange
    tuned: tuple[str, ...]
    start: LoaderConfig
    best: Measurement
    measured: dict[LoaderConfig, Measurement]
    room: Callable[[LoaderConfig], str | None]

    def verdict(self, best: Measurement, cand: Measurement) -> Verdict:
        raise NotImplementedError

    # -- the plan: configurations to measure, each judged against the best so far ------------

    def _plan(self) -> Generator[Request, Verdict, None]:
        s = self.settings
        if "num_workers" in self.tuned:
            jump = self._needed()
            if jump is not None:
                yield from self._try(self._candidate("num_workers", self.range.admit(jump)))
        while self.best.starved:  # still waiting on the loader: feed it more
            for cand in self._deeper():
                if (yield from self._try(cand)):
                    break
            else:
                break
        while "num_workers" in self.tuned and not self.best.starved:  # fed: fewer may do
            fewer = self._rung(self.best.config.num_workers, -1)
            if fewer is None or not (yield from self._try(self._candidate("num_workers", fewer))):
                break
        if "pin_memory" in self.tuned and s.cuda:
            yield from self._try(self._candidate("pin_memory", not self.best.config.pin_memory))
        yield from self._confirm()

    def _candidate(self, name: str, value: object) -> LoaderConfig:
        """The best with one knob changed. Where persistence is tuned, candidates keep their
        workers across an epoch's end (no effect inside an epoch): exploring over short epochs
        does not restart them, and the choice of persistence at the end switches nothing.
        Where CUDA is used and pin_memory is tuned, candidates are pinned: the exploration bound
        can end a climb before its pin step, and unpinned copies are slower on a GPU
        (results/gpu/2026-11-26-h200.md). The plan's pin step still measures the best
        unpinned, and a tie goes to it, the cheaper."""
        config = with_value(self.best.config, name, value)
        if "persistent_workers" in self.tuned and config.num_workers > 0:
            config = replace(config, persistent_workers=True)
        if name != "pin_memory" and "pin_memory" in self.tuned and self.settings.cuda:
            config = replace(config, pin_memory=True)
        return config

    def _at_zero(self) -> Measurement | None:
        return next((m for m in self.measured.values() if m.config.num_workers == 0 and m.n), None)

    def _needed(self) -> int | None:
        """The prediction, capped by the cores alone (the range's top and limit apply where it is
        tried): past the top, the range is asked to grow."""
        return needed_workers(self._at_zero(), self.best, self.settings.usable_cpus, UNCAPPED)

    def _rung(self, workers: int, direction: int) -> int | None:
        """The next worker count up or down the ladder (the range's top and the counts measured
        are rungs too)."""
        top = self.range.top
        ladder = sorted(
            {
                *(w for w in WORKER_LADDER if w <= top),
                top,
                *(m.config.num_workers for m in self.measured.values()),
            }
        )
        i = ladder.index(workers) + direction
        return ladder[i] if 0 <= i < len(ladder) else None

    def _deeper(self) -> list[LoaderConfig]:
        """For a starved loop, cheapest first: a deeper prefetch, then more workers (at least the
        next rung, more where its own rate says the step needs them)."""
        config = self.best.config
        out = []
        pf = BY_NAME["prefetch_factor"]
        if "prefetch_factor" in self.tuned and config.num_workers > 0:
            deeper = [v for v in pf.values if v > pf.effective(config.prefetch_factor)]
            if deeper:
                out.append(self._candidate("prefetch_factor", deeper[0]))
        if "num_workers" in self.tuned:
            needed = self._needed()
            rung = self._rung(config.num_workers, 1)
            if rung is None and self._may_grow(needed):
                rung = self._rung(config.num_workers, 1)
            if rung is not None:
                out.append(self._candidate("num_workers", self.range.admit(max(rung, needed or 0))))
        return out

    def _may_grow(self, needed: int | None) -> bool:
        """The best sits at the range's top: the one range's rules decide whether it grows. A
        prediction within the top says more workers would compute (the fetch measured at
        num_workers=0 computes and the cores are spoken for)."""
        computes = (
            f"the loop waits, but the fetch measured at num_workers=0 computes: the cores"
            f" allow {needed} workers, within the top of {self.range.top}"
            if needed is not None and needed <= self.range.top
            else None
        )
        return self.range.grow(self._evidence(computes))

    def _evidence(self, computes: str | None) -> Evidence:
        rates: dict[int, float] = {}
        for m in self.measured.values():
            if m.n and not m.failed:
                n = m.config.num_workers
                rates[n] = max(rates.get(n, 0.0), m.mean)
        best = self.best
        return Evidence(
            label=best.config.label(),
            workers=best.config.num_workers,
            rate=best.mean,
            rate_by_workers=rates,
            wait_share=best.starved_share,
            computes=computes,
        )

    def _try(self, config: LoaderConfig) -> Generator[Request, Verdict, bool]:
        """Measure `config` against the best so far (unless measured already); True when it
        took the best's place."""
        if config == self.best.config:
            return False
        known = self.measured.get(config)
        if known is not None and known.failed:
            return False
        verdict = (
            self.verdict(self.best, known)
            if known is not None and known.n
            else (yield Request(config))
        )
        return self._adopt(self.measured[config], verdict)

    def _refused(self, request: Request) -> bool:
        """A new candidate whose pool would not fit in RAM or /dev/shm now is not started (it
        would be killed, or fill /dev/shm, mid-epoch): it is recorded as not run."""
        if request.again or request.config in self.measured:
            return False
        refused = self.room(request.config)
        if refused is not None:
            self.measured[request.config] = Measurement(
                request.config, failed=f"{NOT_RUN}{refused}"
            )
        return refused is not None

    def _adopt(self, cand: Measurement, verdict: Verdict) -> bool:
        """`cand` takes the best's place if faster beyond noise, or tied and cheaper."""
        if cand.failed:
            return False
        # RAM ranks only where both were read (a reading runs on a thread and may not be in yet):
        # an unread one would count as none held.
        rams = (cand.ram_mib, self.best.ram_mib)
        cand_ram, best_ram = (None, None) if None in rams else rams
        cheaper = cost(cand.config, cand_ram) < cost(self.best.config, best_ram)
        if verdict is Verdict.BETTER or (verdict is Verdict.TIED and cheaper):
            self.best = cand
            return True
        return False

    def _confirm(self) -> Generator[Request, Verdict, None]:
        """The winner's curse: a best chosen over a rival within noise was selected for its high
        windows. It is measured again, judged on the new windows alone, and the rival re-judged."""
        rivals = [m for m in self.measured.values() if m is not self.best and m.n and not m.failed]
        if not rivals:
            return
        rival = max(rivals, key=lambda m: m.mean)
        if self.verdict(self.best, rival) is Verdict.WORSE:
            return
        yield Request(self.best.config, again=True)
        self._adopt(rival, self.verdict(self.best, rival))

    def _persistence(self, config: LoaderConfig) -> LoaderConfig:
        if "persistent_workers" not in self.tuned or config.num_workers == 0:
            return config
        if self.start.persistent_workers:  # the script's own choice: a tie is no reason to undo it
            return replace(config, persistent_workers=True)
        m = self.measured.get(config)
        epoch_s = (
            None
            if m is None or not m.mean or self.settings.epoch_steps is None
            else self.settings.epoch_steps / m.mean
        )
        startup = None if m is None else m.startup_s
        # The offline search's threshold for a restart that matters (diagnosis/epochs.py): one rule.
        keep = epoch_s is None or startup is None or startup >= MATTERS_SHARE * epoch_s
        return replace(config, persistent_workers=keep)
