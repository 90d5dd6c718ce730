"""The package as the index would ship it: sdist and wheel built, the wheel installed in a
fresh venv outside the clone, its command and its pytest plugin used from there.

``python -m build`` needs the build backend from the package index (or a local mirror);
the test skips with the reason when it cannot be fetched.
"""

from __future__ import annotations

import email
import os
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_TEST = """
def test_the_plugin_serves_the_mock(idv_client, idv_server):
    r = idv_client.get("/submission", params={"count": "1"})
    assert r.status_code == 200
    assert len(r.json()["Items"]) == 1
    assert idv_server.base_url.endswith("/v3")
"""

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    cmd = [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if done.returncode != 0 and "No matching distribution" in done.stdout + done.stderr:
        pytest.skip("the build backend could not be fetched from the package index")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return out


def _wheel(dist: Path) -> Path:
    (wheel,) = dist.glob("idv_mock-*.whl")
    return wheel


def test_metadata_is_ready_for_the_index(dist: Path) -> None:
    with zipfile.ZipFile(_wheel(dist)) as wheel:
        names = wheel.namelist()
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(wheel.read(meta_name))
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names[-10:]
        assert "idv_mock/schemas/api.json" in names and "pytest_idv_mock/__init__.py" in names
    assert meta["Author"] == "The idv-mock authors"
    assert "License :: OSI Approved :: MIT License" in meta.get_all("Classifier")
    assert any(u.startswith("Source, https://") for u in meta.get_all("Project-URL"))
    assert meta["Description-Content-Type"] == "text/markdown"
    readme = meta.get_payload()
    assert "](docs/img/" not in readme and "](schemas/" not in readme  # made absolute
    assert "https://raw.githubusercontent.com/" in readme
    assert len(list(dist.glob("idv_mock-*.tar.gz"))) == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_wheel_serves_and_its_plugin_runs(dist: Path, tmp_path: Path) -> None:
    """A fresh venv (outside the clone), the wheel only: ``idv-mock serve`` answers and a
    downstream test file using ``idv_client`` passes."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    bin_dir = venv / "bin"
    pip = [
        str(bin_dir / "python"),
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ]
    # pytest through the extra, as the README says: pip install 'idv-mock[pytest]'
    done = subprocess.run([*pip, f"{_wheel(dist)}[pytest]"], capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    port = _free_port()
    server = subprocess.Popen(
        [str(bin_dir / "idv-mock"), "serve", "--port", str(port), "--seed-count", "3"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        r = _first_answer(f"http://127.0.0.1:{port}/v3/submission")
        assert r.status_code == 200 and len(r.json()["Items"]) == 3
    finally:
        server.terminate()
        server.wait(timeout=30)
    downstream = tmp_path / "downstream"
    downstream.mkdir()
    (downstream / "test_app.py").write_text(PLUGIN_TEST)
    cmd = [str(bin_dir / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(cmd, cwd=downstream, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1 passed" in done.stdout
    # the default start ships in the wheel, under the key the installed code gives it
    cold = "import sys; from idv_mock import Service; Service(); print('faker' in sys.modules)"
    done = subprocess.run([str(bin_dir / "python"), "-c", cold], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "False\n"), done.stderr[-3000:]


def _first_answer(url: str) -> httpx.Response:
    deadline = time.monotonic() + 60
    while True:
        try:
            return httpx.get(url, headers={"x-api-key": "mock-api-key"}, timeout=2)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
