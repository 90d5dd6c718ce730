"""The resilience grid: test x profile, pass or fail with the failure's first line, as a
JSON document, a terminal table and a self-contained HTML page (no network, no script).

A regression is a test that passed under ``baseline`` and did not pass under a profile:
what the integration does not survive. Tests failing under ``baseline`` are shown but are
not regressions (they fail anyway).
"""

from __future__ import annotations

import html as html_lib
from collections.abc import Sequence
from typing import Any

RAN = (0, 1, 5)  # pytest exit codes of a run that happened
MARK = {"passed": "pass", "failed": "FAIL", "error": "ERROR", "skipped": "skip"}


def grid(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The grid document (``resilience.json``) from each profile's run."""
    names = [r["profile"]["name"] for r in runs]
    tests = list(dict.fromkeys(t for r in runs for t in r["outcomes"]))
    baseline = runs[0]["outcomes"] if runs else {}
    rows, regressions = [], []
    for test in tests:
        results = {}
        for run in runs:
            found = run["outcomes"].get(test, {"outcome": "missing", "message": ""})
            results[run["profile"]["name"]] = found
            passed_before = baseline.get(test, {}).get("outcome") == "passed"
            if run is not runs[0] and passed_before and found["outcome"] not in ("passed",):
                regressions.append({"test": test, "profile": run["profile"]["name"], **found})
        rows.append({"test": test, "results": results})
    broken = [r["profile"]["name"] for r in runs if r["exit_code"] not in RAN]
    return {
        "profiles": [
            {**r["profile"], "exit_code": r["exit_code"], "seconds": r["seconds"], "log": r["log"]}
            for r in runs
        ],
        "profile_names": names,
        "tests": rows,
        "regressions": regressions,
        "broken_runs": broken,
        "exit_code": 2 if broken else 1 if regressions else 0,
    }


def _shared_file(tests: list[str]) -> str:
    """``path::`` when every test is in that one file (the table then shows it once)."""
    files = {t.split("::", 1)[0] for t in tests}
    return f"{files.pop()}::" if len(files) == 1 and all("::" in t for t in tests) else ""


def text(doc: dict[str, Any]) -> str:
    """The grid as a terminal table, then each regression's first failure line."""
    names: list[str] = doc["profile_names"]
    shared = _shared_file([r["test"] for r in doc["tests"]])
    shown = {r["test"]: r["test"].removeprefix(shared) for r in doc["tests"]}
    width = max([len("test"), *(len(t) for t in shown.values())])
    cols = [max(len(n), 5) for n in names]
    lines = [f"in {shared.removesuffix('::')}:"] if shared else []
    header = [n.ljust(c) for n, c in zip(names, cols, strict=True)]
    lines.append("  ".join(["test".ljust(width), *header]))
    for row in doc["tests"]:
        marks = [MARK.get(row["results"][n]["outcome"], "-") for n in names]
        cells = [m.ljust(c) for m, c in zip(marks, cols, strict=True)]
        lines.append("  ".join([shown[row["test"]].ljust(width), *cells]).rstrip())
    if doc["regressions"]:
        lines += ["", "Passing under baseline, failing under a profile:"]
        lines += [
            f"  {shown[r['test']]} [{r['profile']}]: {r['message']}" for r in doc["regressions"]
        ]
    else:
        lines += ["", "Every test passing under baseline passes under every profile."]
    for name in doc["broken_runs"]:
        lines.append(f"  the run under {name} broke: see its log")
    return "\n".join(lines) + "\n"


STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2rem;color:#1b1f24}
h1{font-size:1.4rem} table{border-collapse:collapse;margin:1rem 0}
th,td{border:1px solid #d0d7de;padding:.35rem .6rem;text-align:left;vertical-align:top;
min-width:6.5rem}
th{background:#f6f8fa} td.pass{background:#dafbe1} td.fail{background:#ffebe9}
td.skip,td.missing{background:#f6f8fa;color:#57606a} code{font-size:12px}
.msg{display:block;font-size:12px;color:#82071e;max-width:28rem;white-space:pre-wrap}
caption{text-align:left;font-weight:600} .desc{color:#57606a;font-size:12px}
"""


def html(doc: dict[str, Any]) -> str:
    """The grid as one HTML page: inline style, no script, nothing fetched."""
    esc = html_lib.escape
    shared = _shared_file([r["test"] for r in doc["tests"]])
    where = f" in <code>{esc(shared.removesuffix('::'))}</code>" if shared else ""
    head = "".join(
        f'<th scope="col">{esc(p["name"])}<span class="desc"><br>{esc(p["description"])}'
        f"</span></th>"
        for p in doc["profiles"]
    )
    body = []
    for row in doc["tests"]:
        cells = []
        for name in doc["profile_names"]:
            found = row["results"][name]
            outcome = found["outcome"]
            css = {"passed": "pass", "failed": "fail", "error": "fail"}.get(outcome, outcome)
            message = (
                f'<span class="msg">{esc(found["message"])}</span>' if found["message"] else ""
            )
            cells.append(
                f'<td class="{css}" data-testid="cell-{esc(name)}">'
                f"{esc(MARK.get(outcome, outcome))}{message}</td>"
            )
        name = esc(row["test"].removeprefix(shared))
        body.append(f'<tr><th scope="row"><code>{name}</code></th>{"".join(cells)}</tr>')
    verdict = (
        f"{len(doc['regressions'])} regression(s): "
        "tests passing under baseline fail under a profile"
        if doc["regressions"]
        else "Every test passing under baseline passes under every profile."
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        "<title>idv-mock resilience report</title>"
        f"<style>{STYLE}</style></head><body>"
        "<h1>idv-mock resilience report</h1>"
        f'<p data-testid="verdict">{esc(verdict)}</p>'
        f'<table data-testid="grid"><caption>test x profile{where}</caption>'
        f'<thead><tr><th scope="col">test</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></body></html>\n"
    )
