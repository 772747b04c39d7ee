"""The explorers compute what the package computes, and work by mouse and keyboard.

The attention explorer (self-attention and multi-head pages) and the
positional-encoding explorer (docs/_static/explorers.js) are driven in
Chromium: every control by a click and by the keyboard. After each step the
numbers the widget shows (each value's ``data-value``, the float64 it drew;
the text is that value rounded) are compared with ``lessons_code`` for the
same settings, on the data the page embeds, to a relative tolerance of
``RTOL`` (values below ``ATOL`` in size are compared absolutely). The page
makes no request to another host and logs no error. The time the first
interaction takes and the largest relative difference are written to
``test-artifacts/explorers.json`` and printed (run with ``-s``), not asserted.

The attention explorer also shows the chosen query's softmax step by step
(raw scores, scaled scores minus the row's largest, exponentials, weights),
every position's output, and on the multi-head page the layer's output, the
heads concatenated times ``W_o``, compared with the package's
``MultiHeadAttention`` given the shipped weights. Its token order permutes the
input: every position's output must then be the original output moved with its
token (permutation equivariance), and no longer so under the causal mask.
At 390 px, in light and dark mode, nothing of it is wider than the window and
its buttons' text keeps its contrast; the screenshots go to the artifacts.

The positional explorer draws its dot products as a line chart (an inline
SVG) with the numbers in a table: the curve must have one point per offset,
placed on axes that are linear in the offset and in the table's values, and
it must change when a control does. The chart is checked again in a 390 px
window, in the same page load.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from site_support import PageVisit, settle

from lessons_code.attention import causal_mask, self_attention
from lessons_code.multihead import MultiHeadAttention
from lessons_code.positional import positional_encoding_numpy

RTOL = 1e-6
ATOL = 1e-12
#: Per page: the first interaction's times and the largest relative difference.
REPORT: dict[str, dict[str, float]] = {}

ATTENTION_PAGES = ["self_attention.html", "multihead_attention.html"]

#: The first interaction, timed inside the page: the click's handler (which
#: redraws synchronously) and the time to the next frame.
FIRST_INTERACTION_JS = """
async (selector) => {
  const control = document.querySelector(selector);
  const start = performance.now();
  control.click();
  const handled = performance.now();
  await new Promise((done) => requestAnimationFrame(() => done()));
  return [handled - start, performance.now() - start];
}
"""

SHOWN_JS = """
(quantity) => Array.from(
  document.querySelectorAll(`[data-quantity="${quantity}"] .explorer-value`),
  (node) => [node.dataset.value, node.textContent],
)
"""

DATA_JS = "(root) => JSON.parse(root.querySelector('script[type=\"application/json\"]').text)"


@pytest.fixture(scope="module", autouse=True)
def report(artifacts: Path) -> Iterator[None]:
    """Write ``REPORT`` to the artifacts when the module's tests are done."""
    yield
    text = json.dumps(REPORT, indent=1)
    (artifacts / "explorers.json").write_text(text, encoding="utf-8")
    print(f"\nexplorers: {text}")  # noqa: T201 -- the figures issue 15 asks to report


def _shown(visit: PageVisit, quantity: str) -> np.ndarray:
    """The float64 values of one row of the widget; the text must be their rounding."""
    pairs = visit.page.evaluate(SHOWN_JS, quantity)
    assert pairs, f"the widget shows no {quantity}"
    values = np.array([float(value) for value, _ in pairs])
    for value, (_, text) in zip(values, pairs, strict=True):
        if value == -np.inf:  # a masked key's scaled score
            assert text == "\u2212\u221e", (quantity, text)
            continue
        digits = len(text.split(".")[1]) if "." in text else 0
        number = float(text.replace("\u2212", "-"))  # the chart's table prints a true minus
        assert abs(number - value) <= 0.5 * 10.0**-digits + 1e-12, (quantity, text, value)
    return values


def _name(visit: PageVisit) -> str:
    """The page's file name, as the report names it."""
    return visit.page.url.rsplit("/", 1)[-1]


