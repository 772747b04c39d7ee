"""book_figures: figures a phone can read, saved as small palette PNGs.

The quantiser's tests moved here unchanged from tests/site/test_figures.py;
the checks every figure of the book passes (width, text size, legend) are
tried on figures made to break them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
import book_figures
import matplotlib.pyplot as plt

#: Largest and mean change of a channel (0-255) inside a colour bar or heatmap
#: (a bar of 2x pixels holds some 450 colours: neighbours merge, by a few levels).
MAX_SCALE_ERROR = 16
MEAN_SCALE_ERROR = 2.0


@pytest.fixture(autouse=True)
def _book_settings() -> Iterator[None]:
    """The book's figure settings, and Matplotlib's own again after the test."""
    with matplotlib.rc_context():
        book_figures.apply()
        yield


def test_a_readable_figure_passes() -> None:
    fig, ax = plt.subplots(figsize=(book_figures.MAX_WIDTH_IN, 3))
    ax.plot([0, 1], [0, 1], label="rising")
    ax.legend(loc="upper left")
    try:
        book_figures.check_figure(fig)
    finally:
        plt.close(fig)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("wide", r"figure 'Scores' is 7\.00 in wide; at most \d\.\d\d in"),
        ("small", r"figure 'Scores' has text smaller than 10 pt: 'a note' \(6 pt\)"),
        ("legend", r"the legend of axes 'Scores' covers data"),
    ],
)
def test_a_figure_a_phone_cannot_read_is_refused(change: str, message: str) -> None:
    fig, ax = plt.subplots(figsize=(7 if change == "wide" else 4, 3))
    ax.set_title("Scores")
    ax.plot([0, 1], [0, 1], label="rising")
    ax.legend(loc="center" if change == "legend" else "upper left")
    if change == "small":
        ax.text(0.8, 0.1, "a note", fontsize=6)
    try:
        with pytest.raises(ValueError, match=message):
            book_figures.check_figure(fig)
    finally:
        plt.close(fig)


def test_quantised_colour_scale_stays_smooth() -> None:
    """A heatmap, its colour bar, and crossing lines: no bands or noise, white kept."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from PIL import Image

    book_figures.apply()
    fig, (heat, lines) = plt.subplots(1, 2, figsize=(7, 3.5))
    rng = np.random.default_rng(0)
    bar = fig.colorbar(heat.imshow(rng.uniform(size=(12, 12)), cmap="viridis"), ax=heat)
    for seed in range(5):
        lines.plot(rng.normal(size=200).cumsum(), label=f"seed {seed}")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches=None)  # the image is the whole figure
    data = buffer.getvalue()
    quantised = book_figures.palette_png(data)
    assert quantised == book_figures.palette_png(data), "quantising is not deterministic"
    assert len(quantised) < len(data) / 2
    with Image.open(io.BytesIO(data)) as image:
        before = np.asarray(image.convert("RGB"), dtype=int)
    with Image.open(io.BytesIO(quantised)) as image:
        assert image.mode == "P"
        after = np.asarray(image.convert("RGB"), dtype=int)
    error = np.abs(before - after).max(axis=2)
    height, width = error.shape
    for name, axes in (("colour bar", bar.ax), ("heatmap", heat)):
        box = axes.get_position()  # figure fraction, y up; 3 px in from the frame
        inside = error[
            int((1 - box.y1) * height) + 3 : int((1 - box.y0) * height) - 3,
            int(box.x0 * width) + 3 : int(box.x1 * width) - 3,
        ]
        assert inside.max() <= MAX_SCALE_ERROR, f"{name}: a channel moved by {inside.max()}"
        assert inside.mean() <= MEAN_SCALE_ERROR, f"{name}: mean error {inside.mean():.2f}"
    plt.close(fig)
    assert (after[before.sum(axis=2) == 3 * 255] == 255).all(), "white is no longer white"


def test_quantise_keeps_few_colours_and_transparency_exactly() -> None:
    import numpy as np
    from PIL import Image

    pixels = np.zeros((40, 60, 4), dtype=np.uint8)
    pixels[10:30, 10:50] = (255, 255, 255, 255)  # an opaque figure on a clear border
    pixels[15:25, 15:45, :3] = np.arange(30, dtype=np.uint8)[None, :, None] * 8
    image = Image.fromarray(pixels, "RGBA")
    indexed = book_figures.quantise(image)
    assert indexed.mode == "P"
    back = np.asarray(indexed.convert("RGBA"))
    opaque = pixels[..., 3] == 255
    assert (back[..., 3] == pixels[..., 3]).all(), "transparency changed"
    assert (back[opaque] == pixels[opaque]).all(), "a colour changed (there are few)"
    pixels[0, 0, 3] = 128
    with pytest.raises(ValueError, match="partly transparent"):
        book_figures.quantise(Image.fromarray(pixels, "RGBA"))


