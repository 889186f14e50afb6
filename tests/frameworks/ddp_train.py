"""Two DDP ranks on one node, on the CPU (gloo), as users start them: `torchrun`, `mp.spawn`, or
Lightning's `Trainer(strategy="ddp", devices=2)`. Nothing of autotune: tests/test_online_ddp.py
runs it under `autotune run`. Each rank prints `RANK r CONFIG <the loader's configuration>` at
the end, as the loader's attributes read it.

    python ddp_train.py spawn|lightning ITEMS EPOCHS
    torchrun --nproc-per-node 2 ddp_train.py MODE ITEMS EPOCHS
        (MODE: torchrun, torchrun-nccl or torchrun-leader-stops)

`torchrun-nccl` is the same loop on one GPU per rank, NCCL's all-reduce.
"""

from __future__ import annotations

import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, Dataset, DistributedSampler

STEP_S = 0.004  # the step's own time, as an accelerator's asynchronous kernels leave the CPU


class Items(Dataset):
    """2 ms of storage latency an item: workers pay off."""

    def __init__(self, length: int):
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        time.sleep(0.002)
        x = torch.randn(8, generator=torch.Generator().manual_seed(index))
        return x, (x.sum() > 0).long()


def _say(rank: int, config: str) -> None:
    # One write of the whole line: the ranks share the launcher's pipe, and print()'s separate
    # write of the newline let two ranks' lines run into one ("RANK 1 CONFIG ...RANK 0 CONFIG").
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), f"RANK {rank} CONFIG {config}\n".encode())


def _config(loader) -> str:
    return (
        f"w{loader.num_workers} pf{loader.prefetch_factor} persist{loader.persistent_workers}"
        f" pin{loader.pin_memory}"
    )


def _fixed() -> dict:
    """A fixed loader configuration per rank, as a bench's baseline gives it: $DDP_LOADER, e.g.
    `num_workers=3,prefetch_factor=4,persistent_workers=1`; none by default."""
    given = os.environ.get("DDP_LOADER", "")
    pairs = (item.split("=") for item in given.split(",") if item)
    return {
        key: int(value) if key != "persistent_workers" else bool(int(value)) for key, value in pairs
    }


def train(rank: int, world: int, items: int, epochs: int, device: str = "cpu") -> None:
    """A plain DDP loop: DistributedSampler, set_epoch, an all-reduce in every backward."""
    model = nn.parallel.DistributedDataParallel(nn.Linear(8, 2).to(device))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = Items(items)
    loader = DataLoader(
        data, batch_size=8, sampler=DistributedSampler(data, world, rank, seed=0), **_fixed()
    )
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            time.sleep(STEP_S)
    _say(rank, _config(loader))


def spawned(rank: int, world: int, items: int, epochs: int) -> None:
    dist.init_process_group("gloo", rank=rank, world_size=world)
    train(rank, world, items, epochs)
    dist.destroy_process_group()


def lightning(items: int, epochs: int) -> None:
    import lightning as L

    class Module(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = nn.Linear(8, 2)

        def training_step(self, batch, batch_idx):
            time.sleep(STEP_S)
            x, y = batch
            return nn.functional.cross_entropy(self.net(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    trainer = L.Trainer(
        max_epochs=epochs,
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    loader = DataLoader(Items(items), batch_size=8, shuffle=True)
    trainer.fit(Module(), loader)
    used = trainer.train_dataloader  # Lightning's re-created loader, with its DistributedSampler
    _say(trainer.global_rank, _config(used))


def leader_stops(items: int, epochs: int) -> None:
    """Rank 0 stops iterating its loader six steps into the first epoch (an error it caught, an
    early exit) and waits at the script's own barrier; rank 1 trains every epoch. The step has
    no all-reduce, so nothing of the training holds rank 1 to rank 0: only autotune's lockstep
    could, and it must not."""
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    data = Items(items)
    loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data, world, rank, seed=0))
    seen = 0
    for epoch in range(epochs if rank else 1):
        loader.sampler.set_epoch(epoch)
        for i, _ in enumerate(loader):
            seen += 1
            time.sleep(STEP_S)
            if rank == 0 and i == 5:
                break
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), f"RANK {rank} BATCHES {seen} OF {len(loader)}\n".encode())
    dist.barrier()
    dist.destroy_process_group()


def main() -> None:
    mode, items, epochs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.manual_seed(0)
    if mode == "torchrun":
        dist.init_process_group("gloo")
        train(dist.get_rank(), dist.get_world_size(), items, epochs)
        dist.destroy_process_group()
    elif mode == "torchrun-nccl":
        local = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local)
        dist.init_process_group("nccl")
        train(dist.get_rank(), dist.get_world_size(), items, epochs, device=f"cuda:{local}")
        dist.destroy_process_group()
    elif mode == "torchrun-leader-stops":
        leader_stops(items, epochs)
    elif mode == "spawn":
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
        torch.multiprocessing.spawn(spawned, args=(2, items, epochs), nprocs=2)
    else:
        lightning(items, epochs)


if __name__ == "__main__":
    main()
