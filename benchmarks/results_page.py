"""Tables of measured results written into the docs site's results pages (`docs/results/*.md`).

A script's `--write` puts the table its `--report` prints into its page, in place: between the
lines `<!-- results: NAME -->` and `<!-- /results: NAME -->`, so that the prose around a table
(where and how it was measured, what it shows) stays as written and a rerun replaces only the
figures. `tests/test_results_pages.py` rebuilds the tables whose result files are committed
(`benchmarks/results/`) and checks that each page holds exactly what the files give.
"""

from __future__ import annotations

import re
import statistics
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


def verdict(a: list[float], b: list[float]) -> str:
    """The difference of two rows' mean scores, its Welch t, and 'leads' / 'trails' where the
    rows' mean ± sd ranges do not overlap (outside seed noise), else 'matches'."""
    if not a or not b:
        return "one row has no score there" if a or b else "no scores there"
    if len(a) < 2 or len(b) < 2:
        return "fewer than 2 seeds"
    (ma, sa), (mb, sb) = (
        (statistics.mean(a), statistics.stdev(a)),
        (statistics.mean(b), statistics.stdev(b)),
    )
    spread = (sa**2 / len(a) + sb**2 / len(b)) ** 0.5
    t = f"Welch t {(ma - mb) / spread:.1f}" if spread > 0 else "no spread"
    word = "leads" if ma - sa > mb + sb else "trails" if ma + sa < mb - sb else "matches"
    difference = f"{ma - mb:+.3g}" if abs(ma - mb) < 1000 else f"{ma - mb:+,.0f}"
    return f"{difference} ({t}, {word})"


def mean_sd(scores: list[float]) -> str:
    """`mean ± sd` of a row's seeds ('-' for none, 'S (1 seed)' for one)."""
    if not scores:
        return "-"
    # Scores below 10 in size (memory's and connect4's fractions, squared's -1..1) keep 3
    # decimals; points (breakout, pong, cartpole) keep 1.
    digits = 3 if max(abs(x) for x in scores) < 10 else 1
    if len(scores) == 1:
        return f"{scores[0]:.{digits}f} (1 seed)"
    return f"{statistics.mean(scores):.{digits}f} ± {statistics.stdev(scores):.{digits}f}"


def machines(metas: list[dict]) -> str:
    """'machine, date' of a row's runs, each pair once, with the range of the 1-minute load
    averages its runs recorded: wall times of runs beside other work are loaded figures."""
    groups: dict[str, list[float]] = {}
    for meta in metas:
        groups.setdefault(f"{meta['machine']}, {meta['date']}", []).extend(meta.get("load", []))
    texts = []
    for text, loads in sorted(groups.items()):
        if loads:
            text += f", loaded (1-min load {min(loads):.1f}-{max(loads):.1f})"
        texts.append(text)
    return "; ".join(texts)
