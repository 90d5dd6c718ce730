"""Walk the hosted form over plain HTTP, as an applicant's browser would, without a browser.

``idv-mock form walk LINK`` and ``idv-mock trigger`` use it. It reads each page the form
serves (``<body data-testid="page-<step>">``), takes the page's own form with the values it
offers (pre-filled fields, the first option, the checked radio), changes only what the
outcome needs (the consent box, the tester panel's outcome, reason or failed recognition,
the address an injection asks for) and posts it where the page says, following the
redirects. So a form whose codes, options or steps change is still walked as it now is:
only the ``data-testid``s and the field names of the tester panel are relied on. A page
that refuses (an error page with its code, a field sent back) ends the walk with
:class:`Refused`; a choice the form does not offer is :class:`BadChoice`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

OUTCOMES = ("approved", "rejected", "pending", "retry")
FINISHED = ("done", "injected")  # the pages a walk ends on
MAX_PAGES = 40  # a form of seven steps, walked twice with a retry, is well under this
SHOWN = ("submission-id", "kyc-status", "error-code", "error-message", "form-error")
# what an address step needs when the page leaves it empty: the applicant types it
ADDRESS = {"address_street": "1 Example Street", "address_city": "Seoul", "address_country": "KOR"}


class Refused(Exception):
    """The form refused: its error page (``code``, ``message``) or a field sent back."""

    def __init__(self, code: str, message: str, url: str) -> None:
        super().__init__(f"{code}: {message}" if code else message)
        self.code = code
        self.message = message
        self.url = url


class BadChoice(ValueError):
    """The walk was asked for something the form does not offer (a reason, an outcome)."""


@dataclass
class Field:
    name: str
    kind: str  # text, hidden, checkbox, radio, select
    value: str = ""
    checked: bool = False
    required: bool = False
    options: list[str] = field(default_factory=list)


@dataclass
class Form:
    action: str
    method: str
    fields: list[Field] = field(default_factory=list)

    def choices(self, name: str) -> list[str]:
        """The values a radio group or a select offers."""
        found = [f for f in self.fields if f.name == name]
        if found and found[0].kind == "select":
            return list(found[0].options)
        return [f.value for f in found if f.kind == "radio"]

    def defaults(self) -> dict[str, str]:
        """What a browser sends for the form as served: text and hidden values, each select's
        selected (or first) option, each radio group's checked (or first) value, checked
        boxes."""
        data: dict[str, str] = {}
        for item in self.fields:
            if item.kind == "radio":
                if item.checked or item.name not in data:
                    data[item.name] = item.value
            elif item.kind == "checkbox":
                if item.checked:
                    data[item.name] = item.value or "on"
            elif item.kind == "select":
                data[item.name] = item.value or (item.options[0] if item.options else "")
            else:
                data[item.name] = item.value
        return data


@dataclass
class Page:
    url: str
    status: int
    step: str = ""
    forms: list[Form] = field(default_factory=list)
    shown: dict[str, str] = field(default_factory=dict)  # text of the SHOWN data-testids
    refresh: str | None = None  # a <meta refresh> target: the return URL of a last page


class _Reader(HTMLParser):
    """The parts of a form page a walk needs."""

    def __init__(self, page: Page) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.form: Form | None = None
        self.select: Field | None = None
        self.capturing: list[tuple[str, str]] = []  # (tag, testid) of open SHOWN elements
        self.text: dict[str, list[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        testid = a.get("data-testid", "")
        if tag == "body":
            self.page.step = testid.removeprefix("page-")
        elif tag == "meta" and a.get("http-equiv", "").lower() == "refresh":
            self.page.refresh = a.get("content", "").partition("url=")[2] or None
        elif tag == "form":
            self.form = Form(a.get("action", ""), a.get("method", "get").lower())
            self.page.forms.append(self.form)
        elif tag == "input" and self.form is not None and a.get("name"):
            kind = a.get("type", "text").lower()
            value = a.get("value", "on" if kind in ("checkbox", "radio") else "")
            found = Field(a["name"], kind, value, "checked" in a, "required" in a)
            self.form.fields.append(found)
        elif tag == "select" and self.form is not None and a.get("name"):
            self.select = Field(a["name"], "select")
            self.form.fields.append(self.select)
        elif tag == "option" and self.select is not None:
            self.select.options.append(a.get("value", ""))
            if "selected" in a:
                self.select.value = a.get("value", "")
        if testid in SHOWN:
            self.capturing.append((tag, testid))
            self.text.setdefault(testid, [])

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.form = None
        elif tag == "select":
            self.select = None
        if self.capturing and self.capturing[-1][0] == tag:
            self.capturing.pop()

    def handle_data(self, data: str) -> None:
        for _tag, testid in self.capturing:
            self.text[testid].append(data)

    def close(self) -> None:
        super().close()
        self.page.shown = {k: " ".join("".join(v).split()) for k, v in self.text.items()}


def read_page(response: httpx.Response) -> Page:
    """A served page as a walk sees it."""
    page = Page(str(response.url), response.status_code)
    reader = _Reader(page)
    reader.feed(response.text)
    reader.close()
    return page


@dataclass(frozen=True)
class Walked:
    """Where a walk ended: the last page's submission id, KYC status and return URL (None:
    the project has none, "Ok" closes the form); ``step`` is the page it stopped on."""

    step: str
    submission_id: str = ""
    kyc_status: str = ""
    return_url: str | None = None
    retried: bool = False
    pages: tuple[str, ...] = ()


@dataclass
class _Plan:
    outcome: str
    reason: str | None
    stop_at: str | None
    retried: bool = False
    steps: list[str] = field(default_factory=list)


def walk(
    client: httpx.Client,
    link: str,
    outcome: str = "approved",
    reason: str | None = None,
    *,
    stop_at: str | None = None,
) -> Walked:
    """Open ``link`` and walk the form to ``outcome`` (``approved``, ``rejected`` with an
    optional ``reason``, ``pending``, or ``retry``: recognition fails once, with ``reason``
    as the retry code, then the walk goes on to approved). An injection link
    (``action=addveri``) walks its address step: ``reason`` picks the tester panel's
    result (a failCode; the first, success, without one). ``stop_at``: stop on the first
    page of that step (after the failed recognition for ``retry``) without sending it."""
    if outcome not in OUTCOMES:
        raise BadChoice(f"outcome must be one of {', '.join(OUTCOMES)}, not {outcome!r}")
    if reason is not None and outcome in ("approved", "pending"):
        raise BadChoice(f"--reason goes with rejected, retry or an injection, not {outcome}")
    plan = _Plan(outcome, reason, stop_at)
    response = client.get(link, follow_redirects=True)
    for _ in range(MAX_PAGES):
        page = read_page(response)
        plan.steps.append(page.step)
        ended = _ended(page, plan)
        if ended is not None:
            return ended
        form = next((f for f in page.forms if f.method == "post"), None)
        if form is None:
            raise Refused("", f"the page {page.step or page.url!r} has no form to send", page.url)
        data = _filled(page.step, form, plan)
        target = response.url.join(form.action or page.url)
        response = client.post(target, data=data, follow_redirects=True)
    raise Refused("", f"the form did not end within {MAX_PAGES} pages", str(response.url))


def _ended(page: Page, plan: _Plan) -> Walked | None:
    """The walk's result on a last page, None to go on; raises on a refusing page."""
    if "error-code" in page.shown or page.step == "error":
        code = page.shown.get("error-code", "")
        raise Refused(code, page.shown.get("error-message", f"HTTP {page.status}"), page.url)
    if "form-error" in page.shown:
        raise Refused("", page.shown["form-error"], page.url)
    stop = plan.stop_at == page.step and (plan.outcome != "retry" or plan.retried)
    if page.step not in FINISHED and not stop:
        if page.status >= 400:
            raise Refused("", f"HTTP {page.status} on {page.url}", page.url)
        return None
    return Walked(
        page.step,
        page.shown.get("submission-id", ""),
        page.shown.get("kyc-status", ""),
        page.refresh if page.step in FINISHED else None,
        plan.retried,
        tuple(plan.steps),
    )


