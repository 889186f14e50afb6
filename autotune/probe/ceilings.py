"""What the probes say: the two ceilings, and how many workers the step needs.

The model is deliberately simple: one worker delivers `r1` samples/s and keeps `u` cores busy;
n workers deliver n x r1 until the cores left over by the step are used up. A second probe at the
predicted count checks the scaling; where it falls short, the per-worker rate seen there is used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from autotune.probe.device import DeviceProbe
from autotune.probe.fetch import FetchProbe
from autotune.probe.loader import LoaderProbe
from autotune.space.config import LoaderConfig

# The loader must outpace the step a little: both share the main process, and a buffer that is
# only just fed runs dry at the first slow item.
HEADROOM = 1.1
# One worker on a core for less than this share of the time spends most of it waiting (storage,
# network), not computing.
WAITING_CORES = 0.5
# channels_last is preferred only when it makes the step this much faster: less is probe noise,
# and converting every batch is not free.
LAYOUT_GAIN = 0.03


@dataclass
class Ceilings:
    device_probes: tuple[DeviceProbe, ...]  # one per input layout tried
    usable_cpus: int
    # By worker count, the other DataLoader arguments at torch's defaults: the worker model's.
    loader: dict[int, LoaderProbe] = field(default_factory=dict)
    # By a configuration's DataLoader arguments (LoaderConfig.loader_part): the chosen one's own
    # knobs, for a bound that holds for it (persistence, prefetch depth and pinning change what
    # the loader alone delivers).
    at_config: dict[LoaderConfig, LoaderProbe] = field(default_factory=dict)
    fetched: FetchProbe | None = None  # one batch fetched in the main process, per item and batched

    @property
    def fetch(self) -> FetchProbe | None:
        """The fetch probe with what receiving a batch from one worker costs the main process."""
        one = self.loader.get(1)
        if self.fetched is None or one is None or one.receive_ms_per_batch is None:
            return self.fetched
        return replace(self.fetched, receive_ms_per_batch=one.receive_ms_per_batch)

    @property
    def device(self) -> DeviceProbe:
        """The fastest layout's probe: its rate is the ceiling."""
        return max(self.device_probes, key=lambda p: p.samples_per_s)

    @property
    def prefer_channels_last(self) -> bool:
        """Whether to seed with channels_last: only where it clearly sped the step up."""
        default = self.device_probes[0]
        return (
            self.device.channels_last
            and self.device.samples_per_s > (1 + LAYOUT_GAIN) * default.samples_per_s
        )

    @property
    def warmup_s(self) -> float:
        """The device probes' warm-up: one-time costs any training pays on its first steps."""
        return sum(p.warmup_s for p in self.device_probes)

    @property
    def device_samples_per_s(self) -> float:
        return self.device.samples_per_s

    def add(self, probe: LoaderProbe, config: LoaderConfig | None = None) -> None:
        """A loader probe at torch's defaults but for the worker count, or at `config`'s
        DataLoader arguments."""
        default = LoaderConfig(num_workers=probe.workers).loader_part()
        part = default if config is None else config.loader_part()
        if part == default:
            self.loader[probe.workers] = probe
        self.at_config[part] = probe

    def loader_probe_for(self, config: LoaderConfig) -> LoaderProbe | None:
        """The loader alone at `config`'s own DataLoader arguments; None where not probed."""
        return self.at_config.get(config.loader_part())

    def loader_for(self, config: LoaderConfig) -> float | None:
        probe = self.loader_probe_for(config)
        return probe.samples_per_s if probe is not None else None

    def bound_for(self, config: LoaderConfig) -> float | None:
        """min(device ceiling, the loader alone at `config`'s DataLoader arguments): a bound that
        holds for `config` (the loader at another prefetch depth or persistence setting is no
        bound on it: a non-persistent pool restarts every epoch). None until probed."""
        loader = self.loader_for(config)
        return None if loader is None else min(self.device_samples_per_s, loader)

    @property
    def cores_for_workers(self) -> float:
        """Cores left for workers while the step runs (at least one: below that the OS
        time-shares the step and the workers anyway)."""
        return max(1.0, self.usable_cpus - self.device.host_cores)

    @property
    def loader_waits(self) -> bool:
        """The one-worker probe spent most of its time waiting rather than computing."""
        one = self.loader.get(1)
        return one is not None and one.samples_per_s > 0 and one.worker_cores < WAITING_CORES

    def _cpu_limited_workers(self, one: LoaderProbe) -> int:
        """Past this count every free core is busy: a CPU-bound loader gains nothing more."""
        if one.worker_cores <= 0:
            return 1 << 30
        return math.ceil(self.cores_for_workers / min(1.0, one.worker_cores)) + 1

    def predicted_workers(self, max_workers: int) -> int:
        """Fewest workers expected to keep the step fed (capped where the CPU runs out)."""
        one = self.loader.get(1)
        if one is None or one.samples_per_s <= 0:
            return min(1, max_workers)
        demand = HEADROOM * self.device_samples_per_s
        by_rate = math.ceil(demand / one.samples_per_s)
        probed = [p for w, p in self.loader.items() if 1 < w and p.samples_per_s > 0]
        for probe in probed:  # scaling seen at a larger count beats the linear guess
            if probe.samples_per_s < demand:
                by_rate = max(by_rate, math.ceil(demand * probe.workers / probe.samples_per_s))
        return max(1, min(by_rate, self._cpu_limited_workers(one), max_workers))

    def as_dict(self) -> dict[str, object]:
        return {
            "device_samples_per_s": round(self.device_samples_per_s, 2),
            "device_samples_per_s_by_layout": {
                "channels_last" if p.channels_last else "contiguous": round(p.samples_per_s, 2)
                for p in self.device_probes
            },
            "device_host_cores": round(self.device.host_cores, 2),
            "loader_samples_per_s_by_workers": {
                str(w): round(p.samples_per_s, 2) for w, p in sorted(self.loader.items())
            },
            "loader_samples_per_s_by_config": {
                c.label(): round(p.samples_per_s, 2) for c, p in self.at_config.items()
            },
            "loader_cores_by_workers": {
                str(w): round(p.tree_cores, 2) for w, p in sorted(self.loader.items())
            },
        }