def _compare(page: str, shown: np.ndarray, expected: np.ndarray, what: str) -> None:
    expected = np.asarray(expected, dtype=np.float64).ravel()
    assert shown.shape == expected.shape, (what, shown.shape, expected.shape)
    infinite = np.isinf(expected)  # masked keys: -inf shown exactly, the rest compared
    assert np.array_equal(shown[infinite], expected[infinite]), (what, shown, expected)
    assert np.isfinite(shown[~infinite]).all(), (what, shown)
    shown, expected = shown[~infinite], expected[~infinite]
    error = np.abs(shown - expected)
    assert np.all(error <= RTOL * np.abs(expected) + ATOL), (what, shown, expected)
    relative = error / np.maximum(np.abs(expected), ATOL)
    entry = REPORT.setdefault(page, {})
    entry["largest relative difference"] = max(
        entry.get("largest relative difference", 0.0), float(relative.max())
    )


def _first_interaction(visit: PageVisit, selector: str, page: str) -> None:
    handler_ms, frame_ms = visit.page.evaluate(FIRST_INTERACTION_JS, selector)
    entry = REPORT.setdefault(page, {})
    entry["first interaction, handler (ms)"] = round(handler_ms, 2)
    entry["first interaction, to the next frame (ms)"] = round(frame_ms, 2)


# -- Attention -------------------------------------------------------------------


def _mha_output(data: dict[str, Any], x: np.ndarray, c: float, mask: Any) -> np.ndarray:
    """The package's ``MultiHeadAttention`` on the shipped weights (float64): ``(T, D)``.

    The explorer's arrays multiply from the right (``x @ w``); ``nn.Linear``
    stores the transpose. Scaling ``w_q`` by ``c`` scales the scores by ``c``.
    """
    D = x.shape[1]
    module = MultiHeadAttention(D, data["heads"], bias=False).double()
    weights = {"q_proj": c * np.array(data["w_q"]), "k_proj": np.array(data["w_k"])}
    weights |= {"v_proj": np.array(data["w_v"]), "out_proj": np.array(data["w_o"])}
    with torch.no_grad():
        for name, w in weights.items():
            getattr(module, name).weight.copy_(torch.from_numpy(w.T))
        inputs = torch.from_numpy(x)[None]  # (1, T, D)
        out = module(inputs, inputs, inputs, mask=None if mask is None else torch.from_numpy(mask))
    return out[0].numpy()


def _expected_attention(data: dict[str, Any], state: dict[str, Any]) -> dict[str, np.ndarray]:
    """lessons_code's weights and outputs for the widget's settings.

    The input is the shipped ``x`` in the widget's token order (position p
    holds token ``order[p]``); the chosen query is a token, at its position.
    ``self_attention`` divides the scores by sqrt(d_head); scaling ``w_q`` by
    ``c`` multiplies them by ``c``, which gives the scale and the temperature.
    The softmax's steps (raw scores, scaled minus the row's largest,
    exponentials) are the formula's, computed here in NumPy.
    """
    order = state["order"]
    x = np.array(data["x"])[order]
    w_q, w_k, w_v = (np.array(data[name]) for name in ("w_q", "w_k", "w_v"))
    T, D = x.shape
    H = data["heads"]
    d_head = D // H
    c = (1.0 if state["scaled"] else math.sqrt(d_head)) / state["temperature"]
    mask = causal_mask(T).numpy() if state["causal"] else None
    p = order.index(state["query"])
    head = state["head"] - 1
    cols = slice(head * d_head, (head + 1) * d_head)
    scores = (x @ w_q[:, cols]) @ (x @ w_k[:, cols]).T  # (T, T), unscaled
    scaled = np.where(mask if mask is not None else True, scores * c / math.sqrt(d_head), -np.inf)
    shifted = scaled[p] - scaled[p].max()
    outputs, weights = [], []
    for h in range(H):
        cols = slice(h * d_head, (h + 1) * d_head)
        out, w = self_attention(x, c * w_q[:, cols], w_k[:, cols], w_v[:, cols], mask=mask)
        outputs.append(out)  # (T, d_head)
        weights.append(w[p])
    concat = np.concatenate(outputs, axis=1)  # (T, D)
    expected = {
        "scores": scores[p],
        "shifted": shifted,
        "exps": np.exp(shifted),
        "step-weights": weights[head],
        "weights": weights[head],
        "output": outputs[head][p],
        "outputs": concat,
    }
    if H > 1:
        layer = _mha_output(data, x, c, mask)
        expected |= {"concat": concat[p], "final": layer[p], "outputs": layer}
    return expected


