"""A text workload: generated sentences tokenized in pure Python in `__getitem__`, padded to the
batch's longest in the collate_fn, and an emulated step. No download: the corpus is drawn from a
fixed vocabulary by each item's index, so every process builds the same items.

The tokenizer is the kind a training script writes before it reaches for a fast one: lower-case,
split on spaces, then a greedy longest-match over a sub-word vocabulary, character by character,
all in the interpreter (so the GIL-bound main process cannot do it as fast as workers can).

    text:words=120,batch=32,step_ms=10,length=8192,max_len=256
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.data import Dataset

from autotune.workload.base import Workload
from autotune.workload.simulated import SleepStep, parse_params

SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ren",
    "tor",
    "shi",
    "va",
    "nu",
    "pel",
    "dra",
    "qui",
    "zen",
    "ost",
    "bar",
    "fin",
    "gle",
    "hum",
    "jor",
    "wex",
    "yul",
)
PAD = 0


def _vocabulary() -> dict[str, int]:
    """Every syllable and every pair of syllables, ids from 1 (0 pads)."""
    pieces = [*SYLLABLES, *(a + b for a in SYLLABLES for b in SYLLABLES)]
    return {piece: i + 1 for i, piece in enumerate(sorted(set(pieces)))}


@dataclass(frozen=True)
class TextSpec:
    words: int = 120  # words per item, on average
    batch: int = 32
    step_ms: float = 10.0
    length: int = 8192
    max_len: int = 256  # tokens kept per item

    @classmethod
    def parse(cls, text: str | None) -> TextSpec:
        return parse_params(cls, text, "text")


class Sentences(Dataset):
    """Item i: a sentence of about `words` words of 1-4 syllables, tokenized."""

    def __init__(self, spec: TextSpec):
        self.spec = spec
        self.vocab = _vocabulary()
        self.longest = max(map(len, self.vocab))

    def __len__(self) -> int:
        return self.spec.length

    def sentence(self, index: int) -> str:
        rng = random.Random(index)
        count = rng.randint(self.spec.words // 2, self.spec.words * 3 // 2)
        return " ".join(
            "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4))).capitalize()
            for _ in range(count)
        )

    def tokenize(self, text: str) -> list[int]:
        ids: list[int] = []
        for word in text.lower().split(" "):
            start = 0
            while start < len(word):  # greedy longest match
                for end in range(min(len(word), start + self.longest), start, -1):
                    piece = self.vocab.get(word[start:end])
                    if piece is not None:
                        ids.append(piece)
                        start = end
                        break
                else:
                    start += 1  # not in the vocabulary: skipped
        return ids[: self.spec.max_len]

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        if not 0 <= index < self.spec.length:
            raise IndexError(index)
        return torch.tensor(self.tokenize(self.sentence(index)), dtype=torch.long), index % 2


def pad_collate(items: list[tuple[torch.Tensor, int]]) -> dict[str, Any]:
    """Token ids padded to the batch's longest, their attention mask, and the labels."""
    longest = max(len(ids) for ids, _ in items)
    input_ids = torch.full((len(items), longest), PAD, dtype=torch.long)
    mask = torch.zeros((len(items), longest), dtype=torch.bool)
    for row, (ids, _) in enumerate(items):
        input_ids[row, : len(ids)] = ids
        mask[row, : len(ids)] = True
    return {
        "input_ids": input_ids,
        "attention_mask": mask,
        "labels": torch.tensor([label for _, label in items]),
    }


def text_workload(spec: TextSpec) -> Workload:
    return Workload(
        Sentences(spec),
        spec.batch,
        SleepStep(spec.step_ms / 1000),
        name=f"text(words={spec.words},batch={spec.batch},step_ms={spec.step_ms:g})",
        device=torch.device("cpu"),
        collate_fn=pad_collate,
        details={"text": {"words": spec.words, "max_len": spec.max_len, "step_ms": spec.step_ms}},
    )
