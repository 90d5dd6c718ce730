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
h1{font-size:1.4rem} h2{font-size:1.1rem;margin-top:2rem}
table{border-collapse:collapse;margin:1rem 0}
th,td{border:1px solid #d0d7de;padding:.35rem .6rem;text-align:left;vertical-align:top;
min-width:6.5rem}
th{background:#f6f8fa} td.pass{background:#dafbe1} td.fail{background:#ffebe9}
td.skip,td.missing{background:#f6f8fa;color:#57606a} code{font-size:12px}
.msg{display:block;font-size:12px;color:#82071e;max-width:28rem;white-space:pre-wrap}
.hooks{font-size:12px;margin:.3rem 0 0 1.1rem;padding:0;max-width:28rem}
caption{text-align:left;font-weight:600} .desc{color:#57606a;font-size:12px}
.survive{font-size:12px;font-weight:400} pre{background:#f6f8fa;padding:.6rem;font-size:12px;
white-space:pre-wrap;max-width:70rem;border:1px solid #d0d7de}
"""


def _profile_header(profile: dict[str, Any]) -> str:
    esc = html_lib.escape
    survives = profile.get("survives") or ""
    told = (
        f'<span class="survive" data-testid="survive-{esc(profile["name"])}"><br>'
        f"To survive it: {esc(survives)}</span>"
        if survives
        else ""
    )
    return (
        f'<th scope="col">{esc(profile["name"])}<span class="desc"><br>'
        f"{esc(profile['description'])}</span>{told}</th>"
    )


def _cell(name: str, found: dict[str, Any], anchor: str) -> str:
    """A test's result under one profile; a failure with its message, the webhooks the
    test received in order, and a link to its part of the profile's log (below)."""
    esc = html_lib.escape
    outcome = found["outcome"]
    css = {"passed": "pass", "failed": "fail", "error": "fail"}.get(outcome, outcome)
    inner = esc(MARK.get(outcome, outcome))
    text = found.get("detail") or found["message"]
    if text:
        inner += f'<span class="msg">{esc(text)}</span>'
    if css == "fail":
        hooks = found.get("webhooks")
        if hooks is not None:
            items = "".join(f"<li><code>{esc(h)}</code></li>" for h in hooks) or "<li>none</li>"
            told = '<span class="desc">webhooks received, in order:</span>'
            inner += f'{told}<ol class="hooks">{items}</ol>'
        if "log_excerpt" in found:
            inner += f'<a href="#{anchor}" data-testid="log-link">{esc(name)} log</a>'
    return f'<td class="{css}" data-testid="cell-{esc(name)}">{inner}</td>'


def html(doc: dict[str, Any], coverage_link: str | None = None) -> str:
    """The grid as one HTML page: inline style, no script, nothing fetched. Each failing
    cell links to its log excerpt, kept in the page; ``coverage_link``: the contract
    coverage report written beside it (relative)."""
    esc = html_lib.escape
    shared = _shared_file([r["test"] for r in doc["tests"]])
    where = f" in <code>{esc(shared.removesuffix('::'))}</code>" if shared else ""
    head = "".join(_profile_header(p) for p in doc["profiles"])
    body, logs = [], []
    for number, row in enumerate(doc["tests"]):
        cells = []
        for name in doc["profile_names"]:
            found = row["results"][name]
            anchor = f"log-{_slug(name)}-{number}"
            cells.append(_cell(name, found, anchor))
            if "log_excerpt" in found:
                title = f"{row['test'].removeprefix(shared)} under {name}"
                logs.append(
                    f'<h3 id="{anchor}">{esc(title)}</h3>'
                    f'<pre data-testid="log-{esc(name)}">{esc(found["log_excerpt"])}</pre>'
                )
        name = esc(row["test"].removeprefix(shared))
        body.append(f'<tr><th scope="row"><code>{name}</code></th>{"".join(cells)}</tr>')
    verdict = (
        f"{len(doc['regressions'])} regression(s): "
        "tests passing under baseline fail under a profile"
        if doc["regressions"]
        else "Every test passing under baseline passes under every profile."
    )
    link = (
        f'<p><a data-testid="coverage-link" href="{esc(coverage_link)}">The contract coverage '
        "report</a> (what the suite made the mock do, under baseline)</p>"
        if coverage_link
        else ""
    )
    log_part = f"<h2>Logs of the failures</h2>{''.join(logs)}" if logs else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        "<title>idv-mock resilience report</title>"
        f"<style>{STYLE}</style></head><body>"
        "<h1>idv-mock resilience report</h1>"
        f'<p data-testid="verdict">{esc(verdict)}</p>{link}'
        f'<table data-testid="grid"><caption>test x profile{where}</caption>'
        f'<thead><tr><th scope="col">test</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>{log_part}</body></html>\n"
    )


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name)