ORDER_JS = """
(root) => Array.from(root.querySelectorAll(".explorer-order .explorer-token"), (n) => n.textContent)
"""


def _check_attention(visit: PageVisit, data: dict[str, Any], state: dict[str, Any]) -> None:
    root = visit.page.locator("div.explorer")
    group = root.get_by_role("group", name="Query token")
    assert group.get_by_role("radio", name=data["tokens"][state["query"]], exact=True).is_checked()
    assert root.get_by_role("checkbox").is_checked() == state["causal"]
    temperature = root.get_by_role("slider", name="Temperature").input_value()
    assert float(temperature) == state["temperature"]
    assert root.evaluate(ORDER_JS) == [data["tokens"][t] for t in state["order"]]
    expected = _expected_attention(data, state)
    for quantity, values in expected.items():
        what = f"{quantity} {state}"
        _compare(_name(visit), _shown(visit, quantity), values, what)


@pytest.mark.parametrize("page", ATTENTION_PAGES)
def test_attention_explorer_matches_lessons_code(browser, site_url: str, page: str) -> None:
    visit = PageVisit(browser, site_url, page)
    try:
        root = visit.page.locator("div.explorer[data-explorer='attention']")
        assert root.is_visible(), f"{page}: the explorer is not shown"
        data = root.evaluate(DATA_JS)
        state: dict[str, Any] = {"query": 0, "head": 1, "causal": False, "scaled": True}
        state["temperature"] = 1.0
        state["order"] = list(range(len(data["tokens"])))
        _check_attention(visit, data, state)

        queries = root.get_by_role("group", name="Query token")
        _first_interaction(visit, "div.explorer fieldset input[value='2']", page)
        state["query"] = 2
        _check_attention(visit, data, state)

        # Clicks: every query, the mask, the scale, every head.
        for query in range(len(data["tokens"])):
            queries.get_by_role("radio", name=str(query), exact=True).click()
            state["query"] = query
            _check_attention(visit, data, state)
        root.get_by_role("checkbox").click()
        state["causal"] = True
        _check_attention(visit, data, state)
        scale = root.get_by_role("group", name="Scores multiplied by")
        scale.get_by_role("radio", name="1", exact=True).click()
        state["scaled"] = False
        _check_attention(visit, data, state)
        if data["heads"] > 1:
            heads = root.get_by_role("group", name="Head")
            for head in range(1, data["heads"] + 1):
                heads.get_by_role("radio", name=str(head), exact=True).click()
                state["head"] = head
                _check_attention(visit, data, state)

        # Keyboard: arrows move between radios, Space toggles the mask,
        # arrows, Home and End move the temperature slider.
        queries.get_by_role("radio", name=str(state["query"]), exact=True).focus()
        for key, query in (("ArrowLeft", state["query"] - 1), ("ArrowUp", state["query"] - 2)):
            visit.page.keyboard.press(key)
            state["query"] = query
            _check_attention(visit, data, state)
        root.get_by_role("checkbox").focus()
        visit.page.keyboard.press("Space")
        state["causal"] = False
        _check_attention(visit, data, state)
        scale.get_by_role("radio", name="1", exact=True).focus()
        visit.page.keyboard.press("ArrowLeft")
        state["scaled"] = True
        _check_attention(visit, data, state)
        slider = root.get_by_role("slider", name="Temperature")
        slider.focus()
        for key, temperature in (("ArrowRight", 1.25), ("End", 4.0), ("Home", 0.25)):
            visit.page.keyboard.press(key)
            state["temperature"] = temperature
            _check_attention(visit, data, state)
        if data["heads"] > 1:
            heads = root.get_by_role("group", name="Head")
            heads.get_by_role("radio", name=str(state["head"]), exact=True).focus()
            visit.page.keyboard.press("ArrowRight")  # from the last head back to head 1
            state["head"] = 1
            _check_attention(visit, data, state)

        assert visit.foreign == [], f"{page}: requests to other hosts"
        assert visit.console_errors == [], f"{page}: {visit.console_errors}"
    finally:
        visit.close()


