"""Small plotting helpers shared by the lesson pages and the gallery.

Matplotlib is not a dependency of the algorithms, so it is imported only when a
helper is called (install it with ``pip install "lessons-code[examples]"``).
Every helper draws on an :class:`matplotlib.axes.Axes` it is given and labels
what it draws, so the figure's title and axis labels can serve as alt text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.image import AxesImage

__all__ = ["heatmap", "legend_covers_data", "weights_heatmap"]


def heatmap(
    ax: Axes,
    data: np.ndarray | torch.Tensor,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    cmap: str = "viridis",
    symmetric: bool = False,
    colorbar_label: str | None = None,
    annotate: bool = False,
    fmt: str = "{:.2f}",
    vmin: float | None = None,
    vmax: float | None = None,
    colorbar: bool = True,
) -> AxesImage:
    """Draw a matrix as a labelled heatmap with a colour bar.

    Rows and columns are indices, so both axes are ticked at whole numbers.

    Parameters
    ----------
    ax
        The axes to draw on.
    data
        A 2-D array or tensor; row ``i`` is drawn as the ``i``-th row from the top.
    title, xlabel, ylabel
        Text for the axes; none may be empty, since they describe the figure.
    cmap
        A Matplotlib colormap name (use a diverging one such as ``"RdBu"``
        together with ``symmetric=True`` for signed data).
    symmetric
        Centre the colour scale on zero, from ``-m`` to ``m`` where ``m`` is the
        largest absolute value.
    colorbar_label
        Label of the colour bar, if any.
    annotate
        Write each value into its cell (for small matrices).
    fmt
        Format of the annotations.
    vmin, vmax
        Ends of the colour scale (default: the smallest and largest value).
        Give the same ends to every panel of a figure whose panels are
        compared, so that one colour means one value in all of them.
        Attention weights have a helper with fixed ends,
        :func:`weights_heatmap`.
    colorbar
        Draw a colour bar next to the axes; pass ``False`` for the panels of
        a figure that shares one colour bar (``fig.colorbar(image, ax=axes)``).

    Returns
    -------
    matplotlib.image.AxesImage
        The image that was drawn.

    Shape
    -----
    ``data``: ``(R, C)``, ``R`` rows and ``C`` columns.

    Raises
    ------
    ValueError
        If ``data`` is not 2-D, a label is empty, ``vmin`` or ``vmax`` is
        given together with ``symmetric``, or ``vmin > vmax``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> image = heatmap(ax, np.eye(3), title="Identity", xlabel="column", ylabel="row")
    >>> image.get_array().shape
    (3, 3)
    >>> plt.close(fig)

    Two panels on one colour scale, with one colour bar:

    >>> fig, axes = plt.subplots(1, 2)
    >>> for ax, m in zip(axes, (np.eye(3), 0.5 * np.eye(3))):
    ...     image = heatmap(ax, m, title="panel", xlabel="column", ylabel="row",
    ...                     vmin=0.0, vmax=1.0, colorbar=False)
    >>> bar = fig.colorbar(image, ax=axes)
    >>> image.get_clim()
    (0.0, 1.0)
    >>> plt.close(fig)
    """
    from matplotlib.ticker import MaxNLocator

    if isinstance(data, torch.Tensor):
        data = data.detach().cpu().numpy()
    matrix = np.asarray(data, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"data must be 2-D, got shape {matrix.shape}")
    for name, text in (
        ("title", title),
        ("xlabel", xlabel),
        ("ylabel", ylabel),
    ):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(
                f"{name} must be a non-empty string, got {text!r}"
            )

    if symmetric and (vmin is not None or vmax is not None):
        raise ValueError(
            "vmin and vmax must not be given together with symmetric=True"
        )
    if vmin is not None and vmax is not None and vmin > vmax:
        raise ValueError(
            f"vmin must not exceed vmax, got vmin={vmin} and vmax={vmax}"
        )

    options: dict[str, Any] = {
        "cmap": cmap,
        "aspect": "auto",
        "interpolation": "nearest",
    }
    if symmetric:
        limit = float(np.abs(matrix).max()) or 1.0
        options.update(vmin=-limit, vmax=limit)
    else:
        options.update(vmin=vmin, vmax=vmax)
    image = ax.imshow(matrix, **options)
    # Rows and columns are indices: tick them at whole numbers only.
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax)
        if colorbar_label:
            bar.set_label(colorbar_label)
    if annotate:
        # the colour of every cell: (rows, cols, 4), RGBA
        colours = np.asarray(image.cmap(image.norm(matrix)))
        for (row, col), value in np.ndenumerate(matrix):
            red, green, blue, _ = colours[row, col]
            # perceived brightness: a dark cell gets white text
            luminance = 0.299 * red + 0.587 * green + 0.114 * blue
            colour = "black" if luminance > 0.5 else "white"
            ax.text(
                col,
                row,
                fmt.format(value),
                ha="center",
                va="center",
                color=colour,
            )
    return image


def weights_heatmap(
    ax: Axes,
    weights: np.ndarray | torch.Tensor,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    annotate: bool = False,
    fmt: str = "{:.2f}",
    colorbar: bool = True,
) -> AxesImage:
    """Draw attention weights as a heatmap on the fixed colour scale 0 to 1.

    Attention weights are shares of one, so every weights heatmap of the book
    uses the same scale: one colour means one weight on every figure, whatever
    the largest and smallest weight of the matrix drawn (a scale taken from
    the data would give the same weight different colours in two figures).

    Parameters
    ----------
    ax
        The axes to draw on.
    weights
        A 2-D array or tensor of weights between 0 and 1; row ``i`` holds the
        weights query ``i`` gives to the keys.
    title, xlabel, ylabel
        Text for the axes; none may be empty.
    annotate
        Write each weight into its cell (for small matrices).
    fmt
        Format of the annotations.
    colorbar
        Draw a colour bar labelled "attention weight" next to the axes; pass
        ``False`` for the panels of a figure that shares one colour bar.

    Returns
    -------
    matplotlib.image.AxesImage
        The image that was drawn; its colour limits are ``(0.0, 1.0)``.

    Shape
    -----
    ``weights``: ``(T_q, T_k)``, one row per query and one column per key.

    Raises
    ------
    ValueError
        If ``weights`` is not 2-D, a label is empty, or a weight lies outside
        ``[0, 1]`` (beyond float rounding).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> weights = np.array([[0.2, 0.8], [0.5, 0.5]])
    >>> image = weights_heatmap(ax, weights, title="w", xlabel="key", ylabel="query")
    >>> image.get_clim()
    (0.0, 1.0)
    >>> plt.close(fig)
    """
    if isinstance(weights, torch.Tensor):
        weights = weights.detach().cpu().numpy()
    matrix = np.asarray(weights, dtype=np.float64)
    if (
        matrix.ndim == 2
        and matrix.size
        and (
            not np.isfinite(matrix).all()
            or matrix.min() < -1e-6
            or matrix.max() > 1 + 1e-6
        )
    ):
        raise ValueError(
            "weights must lie between 0 and 1, got values from "
            f"{matrix.min()} to {matrix.max()}"
        )
    return heatmap(
        ax,
        matrix,
        title=title,
        xlabel=xlabel,
        ylabel=ylabel,
        colorbar_label="attention weight",
        annotate=annotate,
        fmt=fmt,
        vmin=0.0,
        vmax=1.0,
        colorbar=colorbar,
    )


def legend_covers_data(ax: Axes) -> bool:
    """Whether the legend of ``ax`` is drawn over any of its data.

    The data are the points of every line (sampled along each segment, so a
    line passing under the legend counts), every bar or other patch, and the
    points and outlines of every collection (scatter points, error bars,
    shaded bands). A legend placed outside the axes covers nothing.

    Parameters
    ----------
    ax
        Axes whose legend is checked; an axes without a legend covers nothing.

    Returns
    -------
    bool
        ``True`` if the legend's box overlaps a data point, a line or a patch.

    Raises
    ------
    TypeError
        If ``ax`` is not a Matplotlib axes.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> _ = ax.plot([0, 1], [0, 1], label="rising")
    >>> _ = ax.legend(loc="upper right")
    >>> legend_covers_data(ax)
    True
    >>> _ = ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    >>> legend_covers_data(ax)
    False
    >>> plt.close(fig)
    """
    from matplotlib.axes import Axes as MplAxes
    from matplotlib.figure import Figure

    if not isinstance(ax, MplAxes):
        raise TypeError(
            f"ax must be a matplotlib Axes, got {type(ax).__name__}"
        )
    legend = ax.get_legend()
    if legend is None:
        return False
    figure = ax.figure
    if not isinstance(figure, Figure):  # a sub-figure: lay out its root
        figure = figure.figure
    figure.draw_without_rendering()  # lay the figure out as it will be saved
    # Measured with the figure's own renderer, as saving it would.
    box = legend.get_window_extent()

    def any_inside(points: np.ndarray) -> bool:
        points = points[np.isfinite(points).all(axis=1)]
        inside = (
            (points[:, 0] >= box.x0)
            & (points[:, 0] <= box.x1)
            & (points[:, 1] >= box.y0)
            & (points[:, 1] <= box.y1)
        )
        return bool(inside.any())

    for line in ax.get_lines():
        if not line.get_visible():
            continue
        xy = line.get_transform().transform(
            np.asarray(line.get_xydata(), dtype=float)
        )
        if line.get_linestyle() not in ("None", "", " ") and len(xy) > 1:
            steps = np.linspace(0.0, 1.0, 50)[:, None, None]
            xy = (xy[:-1] + steps * (xy[1:] - xy[:-1])).reshape(-1, 2)
        if any_inside(xy):
            return True
    for patch in ax.patches:
        extent = patch.get_window_extent()
        if patch.get_visible() and extent.overlaps(box):
            return True
    for collection in ax.collections:
        if not collection.get_visible():
            continue
        offsets = collection.get_offset_transform().transform(
            collection.get_offsets()
        )
        if any_inside(np.asarray(offsets, dtype=float)):
            return True
        for path in collection.get_paths():
            vertices = collection.get_transform().transform(path.vertices)
            if len(vertices) and any_inside(
                np.asarray(vertices, dtype=float)
            ):
                return True
    return False
