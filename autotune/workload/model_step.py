"""The standard supervised training step for a torch model, built by Workload.from_model."""

from __future__ import annotations

from typing import Any, Callable

import torch

from autotune.transfer.move import is_image_batch


class ModelStep:
    def __init__(
        self,
        model: torch.nn.Module,
        device: torch.device,
        *,
        loss_fn: Callable | None = None,
        optimizer: torch.optim.Optimizer | None = None,
        amp: bool = False,
    ):
        self.device = device
        self.model = model.to(device).train()
        self.loss_fn = loss_fn or torch.nn.CrossEntropyLoss()
        self.optimizer = optimizer or torch.optim.SGD(
            self.model.parameters(), lr=0.01, momentum=0.9
        )
        self.amp = amp
        amp_dtype = torch.float16 if device.type == "cuda" else torch.bfloat16
        self.autocast_dtype = amp_dtype
        self.scaler = torch.amp.GradScaler(device.type) if amp and device.type == "cuda" else None
        self._channels_last = False
        if device.type == "cuda":
            torch.backends.cudnn.benchmark = True  # its autotuning is excluded by the burst warm-up

    def _match_layout(self, inputs: torch.Tensor) -> None:
        """Put the weights in the layout the inputs arrive in, so channels_last pays off."""
        want = (
            is_image_batch(inputs)
            and inputs.is_contiguous(memory_format=torch.channels_last)
            and not inputs.is_contiguous()
        )
        if want != self._channels_last:
            fmt = torch.channels_last if want else torch.contiguous_format
            self.model.to(memory_format=fmt)
            self._channels_last = want

    def __call__(self, batch: Any) -> torch.Tensor:
        inputs, targets = batch[0], batch[1]
        self._match_layout(inputs)
        self.optimizer.zero_grad(set_to_none=True)
        with torch.autocast(self.device.type, dtype=self.autocast_dtype, enabled=self.amp):
            loss = self.loss_fn(self.model(inputs), targets)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            self.optimizer.step()
        return loss.detach()
