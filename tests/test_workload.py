import textwrap

import pytest
import torch

from autotune.errors import OptionsError, WorkloadError
from autotune.workload import Workload, WorkloadOptions, load_workload
from autotune.workload.device import resolve_device
from autotune.workload.jpegs import make_jpeg_folder
from autotune.workload.simulated import SimSpec


def _factory_file(tmp_path, body: str):
    path = tmp_path / "my_workload.py"
    path.write_text(textwrap.dedent(body))
    return path


GOOD = """
    import torch
    from torch.utils.data import TensorDataset
    import autotune

    def factory():
        data = TensorDataset(torch.randn(64, 3, 8, 8), torch.randint(0, 2, (64,)))
        return autotune.Workload(data, 8, lambda batch: None, name="mine")

    def not_a_workload():
        return 42
"""


def test_file_factory(tmp_path):
    path = _factory_file(tmp_path, GOOD)
    workload = load_workload(f"{path}:factory")
    assert workload.name == "mine" and workload.batch_size == 8


def test_module_factory(tmp_path, monkeypatch):
    _factory_file(tmp_path, GOOD)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_workload("my_workload:factory").name == "mine"


@pytest.mark.parametrize(
    "spec, message",
    [
        ("nope", "unknown workload 'nope'"),
        ("missing_file.py:factory", "workload file missing_file.py does not exist"),
        ("no_such_module_xyz:factory", "module 'no_such_module_xyz' not found"),
        ("{file}:absent", "has no callable 'absent'"),
        ("{file}:not_a_workload", "returned int, not an autotune.Workload"),
        ("imagefolder:/does/not/exist", "is not a directory"),
        ("sim:cpu_ms=fast", "bad value for sim parameter cpu_ms"),
        ("sim:speed=3", "bad sim parameter 'speed=3'"),
    ],
)
def test_bad_specs(tmp_path, spec, message):
    path = _factory_file(tmp_path, GOOD)
    with pytest.raises(WorkloadError, match=message):
        load_workload(spec.format(file=path))


def test_workload_validation():
    data = torch.utils.data.TensorDataset(torch.zeros(4, 2))
    with pytest.raises(WorkloadError, match="batch_size must be a positive integer"):
        Workload(data, 0, lambda b: None)
    with pytest.raises(WorkloadError, match="is empty"):
        Workload(torch.utils.data.TensorDataset(torch.zeros(0, 2)), 2, lambda b: None)
    with pytest.raises(WorkloadError, match="fewer than one batch"):
        Workload(data, 8, lambda b: None, drop_last=True)


def test_device_resolution():
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(OptionsError, match="no CUDA GPU is available"):
            resolve_device("cuda")
    with pytest.raises(OptionsError, match="unknown device"):
        resolve_device("tpu:banana")


def test_sim_spec_parse_and_expected_rate():
    spec = SimSpec.parse("cpu_ms=4,step_ms=10,batch=8,shape=3x16x16")
    assert spec.shape == (3, 16, 16) and spec.batch == 8
    assert spec.expected_samples_per_s(workers_cpus=2) == 500  # loader: 2 cores / 4 ms
    assert SimSpec.parse("cpu_ms=1,step_ms=20,batch=16").expected_samples_per_s(2) == 800


def test_from_model_step_trains(tmp_path):
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 2))
    data = torch.utils.data.TensorDataset(torch.randn(16, 3, 2, 2), torch.randint(0, 2, (16,)))
    workload = Workload.from_model(data, model, 4, device="cpu")
    before = model[1].weight.detach().clone()
    loss = workload.step(
        next(iter(workload.make_loader(__import__("autotune").space.LoaderConfig())))
    )
    assert loss.dim() == 0 and not torch.equal(before, model[1].weight)


def test_imagefolder_builtin_on_generated_jpegs(tmp_path):
    folder = make_jpeg_folder(tmp_path / "jpegs", images=8, classes=2, min_side=64, max_side=96)
    assert make_jpeg_folder(folder, images=8) == folder  # cached: made once
    workload = load_workload(
        f"imagefolder:{folder}",
        WorkloadOptions(device="cpu", model="resnet18", image_size=32, batch_size=4),
    )
    images, labels = next(iter(workload.make_loader(__import__("autotune").space.LoaderConfig())))
    assert images.shape == (4, 3, 32, 32) and labels.shape == (4,)
    workload.step((images, labels))
    with pytest.raises(WorkloadError, match="unknown torchvision model"):
        load_workload(f"imagefolder:{folder}", WorkloadOptions(device="cpu", model="resnet9000"))