def _outputs(visit: PageVisit, data: dict[str, Any]) -> np.ndarray:
    """Every position's output as the widget shows it: ``(T, D)``."""
    return _shown(visit, "outputs").reshape(len(data["tokens"]), -1)


def _moved(visit: PageVisit) -> float:
    """The widget's largest difference from the original outputs moved with their tokens."""
    return float(
        visit.page.locator("[data-quantity='moved'] .explorer-value").get_attribute("data-value")
    )


@pytest.mark.parametrize("page", ATTENTION_PAGES)
def test_permuting_the_tokens_permutes_the_outputs(browser, site_url: str, page: str) -> None:
    """Reordering the tokens reorders every position's output and changes nothing else.

    Each order is checked against the package on the reordered input
    (``_check_attention``) and against the original order's outputs, as the
    widget showed them, moved with their tokens. With the causal mask the
    same reordering changes the outputs. The arrow buttons work by click and
    by keyboard, and keep the focus on the moved token.
    """
    visit = PageVisit(browser, site_url, page)
    try:
        root = visit.page.locator("div.explorer[data-explorer='attention']")
        data = root.evaluate(DATA_JS)
        T = len(data["tokens"])
        state: dict[str, Any] = {"query": 0, "head": 1, "causal": False, "scaled": True}
        state["temperature"] = 1.0
        state["order"] = list(range(T))
        _check_attention(visit, data, state)
        original = _outputs(visit, data)
        assert _moved(visit) == 0.0

        def check_moved() -> None:
            _check_attention(visit, data, state)
            assert np.allclose(_outputs(visit, data), original[state["order"]], rtol=0, atol=1e-12)
            assert _moved(visit) <= 1e-12, state

        # Clicks: token 0 one position later, then token 3 one earlier.
        root.get_by_role("button", name="Move token 0 later").click()
        state["order"] = [1, 0, 2, 3, 4]
        check_moved()
        root.get_by_role("button", name="Move token 3 earlier").click()
        state["order"] = [1, 0, 3, 2, 4]
        check_moved()
        # Keyboard: Enter and Space move token 1 to the end; the focus stays
        # on one of its buttons (the other once it reaches the end).
        root.get_by_role("button", name="Move token 1 later").focus()
        for key in ("Enter", "Space", "Enter", "Space"):
            visit.page.keyboard.press(key)
        state["order"] = [0, 3, 2, 4, 1]
        check_moved()
        focused = visit.page.evaluate("() => document.activeElement.getAttribute('aria-label')")
        assert focused == "Move token 1 earlier", focused
        assert root.get_by_role("button", name="Move token 1 later").is_disabled()
        visit.page.keyboard.press("Enter")
        state["order"] = [0, 3, 2, 1, 4]
        check_moved()

        root.get_by_role("button", name="Reverse").click()
        state["order"] = list(range(T))[::-1]
        check_moved()
        if "permutation" in data:  # the self-attention page's perm
            name = " ".join(map(str, data["permutation"]))
            root.get_by_role("button", name=f"The page's permutation ({name})").click()
            state["order"] = data["permutation"]
            check_moved()
            assert state["order"] == [3, 0, 4, 1, 2]
        # A query other than the first, in another head.
        root.get_by_role("group", name="Query token").get_by_role(
            "radio", name="2", exact=True
        ).click()
        state["query"] = 2
        if data["heads"] > 1:
            root.get_by_role("group", name="Head").get_by_role(
                "radio", name="3", exact=True
            ).click()
            state["head"] = 3
        check_moved()

        # The causal mask is tied to positions: the outputs no longer just move.
        root.get_by_role("checkbox").click()
        state["causal"] = True
        _check_attention(visit, data, state)
        assert _moved(visit) > 1e-3
        root.get_by_role("button", name="Original order").click()
        state["order"] = list(range(T))
        _check_attention(visit, data, state)
        assert _moved(visit) == 0.0

        assert visit.foreign == [], f"{page}: requests to other hosts"
        assert visit.console_errors == [], f"{page}: {visit.console_errors}"
    finally:
        visit.close()


