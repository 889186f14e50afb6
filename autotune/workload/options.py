"""Options the CLI passes to built-in workloads."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class WorkloadOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    device: str = "auto"
    model: str | None = Field(None, description="torchvision classification model name")
    image_size: int | None = Field(None, gt=0)
    batch_size: int | None = Field(None, gt=0)