def _filled(step: str, form: Form, plan: _Plan) -> dict[str, str]:
    """The form as served, changed where the walk decides (the tester panel, the address)."""
    data = form.defaults()
    for item in form.fields:  # required boxes (consent) are ticked; optional ones left
        if item.kind == "checkbox" and item.required:
            data[item.name] = item.value or "on"
    if "outcome" in data:
        _tester(form, data, plan)
    elif "result" in data:
        _address(form, data, plan)
    return data


def _tester(form: Form, data: dict[str, str], plan: _Plan) -> None:
    if plan.outcome == "retry" and not plan.retried:
        data["fail_once"] = "on"
        if plan.reason is not None:
            data["retry_code"] = _offered(form, "retry_code", plan.reason)
        plan.retried = True
        return
    outcome = "approved" if plan.outcome == "retry" else plan.outcome
    data["outcome"] = _offered(form, "outcome", outcome)
    if outcome == "rejected" and plan.reason is not None:
        data["reason"] = _offered(form, "reason", plan.reason)


def _address(form: Form, data: dict[str, str], plan: _Plan) -> None:
    for name, value in ADDRESS.items():
        if name in data and not data[name].strip():
            data[name] = value
    if plan.reason is not None:
        data["result"] = _offered(form, "result", plan.reason)


def _offered(form: Form, name: str, value: str) -> str:
    choices = form.choices(name)
    if value not in choices:
        raise BadChoice(f"the form offers {name} {', '.join(choices)}; not {value!r}")
    return value


def describe(walked: Walked) -> list[str]:
    """The lines ``idv-mock form walk`` prints."""
    return [
        f"submission id: {walked.submission_id or '(none yet)'}",
        f"kyc status: {walked.kyc_status or '(none yet)'}",
        f"return URL: {walked.return_url or '(none: the project has no return_url)'}",
    ]


def main(link: str, outcome: str, reason: str | None, timeout: float = 10.0) -> int:
    """``idv-mock form walk``: 0 walked, 1 the form refused (or the server is unreachable),
    2 a choice the form does not offer."""
    import sys

    import httpx

    try:
        with httpx.Client(timeout=timeout) as client:
            walked = walk(client, link, outcome, reason)
    except BadChoice as exc:
        print(f"idv-mock form walk: {exc}", file=sys.stderr)
        return 2
    except Refused as exc:
        print(f"idv-mock form walk: the form refused: {exc} ({exc.url})", file=sys.stderr)
        return 1
    except httpx.HTTPError as exc:
        print(f"idv-mock form walk: {link}: {exc}", file=sys.stderr)
        return 1
    for line in describe(walked):
        print(line)
    return 0
