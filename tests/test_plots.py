"""Tests for :mod:`lessons_code.plots`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from lessons_code.plots import heatmap, legend_covers_data, weights_heatmap

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def ax() -> Iterator[plt.Axes]:
    fig, ax = plt.subplots(figsize=(6, 4))
    yield ax
    plt.close(fig)


def visible_ticks(ticks: np.ndarray, limits: tuple[float, float]) -> np.ndarray:
    low, high = sorted(limits)
    return ticks[(ticks >= low) & (ticks <= high)]


@pytest.mark.parametrize("shape", [(20, 16), (50, 32), (5, 5), (2, 3), (1, 1), (8, 8), (6, 40)])
def test_heatmap_ticks_are_whole_indices(ax: plt.Axes, shape: tuple[int, int]) -> None:
    rows, cols = shape
    heatmap(ax, np.zeros(shape), title="t", xlabel="column", ylabel="row")
    ax.figure.canvas.draw()
    for ticks, limits, size in (
        (ax.get_xticks(), ax.get_xlim(), cols),
        (ax.get_yticks(), ax.get_ylim(), rows),
    ):
        shown = visible_ticks(np.asarray(ticks), limits)
        assert len(shown) >= 1
        np.testing.assert_array_equal(shown, np.round(shown))
        assert shown.min() >= 0
        assert shown.max() <= size - 1


def test_heatmap_ticks_label_integers(ax: plt.Axes) -> None:
    heatmap(ax, np.zeros((20, 16)), title="t", xlabel="dimension", ylabel="position")
    ax.figure.canvas.draw()
    labels = [text.get_text().replace("\N{MINUS SIGN}", "-") for text in ax.get_yticklabels()]
    assert all(label.lstrip("-").isdigit() for label in labels if label)


def test_no_legend_covers_nothing(ax: plt.Axes) -> None:
    ax.plot([0, 1], [0, 1])
    assert legend_covers_data(ax) is False


def test_legend_over_line_points(ax: plt.Axes) -> None:
    ax.plot([0, 1], [1, 1], label="flat at the top")
    ax.set_ylim(0, 1.05)
    ax.legend(loc="upper center")
    assert legend_covers_data(ax)


def test_legend_over_segment_between_points(ax: plt.Axes) -> None:
    # Only two points, far from the legend; the segment between them passes under it.
    ax.plot([0, 10], [0.9, 0.9], label="segment")
    ax.set_xlim(-1, 11)
    ax.set_ylim(0, 1)
    ax.legend(loc="upper center")
    assert legend_covers_data(ax)


def test_legend_over_bar(ax: plt.Axes) -> None:
    ax.bar(np.arange(5), [0.2, 0.2, 0.2, 0.2, 1.0], label="accuracy")
    ax.legend(loc="upper right")
    assert legend_covers_data(ax)


def test_legend_over_scatter(ax: plt.Axes) -> None:
    ax.scatter([0.0, 0.95], [0.0, 0.95], label="points")
    ax.set_xlim(-0.05, 1.0)
    ax.set_ylim(-0.05, 1.0)
    ax.legend(loc="upper right")
    assert legend_covers_data(ax)


def test_legend_in_empty_corner(ax: plt.Axes) -> None:
    ax.plot([0, 1], [0, 0.3], label="low line")
    ax.set_ylim(0, 1)
    ax.legend(loc="upper left")
    assert legend_covers_data(ax) is False


def test_legend_outside_axes(ax: plt.Axes) -> None:
    ax.bar(np.arange(5), np.ones(5), label="full")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    assert legend_covers_data(ax) is False


def test_legend_below_axes(ax: plt.Axes) -> None:
    ax.bar(np.arange(5), np.ones(5), label="full")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncols=2)
    assert legend_covers_data(ax) is False


def test_hidden_line_is_not_data(ax: plt.Axes) -> None:
    (line,) = ax.plot([0, 1], [1, 1], label="hidden")
    ax.plot([0, 1], [0, 0], label="shown")
    ax.set_ylim(0, 1.05)
    line.set_visible(False)
    ax.legend(loc="upper center")
    assert legend_covers_data(ax) is False


def test_legend_in_a_sub_figure() -> None:
    # The axes' figure is then a SubFigure, which cannot be laid out itself.
    fig = plt.figure()
    try:
        ax = fig.subfigures(1, 2)[1].subplots()
        ax.plot([0, 1], [0, 1], label="rising")
        ax.legend(loc="upper left")
        assert legend_covers_data(ax) is False
        ax.legend(loc="lower right")
        assert legend_covers_data(ax) is False
        ax.legend(loc="center")
        assert legend_covers_data(ax) is True
    finally:
        plt.close(fig)


def test_rejects_non_axes() -> None:
    with pytest.raises(TypeError, match="ax"):
        legend_covers_data("not an axes")  # type: ignore[arg-type]


# -- Attention weights: one fixed colour scale ---------------------------------


@pytest.mark.parametrize(
    "weights",
    [
        np.array([[0.03, 0.97], [0.71, 0.29]]),  # a wide range
        np.array([[0.45, 0.55], [0.5, 0.5]]),  # a narrow one
        np.eye(3),
        np.full((4, 4), 0.25),  # all equal: a data-derived scale has no width
    ],
)
def test_weights_heatmap_scale_is_zero_to_one(ax: plt.Axes, weights: np.ndarray) -> None:
    image = weights_heatmap(ax, weights, title="t", xlabel="key", ylabel="query")
    assert image.get_clim() == (0.0, 1.0)


def test_same_weight_same_colour_in_two_maps() -> None:
    """0.576 is one colour whether the matrix spans 0.03-0.71 or 0-1."""
    fig, (left, right) = plt.subplots(1, 2)
    try:
        narrow = np.array([[0.03, 0.576], [0.71, 0.2]])
        wide = np.array([[0.0, 0.576], [1.0, 0.2]])
        colours = [
            weights_heatmap(ax, m, title="t", xlabel="key", ylabel="query").to_rgba(0.576)
            for ax, m in ((left, narrow), (right, wide))
        ]
        assert colours[0] == colours[1]
    finally:
        plt.close(fig)


def test_weights_heatmap_labels_its_colour_bar(ax: plt.Axes) -> None:
    image = weights_heatmap(ax, np.eye(2), title="t", xlabel="key", ylabel="query")
    assert image.colorbar is not None
    assert image.colorbar.ax.get_ylabel() == "attention weight"


@pytest.mark.parametrize("bad", [np.array([[1.5, -0.5]]), np.array([[np.nan, 1.0]])])
def test_weights_heatmap_rejects_non_weights(ax: plt.Axes, bad: np.ndarray) -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        weights_heatmap(ax, bad, title="t", xlabel="key", ylabel="query")


def _heatmap_calls(text: str) -> list[tuple[str, str]]:
    """(function name, argument text) of every heatmap call in ``text``."""
    calls = []
    for match in re.finditer(r"\b(weights_heatmap|heatmap)\(", text):
        depth, end = 1, match.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        calls.append((match[1], text[match.end() : end - 1]))
    return calls


def _book_sources() -> list[Path]:
    return sorted((ROOT / "docs").glob("*.md")) + sorted((ROOT / "gallery").glob("*.py"))


def test_finds_a_planted_weights_heatmap() -> None:
    planted = 'heatmap(\n    ax,\n    weights,\n    title="w",\n    colorbar_label="weight",\n)'
    assert _heatmap_calls(planted) == [("heatmap", planted[len("heatmap(") : -1])]
    assert _data_dependent_weights(planted) == [planted[len("heatmap(") : -1]]


def _data_dependent_weights(text: str) -> list[str]:
    """Plain heatmap calls of ``text`` that draw attention weights."""
    return [
        arguments
        for name, arguments in _heatmap_calls(text)
        if name == "heatmap" and re.search(r"weight|attention", arguments, re.IGNORECASE)
    ]


def test_pages_draw_attention_weights_on_the_fixed_scale() -> None:
    """Every heatmap of attention weights in the book is a weights_heatmap.

    A plain ``heatmap`` takes its colour scale from the data unless told
    otherwise, so the same weight could get two colours on one page; a
    heatmap whose arguments name weights or attention must be
    ``weights_heatmap``, and every other heatmap states its scale.
    """
    sources = _book_sources()
    assert len(sources) > 10
    found = 0
    for path in sources:
        text = path.read_text(encoding="utf-8")
        assert _data_dependent_weights(text) == [], path.name
        for name, arguments in _heatmap_calls(text):
            found += name == "weights_heatmap"
            if name == "heatmap":
                assert "symmetric=True" in arguments or (
                    "vmin=" in arguments and "vmax=" in arguments
                ), f"{path.name}: a heatmap without a stated colour scale"
    assert found >= 9  # the attention maps of five pages and three examples
