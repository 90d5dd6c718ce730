"""Issue 39, over HTTP: no script in the form's pages, no control call from a browser's
script, no clock advance or state import that stalls the server, no webhook reply that
fills memory, no forged dashboard write."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from jinja2 import ChainableUndefined
from markupsafe import escape

from conftest import ServeProcess
from idv_mock import Service, ServiceConfig, create_app
from idv_mock.delivery.receiver import WebhookReceiver
from idv_mock.delivery.webhooks import SETTLED
from test_security import Live  # the mock on a known port, as serve runs it

HOSTILE = "<img src=x onerror=alert(1)>\"'</text><script>alert(2)</script>"
KEY = {"x-api-key": "mock-api-key"}
JSON_TYPE = {"content-type": "application/json"}
TEMPLATES = Path(__file__).resolve().parents[1] / "src" / "idv_mock" / "web" / "templates"


@pytest.fixture
def live() -> Iterator[Live]:
    with Live() as server:
        yield server


# --- 1. script injection: escaping, CSP, the control API from a browser ---


class Hostile(ChainableUndefined):
    """Every value a template reads that the test did not give: hostile markup, whatever
    is asked of it (an attribute, an item, a call, an iteration, a comparison)."""

    def __str__(self) -> str:
        return HOSTILE

    def __html__(self) -> str:  # escaped only when the template escapes (Jinja's own undefined
        return str(escape(HOSTILE))  # says it is markup, as if it were safe)

    def __iter__(self) -> Iterator[Any]:
        yield Hostile(name="item")
        yield Hostile(name="item")

    def __len__(self) -> int:
        return 2

    def __bool__(self) -> bool:
        return True

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return Hostile(name="called")

    def __lt__(self, other: Any) -> bool:
        return False

    __gt__ = __le__ = __ge__ = __lt__

    def __add__(self, other: Any) -> Any:
        return Hostile(name="sum")

    __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __mod__ = __floordiv__ = __add__

    def __int__(self) -> int:
        return 2

    __hash__ = object.__hash__


def test_every_template_escapes_hostile_values_of_every_field() -> None:
    from starlette.requests import Request

    from idv_mock.web import i18n
    from idv_mock.web.pages import templates

    env = templates.env.overlay(undefined=Hostile)
    dumps = {"sort_keys": True, "default": str}  # tojson of a hostile value: its text
    env.policies = {**templates.env.policies, "json.dumps_kwargs": dumps}
    scope = {"type": "http", "method": "GET", "path": "/", "headers": [], "query_string": b""}
    names = sorted(p.relative_to(TEMPLATES).as_posix() for p in TEMPLATES.rglob("*.*"))
    assert "liveform/_document.svg" in names and len(names) > 20
    for name in names:
        page = {"request": Request(scope), "t": i18n.labels("en"), "lang": "en"}
        text = env.get_template(name).render(page)
        assert "<img src=x" not in text and "<script>alert" not in text, name
        assert "&lt;img src=x onerror=alert(1)&gt;" in text or name == "base.html", name


def document_step(client: httpx.Client) -> str:
    """The URL of a fresh session's document step."""
    page = client.get("/liveform/?pid=default&userid=u-xss", follow_redirects=True)
    forms = {"consent": {"agree": "on"}, "country": {"country": "KOR"}}
    forms["id_type"] = {"id_type": "passport"}
    while (step := page.url.path.rsplit("/", 1)[-1]) != "document":
        page = client.post(str(page.url), data=forms[step], follow_redirects=True)
    return str(page.url)


def test_a_refused_document_step_echoes_no_markup_and_forbids_inline_script(
    live: Live,
) -> None:
    with httpx.Client(base_url=live.base) as client:
        url = document_step(client)
        for field in ("full_name", "documentNumber", "idcard_issueDate", "first_name"):
            r = client.post(url, data={field: HOSTILE, "date_of_birth": "bad"})
            assert r.status_code in (200, 400), r.text
            assert "<img src=x" not in r.text and "<script>alert" not in r.text, field
            assert "&lt;img src=x onerror=alert(1)&gt;" in r.text, field
        policy = r.headers["content-security-policy"]
        script = re.search(r"script-src ([^;]*)", policy)
        assert script is not None and script.group(1) == "'self'", policy
        assert client.get(url).headers["content-security-policy"] == policy


