"""The terminal trial table in an 80-column log (Slurm, CI): it drops columns instead of wrapping,
and no cell is ever split over two lines."""

import io

from rich.console import Console

from autotune.report.table import COLUMNS, HEADERS, TERMINAL_COLUMNS, to_markdown, to_rich

LONG_FAILURE = (
    "failed: RuntimeError: DataLoader worker (pid 1234) is killed by signal: Killed. out of memory?"
)
LABELS = ("w0", "w3 pf8 pin persist nb cl stream", "w12 pf4", "w2 pf2")


def _row(trial: int, status: str, **knobs) -> dict:
    row = dict.fromkeys(COLUMNS)
    row.update(
        trial=trial,
        num_workers=0,
        pin_memory=False,
        prefetch_factor=None,
        persistent_workers=False,
        non_blocking=False,
        channels_last=False,
        side_stream_prefetch=False,
        in_order=True,
        samples_per_s=1234.5,
        restart_s=0.12,
        speedup=1.0,
        data_wait_pct=45.3,
        bottleneck="input",
        peak_mem_mib=12345,
        status=status,
    )
    row.update(knobs)
    return row


ROWS = [
    _row(0, "ok"),
    _row(
        1,
        "re-measure",
        num_workers=3,
        prefetch_factor=8,
        pin_memory=True,
        persistent_workers=True,
        non_blocking=True,
        channels_last=True,
        side_stream_prefetch=True,
    ),
    _row(2, LONG_FAILURE, num_workers=12, prefetch_factor=4),
    _row(3, "best", num_workers=2, prefetch_factor=2),
]


def _render(width: int | None, rows=ROWS) -> list[str]:
    console = Console(width=width or 300, record=True, file=io.StringIO())
    console.print(to_rich(rows, title="autotune: demo on cpu", width=width))
    return console.export_text().splitlines()


def test_at_80_columns_every_label_and_status_word_stays_on_one_line():
    lines = _render(80)
    assert max(len(line) for line in lines) <= 80
    body = [line for line in lines if line.startswith("│")]
    assert len(body) == len(ROWS)  # one line per trial: nothing wrapped onto a second line
    for line, label, row in zip(body, LABELS, ROWS, strict=True):
        cells = [c.strip() for c in line.strip("│").split("│")]
        assert label in cells  # the configuration whole, in its own cell
        status = cells[-1]
        assert status == row["status"] or (
            status.endswith("…") and row["status"].startswith(status[:-1])
        )


def test_at_80_columns_the_columns_that_matter_stay_and_headers_are_whole():
    header = next(line for line in _render(80) if line.startswith("┃"))
    cells = [c.strip() for c in header.strip("┃").split("┃")]
    assert cells[:3] == ["#", "config", "samples/s"] and cells[-1] == "status"
    assert set(cells) <= {HEADERS.get(c, c) for c in TERMINAL_COLUMNS}  # no header cut or wrapped


def test_a_wide_console_shows_every_terminal_column():
    header = next(line for line in _render(None) if line.startswith("┃"))
    cells = [c.strip() for c in header.strip("┃").split("┃")]
    assert cells == [HEADERS.get(c, c) for c in TERMINAL_COLUMNS]


def test_the_markdown_table_keeps_every_column_whatever_the_console():
    header = to_markdown(ROWS).splitlines()[0]
    assert header.count("|") == len(COLUMNS) + 1
    assert LONG_FAILURE in to_markdown(ROWS)
