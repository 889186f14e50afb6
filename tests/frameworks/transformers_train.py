"""A real Hugging Face `transformers.Trainer` run: a BERT classifier built from a small config (no
download) on generated token sequences, as a user would write it: nothing of autotune.
tests/test_online_frameworks.py runs it under `autotune run`. Prints TRAIN-DONE <global_step>."""

from __future__ import annotations

import sys
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments


class Sequences(Dataset):
    def __init__(self, length: int, tokens: int = 16, vocab: int = 64):
        self.length, self.tokens, self.vocab = length, tokens, vocab

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        ids = torch.randint(
            1, self.vocab, (self.tokens,), generator=torch.Generator().manual_seed(index)
        )
        return {
            "input_ids": ids,
            "attention_mask": torch.ones_like(ids),
            "labels": (ids[0] % 2).long(),
        }


def main() -> None:
    items = int(sys.argv[1]) if len(sys.argv) > 1 else 3200
    gpu = len(sys.argv) > 2 and sys.argv[2] == "gpu"  # the tests marked gpu train on one
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=64,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
        num_labels=2,
    )
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(
            output_dir=out,
            per_device_train_batch_size=8,
            num_train_epochs=2,
            report_to=[],
            save_strategy="no",
            logging_strategy="no",
            use_cpu=not gpu,
            disable_tqdm=True,
        )
        trainer = Trainer(
            model=BertForSequenceClassification(config), args=args, train_dataset=Sequences(items)
        )
        trainer.train()
    print(f"TRAIN-DONE {trainer.state.global_step}", flush=True)


if __name__ == "__main__":
    main()