def test_no_page_carries_inline_script(live: Live) -> None:
    with httpx.Client(base_url=live.base) as client:
        pages = [client.get(document_step(client))]
        pages += [client.get(f"/__admin/ui{p}") for p in ("/", "/submissions", "/webhooks")]
    for page in pages:
        assert page.status_code == 200
        assert "content-security-policy" in page.headers
        assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", page.text) == [], page.url
    assert 'src="/static/dashboard-live.js"' in pages[1].text


BROWSER_FETCH = {
    "Sec-Fetch-Site": "same-origin",
    "Sec-Fetch-Mode": "cors",
    "Sec-Fetch-Dest": "empty",
}
NAVIGATION = {"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
REFUSED_SCRIPT = {
    "message": "A script in a browser may not use the control API: send the header "
    "x-idv-mock-admin-token (see --admin-token), or use the dashboard",
    "errors": [],
}


def test_a_script_of_the_forms_origin_cannot_drive_the_control_api(live: Live) -> None:
    url = f"{live.base}/__admin/projects?show_keys=true"
    r = httpx.get(url, headers=BROWSER_FETCH)
    assert (r.status_code, r.json()) == (403, REFUSED_SCRIPT)
    assert "mock-api-key" not in r.text
    own = {"Origin": live.base, **BROWSER_FETCH}
    r = httpx.post(f"{live.base}/__admin/reset", headers={**own, **JSON_TYPE}, json={})
    assert (r.status_code, r.json()) == (403, REFUSED_SCRIPT)
    live.service.create_project({"project_id": "kept", "api_key": "kept-key"})
    r = httpx.post(f"{live.base}/__admin/reset", headers={"Origin": live.base})  # no Sec-Fetch
    assert r.status_code == 403
    assert "kept" in live.service.project_ids()
    # a person opening the URL sees the projects, but never the keys
    assert httpx.get(f"{live.base}/__admin/projects", headers=NAVIGATION).status_code == 200
    r = httpx.get(url, headers=NAVIGATION)
    assert r.status_code == 403 and "mock-api-key" not in r.text
    # curl, the CLI and tests send none of these: unchanged; Node's fetch sends
    # Sec-Fetch-Mode alone (no Sec-Fetch-Site, no Origin): a script, not a page
    assert "mock-api-key" in httpx.get(url).text
    node = {"Sec-Fetch-Mode": "cors", **JSON_TYPE}
    assert "mock-api-key" in httpx.get(url, headers=node).text
    made = {"project_id": "from-node", "api_key": "node-key"}
    assert httpx.post(f"{live.base}/__admin/projects", headers=node, json=made).status_code == 201
    sandbox = httpx.get(f"{live.base}/__admin/projects").headers["content-security-policy"]
    assert sandbox.startswith("sandbox")


def test_the_admin_token_in_a_header_lets_a_browsers_script_in() -> None:
    with Live(admin_token="s3cret-token") as server:
        url = f"{server.base}/__admin/projects?show_keys=true"
        cookie = {"Cookie": "idv_mock_admin_token=s3cret-token"}
        assert httpx.get(url, headers={**BROWSER_FETCH, **cookie}).status_code == 403
        header = {"x-idv-mock-admin-token": "s3cret-token"}
        r = httpx.get(url, headers={**BROWSER_FETCH, **header})
        assert r.status_code == 200 and "mock-api-key" in r.text


# --- 2. clock advances: bounded work and answer whatever the span ---


def monitored_project(service: Service, records: int) -> None:
    """Project ``busy``: ``records`` monitored records, a search cycle every second."""
    options = {"clock_mode": "frozen", "monitoring_cycle_seconds": 1}
    spec = {"project_id": "busy", "api_key": "busy-key", "admins": ["a@example.com"]}
    service.create_project({**spec, "options": options})
    service.screening.create_worklist("busy", {"id": "wl", "name": "all"})
    sids = []
    for i in range(records):
        data = {"full_name": f"Person Number{i}", "date_of_birth": "1980-01-01"}
        sids.append(
            service.create_submission("busy", {"kyc": {"result": "approved"}, "data": data})
        )
    service.screening.monitor(
        service.project("busy"), "wl", [s["submission_id"] for s in sids], "a@example.com"
    )


def test_a_clock_advance_lists_at_most_1000_rules_and_counts_them_all(live: Live) -> None:
    monitored_project(live.service, 20)
    url = f"{live.base}/__admin/projects/busy/clock"
    start = httpx.get(url).json()["now"]
    r = httpx.post(f"{url}/advance", json={"seconds": 86400}, timeout=60)
    assert r.status_code == 200
    answer = r.json()
    assert (len(answer["fired"]), answer["fired_count"]) == (1000, 86400)
    assert answer["fired"][0]["what"] == "monitoring_cycle"
    assert [f["webhooks"] for f in answer["fired"]] == [[]] * 1000
    year = httpx.post(f"{url}/advance", json={"seconds": 31536000}, timeout=60).json()
    assert (len(year["fired"]), year["fired_count"]) == (1000, 31536000)
    (due,) = httpx.get(url).json()["due"]
    assert due == {
        "at": _plus(start, 86400 + 31536000 + 1),
        "what": "monitoring_cycle",
        "worklist_id": "wl",
    }
    # a new entry is screened at the next cycle, as before
    entry = {"entry_id": "E-1", "list": "pep", "name": "Person Number3", "nationality": "KOR"}
    live.service.screening.add_watchlist_entry("busy", {**entry, "birth_date": "1980-01-01"})
    after = httpx.post(f"{url}/advance", json={"seconds": 2}).json()
    assert after["fired_count"] == 2 and after["fired"][0]["webhooks"] == []


def rescreened_project(service: Service, records: int) -> list[str]:
    """Project ``busy``: an own entry ``Person Number`` and ``records`` monitored records, a
    search cycle every second; every other record ("Parsons Nimber…", 71 to 75 against
    the entry) matches at a threshold of 60 and not at the default 80. Answers the record
    ids, registration order."""
    options = {"clock_mode": "frozen", "monitoring_cycle_seconds": 1}
    spec = {"project_id": "busy", "api_key": "busy-key", "admins": ["a@example.com"]}
    service.create_project({**spec, "options": options})
    entry = {"entry_id": "E-1", "list": "pep", "name": "Person Number", "nationality": "KOR"}
    service.screening.add_watchlist_entry("busy", {**entry, "birth_date": "1980-01-01"})
    service.screening.create_worklist("busy", {"id": "wl", "name": "all"})
    sids = []
    for i in range(records):
        name = f"Parsons Nimber{i}" if i % 2 else f"Someone Else{i}"
        data = {"full_name": name, "date_of_birth": "1980-01-01", "nationality": "USA"}
        made = service.create_submission("busy", {"kyc": {"result": "approved"}, "data": data})
        sids.append(made["submission_id"])
    batch = service.screening.monitor(service.project("busy"), "wl", sids, "a@example.com")
    return [r["recordIds"][0] for r in batch["successResults"]]


def outcome(service: Service, start: str) -> list[tuple[str, str, int, float]]:
    """Each record of ``busy`` as a user compares them: name, status, open matches, and
    when it was last updated (seconds after ``start``)."""
    from idv_mock.ground.clock import parse_iso

    records = service.project("busy").monitoring.get("wl").records.values()
    since = parse_iso(start)
    return sorted(
        (
            r["name"],
            r["status"],
            r["openCount"],
            (parse_iso(r["updateTime"]) - since).total_seconds(),
        )
        for r in records
    )


def test_other_projects_answer_while_a_search_cycle_rescreens_every_record(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    from idv_mock.aml import screening

    records = rescreened_project(live.service, 200)
    url = f"{live.base}/__admin/projects/busy"
    start = httpx.get(f"{url}/clock").json()["now"]
    changed = {"options": {"aml_threshold": 60}}  # the next cycle re-screens every record
    assert httpx.patch(url, json=changed).status_code == 200
    halfway, answered = threading.Event(), threading.Event()
    real_screen, screened = screening.screen, [0]

    def screen(*args: Any) -> Any:  # the cycle's matching waits, half done, for the reads
        screened[0] += 1
        if screened[0] == 100:
            halfway.set()
            answered.wait(30)
        return real_screen(*args)

    monkeypatch.setattr(screening, "screen", screen)
    year: list[dict[str, Any]] = []
    advance = threading.Thread(
        target=lambda: year.append(
            httpx.post(f"{url}/clock/advance", json={"seconds": 31536000}, timeout=60).json()
        )
    )
    advance.start()
    try:
        assert halfway.wait(30)
        other = httpx.get(f"{live.base}/v3/submission?count=1", headers=KEY, timeout=5)
        assert other.status_code == 200 and other.json()["Items"]
        # the busy project answers too, and shows the cycle not begun: no half of one
        read = f"{live.base}/v3/submission/aml/monitor/wl/{records[1]}"
        before = httpx.get(read, headers={"x-api-key": "busy-key"}, timeout=5).json()
        assert (before["status"], before["openCount"]) == ("screenedNoMatches", 0)
        assert advance.is_alive()  # both answered before the advance returned
    finally:
        answered.set()
        advance.join()
    assert (len(year[0]["fired"]), year[0]["fired_count"]) == (1000, 31536000)
    after = httpx.get(read, headers={"x-api-key": "busy-key"}).json()
    assert (after["status"], after["openCount"]) == ("screenedWithMatches", 1)
    assert after["updateTime"] == _plus(start, 1)
    # the same as the cycle run in one step under the lock
    alone = Service(ServiceConfig(seed_count=0))
    try:
        rescreened_project(alone, 200)
        alone.clocks.prepare.clear()
        alone_start = alone.clocks.describe("busy")["now"]
        alone.update_project("busy", changed)
        in_one_step = alone.clocks.advance("busy", {"seconds": 31536000})
        assert outcome(alone, alone_start) == outcome(live.service, start)
        assert [f["what"] for f in in_one_step["fired"]] == [f["what"] for f in year[0]["fired"]]
    finally:
        alone.close()
    assert sum(1 for r in outcome(live.service, start) if r[1] == "screenedWithMatches") == 100


def test_a_submission_edited_between_two_rescreens_is_screened_as_edited(live: Live) -> None:
    records = rescreened_project(live.service, 4)
    url, busy = f"{live.base}/__admin/projects/busy", {"x-api-key": "busy-key"}
    read = f"{live.base}/v3/submission/aml/monitor/wl"
    assert httpx.patch(url, json={"options": {"aml_threshold": 60}}).status_code == 200
    assert httpx.post(f"{url}/clock/advance", json={"seconds": 1}).status_code == 200
    statuses = [httpx.get(f"{read}/{r}", headers=busy).json()["status"] for r in records]
    assert statuses == ["screenedNoMatches", "screenedWithMatches"] * 2
    first = httpx.get(f"{read}/{records[0]}", headers=busy).json()
    edit = {"submissionId": first["submissionId"], "admin": "a@example.com"}
    edited = httpx.patch(
        f"{live.base}/v3/submission",
        json={**edit, "data": {"fullName": "Person Numbr"}},
        headers=busy,
    )
    assert edited.status_code == 200, edited.text
    assert httpx.patch(url, json={"options": {"aml_threshold": 70}}).status_code == 200
    assert httpx.post(f"{url}/clock/advance", json={"seconds": 1}).status_code == 200
    after = httpx.get(f"{read}/{records[0]}", headers=busy).json()
    assert (after["status"], after["openCount"]) == ("screenedWithMatches", 1)


def _plus(instant: str, seconds: int) -> str:
    from datetime import timedelta

    from idv_mock.ground.clock import iso, parse_iso

    return iso(parse_iso(instant) + timedelta(seconds=seconds))


# --- 3. webhook receivers cannot hold the server ---


class SlowReceiver:
    """A webhook receiver on a raw socket: it reads the request, then answers ``reply`` a
    few bytes at a time every ``pause`` seconds, forever if ``endless``; it notes when the
    mock closed the connection."""

    def __init__(self, reply: bytes, pause: float, step: int = 1, endless: bool = False) -> None:
        self.reply, self.pause, self.step, self.endless = reply, pause, step, endless
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/hook"
        self.closed = threading.Event()  # the mock closed a connection
        self.accepted = threading.Event()  # the mock connected
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.accepted.set()
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            sent = 0
            try:
                while not self.stop.is_set() and (self.endless or sent < len(self.reply)):
                    part = self.reply[sent % len(self.reply) :][: self.step]
                    conn.sendall(part)
                    sent += len(part)
                    if self.pause:
                        time.sleep(self.pause)
            except OSError:
                self.closed.set()
                return
        self.closed.set()

    def close(self) -> None:
        self.stop.set()
        self.server.close()


def hooked(service: Service, pid: str, url: str) -> None:
    service.create_project({"project_id": pid, "api_key": f"{pid}-key"})
    service.update_project(pid, {"options": {"webhook_url": url}})
    service.create_submission(pid, {"kyc": {"result": "approved"}}, fire_webhooks=True)


def settled(service: Service, pid: str, wait: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        found = service.webhooks.deliveries(pid)
        if found and all(d["status"] in SETTLED for d in found):
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"not settled: {service.webhooks.deliveries(pid)}")


def one_attempt(receiver: SlowReceiver, timeout: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """One webhook delivered, without retries, to ``receiver`` (closed after): the settled
    delivery and its one attempt."""
    service = Service(ServiceConfig(seed_count=0, webhook_backoff=(), webhook_timeout=timeout))
    try:
        hooked(service, "one", receiver.url)
        delivery = settled(service, "one")
    finally:
        service.close()
        receiver.close()
    (attempt,) = delivery["attempts"]
    return delivery, attempt


def test_a_webhook_reply_is_read_up_to_64_kib() -> None:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n"
    chunk = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
    endless = SlowReceiver(head + chunk * 4096, pause=0, step=len(head + chunk))  # 256 MiB
    delivery, attempt = one_attempt(endless, timeout=20)
    assert delivery["status"] == "delivered"
    assert (attempt["reply_bytes"], attempt["reply_truncated"]) == (65536, True)


def test_a_trickling_receiver_meets_the_attempts_total_deadline() -> None:
    trickle = SlowReceiver(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", pause=0.2)
    delivery, attempt = one_attempt(trickle, timeout=1)
    assert delivery["status"] == "failed"
    assert attempt["error"] == "TimeoutError: no complete answer within 1 s"


def test_a_reset_ends_the_deliveries_in_flight() -> None:
    trickle = SlowReceiver(b"HTTP/1.1 200 OK\r\n", pause=0.5, endless=True)
    service = Service(ServiceConfig(seed_count=0, webhook_backoff=(), webhook_timeout=60))
    try:
        hooked(service, "slow", trickle.url)
        assert trickle.accepted.wait(20)  # the attempt is in flight
        service.reset()
        assert trickle.closed.wait(10)  # the connection is closed, not left to its 60 s
        assert service.webhooks.wait_idle(10)
    finally:
        service.close()
        trickle.close()


def test_slow_receivers_of_four_projects_do_not_delay_another_projects_webhook() -> None:
    trickles = [SlowReceiver(b"HTTP/1.1 200 OK\r\n", pause=0.5, endless=True) for _ in range(5)]
    service = Service(ServiceConfig(seed_count=0, webhook_backoff=(), webhook_timeout=60))
    try:
        with WebhookReceiver() as receiver:
            for n, trickle in enumerate(trickles):
                hooked(service, f"slow{n}", trickle.url)
            hooked(service, "quick", receiver.url)
            assert settled(service, "quick", 20)["status"] == "delivered"
            sending = [service.webhooks.deliveries(f"slow{n}")[0]["status"] for n in range(5)]
            assert sending == ["sending"] * 5  # still trickling
    finally:
        service.close()
        for trickle in trickles:
            trickle.close()


# --- 4. CORS never opens the control API but to origins named exactly ---


def test_cors_star_opens_v3_but_never_the_control_api(service: Service) -> None:
    from starlette.testclient import TestClient

    named = "http://localhost:3000"
    with TestClient(create_app(service, cors_origins=["*", named])) as client:
        any_page = {"origin": "http://any.test", "Sec-Fetch-Mode": "cors"}
        r = client.get("/v3/submission?count=1", headers={**KEY, **any_page})
        assert r.headers["access-control-allow-origin"] == "*"
        for path in ("/__admin/state", "/__admin/projects?show_keys=true"):
            r = client.get(path, headers={"origin": "http://any.test"})  # an old browser
            assert r.status_code == 403 and "access-control-allow-origin" not in r.headers
            assert "mock-api-key" not in r.text
        preflight = {"origin": "http://any.test", "access-control-request-method": "POST"}
        r = client.options("/__admin/reset", headers=preflight)
        assert "access-control-allow-origin" not in r.headers
        r = client.get("/__admin/projects", headers={"origin": named, "Sec-Fetch-Mode": "cors"})
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == named


def test_serve_warns_about_cors_star() -> None:
    with ServeProcess("--cors-origin", "*", "--seed-count", "1") as server:
        output = server.stop()
    assert "idv-mock serve: warning: --cors-origin '*' lets any web page call /v3" in output


# --- 5. dashboard writes: the server's own origin, a token only the server can make ---


def page_token(browser: httpx.Client) -> str:
    found = re.search(r'name="form_token" value="([^"]+)"', browser.get("/__admin/ui/").text)
    assert found is not None
    return found.group(1)


def test_a_planted_form_token_cookie_fails(live: Live) -> None:
    url = f"{live.base}/__admin/ui/projects/default/reset"
    live.service.create_submission("default", {})
    planted = "A" * 32  # what a page on another port of localhost set for every path
    with httpx.Client(base_url=live.base, cookies={"idv_mock_form_token": planted}) as browser:
        r = browser.post(url, data={"form_token": planted})
        assert r.status_code == 403 and "anti-forgery token" in r.text
        fresh = page_token(browser)  # the page replaces the planted cookie with its own
        assert fresh != planted
    assert live.service.submission_counts() == {"default": 4}


def test_dashboard_writes_only_from_the_servers_own_origin(live: Live) -> None:
    url = f"{live.base}/__admin/ui/projects/default/reset"
    live.service.create_submission("default", {})
    with httpx.Client(base_url=live.base) as browser:
        form = {"form_token": page_token(browser)}
        other_port = {"Origin": f"http://127.0.0.1:{live.port + 1}"}
        cross = {"Origin": live.base, "Sec-Fetch-Site": "cross-site"}
        same_site = {"Origin": live.base, "Sec-Fetch-Site": "same-site"}
        for headers in (other_port, cross, same_site, {"Origin": f"https://127.0.0.1:{live.port}"}):
            r = browser.post(url, data=form, headers=headers)
            assert r.status_code == 403, headers
            assert "Cross-site request refused" in r.text
        assert live.service.submission_counts() == {"default": 4}
        own = {"Origin": live.base, "Sec-Fetch-Site": "same-origin"}
        assert browser.post(url, data=form, headers=own).status_code == 303
    assert live.service.submission_counts() == {"default": 3}


def test_an_allowed_origin_marked_cross_site_is_refused(live: Live) -> None:
    headers = {"Origin": f"http://localhost:{live.port}", "Sec-Fetch-Site": "cross-site"}
    r = httpx.get(f"{live.base}/__admin/projects", headers=headers)
    assert r.status_code == 403
    assert r.json()["message"].startswith("Cross-site request refused: a page of origin")


# --- 6. a state import leaves other calls answered meanwhile ---


def test_other_calls_are_answered_while_a_state_is_imported(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    from idv_mock.backend import snapshots

    state = httpx.get(f"{live.base}/__admin/state").content
    answered, copying = threading.Event(), threading.Event()
    real_clone = snapshots.clone

    def clone(project: Any) -> Any:  # the import's copy waits until another call is answered
        copying.set()
        answered.wait(10)
        return real_clone(project)

    monkeypatch.setattr(snapshots, "clone", clone)
    result: list[int] = []
    put = threading.Thread(
        target=lambda: result.append(
            httpx.put(
                f"{live.base}/__admin/state", content=state, headers=JSON_TYPE, timeout=60
            ).status_code
        )
    )
    put.start()
    try:
        assert copying.wait(30)
        r = httpx.get(f"{live.base}/v3/submission?count=1", headers=KEY, timeout=5)
        assert r.status_code == 200  # answered while the import is under way
    finally:
        answered.set()
        put.join()
    assert result == [200]


# --- 7. the epoch's range, IPv6 receivers, ids after a reset ---


def test_the_last_epoch_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    import orjson

    state = orjson.dumps(Service(ServiceConfig(seed_count=1)).export_state()).decode()
    header = '{"sha256": "' + "0" * 64 + '", "epoch": ' + str(10**18 - 1) + "}"
    text = '{"state_file": ' + header + ", " + state[1:]
    path = tmp_path / "state.json"
    path.write_text(text)
    with pytest.raises(RuntimeError) as found, ServeProcess("--state-file", str(path)):
        pass
    assert "state_file.epoch is 999999999999999999, the last one" in str(found.value)
    assert path.read_text() == text  # not rewritten: the next start reads it as before


class V6Server(HTTPServer):
    address_family = socket.AF_INET6


def test_an_ipv6_literal_receiver_is_configured_and_checked_like_any(live: Live) -> None:
    got: list[bytes] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            got.append(self.rfile.read(int(self.headers["content-length"])))
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = V6Server(("::1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://[::1]:{server.server_address[1]}/hook"
    admin = f"{live.base}/__admin/projects/default"
    try:
        r = httpx.patch(admin, json={"options": {"webhook_url": url}})
        assert r.status_code == 200, r.text
        live.service.create_submission(
            "default", {"kyc": {"result": "approved"}}, fire_webhooks=True
        )
        delivery = settled(live.service, "default")
        assert delivery["status"] == "delivered" and len(got) == 1
        own = f"http://[::1]:{live.port}/__admin/reset"  # the server itself: refused
        assert httpx.patch(admin, json={"options": {"webhook_url": own}}).status_code == 200
        live.service.webhooks.clear("default")
        live.service.create_submission(
            "default", {"kyc": {"result": "approved"}}, fire_webhooks=True
        )
        (attempt,) = settled(live.service, "default")["attempts"]
        assert attempt["error"].startswith("refused: ::1")
    finally:
        server.shutdown()
        server.server_close()


def test_ids_given_out_before_a_reset_are_not_given_out_after_it(live: Live) -> None:
    url = f"{live.base}/__admin/projects/default/submissions"
    seeded = httpx.get(f"{live.base}/v3/submission?count=10", headers=KEY).json()

    def new_ids() -> list[str]:
        made = [httpx.post(url, json={"kyc": {"result": "approved"}}) for _ in range(3)]
        assert all(r.status_code == 201 for r in made), made[0].text
        return [r.json()["submission_id"] for r in made]

    given = set(new_ids())
    for _ in range(3):
        assert httpx.post(f"{live.base}/__admin/reset").status_code == 200
        again = httpx.get(f"{live.base}/v3/submission?count=10", headers=KEY).json()
        assert again == seeded  # the seeded start is the same after every reset
        fresh = set(new_ids())
        assert not fresh & given
        given |= fresh
