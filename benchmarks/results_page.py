"""Tables of measured results written into the docs site's results pages (`docs/results/*.md`).

A script's `--write` puts the table its `--report` prints into its page, in place: between the
lines `<!-- results: NAME -->` and `<!-- /results: NAME -->`, so that the prose around a table
(where and how it was measured, what it shows) stays as written and a rerun replaces only the
figures. `tests/test_results_pages.py` rebuilds the tables whose result files are committed
(`benchmarks/results/`) and checks that each page holds exactly what the files give.
"""

from __future__ import annotations

import re
from pathlib import Path

PAGES = Path(__file__).resolve().parents[1] / "docs" / "results"


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- results: {name} -->", f"<!-- /results: {name} -->"


def table_in(page: Path, name: str) -> list[str]:
    """The lines between the `name` markers of `page`.

    Raises:
        SystemExit: `page` is missing or does not hold both markers once, in order (one line
            naming the page and the markers to add).
    """
    start, end = _markers(name)
    text = page.read_text(encoding="utf-8") if page.is_file() else ""
    found = re.findall(f"^{re.escape(start)}\n(.*?)^{re.escape(end)}$", text, re.M | re.S)
    if len(found) != 1:
        raise SystemExit(f"{page} has no table marked for {name}: add the lines {start} and {end}")
    return found[0].splitlines()


def write_table(page: Path, name: str, lines: list[str]) -> None:
    """Replace the lines between the `name` markers of `page` by `lines` (a markdown table)."""
    table_in(page, name)  # refuses a page without the markers before anything is written
    start, end = _markers(name)
    text = page.read_text(encoding="utf-8")
    before, rest = text.split(start + "\n", 1)
    after = rest.split(end, 1)[1]
    page.write_text(before + start + "\n" + "".join(f"{x}\n" for x in lines) + end + after)
    print(f"wrote {len(lines)} lines into {page} ({start})")
