"""The container image: built from the Dockerfile, run, and asked (make image-test).

Opt-in (``IDV_MOCK_IMAGE_TEST=1``, which ``make image-test`` sets), since a cold build takes
a minute or two: the image is built against a local Debian base made with mmdebstrap (no
Docker Hub, no Docker daemon; ``../shared/notes/containers.md``), run with podman, and the
API, the hosted form and the dashboard must answer. Inside the container the server binds
0.0.0.0, so the control API and the dashboard need the admin token the run passes.
Skipped with the reason when podman (or mmdebstrap, for a missing base) is not there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import free_port, report_summary

ROOT = Path(__file__).resolve().parents[1]
BASE = os.environ.get("IDV_MOCK_IMAGE_BASE", "localhost/debian-py:base")
IMAGE = "localhost/idv-mock:test"
TOKEN = "image-test-token"
PODMAN = ["podman", "--runtime", "runc", "--cgroup-manager=cgroupfs"]
# the host's hard nofile limit here is below podman's default rlimits (containers.md)
ULIMITS = ["--ulimit", "nofile=20000:20000", "--ulimit", "nproc=4096:4096"]
CA = Path("/etc/ssl/certs/ca-certificates.crt")  # for a TLS-intercepting proxy at build time

pytestmark = [
    pytest.mark.skipif(
        os.environ.get("IDV_MOCK_IMAGE_TEST") != "1",
        reason="opt-in: make image-test (builds and runs the container image)",
    ),
    pytest.mark.skipif(shutil.which("podman") is None, reason="podman is not installed"),
]


def _run(cmd: list[str], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def apt_mirror(sources: Path = Path("/etc/apt/sources.list.d")) -> str | None:
    """The mirror the host's apt is set up with (the first ``URIs:`` of its deb822 sources,
    debian.sources first), so the base comes from where the host's packages come from and
    no host is named here (containers.md); None when apt names none."""
    files = sorted(sources.glob("*.sources"), key=lambda f: (f.name != "debian.sources", f.name))
    for source in files:
        for line in source.read_text().splitlines():
            if line.startswith("URIs:") and len(line.split()) > 1:
                return line.split()[1]
    return None


def _ensure_base(tmp: Path) -> None:
    if subprocess.run([*PODMAN, "image", "exists", BASE]).returncode == 0:
        return
    if shutil.which("mmdebstrap") is None:
        pytest.skip(f"no base image {BASE} and no mmdebstrap to make one")
    mirror = apt_mirror()
    if mirror is None:
        pytest.skip(f"no base image {BASE} and no apt mirror in /etc/apt/sources.list.d")
    rootfs = tmp / "rootfs.tar"
    _run(["mmdebstrap", "--variant=minbase",
          "--include=python3,python3-venv,python3-pip,ca-certificates",
          "bookworm", str(rootfs), mirror])  # fmt: skip
    _run([*PODMAN, "import", str(rootfs), BASE])


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> str:
    _ensure_base(tmp_path_factory.mktemp("base"))
    mount = ["-v", f"{CA}:{CA}:ro"] if CA.exists() else []
    started = time.perf_counter()
    _run([*PODMAN, "build", *mount, "--build-arg", f"BASE={BASE}", "-t", IMAGE, str(ROOT)])
    built = time.perf_counter() - started
    size = _run([*PODMAN, "image", "inspect", IMAGE, "--format", "{{.Size}}"]).stdout.strip()
    report_summary(f"image: built in {built:.1f} s, {int(size) / 1e6:.0f} MB (base {BASE})")
    return IMAGE


@pytest.fixture(scope="module")
def container(image: str) -> Iterator[str]:
    """The image as users run it: port published, server on 0.0.0.0 inside, admin token."""
    port = free_port()
    started = time.perf_counter()
    cid = _run([*PODMAN, "run", "-d", "--rm", *ULIMITS, "-p", f"127.0.0.1:{port}:8080",
                image, "--admin-token", TOKEN]).stdout.strip()  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        _wait(base, started)
        yield base
    finally:
        subprocess.run([*PODMAN, "stop", "-t", "5", cid], capture_output=True, timeout=60)


def _wait(base: str, started: float) -> None:
    deadline = started + 60
    while time.perf_counter() < deadline:
        try:
            httpx.get(f"{base}/openapi.json", timeout=1)
        except httpx.TransportError:
            time.sleep(0.05)
            continue
        report_summary(f"image: start to first answer {time.perf_counter() - started:.2f} s")
        return
    pytest.fail("the container did not answer within 60 s")


def test_the_api_answers(container: str) -> None:
    r = httpx.get(f"{container}/v3/submission", params={"count": "1"},
                  headers={"x-api-key": "mock-api-key"})  # fmt: skip
    assert r.status_code == 200, r.text
    assert len(r.json()["Items"]) == 1


def test_the_hosted_form_answers(container: str) -> None:
    r = httpx.get(f"{container}/", params={"pid": "default"}, follow_redirects=True)
    assert r.status_code == 200, r.text
    assert r.url.path.endswith("/consent")
    assert 'data-testid="page-consent"' in r.text


def test_the_control_api_needs_the_token_beyond_loopback(container: str) -> None:
    """Inside the container the server listens on 0.0.0.0: /__admin without the token is
    refused (403), with it the dashboard and the control API answer."""
    refused = httpx.get(f"{container}/__admin/projects")
    assert refused.status_code == 403, refused.text
    header = {"x-idv-mock-admin-token": TOKEN}
    assert httpx.get(f"{container}/__admin/projects", headers=header).status_code == 200
    page = httpx.get(f"{container}/__admin/ui/", headers=header, follow_redirects=True)
    assert page.status_code == 200 and "<html" in page.text.lower()


def test_the_server_runs_as_a_non_root_user(image: str) -> None:
    done = _run([*PODMAN, "run", "--rm", *ULIMITS, "--entrypoint", "id", image, "-u"])
    assert done.stdout.strip() == "10001"
