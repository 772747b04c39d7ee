"""Shared fixtures for the tests of :mod:`lessons_code`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from hypothesis import settings
from torch import nn

from book_tools import THREADS

# Sphinx's fixtures (make_app, app, rootdir, ...) for the extensions' tests in
# tests/ext; pytest takes a plugin only from the top conftest of the run.
pytest_plugins = ["sphinx.testing.fixtures"]

# The property tests draw the same examples on every run (derandomized, no
# example database, no deadline): a test passes or fails by the code alone,
# never by the draw, the machine's load or an earlier run's saved failure.
# `pytest --hypothesis-profile=explore` draws new examples, to look for bugs.
settings.register_profile("book", derandomize=True, database=None, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile("book")

# The tests use tiny tensors, for which intra-op threads only add synchronisation;
# on a busy machine (CI runners, a docs build next door) they slow PyTorch down
# by orders of magnitude. The book's one thread (pyproject's [tool.book]) keeps
# the suite's runtime predictable, also when pytest is run without nox.
torch.set_num_threads(THREADS)


SITE = Path(__file__).resolve().parent / "site"
#: Site test files that take longest once the site is built (the readers' runs,
#: every page visited): under pytest-xdist they start first, so that the other
#: worker's files fill the time beside them instead of following them.
SLOWEST_SITE_FILES = ("test_downloads.py", "test_site_pages.py")


@pytest.hookimpl(trylast=True)  # after -m has deselected what it deselects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the tests for two workers, and keep ``serial`` tests out of them.

    The package's and the extensions' tests first, which need no site: under
    pytest-xdist (one test file per worker at a time, in this order) one
    worker builds the site while the other runs them. Then the site's tests,
    the slowest files first. In one process the order changes nothing: every
    test stands alone.

    A ``serial`` test rewrites or rebuilds the site the other site tests
    read; an xdist worker refuses it (run it in one process, as
    ``nox -s tests`` does after its parallel stage).
    """

    def rank(item: pytest.Item) -> tuple[bool, bool]:
        in_site = SITE in item.path.parents
        return in_site, in_site and item.path.name not in SLOWEST_SITE_FILES

    items.sort(key=rank)  # stable: the collection order within each rank
    if not hasattr(config, "workerinput"):  # not an xdist worker
        return
    serial = [item.nodeid for item in items if item.get_closest_marker("serial")]
    if serial:
        raise pytest.UsageError(
            f"{len(serial)} test(s) marked serial, e.g. {serial[0]}, cannot run under -n: "
            'add -m "not serial" and run them in one process afterwards (nox -s tests does)'
        )


@pytest.fixture(params=[torch.float32, torch.float64], ids=["float32", "float64"])
def dtype(request: pytest.FixtureRequest) -> torch.dtype:
    """Every comparison with PyTorch runs in single and in double precision."""
    return request.param


def _randomize(module: nn.Module, seed: int = 0) -> nn.Module:
    """Redraw every parameter of ``module`` in place, each layer differently.

    PyTorch initialises biases to zero, LayerNorms to the identity and the
    layers of a ``TransformerEncoder`` as copies of one another; a copying bug
    could hide behind any of those, so the tests compare modules whose every
    parameter is a distinct random number.
    """
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(0.3 * torch.randn(p.shape, generator=gen, dtype=p.dtype) + 0.1)
    return module


@pytest.fixture
def randomize() -> Callable[..., nn.Module]:
    """The function ``randomize(module, seed=0)``, which redraws every parameter in place."""
    return _randomize
