"""A coverage report as a terminal summary, a JSON file and one self-contained HTML page
(inline style, no script, nothing fetched), grouped by area."""

from __future__ import annotations

import html as html_lib
import json
import os
from pathlib import Path
from typing import Any

JSON_NAME = "coverage.json"
HTML_NAME = "coverage.html"
SHOWN_NEVER = 10  # never-met items the terminal summary names


def share(doc: dict[str, Any]) -> float:
    """Met items as a percentage of the catalogue."""
    return 100.0 * doc["met"] / doc["catalogue"] if doc["catalogue"] else 100.0


def by_area(doc: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Area -> (met, catalogue), areas in the catalogue's order."""
    found: dict[str, list[int]] = {}
    for row in doc["items"]:
        counts = found.setdefault(row["area"], [0, 0])
        counts[0] += bool(row["count"])
        counts[1] += 1
    return {area: (met, total) for area, (met, total) in found.items()}


def text(doc: dict[str, Any]) -> str:
    """The summary: met / catalogue overall and by area, then the first never-met items."""
    lines = [f"idv-mock contract coverage: {doc['met']}/{doc['catalogue']} ({share(doc):.1f}%)"]
    areas = by_area(doc)
    width = max((len(a) for a in areas), default=0)
    lines += [f"  {area:<{width}}  {met}/{total}" for area, (met, total) in areas.items()]
    if doc["never"]:
        shown = doc["never"][:SHOWN_NEVER]
        lines.append(f"never met (first {len(shown)} of {len(doc['never'])}):")
        how = {row["id"]: row["how"] for row in doc["items"]}
        lines += [f"  {item}  ({how.get(item, '')})" for item in shown]
    return "\n".join(lines) + "\n"


STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2rem;color:#1b1f24;max-width:72rem}
h1{font-size:1.4rem} h2{font-size:1.1rem;margin-top:2rem} table{border-collapse:collapse}
th,td{border:1px solid #d0d7de;padding:.3rem .55rem;text-align:left;vertical-align:top}
th{background:#f6f8fa} td.state{white-space:nowrap} tr.met td.state{background:#dafbe1}
tr.never td.state{background:#ffebe9}
code{font-size:12px} .how{font-size:12px;color:#57606a} .bar{display:inline-block;height:.7rem;
background:#2da44e;vertical-align:middle} .track{display:inline-block;width:8rem;height:.7rem;
background:#ffebe9;vertical-align:middle;margin-right:.4rem}
"""


def _receiver(row: dict[str, Any]) -> str:
    classes = row.get("receiver") or {}
    return ", ".join(f"{cls}: {n}" for cls, n in sorted(classes.items()))


def html(doc: dict[str, Any], sibling: str | None = None) -> str:
    """The report as one page; ``sibling``: a relative link to the resilience report."""
    esc = html_lib.escape
    areas = by_area(doc)
    summary = []
    for area, (met, total) in areas.items():
        width = 8 * met / total if total else 0
        bar = f'<span class="track"><span class="bar" style="width:{width:.2f}rem"></span></span>'
        summary.append(
            f'<tr data-testid="area-{esc(area)}"><th scope="row"><a href="#{_anchor(area)}">'
            f"{esc(area)}</a></th><td>{bar}{met}/{total}</td></tr>"
        )
    sections = []
    for area in areas:
        rows = []
        for row in (r for r in doc["items"] if r["area"] == area):
            met = bool(row["count"])
            state = f"met: {row['count']}" if met else "never"
            detail = _receiver(row) if met else f'<span class="how">{esc(row["how"])}</span>'
            rows.append(
                f'<tr class="{"met" if met else "never"}" data-testid="item">'
                f"<td><code>{esc(row['id'])}</code></td><td>{esc(row['kind'])}</td>"
                f'<td class="state">{esc(state)}</td><td>{detail}</td></tr>'
            )
        sections.append(
            f'<h2 id="{_anchor(area)}">{esc(area)}</h2><table data-testid="table-{esc(area)}">'
            '<thead><tr><th scope="col">item</th><th scope="col">kind</th>'
            '<th scope="col">seen</th><th scope="col">receiver / how to cause it</th></tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    never = "".join(f"<li><code>{esc(item)}</code></li>" for item in doc["never"][:SHOWN_NEVER])
    link = (
        f'<p><a data-testid="resilience-link" href="{esc(sibling)}">The resilience report</a>'
        " (what the suite survives)</p>"
        if sibling
        else ""
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        "<title>idv-mock contract coverage</title>"
        f"<style>{STYLE}</style></head><body>"
        "<h1>idv-mock contract coverage</h1>"
        f'<p data-testid="verdict">The suite met {doc["met"]} of the {doc["catalogue"]} '
        f"behaviours in the mock's catalogue ({share(doc):.1f}%).</p>{link}"
        f'<table data-testid="areas"><caption>met by area</caption>{"".join(summary)}</table>'
        f'<h2>Never met first</h2><ol data-testid="never">{never}</ol>'
        f"{''.join(sections)}</body></html>\n"
    )


def _anchor(area: str) -> str:
    return "area-" + "".join(c if c.isalnum() else "-" for c in area)


def write(
    doc: dict[str, Any], out_dir: str | Path, resilience_html: str | None = None
) -> tuple[Path, Path]:
    """``coverage.json`` and ``coverage.html`` in ``out_dir`` (made if missing); the HTML
    links to ``resilience_html`` when given (relative to the page)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path, html_path = out / JSON_NAME, out / HTML_NAME
    json_path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    sibling = None
    if resilience_html:
        sibling = os.path.relpath(Path(resilience_html).resolve(), out.resolve())
    html_path.write_text(html(doc, sibling), encoding="utf-8")
    return json_path, html_path
