"""The prebuilt start's key covers what decides the seeded bytes, and only that (issue 37).

Computed over a copy of the package and the schemas with one file edited at a time: an
edit of a seeding module, of a module one imports, of a data file beside one or of a
schema seeding reads gives another key (the shipped start is then not read, and
``make starts`` writes it again); an edit of the CLI, the API, the pages or another part
of the service keeps it. A seeding module that moves fails loudly, naming the list to
update, rather than dropping out of the key.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from idv_mock.backend import prebuilt
from idv_mock.ground import schemas

PACKAGE = Path(prebuilt.__file__).resolve().parents[1]

DECIDES = [
    "idv_mock/backend/seed.py",
    "idv_mock/backend/service.py",  # runs the seeding
    "idv_mock/backend/derive.py",
    "idv_mock/backend/packing.py",  # imported by store.py
    "idv_mock/fake/draws.py",  # imported by the factory
    "idv_mock/ground/compat.py",  # the factory's Faker listing and city order
    "idv_mock/ground/clock.py",
    "idv_mock/aml/watchlist.json",  # data beside aml/screening.py
    "schemas/project_options.json",  # the seeded project's options
    "schemas/defs.json",  # referenced by project.json
]
KEEPS = [
    "idv_mock/cli.py",
    "idv_mock/api/app.py",
    "idv_mock/backend/parts/liveform.py",
    "idv_mock/backend/parts/screening.py",
    "idv_mock/web/__init__.py",
    "schemas/api.json",
    "schemas/submission_fields.json",
]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the package and the schemas, as the key reads them."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "starts")
    shutil.copytree(PACKAGE, tmp_path / "idv_mock", ignore=ignore)
    shutil.copytree(schemas.schema_dir(), tmp_path / "schemas", ignore=ignore)
    return tmp_path


def _key(tree: Path) -> str:
    return prebuilt.digest_of(prebuilt.seeding_files(tree / "idv_mock", tree / "schemas"))


def _edited(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        path.write_text(text.rstrip() + "\n\n", encoding="utf-8")
    else:
        path.write_text(text + "\n# edited\n", encoding="utf-8")


def test_the_copy_gives_the_installed_key(tree: Path) -> None:
    installed = prebuilt.seeding_files(PACKAGE, Path(schemas.schema_dir()))
    assert _key(tree) == prebuilt.sources_digest() == prebuilt.digest_of(installed)
    names = {f.name for f in installed}
    assert {"seed.py", "factory.py", "store.py", "service.py", "defs.json"} <= names
    assert not names & {"cli.py", "app.py", "liveform.py", "api.json"}


@pytest.mark.parametrize("name", DECIDES)
def test_an_edit_of_what_decides_the_bytes_changes_the_key(tree: Path, name: str) -> None:
    before = _key(tree)
    _edited(tree / name)
    assert _key(tree) != before


@pytest.mark.parametrize("name", KEEPS)
def test_an_edit_elsewhere_keeps_the_key(tree: Path, name: str) -> None:
    before = _key(tree)
    _edited(tree / name)
    assert _key(tree) == before


def test_a_new_import_of_a_seeding_module_is_followed(tree: Path) -> None:
    seed = tree / "idv_mock/backend/seed.py"
    seed.write_text(
        seed.read_text(encoding="utf-8") + "\nfrom idv_mock import addresses\n", encoding="utf-8"
    )
    before = _key(tree)
    _edited(tree / "idv_mock/ground/addresses.py")
    assert _key(tree) != before


def test_a_moved_seeding_module_fails_loudly(tree: Path) -> None:
    (tree / "idv_mock/fake/draws.py").rename(tree / "idv_mock/fake/random_draws.py")
    with pytest.raises(prebuilt.SeedingModuleMissing, match=r"idv_mock\.fake\.draws .*SEEDING"):
        _key(tree)


def test_the_recorded_list_is_the_list_found() -> None:
    """The key reads which files to hash from ``starts/sources.txt`` (finding them costs a
    cold first use a hundred milliseconds); a stale list must fail here, not ship."""
    recorded = prebuilt.recorded_files()
    assert recorded is not None, "no starts/sources.txt: run `make starts`"
    assert recorded == prebuilt.found_files(), "starts/sources.txt is stale: run `make starts`"
    assert prebuilt.sources_digest() == prebuilt.digest_of(prebuilt.found_files())


def test_without_a_recorded_list_the_files_are_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prebuilt, "SOURCES", PACKAGE / "backend" / "starts" / "missing.txt")
    assert prebuilt.recorded_files() is None
