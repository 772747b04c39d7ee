"""The lock files, ``locks/NAME.txt`` (``nox -s lock``), against ``pyproject.toml``.

A lock is stale when a range in ``pyproject.toml`` no longer admits a pinned
version, or when a requirement has no pin: these tests then fail, naming
the lock and the requirement, and ``nox -s lock`` writes the locks anew.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations, product
from pathlib import Path

import pytest
from packaging.markers import Marker, default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

import book_tools

PYPROJECT = (book_tools.ROOT / "pyproject.toml").read_text(encoding="utf-8")
PROJECT = tomllib.loads(PYPROJECT)["project"]
LOCKED = book_tools.settings().locks
# Torch, and what its CUDA builds bring: every session installs torch==2.13.0
# on its own, before its lock.
NEVER_LOCKED = re.compile(r"torch|triton|nvidia-.+|cuda-.+")
# One pinned requirement of a lock: a normalized name, `==` and a version,
# and an environment marker where the resolution forks (uv's spelling).
PIN = re.compile(r"(?P<name>[a-z0-9][a-z0-9.-]*)==(?P<version>[^\s;]+)(?: ; (?P<marker>.+))?")


def _environments() -> Iterator[dict[str, str]]:
    """CPython from 3.11 to 3.14 on Linux, macOS and Windows, on x86-64 and ARM."""
    systems = {
        "linux": ("Linux", "posix", ("x86_64", "aarch64")),
        "darwin": ("Darwin", "posix", ("x86_64", "arm64")),
        "win32": ("Windows", "nt", ("AMD64", "ARM64")),
    }
    pythons = ["3.11.0", "3.11.9", "3.12.8", "3.13.1", "3.14.0"]
    for python, (platform, (system, os_name, machines)) in product(pythons, systems.items()):
        for machine in machines:
            environment = dict(default_environment())
            environment.update(
                implementation_name="cpython",
                implementation_version=python,
                platform_python_implementation="CPython",
                python_full_version=python,
                python_version=".".join(python.split(".")[:2]),
                sys_platform=platform,
                platform_system=system,
                os_name=os_name,
                platform_machine=machine,
            )
            yield environment


ENVIRONMENTS = list(_environments())


@dataclass(frozen=True)
class Pin:
    name: str
    version: Version
    marker: Marker | None
    where: str  # the lock file and line, for the failure messages

    def applies(self, environment: dict[str, str]) -> bool:
        return self.marker is None or self.marker.evaluate(environment)


def read_lock(path: Path) -> dict[str, list[Pin]]:
    """The pins of the lock file at ``path``, by name; a line that is no pin fails the test."""
    pins: dict[str, list[Pin]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        where = f"{path.name}:{number}"
        assert "://" not in line, f"{where} names a host: {line!r}"
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = PIN.fullmatch(line)
        assert match, f"{where} is not `name==version [; marker]`: {line!r}"
        name, version, marker = match.group("name", "version", "marker")
        assert canonicalize_name(name) == name, f"{where}: {name!r} is not a normalized name"
        pin = Pin(name, Version(version), Marker(marker) if marker else None, where)
        pins.setdefault(name, []).append(pin)
    return pins


def requirements(lock: str) -> list[Requirement]:
    """What ``lock`` must pin: the project's dependencies and its extras, torch aside."""
    extras = PROJECT["optional-dependencies"]
    wanted = [*PROJECT["dependencies"], *(r for extra in LOCKED[lock] for r in extras[extra])]
    found = [Requirement(text) for text in wanted]
    return [r for r in found if canonicalize_name(r.name) != book_tools.UNLOCKED]


def chosen(pins: dict[str, list[Pin]], name: str, environment: dict[str, str]) -> list[Pin]:
    """The pins of ``name`` that ``environment`` installs (one, in a sound lock)."""
    return [pin for pin in pins.get(name, []) if pin.applies(environment)]


@pytest.fixture(scope="module", params=sorted(LOCKED))
def lock(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_there_is_a_lock_file_for_each_lock_of_the_settings_and_no_other() -> None:
    assert {path.stem for path in book_tools.LOCKS.glob("*.txt")} == set(LOCKED)
    assert LOCKED, "[tool.book.locks] names no lock"


def test_every_extra_a_lock_names_is_one_of_the_project() -> None:
    extras = set(PROJECT["optional-dependencies"])
    for lock, named in LOCKED.items():
        assert set(named) <= extras, f"lock {lock!r} names an extra pyproject.toml lacks"


def test_a_lock_pins_every_requirement_within_its_range(lock: str) -> None:
    pins = read_lock(book_tools.LOCKS / f"{lock}.txt")
    for requirement in requirements(lock):
        name = canonicalize_name(requirement.name)
        mine = pins.get(name, [])
        assert mine, f"locks/{lock}.txt has no pin of {requirement} (run `nox -s lock`)"
        for pin in mine:
            assert requirement.specifier.contains(pin.version, prereleases=True), (
                f"{pin.where}: {name}=={pin.version} is outside {requirement} "
                "of pyproject.toml (run `nox -s lock`)"
            )


def test_a_lock_pins_one_version_of_a_package_for_every_platform_and_python(lock: str) -> None:
    pins = read_lock(book_tools.LOCKS / f"{lock}.txt")
    wanted = requirements(lock)
    for environment in ENVIRONMENTS:
        at = f"Python {environment['python_full_version']} on {environment['sys_platform']}"
        at += f" {environment['platform_machine']}"
        for name in pins:
            assert len(chosen(pins, name, environment)) <= 1, f"locks/{lock}.txt: {name} twice"
        for requirement in wanted:
            if requirement.marker is None or requirement.marker.evaluate(environment):
                found = chosen(pins, canonicalize_name(requirement.name), environment)
                assert len(found) == 1, f"locks/{lock}.txt: no {requirement} for {at}"


def test_a_lock_leaves_torch_and_its_cuda_packages_out(lock: str) -> None:
    pins = read_lock(book_tools.LOCKS / f"{lock}.txt")
    assert [name for name in pins if NEVER_LOCKED.fullmatch(name)] == []


def test_the_locks_pin_the_same_version_of_a_package_they_share() -> None:
    # nox -s lock resolves every lock within one resolution: the site that
    # `nox -s docs` builds is built by the same Sphinx as in `nox -s tests`.
    locks = {lock: read_lock(book_tools.LOCKS / f"{lock}.txt") for lock in LOCKED}
    for (first, one), (second, other) in combinations(sorted(locks.items()), 2):
        for name in one.keys() & other.keys():
            for environment in ENVIRONMENTS:
                a = [pin.version for pin in chosen(one, name, environment)]
                b = [pin.version for pin in chosen(other, name, environment)]
                assert not (a and b) or a == b, f"{name}: {a} in {first}, {b} in {second}"


def test_the_lock_input_is_pyproject_without_torch(lock: str) -> None:
    written = book_tools.lock_input(lock)
    assert [str(Requirement(text)) for text in written] == list(
        dict.fromkeys(str(r) for r in requirements(lock))
    )


def test_the_lock_input_names_an_unknown_lock_in_its_error() -> None:
    with pytest.raises(ValueError, match=r"name: no lock 'nightly'"):
        book_tools.lock_input("nightly")


def test_requirement_name_is_the_normalized_name() -> None:
    assert book_tools.requirement_name("Sphinx_Book.Theme >=1.1") == "sphinx-book-theme"
    with pytest.raises(ValueError, match="requirement: no package name"):
        book_tools.requirement_name(">=1")
