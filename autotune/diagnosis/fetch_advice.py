"""Advice from the fetch probe: why num_workers=0 where the items come from memory, and whether
fetching whole batches (`__getitems__`, or tensors indexed with a batch's indices) pays, with the
per-item overhead measured here on the same batch, never assumed."""

from __future__ import annotations

from autotune.probe.fetch import BatchedWay, FetchProbe


def ms_text(value: float) -> str:
    """A duration given in milliseconds, with its unit: '0.59 ms', or '2.3 us' below 0.1 ms (an
    in-memory item takes microseconds)."""
    return f"{value:.2f} ms" if abs(value) >= 0.1 else f"{1000 * value:.2g} us"


def explains_main_process(fetch: FetchProbe | None) -> bool:
    """The probe found the items in memory, or cheaper to fetch here than to receive from a
    worker: the reason num_workers=0 can win."""
    return fetch is not None and (fetch.in_memory or fetch.workers_cannot_pay)


def main_process_line(fetch: FetchProbe, scaling: str) -> str | None:
    """Why num_workers=0 is the choice; None unless the probe explains it."""
    if not explains_main_process(fetch):
        return None
    used = fetch.used
    on_cpu = 100 * used.cpu_s / used.wall_s if used.wall_s else 100.0
    what = (
        "the items come from memory"
        if fetch.in_memory
        else "a batch costs the training process less to fetch than to receive"
    )
    line = (
        f"num_workers=0 because {what}: fetching a batch of {fetch.items} in the training"
        f" process takes {ms_text(fetch.fetch_ms_per_batch)}"
        f" ({ms_text(fetch.ms_per_item(used) or 0)}"
        f" per item, on a CPU {on_cpu:.0f}% of it)"
    )
    receive = fetch.receive_ms_per_batch
    if receive is not None:
        saved = fetch.fetch_ms_per_batch - receive
        verdict = (
            "so a worker cannot make loading cheaper for it"
            if fetch.workers_cannot_pay
            else f"so a worker saves it at most {ms_text(saved)} a batch"
            f" ({100 * saved / fetch.fetch_ms_per_batch:.0f}%) and needs a CPU of its own"
        )
        line += (
            f"; receiving one from a worker takes it {ms_text(receive)} (measured at 1 worker:"
            f" unpickling, shared memory and the queue), {verdict}"
        )
    return f"{line}; measured: {scaling}"


def bulk_line(fetch: FetchProbe) -> str | None:
    """Batched against per-item fetching where both were measured; for a dataset without
    `__getitems__`, only where per-item calls dominate."""
    per_item, batched = fetch.ms_per_item(fetch.per_item), fetch.ms_per_item(fetch.batched)
    share, overhead = fetch.per_item_share, fetch.per_item_overhead_ms
    if per_item is None or batched is None or share is None or overhead is None:
        return None
    one_by_one = (
        f"{ms_text(per_item)} per item one by one, __getitem__ per item then the"
        f" collate_fn, against {ms_text(batched)}"
    )
    batch = f"a batch of {fetch.items}, the same items either way"
    if fetch.batched_way == BatchedWay.GETITEMS:
        if share >= 0:
            return (
                f"measured here: the dataset's __getitems__ saves {100 * share:.0f}% of a per-item"
                f" fetch ({one_by_one} with __getitems__, {batch}): torch's fetcher uses it;"
                " keep it"
            )
        return (
            f"measured here: the dataset's __getitems__ costs {100 * -share:.0f}% more than"
            f" fetching per item ({one_by_one} with __getitems__, {batch}); torch's fetcher"
            " calls it whenever it exists: make it cheaper or remove it"
        )
    if not fetch.per_item_dominates:
        return None
    return (
        f"measured here: per-item calls take {100 * share:.0f}% of fetching a batch"
        f" ({one_by_one} indexing the tensors once with the batch's indices, {batch}): index"
        " with whole batches, DataLoader(dataset, sampler=BatchSampler(RandomSampler(dataset),"
        " batch_size, drop_last=False), batch_size=None), or give the dataset a __getitems__"
        " that indexes its tensors once per batch"
    )


def fetch_advice(
    fetch: FetchProbe | None, num_workers: int, workers_faster: bool | None, scaling: str
) -> list[str]:
    """`workers_faster`: whether a worker count measured faster than num_workers=0 (None: not
    both were measured); `scaling`, the rates by worker count to cite."""
    if fetch is None:
        return []
    lines = [bulk_line(fetch)]
    if num_workers == 0 and workers_faster is False:
        lines.insert(0, main_process_line(fetch, scaling))
    return [line for line in lines if line is not None]
