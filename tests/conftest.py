"""Shared fixtures for the tests of :mod:`lessons_code`."""

from __future__ import annotations

from collections.abc import Callable

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