#: Parts of the explorer that stick out to the right of the window (scrolling
#: boxes and their content excepted), and the contrast of each button's text.
FIT_JS = r"""
(width) => {
  const root = document.querySelector("div.explorer");
  const wide = Array.from(root.querySelectorAll("*"))
    .filter((n) => !n.closest(".explorer-scroll") || n.classList.contains("explorer-scroll"))
    .filter((n) => n.getBoundingClientRect().right > width + 0.5)
    .map((n) => `${n.tagName}.${n.className}`);
  const rgb = (c) => c.match(/[\d.]+/g).slice(0, 3).map(Number);
  const lum = (c) => {
    const linear = (v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    const [r, g, b] = rgb(c).map((v) => linear(v / 255));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const contrast = Array.from(root.querySelectorAll("button:not(:disabled)"), (b) => {
    const style = getComputedStyle(b);
    const [l1, l2] = [lum(style.color), lum(style.backgroundColor)].sort((a, c) => c - a);
    return (l1 + 0.05) / (l2 + 0.05);
  });
  return { wide, contrast, page: document.documentElement.scrollWidth };
}
"""


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("page", ATTENTION_PAGES)
def test_attention_explorer_fits_a_phone(
    browser, site_url: str, artifacts: Path, page: str, mode: str
) -> None:
    """At 390 px nothing of the explorer is wider than the window; buttons stay legible."""
    visit = PageVisit(browser, site_url, page, mode=mode)
    try:
        visit.page.set_viewport_size({"width": 390, "height": 844})
        root = visit.page.locator("div.explorer[data-explorer='attention']")
        root.get_by_role("button", name="Reverse").click()
        settle(visit.page)
        fit = visit.page.evaluate(FIT_JS, 390)
        assert fit["wide"] == [], (page, mode, fit["wide"])
        assert fit["page"] <= 390, (page, mode, fit["page"])
        assert min(fit["contrast"]) >= 4.5, (page, mode, fit["contrast"])
        root.screenshot(
            path=str(artifacts / f"explorer-{page.removesuffix('.html')}-{mode}-390.png")
        )
    finally:
        visit.close()


# -- Positional encoding ---------------------------------------------------------


def _expected_positional(data: dict[str, Any], width: int, position: int) -> dict[str, np.ndarray]:
    """The package's encoding, dot products and wavelengths for the widget's settings."""
    pe = positional_encoding_numpy(data["positions"], width)  # (T, D)
    # Pair i turns by its frequency w_i per position: row 1 holds sin w_i, cos w_i.
    frequencies = np.arctan2(pe[1, 0::2], pe[1, 1::2])
    return {
        "encoding": pe[position],
        "dots": pe @ pe[position],
        "wavelengths": 2 * np.pi / frequencies,
    }


