"""The part of a loader's session that handles failure (session.py says what happens when): a
configuration the tuner chose that fails gives way, the script's own raises as torch's does, and
an error of autotune's own stops the tuning, not the training. A mixin of Session."""

from __future__ import annotations

import logging
from typing import Any

from autotune.online.finish import Outbox, Outcome
from autotune.online.guard import Guard, one_line
from autotune.online.meter import Ledger
from autotune.online.policy import FixedPolicy, HillClimb, Policy
from autotune.space.config import LoaderConfig

log = logging.getLogger("autotune")


class Recovery:
    policy: Policy
    given: LoaderConfig
    guard: Guard
    outbox: Outbox
    ledger: Ledger
    workload: dict[str, Any]
    batch_size: int
    device: Any
    untuned_why: str | None
    running_config: LoaderConfig | None
    _settling: bool
    config: Any

    def _untuned(self, error: str | None = None) -> Outcome:
        raise NotImplementedError

    def fallback_after(self, exc: BaseException, config: LoaderConfig) -> LoaderConfig | None:
        """`config` raised while starting or fetching: the configuration to replay its batches on,
        or None where it is the script's own (the error is the script's: raise it)."""
        if config == self.given:
            return None
        error = one_line(exc)
        log.warning(
            "autotune.DataLoader %s: configuration %s failed (%s); its batches go on with another",
            self.outbox.name,
            config.label(),
            error,
        )
        log.debug("the failure of %s", config.label(), exc_info=exc)
        nxt = None
        if isinstance(self.policy, HillClimb) and not self.guard.tripped:
            nxt = self.guard.call(self.policy.failed, config, error)
        if nxt is None or nxt == config or self._failed(nxt):
            nxt = self.given
            if not self.guard.tripped:
                self.policy = self._fixed(
                    self.given,
                    f"configuration {config.label()} failed ({error}); back to the script's own",
                )
        self.running_config = None
        self.guard.call(self.outbox.write)
        return nxt

    def _failed(self, config: LoaderConfig) -> bool:
        m = self.policy._measurement_of(config) if isinstance(self.policy, HillClimb) else None
        return m is not None and m.failed is not None

    def _fixed(self, config: LoaderConfig, why: str) -> FixedPolicy:
        """Tuning ends on `config`; the report says why."""
        if self.outbox.outcome is None and not isinstance(self.policy, HillClimb):
            self.untuned_why = why
        return FixedPolicy(config)

    def _tripped(self, exc: BaseException) -> None:
        """autotune's own error: stay on what runs, tune no further, report the error."""
        running = self.config
        error = self.guard.error
        try:
            if isinstance(self.policy, HillClimb):
                outcome = Outcome.of(
                    self.policy,
                    self.ledger,
                    self.workload,
                    self.batch_size,
                    self.device,
                    running=running,
                    error=error,
                )
            else:
                outcome = self._untuned(error)
        except Exception:  # noqa: BLE001 - the report of last resort, from nothing it computed
            outcome = Outcome.untuned(
                running,
                "tuning stopped",
                Ledger(),
                self.workload,
                self.batch_size,
                self.device,
                error,
            )
        self.policy = FixedPolicy(running)
        self._settling = False
        self.outbox.publish(outcome)