def test_alt_text_names_panels_axes_scales_and_series() -> None:
    """The gallery's alt text: what each panel draws, of what against what, and the series."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(5, 6), sharex=True, layout="constrained")
    top.plot(range(10), [2**i for i in range(10)], color="C0")
    top.set_yscale("log")
    top.set_ylabel("scores per step")  # the x label is the shared one below
    top.set_title("Scores")
    bottom.plot(range(10), range(10), label="without cache")
    bottom.plot(range(10), [1] * 10, label="with cache")
    bottom.axhline(0.5, color="gray")  # a reference line is not a series
    bottom.set_ylabel("time (ms)")
    bottom.set_xlabel("tokens so far")
    fig.legend(loc="outside lower center", ncols=2)
    assert book_figures.describe_figure(fig) == (
        "2 panels. Panel 1, Scores: a line of scores per step on a log scale against "
        "tokens so far. Panel 2, 2 lines of time (ms) against tokens so far, labelled "
        "without cache, with cache."
    )
    plt.close(fig)


def test_alt_text_of_a_colour_map_names_its_colour_bar() -> None:
    fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
    image = ax.imshow([[0.1, 0.9], [0.4, 0.6]])
    fig.colorbar(image, ax=ax, label="weight")
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    ax.set_title("Attention $\\alpha$")
    fig.suptitle("Self-attention")
    assert book_figures.describe_figure(fig) == (
        "Self-attention. Attention \\alpha: a colour map of query against key. Colour bar: weight."
    )
    plt.close(fig)


def test_alt_text_names_series_every_panel_shares_once() -> None:
    fig, axes = plt.subplots(2, 1, figsize=(4, 5), sharey=True, layout="constrained")
    for ax in axes:
        for seed in range(2):
            ax.plot(range(5), [seed] * 5, label=f"seed {seed}")
        ax.set_xlabel("step")
    axes[0].set_ylabel("loss")
    assert book_figures.describe_figure(fig) == (
        "2 panels. Panel 1, 2 lines of loss against step. "
        "Panel 2, 2 lines of loss against step. Series: seed 0, seed 1."
    )
    plt.close(fig)


def test_the_gallery_scraper_shows_each_figure_at_half_its_width(tmp_path: Path) -> None:
    from book.figures import scraper
    from PIL import Image

    images = tmp_path / "auto_examples" / "images"
    images.mkdir(parents=True)
    paths = iter(images / f"sphx_glr_plot_x_{n:03}.png" for n in range(1, 9))
    for title in ("Scores", "Weights"):
        _, ax = plt.subplots(figsize=(4, 3))
        ax.plot([0, 1], [0, 1])
        ax.set_title(title)
    rst = scraper(None, {"image_path_iterator": paths}, {"src_dir": str(tmp_path)})
    assert plt.get_fignums() == []  # every figure saved and closed
    with Image.open(images / "sphx_glr_plot_x_001.png") as image:
        width = image.size[0]
    assert width > 4 * 100  # saved at savefig.dpi (192 per inch, the margins cropped)
    assert rst.count(f":width: {round(width / book_figures.SCALE)}px") == 2
    assert ".. image:: /auto_examples/images/sphx_glr_plot_x_002.png" in rst
    assert ".. rst-class:: sphx-glr-horizontal" in rst
    # describe_figure's alt text, one per figure
    alts = [line.split(":alt: ", 1)[1] for line in rst.splitlines() if ":alt: " in line]
    assert len(alts) == 2
    assert "Scores" in alts[0]
    assert "Weights" in alts[1]
    _, ax = plt.subplots(figsize=(4, 3))
    one = scraper(None, {"image_path_iterator": paths}, {"src_dir": str(tmp_path)})
    assert one.startswith("\n.. image:: /auto_examples/images/sphx_glr_plot_x_003.png\n")
    assert ":class: sphx-glr-single-img" in one
    assert scraper(None, {"image_path_iterator": paths}, {"src_dir": str(tmp_path)}) == ""
