"""The NVML sampler against a fake pynvml module: it checks our use of the API, not a GPU."""

import time
from types import SimpleNamespace

from autotune.telemetry import nvml


class FakeNvml:
    def __init__(self, utils, used_mib):
        self.utils = list(utils)
        self.used = used_mib
        self.calls = 0

    def nvmlDeviceGetName(self, handle):
        return b"Fake V100"

    def nvmlDeviceGetUtilizationRates(self, handle):
        self.calls += 1
        return SimpleNamespace(gpu=self.utils[min(self.calls - 1, len(self.utils) - 1)], memory=0)

    def nvmlDeviceGetMemoryInfo(self, handle):
        return SimpleNamespace(used=self.used * nvml.MIB, total=16384 * nvml.MIB)

    def nvmlDeviceGetCount(self):
        return 1

    def nvmlDeviceGetHandleByIndex(self, index):
        return f"handle{index}"

    def nvmlDeviceGetHandleByUUID(self, uuid):
        raise RuntimeError("no torch CUDA device to take a UUID from")


def test_sampler_averages_utilization_and_keeps_peak_memory():
    fake = FakeNvml([40, 60, 80, 80], used_mib=2048)
    sampler = nvml.NvmlSampler("h", fake)
    sampler.start()
    time.sleep(0.3)
    stats = sampler.stop()
    assert stats.name == "Fake V100"
    assert stats.util_samples >= 3
    assert 40 <= stats.util_mean_pct <= 80
    assert stats.mem_peak_mib == 2048


def test_for_device_falls_back_to_index_handle():
    sampler = nvml.NvmlSampler.for_device(0, nvml=FakeNvml([10], 1))
    assert sampler is not None and sampler.handle == "handle0"


def test_list_gpus_with_fake():
    assert nvml.list_gpus(FakeNvml([0], 1)) == [
        {"index": 0, "name": "Fake V100", "memory_total_mib": 16384}
    ]


def test_unavailable_without_a_driver(monkeypatch):
    """On this machine NVML cannot initialise: the sampler is absent, utilization unknown."""
    import pynvml

    def no_driver():
        raise pynvml.NVMLError(pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)

    monkeypatch.setattr(pynvml, "nvmlInit", no_driver)
    assert nvml.load_nvml() is None
    assert nvml.NvmlSampler.for_device(0) is None
    assert nvml.list_gpus() == []


def test_sampler_without_samples_reports_none():
    class Broken(FakeNvml):
        def nvmlDeviceGetUtilizationRates(self, handle):
            raise RuntimeError("GPU fell off the bus")

    sampler = nvml.NvmlSampler("h", Broken([0], 1))
    sampler.start()
    assert sampler.stop() is None
