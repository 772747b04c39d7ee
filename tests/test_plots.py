"""Tests for :mod:`lessons_code.plots`."""

from __future__ import annotations

from collections.abc import Iterator

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from lessons_code.plots import heatmap, legend_covers_data


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