#: The dot products' chart and table, as the page has them.
CHART_JS = """
(root) => {
  const svg = root.querySelector(".explorer-chart svg");
  const table = root.querySelector("table[data-quantity='dots']");
  const box = (node) => { const r = node.getBoundingClientRect(); return [r.left, r.right]; };
  return {
    role: svg.getAttribute("role"),
    label: svg.getAttribute("aria-label"),
    title: svg.querySelector("title")?.textContent ?? "",
    curves: Array.from(svg.querySelectorAll("polyline, path"), (c) => c.getAttribute("points")),
    ticks: Array.from(svg.querySelectorAll(".explorer-axes text"), box),
    svg: box(svg),
    caption: table.caption?.textContent ?? "",
    summary: table.closest("details")?.querySelector("summary")?.textContent ?? "",
    columns: Array.from(table.tHead.rows[0].cells, (c) => `${c.tagName}:${c.scope}`),
    rows: Array.from(table.tBodies[0].rows, (r) => `${r.cells[0].tagName}:${r.cells[0].scope}`),
    offsets: Array.from(table.tBodies[0].rows, (r) => r.cells[1].textContent),
  };
}
"""


def _check_chart(visit: PageVisit, dots: np.ndarray, width: int, position: int) -> str:
    """The chart draws ``dots`` (the table's values) against the offset; its points.

    One polyline with a point per offset; its x is an affine, increasing
    function of the offset and its y an affine, decreasing one of the value
    (SVG's y points down), to the rounding of the drawn coordinates.
    """
    chart = visit.page.locator("div.explorer").evaluate(CHART_JS)
    what = f"chart, D = {width}, position {position}"
    assert chart["role"] == "img", what
    for name in (chart["label"], chart["title"], chart["caption"]):
        assert f"position {position}" in name, (what, name)
        assert f"D = {width}" in name, (what, name)
    assert chart["summary"] == "Show the numbers", what
    assert chart["columns"] == ["TH:col"] * 3, (what, chart["columns"])
    assert set(chart["rows"]) == {"TH:row"}, (what, chart["rows"])
    offsets = np.arange(len(dots)) - position
    shown = [int(text.replace("\u2212", "-")) for text in chart["offsets"]]
    assert shown == offsets.tolist(), (what, shown)
    assert len(chart["curves"]) == 1, (what, chart["curves"])
    points = np.array([pair.split(",") for pair in chart["curves"][0].split()], dtype=np.float64)
    assert points.shape == (len(offsets), 2), (what, points.shape)
    for coordinate, values, sign in ((points[:, 0], offsets, 1), (points[:, 1], dots, -1)):
        slope, intercept = np.polyfit(values, coordinate, 1)
        assert sign * slope > 0, (what, slope)
        residual = np.abs(coordinate - (slope * values + intercept)).max()
        assert residual <= 0.02, (what, residual)
    left, right = chart["svg"]
    assert all(left - 1 <= a and b <= right + 1 for a, b in chart["ticks"]), (what, chart["ticks"])
    return chart["curves"][0]


def _check_positional(visit: PageVisit, data: dict[str, Any], width: int, position: int) -> str:
    """Compare the widget with the package; the chart's points, to see them change."""
    root = visit.page.locator("div.explorer")
    widths = root.get_by_role("group", name="Model width D")
    assert widths.get_by_role("radio", name=str(width), exact=True).is_checked()
    assert root.get_by_role("slider", name="Position").input_value() == str(position)
    expected = _expected_positional(data, width, position)
    for quantity, values in expected.items():
        what = f"{quantity}, D = {width}, position {position}"
        _compare(_name(visit), _shown(visit, quantity), values, what)
    return _check_chart(visit, _shown(visit, "dots"), width, position)


