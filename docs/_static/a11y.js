// Accessibility fixes for markup the theme and sphinx-gallery generate; each says why.
document.addEventListener("DOMContentLoaded", () => {
  // The sidebar's expand/collapse toggles are <summary> elements holding only
  // an icon: name them after the section they open.
  document.querySelectorAll("nav summary").forEach((summary) => {
    if (summary.textContent.trim() === "" && !summary.hasAttribute("aria-label")) {
      const link = summary.parentElement.parentElement.querySelector(":scope > a");
      const section = link ? link.textContent.trim() : "this section";
      summary.setAttribute("aria-label", `Show or hide the pages of ${section}`);
    }
  });
  // The search field shows "Search Ctrl+K" but is labelled "Search": let its
  // visible text be its name (WCAG 2.5.3, label in name).
  document.querySelectorAll(".search-button-field[aria-label]").forEach((button) => {
    button.removeAttribute("aria-label");
  });
  // A solution's show/hide button (sphinx-togglebutton) is named "Toggle hidden
  // content" whatever it shows: name it by its visible hint, "Show solution" or
  // "Hide solution" (WCAG 2.5.3), also after each click. The extension has one
  // hint for every dropdown; the answer to a self-check question (class
  // self-check-answer, from docs/_ext/book/html.py) says "answer" instead.
  const nameToggle = (button) => {
    const hint = button.dataset.toggleHint || "";
    if (button.closest(".self-check-answer") && hint.includes("solution")) {
      button.dataset.toggleHint = hint.replace("solution", "answer");
    }
    button.setAttribute("aria-label", button.dataset.toggleHint);
  };
  document.querySelectorAll("button.toggle-button").forEach(nameToggle);
  new MutationObserver((changes) => changes.forEach((change) => nameToggle(change.target))).observe(
    document.body,
    { subtree: true, attributeFilter: ["data-toggle-hint"] },
  );
  // The bibliography is an ARIA list whose entries have the role
  // doc-biblioentry, which ARIA 1.2 no longer allows (axe-core's
  // "aria-allowed-role"): each entry is an item of the list.
  document.querySelectorAll(".citation-list[role='list'] > .citation").forEach((entry) => {
    entry.setAttribute("role", "listitem");
  });
  // The primary sidebar holds the book's title and its contents; only the
  // contents are a <nav>, so the title sat outside every landmark (axe-core's
  // "region"). The whole sidebar is one: the book's navigation, beside the page.
  const sidebar = document.getElementById("pst-primary-sidebar");
  if (sidebar && !sidebar.hasAttribute("role")) {
    sidebar.setAttribute("role", "complementary");
    sidebar.setAttribute("aria-label", "Book navigation");
  }
  // A table pandas prints has empty header cells: above the row labels, and in
  // the row of the index's name where its columns have none. An empty cell is
  // no header (axe-core's "empty-table-header"): it becomes a plain cell.
  document.querySelectorAll("article thead th").forEach((th) => {
    if (th.textContent.trim() !== "") return;
    const cell = document.createElement("td");
    for (const { name, value } of th.attributes) cell.setAttribute(name, value);
    th.replaceWith(cell);
  });
});
// Code blocks, display formulas and tables scroll sideways inside their own box
// when wider than the column (narrow.css), and a long printout scrolls down
// inside its own box: let the keyboard reach every box that scrolls. The theme checks its code blocks and tables when the page loads and when
// the window is resized, so one in a tab or a solution that was closed on load
// stays out of reach when it opens; here every box is checked again whenever
// its size changes (the window is resized, a tab or a solution opens).
const SCROLL_BOXES = [
  "pre",
  ".cell_output > .output",
  ".pst-scrollable-table-container",
  "div.display-math",
  "div.display-math > .formula",
  "table.dataframe",
].join(", ");
// A box that scrolls sideways also shows that it does: data-more names the
// sides ("left", "right") it continues past, and narrow.css fades that edge.
const markMore = (box) => {
  const more = [];
  if (box.scrollLeft > 1) more.push("left");
  if (box.scrollLeft + box.clientWidth < box.scrollWidth - 1) more.push("right");
  if (more.length) box.dataset.more = more.join(" ");
  else delete box.dataset.more;
};
const reach = (box) => {
  if (box.scrollWidth > box.clientWidth || box.scrollHeight > box.clientHeight) box.tabIndex = 0;
  else box.removeAttribute("tabindex");
  markMore(box);
};
const resized = new ResizeObserver((entries) => entries.forEach((entry) => reach(entry.target)));
document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll(SCROLL_BOXES).forEach((box) => {
    resized.observe(box);
    box.addEventListener("scroll", () => markMore(box), { passive: true });
  });
});
// Formulas are measured again once the page's fonts have loaded.
window.addEventListener("load", () => document.querySelectorAll(SCROLL_BOXES).forEach(reach));

// The sidebar buttons a reader sees (in the article's header) are the second
// .primary-toggle and .secondary-toggle on the page; both themes attach their
// handlers to the first, in a header the book theme hides, so the visible
// buttons did nothing (pydata-sphinx-theme issue 2451). A click on a visible
// button is passed on to the first, which opens the drawer on a narrow screen
// and hides or shows the sidebar on a wide one.
document.addEventListener("DOMContentLoaded", () => {
  for (const kind of [".primary-toggle", ".secondary-toggle"]) {
    const [handled, ...visible] = document.querySelectorAll(kind);
    visible.forEach((button) =>
      button.addEventListener("click", (event) => {
        event.preventDefault();
        handled.click();
      }),
    );
  }
});
