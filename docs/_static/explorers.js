/* The lesson pages' explorers: figures the reader can change.

   A page that has one writes, from its own code at build time, a container
   <div class="explorer" data-explorer="attention|positional" hidden> holding
   its data as <script type="application/json">, and loads this file. The
   script builds native form controls inside the container and shows it;
   without JavaScript the container stays hidden and the page's static
   figures stand alone. Every number is shown rounded as text, with the full
   float64 value in data-value (tests/site/test_explorers.py compares those
   with lessons_code). Nothing is fetched: the data is in the page.

   The attention explorer recomputes everything from the input in the token
   order the reader sets (position p holds token order[p]), so that reordering
   the tokens shows permutation equivariance rather than assuming it: the
   chosen query's softmax step by step, its weights and output, the heads'
   concatenation and, where the page ships W_o, the layer's output, and every
   position's output beside the original order's, moved with its tokens. */
"use strict";

(() => {
  let uid = 0;

  /** An element with attributes (and properties for on* handlers) and children. */
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    node.append(...children);
    return node;
  }

  /** ``v`` with ``digits`` decimals, without a minus sign on a rounded zero. */
  function fixed(v, digits) {
    const text = v.toFixed(digits);
    return Number(text) === 0 ? (0).toFixed(digits) : text;
  }

  /** A fieldset of radio buttons; ``onChange`` gets the chosen option's value. */
  function radios(legend, options, checked, onChange) {
    const name = `explorer-${++uid}`;
    const set = el("fieldset", { class: "explorer-choice" }, el("legend", {}, legend));
    for (const [value, label] of options) {
      const input = el("input", { type: "radio", name, value: String(value) });
      input.checked = value === checked;
      input.addEventListener("change", () => onChange(value));
      set.append(el("label", {}, input, ` ${label}`));
    }
    return set;
  }

  /** A labelled checkbox. */
  function checkbox(label, onChange) {
    const input = el("input", { type: "checkbox" });
    input.addEventListener("change", () => onChange(input.checked));
    return el("label", { class: "explorer-check" }, input, ` ${label}`);
  }

  /** A labelled range input whose current value is shown next to it. */
  function slider(label, { min, max, step, value }, show, onChange) {
    const id = `explorer-${++uid}`;
    const input = el("input", { type: "range", id, min, max, step });
    input.value = String(value);
    const shown = el("output", { for: id });
    const update = () => {
      shown.textContent = show(Number(input.value));
      input.setAttribute("aria-valuetext", shown.textContent);
    };
    input.addEventListener("input", () => {
      update();
      onChange(Number(input.value));
    });
    update();
    return el("div", { class: "explorer-slider" }, el("label", { for: id }, label), input, shown);
  }

  /** A titled list of values, each a label, a bar and its number. */
  function bars(title, quantity) {
    const list = el("ol", { class: "explorer-bars", "data-quantity": quantity });
    const heading = el("p", { class: "explorer-heading" });
    heading.textContent = title;
    return { node: el("div", { class: "explorer-figure" }, heading, list), list, heading };
  }

  /** Fill a list made by ``bars``. ``scale`` maps a value to [-1, 1] (signed) or [0, 1]. */
  function fill(list, values, { labels, digits, scale, signed: twoSided = false, notes = [] }) {
    const items = values.map((v, i) => {
      const fraction = Math.max(-1, Math.min(1, scale(v)));
      const bar = el("span", { class: "explorer-bar" });
      bar.style.width = `${Math.abs(fraction) * (twoSided ? 50 : 100)}%`;
      if (twoSided) bar.style[fraction < 0 ? "right" : "left"] = "50%";
      if (fraction < 0) bar.classList.add("explorer-negative");
      const track = el("span", { class: twoSided ? "explorer-track explorer-signed" : "explorer-track" }, bar);
      const number = el("span", { class: "explorer-value", "data-value": String(v) }, signed(fixed(v, digits)));
      const item = el("li", {}, el("span", { class: "explorer-label" }, labels[i]), track, number);
      if (notes[i]) item.append(el("span", { class: "explorer-note" }, notes[i]));
      return item;
    });
    list.replaceChildren(...items);
  }

  // -- A line chart, drawn as inline SVG ------------------------------------------

  const SVG_NS = "http://www.w3.org/2000/svg";

  /** An SVG element with attributes and children. */
  function svgEl(tag, attrs = {}, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
    node.append(...children);
    return node;
  }

  /** A number as the page prints it: a true minus sign, "+" on request. */
  function signed(v, plus = false) {
    return `${v > 0 && plus ? "+" : ""}${v}`.replace("-", "−");
  }

  /** Integer ticks in [lo, hi] at the smallest round step that leaves ``gap`` units between them. */
  function integerTicks(lo, hi, gap) {
    const step = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500].find((s) => s >= gap) ?? hi - lo;
    const ticks = [];
    for (let k = Math.ceil(lo / step); k * step <= hi; k++) ticks.push(k * step);
    return ticks;
  }

  /**
   * A titled line chart and, on demand, its numbers as a table.
   *
   * ``draw`` takes the points (x, y), the fixed axes' ranges and ticks, the
   * axis labels, the x of a marked point, the chart's accessible name and the
   * table's caption, columns and rows. The chart is drawn at the width of its
   * box in CSS pixels, so its text is the page's size at any window width, and
   * redrawn when that width changes.
   */
  function lineChart(quantity) {
    const heading = el("p", { class: "explorer-heading" });
    const box = el("div", { class: "explorer-chart" });
    const note = el("p", { class: "explorer-chart-note" });
    const caption = el("caption");
    const head = el("tr");
    const body = el("tbody");
    const table = el("table", { class: "explorer-table", "data-quantity": quantity }, caption, el("thead", {}, head), body);
    const details = el("details", { class: "explorer-numbers" }, el("summary", {}, "Show the numbers"), table);
    let last = null;
    let drawnWidth = -1;

    function plot(spec) {
      const width = box.clientWidth || 640;
      const em = parseFloat(getComputedStyle(box).fontSize) || 14;
      const height = Math.round(Math.max(15 * em, Math.min(20 * em, 0.42 * width)));
      const yTickWidth = Math.max(...spec.yTicks.map((t) => signed(t).length)) * 0.62 * em;
      const margin = { left: 2 * em + yTickWidth, right: 1.2 * em, top: 1.6 * em, bottom: 3 * em };
      const right = width - margin.right;
      const bottom = height - margin.bottom;
      const [x0, x1] = spec.xRange;
      const [y0, y1] = spec.yRange;
      const sx = (x) => margin.left + ((x - x0) / (x1 - x0)) * (right - margin.left);
      const sy = (y) => bottom - ((y - y0) / (y1 - y0)) * (bottom - margin.top);
      const round = (v) => Math.round(v * 100) / 100;

      const xTicks = integerTicks(x0, x1, (4 * em * (x1 - x0)) / (right - margin.left));
      const grid = svgEl("g", { class: "explorer-grid" });
      const axes = svgEl("g", { class: "explorer-axes" });
      for (const t of spec.yTicks) {
        grid.append(svgEl("line", { x1: margin.left, x2: right, y1: round(sy(t)), y2: round(sy(t)) }));
        axes.append(svgEl("text", { x: margin.left - 0.4 * em, y: round(sy(t)), "text-anchor": "end", "dominant-baseline": "middle" }, signed(t)));
      }
      for (const t of xTicks) {
        axes.append(
          svgEl("line", { x1: round(sx(t)), x2: round(sx(t)), y1: bottom, y2: bottom + 0.35 * em }),
          svgEl("text", { x: round(sx(t)), y: bottom + 0.5 * em, "text-anchor": "middle", "dominant-baseline": "hanging" }, signed(t)),
        );
      }
      axes.append(
        svgEl("line", { x1: margin.left, x2: right, y1: bottom, y2: bottom }),
        svgEl("line", { x1: margin.left, x2: margin.left, y1: margin.top, y2: bottom }),
        svgEl("text", { class: "explorer-axis-label", x: (margin.left + right) / 2, y: height - 0.3 * em, "text-anchor": "middle" }, spec.xLabel),
        svgEl(
          "text",
          { class: "explorer-axis-label", transform: `translate(${0.9 * em} ${(margin.top + bottom) / 2}) rotate(-90)`, "text-anchor": "middle" },
          spec.yLabel,
        ),
      );
      const [mx, my] = spec.marker;
      const marker = svgEl(
        "g",
        { class: "explorer-marker" },
        svgEl("line", { x1: round(sx(mx)), x2: round(sx(mx)), y1: margin.top, y2: bottom }),
        svgEl("circle", { cx: round(sx(mx)), cy: round(sy(my)), r: 0.3 * em }),
        svgEl("text", { x: round(sx(mx)) + 0.5 * em, y: margin.top - 0.5 * em }, spec.markerLabel),
      );
      const curve = svgEl("polyline", {
        class: "explorer-curve",
        points: spec.points.map(([x, y]) => `${round(sx(x))},${round(sy(y))}`).join(" "),
      });
      const svg = svgEl(
        "svg",
        { role: "img", "aria-label": spec.label, viewBox: `0 0 ${width} ${height}`, width, height },
        svgEl("title", {}, spec.label),
        grid,
        axes,
        marker,
        curve,
      );
      box.replaceChildren(svg);
      drawnWidth = box.clientWidth;
    }

    function draw(spec) {
      last = spec;
      heading.textContent = spec.title;
      note.textContent = spec.note;
      caption.textContent = spec.caption;
      head.replaceChildren(...spec.columns.map((name) => el("th", { scope: "col" }, name)));
      body.replaceChildren(
        ...spec.rows.map(([name, ...cells]) =>
          el("tr", {}, el("th", { scope: "row" }, name), ...cells.map((cell) => (cell instanceof Node ? cell : el("td", {}, cell)))),
        ),
      );
      plot(spec);
    }

    // The box has no width while the explorer is hidden; draw again once it has one.
    new ResizeObserver(() => {
      if (last && box.clientWidth !== drawnWidth) plot(last);
    }).observe(box);
    return { node: el("div", { class: "explorer-figure" }, heading, box, note, details), draw };
  }

  // -- Attention ---------------------------------------------------------------

  const matmul = (a, b) => a.map((row) => b[0].map((_, j) => row.reduce((s, x, k) => s + x * b[k][j], 0)));
  const columns = (m, start, stop) => m.map((row) => row.slice(start, stop));

  /** A number as a table cell: rounded text, the float64 in data-value; -Infinity as "−∞". */
  function valueCell(v, digits, quantity) {
    const text = v === -Infinity ? "−∞" : signed(fixed(v, digits));
    const number = el("span", { class: "explorer-value", "data-value": String(v) }, text);
    return el("td", quantity ? { "data-quantity": quantity } : {}, number);
  }

  /**
   * A box around ``child`` that scrolls sideways when the child is wider than
   * the column, named by the element ``labelledby``. As a11y.js does for the
   * page's own tables: while it scrolls it takes the keyboard focus, and
   * data-more names the edges it continues past (narrow.css fades them).
   * ``check`` measures it again (after its content changed).
   */
  function scrollBox(child, labelledby) {
    const box = el("div", { class: "explorer-scroll", role: "region", "aria-labelledby": labelledby }, child);
    const check = () => {
      if (box.scrollWidth > box.clientWidth + 1) box.tabIndex = 0;
      else box.removeAttribute("tabindex");
      const more = [];
      if (box.scrollLeft > 1) more.push("left");
      if (box.scrollLeft + box.clientWidth < box.scrollWidth - 1) more.push("right");
      if (more.length) box.dataset.more = more.join(" ");
      else delete box.dataset.more;
    };
    new ResizeObserver(check).observe(box);
    box.addEventListener("scroll", check, { passive: true });
    return { box, check };
  }

  /** A button with visible text and, where the text is a symbol, an accessible name. */
  function button(text, name, onClick) {
    const attrs = { type: "button", class: "explorer-button", onclick: onClick };
    if (name) attrs["aria-label"] = name;
    return el("button", attrs, text);
  }

  /**
   * The token order: one item per token with buttons that move it one
   * position earlier or later, and buttons for whole permutations.
   * ``onChange`` gets the new order (position p holds token order[p]).
   */
  function orderControl(tokens, presets, onChange) {
    const T = tokens.length;
    let order = tokens.map((_, t) => t);
    const list = el("ol", { class: "explorer-order" });
    const items = tokens.map((token, t) => {
      const earlier = button("←", `Move token ${token} earlier`, () => move(t, -1));
      const later = button("→", `Move token ${token} later`, () => move(t, +1));
      const item = el("li", {}, earlier, el("span", { class: "explorer-token" }, token), later);
      return { item, earlier, later };
    });
    function show() {
      list.replaceChildren(...order.map((t) => items[t].item));
      order.forEach((t, p) => {
        items[t].earlier.disabled = p === 0;
        items[t].later.disabled = p === T - 1;
      });
    }
    function set(next, focus = null) {
      order = next;
      show();
      if (focus) focus.focus(); // moving a node in the document takes its focus away
      onChange(order.slice());
    }
    function move(t, step) {
      const p = order.indexOf(t);
      const next = order.slice();
      [next[p], next[p + step]] = [next[p + step], next[p]];
      const { earlier, later } = items[t];
      const stays = step < 0 ? (p + step > 0 ? earlier : later) : p + step < T - 1 ? later : earlier;
      set(next, stays);
    }
    const whole = el(
      "div",
      { class: "explorer-order-buttons" },
      ...presets.map(([label, perm]) => button(label, null, () => set(perm.slice()))),
    );
    show();
    const legend = el("legend", {}, `Token order (positions 0 to ${T - 1})`);
    return el("fieldset", { class: "explorer-order-set" }, legend, list, whole);
  }

  function attentionExplorer(root, data) {
    const T = data.x.length;
    const D = data.w_q[0].length;
    const H = data.heads;
    const dHead = D / H;
    const identity = data.tokens.map((_, t) => t);
    const state = { query: 0, head: 1, causal: false, scaled: true, temperature: 1, order: identity };

    /**
     * Everything the explorer shows, computed from the input in the current
     * order: per head, each position's scores, their softmax steps and its
     * output; the heads concatenated; with W_o, the layer's output.
     */
    function compute(order) {
      const xs = order.map((t) => data.x[t]); // (T, D): position p holds token order[p]
      const [q, k, v] = [data.w_q, data.w_k, data.w_v].map((w) => matmul(xs, w));
      const factor = (state.scaled ? 1 / Math.sqrt(dHead) : 1) / state.temperature;
      const heads = Array.from({ length: H }, (_, h) => {
        const [qh, kh, vh] = [q, k, v].map((m) => columns(m, h * dHead, (h + 1) * dHead));
        return qh.map((qi, i) => {
          const scores = kh.map((kj) => kj.reduce((s, x, c) => s + x * qi[c], 0));
          const z = scores.map((s, j) => (!state.causal || j <= i ? s * factor : -Infinity));
          const top = Math.max(...z);
          const shifted = z.map((x) => x - top);
          const exps = shifted.map(Math.exp);
          const sum = exps.reduce((s, x) => s + x, 0);
          const weights = exps.map((x) => x / sum);
          const out = vh[0].map((_, c) => weights.reduce((s, w, j) => s + w * vh[j][c], 0));
          return { scores, shifted, exps, sum, weights, out };
        });
      });
      const concat = xs.map((_, i) => heads.flatMap((head) => head[i].out)); // (T, D)
      const output = data.w_o ? matmul(concat, data.w_o) : concat; // (T, D)
      return { heads, concat, output };
    }

    const vMax = Math.max(...matmul(data.x, data.w_v).flat().map(Math.abs));
    const reference = () => compute(identity).output; // the outputs of the original order
    // The tables' titles stand above their scrolling boxes, which they name.
    const stepsHeading = el("p", { class: "explorer-heading", id: `explorer-${++uid}` });
    const steps = el("table", { class: "explorer-table explorer-steps", "aria-labelledby": stepsHeading.id });
    const weightBars = bars("", "weights");
    const outBars = bars("", "output");
    const concatBars = H > 1 ? bars("", "concat") : null;
    const finalBars = data.w_o ? bars("", "final") : null;
    const outputsHeading = el("p", { class: "explorer-heading", id: `explorer-${++uid}` });
    const outputs = el("table", { class: "explorer-table explorer-outputs", "data-quantity": "outputs", "aria-labelledby": outputsHeading.id });
    const outputsBox = scrollBox(outputs, outputsHeading.id);
    const outputsNote = el("p", { class: "explorer-chart-note" });
    const status = el("p", { class: "explorer-status", role: "status" });

    function render() {
      const { order } = state;
      const all = compute(order);
      const p = order.indexOf(state.query); // the query token's position
      const chosen = all.heads[state.head - 1][p];
      const token = data.tokens[state.query];
      const keyLabels = order.map((t) => `key ${data.tokens[t]}`);
      const inHead = H > 1 ? ` in head ${state.head}` : "";

      // Softmax, step by step: one row per key, in the current order.
      const scale = `${state.scaled ? ` ÷ √${dHead}` : ""}${state.temperature !== 1 ? ` ÷ ${fixed(state.temperature, 2)}` : ""}`;
      stepsHeading.textContent = `Softmax of query ${token} (position ${p})${inHead}, step by step; weight = exp / sum`;
      const head = el(
        "tr",
        {},
        ...["pos. (key)", "score q·k", `score${scale} − max`, "exp", "weight"].map((name) => el("th", { scope: "col" }, name)),
      );
      const rows = order.map((t, j) =>
        el(
          "tr",
          { class: t === state.query ? "explorer-current" : "" },
          el("th", { scope: "row" }, `${j} (${data.tokens[t]})`),
          valueCell(chosen.scores[j], 3, "scores"),
          valueCell(chosen.shifted[j], 3, "shifted"),
          valueCell(chosen.exps[j], 3, "exps"),
          valueCell(chosen.weights[j], 3, "step-weights"),
        ),
      );
      const total = el(
        "tr",
        {},
        el("th", { scope: "row", colspan: "3" }, "sum"),
        valueCell(chosen.sum, 3, "exp-sum"),
        valueCell(chosen.weights.reduce((s, w) => s + w, 0), 3),
      );
      steps.replaceChildren(el("thead", {}, head), el("tbody", {}, ...rows), el("tfoot", {}, total));

      weightBars.heading.textContent = `Weights of query ${token}${H > 1 ? ` (head ${state.head})` : ""}, keys in the current order`;
      fill(weightBars.list, chosen.weights, {
        labels: keyLabels,
        digits: 3,
        scale: (w) => w,
        notes: chosen.weights.map((_, j) => (state.causal && j > p ? "masked" : "")),
      });
      outBars.heading.textContent = `Output of query ${token}${inHead}: the weighted sum of the values`;
      fill(outBars.list, chosen.out, { labels: chosen.out.map((_, c) => `${c + 1}`), digits: 3, scale: (x) => x / vMax, signed: true });
      if (concatBars) {
        concatBars.heading.textContent = `Concatenation of the ${H} heads' outputs for query ${token} (head ${state.head} highlighted)`;
        fill(concatBars.list, all.concat[p], {
          labels: all.concat[p].map((_, c) => `h${Math.floor(c / dHead) + 1}.${(c % dHead) + 1}`),
          digits: 3,
          scale: (x) => x / vMax,
          signed: true,
        });
        concatBars.list.querySelectorAll("li").forEach((item, c) => {
          item.classList.toggle("explorer-current", Math.floor(c / dHead) + 1 === state.head);
        });
      }
      if (finalBars) {
        const final = all.output[p];
        const fMax = Math.max(...final.map(Math.abs)) || 1;
        finalBars.heading.textContent = `Output of the layer for query ${token}: the concatenation times W_o`;
        fill(finalBars.list, final, { labels: final.map((_, c) => `${c + 1}`), digits: 3, scale: (x) => x / fMax, signed: true });
      }

      // Every position's output, in the current order, and how it compares
      // with the outputs of the original order moved along with their tokens.
      outputsHeading.textContent = `${data.w_o ? "The layer's output" : "Output"} of every position, in the current order`;
      outputs.replaceChildren(
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "pos. (token)"), ...all.output[0].map((_, c) => el("th", { scope: "col" }, String(c + 1))))),
        el(
          "tbody",
          {},
          ...order.map((t, i) =>
            el(
              "tr",
              { class: t === state.query ? "explorer-current" : "" },
              el("th", { scope: "row" }, `${i} (${data.tokens[t]})`),
              ...all.output[i].map((x) => valueCell(x, 3)),
            ),
          ),
        ),
      );
      const before = reference();
      const moved = Math.max(...order.flatMap((t, i) => all.output[i].map((x, c) => Math.abs(x - before[t][c]))));
      const permuted = order.some((t, i) => t !== i);
      const movedCell = el(
        "span",
        { "data-quantity": "moved" },
        el("span", { class: "explorer-value", "data-value": String(moved) }, moved.toExponential(1)),
      );
      const verdict = !permuted
        ? "The tokens are in their original order."
        : moved <= 1e-12
          ? "Every row moved with its token and nothing else changed: permuting the input permuted the output."
          : "The rows did not just move with their tokens: the causal mask is tied to positions, not to tokens.";
      outputsNote.replaceChildren(`Largest difference from the original order's outputs, each moved with its token: `, movedCell, `. ${verdict}`);

      stepsBox.check();
      outputsBox.check();
      const top = chosen.weights.indexOf(Math.max(...chosen.weights));
      status.textContent = `Query ${token} puts most weight, ${fixed(chosen.weights[top], 3)}, on key ${data.tokens[order[top]]}.`;
    }

    const set = (key) => (value) => {
      state[key] = value;
      render();
    };
    const presets = [
      ["Reverse", identity.slice().reverse()],
      ...(data.permutation ? [[`The page's permutation (${data.permutation.join(" ")})`, data.permutation]] : []),
      ["Original order", identity],
    ];
    const controls = el("div", { class: "explorer-controls" });
    controls.append(orderControl(data.tokens, presets, set("order")));
    controls.append(radios("Query token", data.tokens.map((t, i) => [i, t]), 0, set("query")));
    if (H > 1) {
      const names = Array.from({ length: H }, (_, h) => [h + 1, `${h + 1}`]);
      controls.append(radios("Head", names, 1, set("head")));
    }
    controls.append(
      checkbox("Causal mask (attend only to positions ≤ the query's)", set("causal")),
      radios("Scores multiplied by", [[true, `1/√${dHead}`], [false, "1"]], true, set("scaled")),
      slider("Temperature", { min: 0.25, max: 4, step: 0.25, value: 1 }, (t) => fixed(t, 2), set("temperature")),
    );
    const stepsBox = scrollBox(steps, stepsHeading.id);
    const figures = [el("div", { class: "explorer-figure" }, stepsHeading, stepsBox.box), weightBars.node, outBars.node];
    if (concatBars) figures.push(concatBars.node);
    if (finalBars) figures.push(finalBars.node);
    figures.push(el("div", { class: "explorer-figure" }, outputsHeading, outputsBox.box, outputsNote));
    root.append(controls, status, ...figures);
    render();
  }

  // -- Positional encoding ---------------------------------------------------------

  function positionalExplorer(root, data) {
    const T = data.positions;
    const state = { width: data.width, position: 0 };
    // The exp-log form of the frequency of pair i, as lessons_code's NumPy version.
    const frequency = (i, D) => Math.exp(-Math.log(data.base) * (2 * i) / D);
    const encode = (pos, D) =>
      Array.from({ length: D }, (_, j) => {
        const angle = pos * frequency(Math.floor(j / 2), D);
        return j % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
      });

    const vectorBars = bars("", "encoding");
    const dotChart = lineChart("dots");
    const waveBars = bars("", "wavelengths");

    function render() {
      const D = state.width;
      const pos = state.position;
      const pe = encode(pos, D);
      vectorBars.heading.textContent = `Encoding of position ${pos} (D = ${D}): sine and cosine of each pair i`;
      fill(vectorBars.list, pe, {
        // Column 2i holds the sine of pair i, column 2i + 1 its cosine, as in the formula.
        labels: pe.map((_, column) => `${column % 2 === 0 ? "sin" : "cos"} ${Math.floor(column / 2)}`),
        digits: 3,
        scale: (x) => x,
        signed: true,
      });
      const dots = Array.from({ length: T }, (_, p) => encode(p, D).reduce((s, x, j) => s + x * pe[j], 0));
      // The offsets p - pos reached from this position, on an axis of every offset any position reaches.
      const offsets = dots.map((_, p) => p - pos);
      const others = offsets.filter((k) => k !== 0);
      const next = Math.max(...others.map((k) => dots[k + pos]));
      const nextAt = others.filter((k) => Math.abs(dots[k + pos] - next) <= 1e-9 * D);
      const nextText = `${fixed(next, 2)} at offset${nextAt.length > 1 ? "s" : ""} ${nextAt.map((k) => signed(k, true)).join(" and ")}`;
      const reach = `${signed(offsets[0])} to ${signed(offsets[T - 1], true)}`;
      const low = Math.min(0, Math.floor(Math.min(...dots)));
      dotChart.draw({
        title: `Dot product PE(pos) · PE(p) of position ${pos} with every position p, against the offset p − pos (D = ${D})`,
        label:
          `Line chart of the dot product of the encoding of position ${pos} with that of every position p, ` +
          `against the offset p − pos, from ${reach}, for D = ${D}. It peaks at ${fixed(D / 2, 2)} at offset 0; ` +
          `the highest value at another offset is ${nextText}. The numbers are in the table below the chart.`,
        note: `Peak ${fixed(D / 2, 2)} at offset 0 (position ${pos}); the highest elsewhere is ${nextText}.`,
        points: offsets.map((k, i) => [k, dots[i]]),
        xRange: [-(T - 1), T - 1],
        // From 0 (or the lowest value, were one negative) to the peak, D/2: over
        // these positions the dot products stay positive, and an axis down to
        // -D/2 squeezed the curve into its top quarter.
        yRange: [low, D / 2],
        yTicks: [...(low < 0 ? [low] : []), 0, D / 4, D / 2],
        xLabel: "offset p − pos",
        yLabel: "dot product",
        marker: [0, D / 2],
        markerLabel: `pos = ${pos}`,
        caption: `Dot product PE(pos) · PE(p) of position ${pos} with every position p, D = ${D}`,
        columns: ["p", "offset p − pos", "dot product"],
        rows: dots.map((v, p) => [
          String(p),
          signed(offsets[p], true),
          el("td", { class: "explorer-value", "data-value": String(v) }, signed(fixed(v, 2))),
        ]),
      });
      const waves = Array.from({ length: D / 2 }, (_, i) => (2 * Math.PI) / frequency(i, D));
      waveBars.heading.textContent = `Wavelength of each pair i (columns 2i and 2i + 1), in positions (D = ${D}; bars on a log scale)`;
      const top = Math.log(waves[waves.length - 1] / waves[0]) || 1;
      fill(waveBars.list, waves, {
        labels: waves.map((_, i) => `i = ${i}`),
        digits: 1,
        scale: (w) => 0.05 + (0.95 * Math.log(w / waves[0])) / top,
      });
    }

    const controls = el("div", { class: "explorer-controls" });
    controls.append(
      radios("Model width D", data.widths.map((d) => [d, `${d}`]), state.width, (d) => {
        state.width = d;
        render();
      }),
      slider("Position", { min: 0, max: T - 1, step: 1, value: 0 }, (p) => String(p), (p) => {
        state.position = p;
        render();
      }),
    );
    // The curve first, right under the controls; the encoding's bars (D of
    // them) and the wavelengths follow.
    root.append(controls, dotChart.node, vectorBars.node, waveBars.node);
    render();
  }

  const explorers = { attention: attentionExplorer, positional: positionalExplorer };
  for (const root of document.querySelectorAll("div.explorer[data-explorer]")) {
    const data = JSON.parse(root.querySelector("script[type='application/json']").textContent);
    explorers[root.dataset.explorer](root, data);
    root.hidden = false;
  }
})();