def test_positional_explorer_matches_lessons_code(browser, site_url: str) -> None:
    page = "positional_encoding.html"
    visit = PageVisit(browser, site_url, page)
    try:
        root = visit.page.locator("div.explorer[data-explorer='positional']")
        assert root.is_visible(), f"{page}: the explorer is not shown"
        data = root.evaluate(DATA_JS)
        width, position = data["width"], 0
        curves = {(width, position): _check_positional(visit, data, width, position)}

        widths = root.get_by_role("group", name="Model width D")
        first = data["widths"][0]
        _first_interaction(visit, f"div.explorer fieldset input[value='{first}']", page)
        width = first
        curves[width, position] = _check_positional(visit, data, width, position)

        for width in data["widths"]:  # clicks
            widths.get_by_role("radio", name=str(width), exact=True).click()
            curves[width, position] = _check_positional(visit, data, width, position)
        slider = root.get_by_role("slider", name="Position")
        box = slider.bounding_box()
        assert box is not None
        slider.click(position={"x": box["width"] - 2, "y": box["height"] / 2})  # the far end
        position = data["positions"] - 1
        curves[width, position] = _check_positional(visit, data, width, position)

        slider.focus()  # keyboard
        for key, position in (("Home", 0), ("ArrowRight", 1), ("ArrowUp", 2), ("PageUp", 7)):
            visit.page.keyboard.press(key)
            if key == "PageUp":  # Chromium's page step for a range
                position = int(slider.input_value())
                assert position > 2
            curves[width, position] = _check_positional(visit, data, width, position)
        widths.get_by_role("radio", name=str(width), exact=True).focus()
        visit.page.keyboard.press("ArrowLeft")
        width = data["widths"][-2]
        curves[width, position] = _check_positional(visit, data, width, position)
        # Every width and every position drawn gave its own curve.
        assert len(set(curves.values())) == len(curves), sorted(curves)

        # A phone's width: the chart is drawn again to fit, with the same points' count.
        visit.page.set_viewport_size({"width": 390, "height": 844})
        settle(visit.page)
        narrow = _check_positional(visit, data, width, position)
        assert narrow != curves[width, position], "the chart was not redrawn at 390 px"
        chart = root.locator(".explorer-chart svg").bounding_box()
        assert chart is not None
        assert 0 <= chart["x"] <= chart["x"] + chart["width"] <= 390, chart

        assert visit.foreign == [], f"{page}: requests to other hosts"
        assert visit.console_errors == [], f"{page}: {visit.console_errors}"
    finally:
        visit.close()


# -- Keyboard focus and no JavaScript --------------------------------------------

FOCUS_JS = """
() => {
  const el = document.activeElement;
  const style = getComputedStyle(el);
  return {inside: !!el.closest("div.explorer"), outline: style.outlineStyle,
          width: parseFloat(style.outlineWidth), tag: el.tagName, type: el.type};
}
"""


@pytest.mark.parametrize("page", [*ATTENTION_PAGES, "positional_encoding.html"])
def test_every_control_takes_the_keyboard_focus_visibly(browser, site_url: str, page: str) -> None:
    """Tab reaches every control of the explorer, and each shows an outline."""
    visit = PageVisit(browser, site_url, page)
    try:
        root = visit.page.locator("div.explorer")
        # One stop per radio group (the checked radio), checkbox, slider,
        # enabled button, scrolling table and "Show the numbers".
        stops = (
            root.locator("fieldset:has(input[type=radio])").count()
            + root.locator("input:not([type=radio])").count()
            + root.locator("summary").count()
            + root.locator("button:enabled").count()
            + root.locator("[tabindex='0']").count()
        )
        first = "button:enabled, input:checked, input:not([type=radio]), summary"
        root.locator(first).first.focus()
        seen = []
        for _ in range(stops):
            focus = visit.page.evaluate(FOCUS_JS)
            assert focus["inside"], f"{page}: the focus left the explorer early"
            assert focus["outline"] != "none", (page, focus)
            assert focus["width"] >= 2, (page, focus)
            seen.append(focus["type"])
            visit.page.keyboard.press("Tab")
        assert set(seen) >= {"radio", "range"}, seen
        if page in ATTENTION_PAGES:
            assert "button" in seen, seen
    finally:
        visit.close()


@pytest.mark.parametrize("page", [*ATTENTION_PAGES, "positional_encoding.html"])
def test_without_javascript_the_static_figures_stand_alone(
    browser, site_url: str, page: str
) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        tab = context.new_page()
        tab.goto(f"{site_url}/{page}")
        assert tab.locator("div.explorer").count() == 1
        assert not tab.locator("div.explorer").is_visible()
        assert tab.locator("figure img").count() >= 2
    finally:
        context.close()
