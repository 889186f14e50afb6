"""An independent check of autotune's GPU figures: a plain torch training loop, written here from
scratch (torch DataLoader, `.to(device)`, a 12-line side-stream prefetcher, ResNet-50 with AMP),
sharing no measuring code with autotune. Each configuration: start its workers, settle for
`--settle` seconds, `torch.cuda.synchronize()`, time `--seconds` of steps, synchronize again.
Configurations alternate over `--rounds` rounds; the median is printed.

    python results/gpu/independent.py RECIPE.json [--root FOLDER] [--seconds 8] [--rounds 2]

Measured: PyTorch's defaults, the recipe's configuration, and the recipe with each of pin_memory,
non_blocking, channels_last and the side stream flipped alone (what each does at the tuned point).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time

import torch
import torchvision
from torch.utils.data import DataLoader, RandomSampler
from torchvision import transforms as T
from torchvision.datasets import ImageFolder


def dataset(root: str, size: int) -> ImageFolder:
    tf = T.Compose([T.RandomResizedCrop(size, antialias=True), T.RandomHorizontalFlip(), T.ToTensor(),
                    T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])
    return ImageFolder(root, transform=tf)


def batches(loader, non_blocking: bool, channels_last: bool, side_stream: bool):
    """Endless device batches; with `side_stream`, batch i+1 is copied while batch i computes."""
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    stream = torch.cuda.Stream() if side_stream else None

    def move(batch):
        x, y = batch
        with torch.cuda.stream(stream) if stream else contextlib.nullcontext():
            x = x.to("cuda", non_blocking=non_blocking).contiguous(memory_format=fmt)
            y = y.to("cuda", non_blocking=non_blocking)
        return x, y

    while True:
        it = iter(loader)
        nxt = move(next(it))
        for batch in it:
            cur = nxt
            if stream:
                torch.cuda.current_stream().wait_stream(stream)
                cur[0].record_stream(torch.cuda.current_stream())
                cur[1].record_stream(torch.cuda.current_stream())
            nxt = move(batch)
            yield cur


def measure(ds, model_name: str, batch: int, cfg: dict, seconds: float, settle: float) -> float:
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.get_model(model_name, num_classes=len(ds.classes)).cuda().train()
    if cfg["channels_last"]:
        model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")
    loss_fn = torch.nn.CrossEntropyLoss()
    dl_kwargs = {k: cfg[k] for k in ("num_workers", "pin_memory")}
    if cfg["num_workers"] > 0:
        dl_kwargs.update(prefetch_factor=cfg["prefetch_factor"], persistent_workers=cfg["persistent_workers"])
    # 100 passes over the folder per epoch, as the demo's Repeated dataset: epochs as long as a
    # real dataset's, so worker restarts at epoch ends come as rarely as they would in training.
    sampler = RandomSampler(ds, num_samples=100 * len(ds))
    loader = DataLoader(ds, batch_size=batch, sampler=sampler, drop_last=True, **dl_kwargs)
    feed = batches(loader, cfg["non_blocking"], cfg["channels_last"], cfg["side_stream_prefetch"])

    def step():
        x, y = next(feed)
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    t0 = time.perf_counter()
    while time.perf_counter() - t0 < settle:
        step()
    torch.cuda.synchronize()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        step()
        n += 1
    torch.cuda.synchronize()
    rate = n * batch / (time.perf_counter() - t0)
    feed.close()
    del loader, feed
    return rate


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("recipe", help="a recipe.json; its workload's image size, batch and configuration")
    p.add_argument("--labels", default="", help="';'-separated configuration labels to measure"
                   " instead of the recipe's ablations, e.g. 'w8 pf2 pin nb;w16 pf2 pin nb cl stream'")
    p.add_argument("--root", default=None, help="ImageFolder root (default: the demo's cache)")
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--settle", type=float, default=4.0)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--model", default="resnet50")
    p.add_argument("--json", default=None)
    a = p.parse_args()
    recipe = json.load(open(a.recipe))
    wl = recipe["workload"]
    root = a.root
    if root is None:
        from autotune.workload.jpegs import demo_folder
        root = str(demo_folder())
    ds = dataset(root, int(wl.get("image_size", 224)))
    model_name = a.model
    batch = int(wl.get("batch_size", 64))
    tuned = {**recipe["dataloader"], **recipe["transfer"]}
    tuned["prefetch_factor"] = tuned.get("prefetch_factor") or 2
    defaults = dict(num_workers=0, pin_memory=False, prefetch_factor=2, persistent_workers=False,
                    non_blocking=False, channels_last=False, side_stream_prefetch=False)
    configs = {"defaults": defaults, "tuned": tuned}
    if a.labels:
        from autotune.space.config import LoaderConfig  # the label parser only: no measuring code
        for label in a.labels.split(";"):
            cfg = LoaderConfig.from_label(label.strip()).as_dict()
            configs[label.strip()] = {k: cfg[k] for k in defaults}
    else:
        for knob in ("pin_memory", "non_blocking", "channels_last", "side_stream_prefetch"):
            configs[f"tuned, {knob}={not tuned[knob]}"] = {**tuned, knob: not tuned[knob]}
    rates: dict[str, list[float]] = {k: [] for k in configs}
    for r in range(a.rounds):
        for name, cfg in (configs.items() if r % 2 == 0 else reversed(configs.items())):
            rates[name].append(measure(ds, model_name, batch, cfg, a.seconds, a.settle))
            print(f"round {r} {name}: {rates[name][-1]:.1f} samples/s", flush=True)
    print(f"\n{model_name} batch {batch}, {a.seconds:g} s windows, median of {a.rounds}")
    base = statistics.median(rates["tuned"])
    for name, values in rates.items():
        med = statistics.median(values)
        print(f"| {name} | {med:.1f} | {med / base:.3f} of tuned | {[round(v, 1) for v in values]} |")
    if a.json:
        json.dump({"recipe": a.recipe, "configs": configs, "rates": rates}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
