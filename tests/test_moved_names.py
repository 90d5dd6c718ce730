"""The service's names from before its parts still work, warn, and say where they went."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from idv_mock import Service, ServiceConfig
from idv_mock.backend.moved_names import MOVED, MovedNames, add_aliases

ROOT = Path(__file__).resolve().parents[1]
ADMIN = "admin@example.com"


@pytest.fixture
def service() -> Any:
    service = Service(ServiceConfig(seed_count=2))
    yield service
    service.close()


def home(service: Service, new: str) -> tuple[Any, str]:
    """The object the new name is a method of, and the method's name."""
    *path, name = new.split(".")
    owner: Any = service
    for part in path:
        owner = getattr(owner, part)
    return owner, name


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_each_old_name_forwards_its_arguments_and_warns_naming_the_new_one(
    service: Service, monkeypatch: pytest.MonkeyPatch, old: str, new: str
) -> None:
    owner, name = home(service, new)
    calls = []

    def recorded(self: Any, *args: Any, **kwargs: Any) -> str:
        calls.append((self, args, kwargs))
        return "answer"

    monkeypatch.setattr(type(owner), name, recorded)  # raises if the new home has no such name
    message = re.escape(f"Service.{old} is deprecated: use service.{new}")
    with pytest.warns(DeprecationWarning, match=message) as warned:
        assert getattr(service, old)("a", 2, key="k") == "answer"
    assert calls == [(owner, ("a", 2), {"key": "k"})]
    assert warned[0].filename == __file__  # the warning points at the caller's line


def test_the_old_journal_and_deliveries_read_what_the_new_ones_read(service: Service) -> None:
    from idv_mock import create_app
    from idv_mock.transport import ASGITransport

    client = httpx.Client(
        transport=ASGITransport(create_app(service)),
        base_url="http://idv-mock/v3",
        headers={"x-api-key": "mock-api-key"},
    )
    assert client.get("/submission", params={"count": "1"}).status_code == 200
    with pytest.deprecated_call():
        journal = service.journal("default", "GET")
    assert [e["path"] for e in journal] == ["/v3/submission"]
    assert journal == service.calls.journal("default", "GET")
    with pytest.deprecated_call():
        assert service.clear_journal("default") == 1
    assert service.calls.journal("default") == []
    with pytest.deprecated_call():
        assert service.deliveries("default") == service.delivery.recorded("default") == []


def test_the_old_token_calls_change_the_pool(service: Service) -> None:
    project = service.project("default")
    with pytest.deprecated_call():
        service.register_tokens(project, ["old-name-token1", "old-name-token2"])
    assert service.tokens.count(project) == 2
    with pytest.deprecated_call():
        service.delete_tokens(project, ["old-name-token1"])
    with pytest.deprecated_call():
        assert service.token_count(project) == 1
    assert service.tokens.get(project, "old-name-token2")["tokenId"] == "old-name-token2"


def test_the_old_review_edits_the_submission(service: Service) -> None:
    project = service.project("default")
    sid = service.create_submission("default", {"kyc": {"result": "pending"}})["submission_id"]
    with pytest.deprecated_call():
        service.review(project, sid, ADMIN, {"kycStatus": "approved"})
    assert service.stored_submission("default", sid)["kyc"]["result"] == "approved"


def test_an_alias_never_replaces_a_method_of_the_same_name() -> None:
    class Parted:
        def journal(self) -> None: ...

    with pytest.raises(TypeError, match=r"Parted\.journal exists"):
        add_aliases(Parted)


def test_the_in_process_page_lists_every_moved_name() -> None:
    page = (ROOT / "docs" / "in-process.md").read_text()
    rows = re.findall(r"^\| `service\.(\w+)` \| `service\.([\w.]+)` \|$", page, re.M)
    assert dict(rows) == MOVED


def test_type_checkers_see_each_old_name(tmp_path: Path) -> None:
    """mypy --strict accepts the old names on a ``Service`` and still refuses a wrong one."""
    assert list(MovedNames.__annotations__) == list(MOVED)
    code = "from idv_mock import Service\n\n\ndef use(service: Service) -> None:\n"
    code += "".join(f"    service.{old}()\n" for old in MOVED) + "    service.jurnal()\n"
    (tmp_path / "uses_old_names.py").write_text(code)
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
         "uses_old_names.py"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert checked.stdout.splitlines() == [
        f'uses_old_names.py:{5 + len(MOVED)}: error: "Service" has no attribute "jurnal"'
        "  [attr-defined]",  # the last line: after the 4 of the head and one per old name
        "Found 1 error in 1 file (checked 1 source file)",
    ], checked.stdout + checked.stderr
