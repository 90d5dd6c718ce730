"""The examples of other languages (examples/node, examples/java) against ``idv-mock serve``
as a user runs it, when the language is installed (skipped, with the reason, otherwise)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ServeProcess

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NODE_SCRIPT = EXAMPLES / "node" / "client.mjs"
JAVA_SOURCE = EXAMPLES / "java" / "IdvMockExample.java"
NODE, JAVAC, JAVA = shutil.which("node"), shutil.which("javac"), shutil.which("java")


def test_the_node_example_needs_no_npm_package() -> None:
    assert not (EXAMPLES / "node" / "package.json").exists()
    imported = re.findall(r"^import .* from \"([^\"]+)\";", NODE_SCRIPT.read_text(), re.M)
    assert imported and all(name.startswith("node:") for name in imported)


@pytest.mark.skipif(NODE is None, reason="node is not installed (apt-get install nodejs)")
def test_the_node_example_pages_patches_and_decrypts() -> None:
    assert NODE is not None
    with ServeProcess() as server:
        env = {**os.environ, "IDV_MOCK_BASE_URL": server.base + "/v3"}
        done = subprocess.run(
            [NODE, str(NODE_SCRIPT)], env=env, capture_output=True, text=True, timeout=120
        )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"page 1: 20 submissions, nextpageKey [0-9a-f-]{36}", lines[0])
    assert lines[1:] == [
        "all pages: 3 pages, 50 submissions",
        "PATCH: success to edit.",
        "memo now: checked from node",
        "secure GET: isEncrypted true, decrypted 1 item, submission_id matches",
        "secure PATCH: success to edit.",
        "done",
    ]


@pytest.mark.skipif(
    JAVAC is None or JAVA is None, reason="a JDK is not installed (apt-get install default-jdk)"
)
def test_the_java_example_compiles_and_runs(tmp_path: Path) -> None:
    assert JAVAC is not None and JAVA is not None
    built = subprocess.run(
        [JAVAC, "-d", str(tmp_path), str(JAVA_SOURCE)], capture_output=True, text=True, timeout=300
    )
    assert built.returncode == 0, built.stderr
    with ServeProcess() as server:
        done = subprocess.run(
            [JAVA, "-cp", str(tmp_path), "IdvMockExample", server.base + "/v3"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"page 1: nextpageKey [0-9a-f-]{36}", lines[0])
    assert lines[1].startswith("page 2: starts with ")
    assert lines[2:] == [
        "PATCH: success to edit.",
        "secure GET: decrypted, submission_id matches",
        "done",
    ]
