"""The package as a user installs it into their own project: ``make dist`` builds the sdist
and the wheel, and the README's install lines (the block marked ``run-by: tests/test_package.py``,
the same in docs/pytest.md) run as written, the clone's path put in, into a fresh venv outside
the clone: from the clone, then from the wheel; each time ``idv-mock serve`` answers and a
downstream test file using the plugin passes.

Building needs the build backend from the package index (or a local mirror); the tests skip
with the reason when it cannot be fetched.
"""

from __future__ import annotations

import email
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import httpx
import pytest

from conftest import free_port

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
    """What ``make dist`` builds (into a folder of the test's, with the running Python)."""
    out = tmp_path_factory.mktemp("dist")
    if shutil.which("make"):
        venv = Path(sys.executable).parent.parent
        # -o: the environment running the tests is installed already (no .installed-test)
        cmd = ["make", "-s", "-o", f"{venv}/.installed-test", "dist", f"VENV={venv}",
               f"DIST={out}"]  # fmt: skip
    else:  # the recipe of the Makefile's dist target
        cmd = [sys.executable, "-m", "build", "--outdir", str(out), "."]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
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
    # no repository address is named until a real one exists (none is invented)
    assert meta.get_all("Project-URL") is None
    assert meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload().strip() == (ROOT / "README.md").read_text().strip()
    assert len(list(dist.glob("idv_mock-*.tar.gz"))) == 1


INSTALL = re.compile(r"^pip install '([^']+)'", re.M)


def install_lines() -> list[str]:
    """The README's install lines; docs/pytest.md shows the same block."""
    from test_readme import snippets

    def blocks(page: Path) -> list[str]:
        return [
            s.code
            for s in snippets(page)
            if s.marker == "run-by" and s.because == "tests/test_package.py"
        ]

    (readme,) = blocks(ROOT / "README.md")
    assert blocks(ROOT / "docs" / "pytest.md") == [readme]
    return INSTALL.findall(readme)


def test_the_install_lines_of_the_readme_work_as_written(dist: Path, tmp_path: Path) -> None:
    """A fresh venv (outside the clone): the clone's line, then (idv-mock uninstalled) the
    wheel's; each installs from where it says, serves, and runs a downstream plugin test."""
    clone_line, wheel_line = install_lines()
    assert clone_line == "path/to/idv-mock[pytest]"
    assert wheel_line == f"path/to/idv-mock/dist/{_wheel(dist).name}[pytest]"  # its version
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "--disable-pip-version-check"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    for line, source in ((clone_line, ROOT), (wheel_line, _wheel(dist))):
        target = line.replace("path/to/idv-mock/dist", str(dist))
        target = target.replace("path/to/idv-mock", str(ROOT))
        done = subprocess.run([*pip, "install", "--quiet", target], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        if done.returncode != 0 and "No matching distribution" in done.stdout + done.stderr:
            pytest.skip("the build backend could not be fetched from the package index")
        assert done.returncode == 0, line + done.stdout[-3000:] + done.stderr[-3000:]
        assert _installed_from(python, env) == source.as_uri(), line
        _serves_and_runs_the_plugin(venv, tmp_path / source.name, env)
        subprocess.run([*pip, "uninstall", "--quiet", "--yes", "idv-mock"], env=env,
                       check=True, capture_output=True, timeout=120)  # fmt: skip


def _installed_from(python: str, env: dict[str, str]) -> str:
    """Where pip took the installed idv-mock from (its direct_url.json, PEP 610)."""
    code = (
        "import importlib.metadata as m, json; "
        "print(json.loads(m.distribution('idv-mock').read_text('direct_url.json'))['url'])"
    )
    done = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    return done.stdout.strip()


def _serves_and_runs_the_plugin(venv: Path, folder: Path, env: dict[str, str]) -> None:
    bin_dir = venv / "bin"
    folder.mkdir()
    port = free_port()
    server = subprocess.Popen(
        [str(bin_dir / "idv-mock"), "serve", "--port", str(port), "--seed-count", "3"],
        cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        r = _first_answer(f"http://127.0.0.1:{port}/v3/submission")
        assert r.status_code == 200 and len(r.json()["Items"]) == 3
    finally:
        server.terminate()
        server.wait(timeout=30)
    (folder / "test_app.py").write_text(PLUGIN_TEST)
    cmd = [str(bin_dir / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1 passed" in done.stdout
    # the default start ships in the wheel, under the key the installed code gives it
    cold = "import sys; from idv_mock import Service; Service(); print('faker' in sys.modules)"
    done = subprocess.run([str(bin_dir / "python"), "-c", cold], cwd=folder, env=env,
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
