// Accessibility fixes for markup the theme generates (see docs/_ext/a11y.py).
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
  // "Hide solution" (WCAG 2.5.3), also after each click.
  const nameToggle = (button) => button.setAttribute("aria-label", button.dataset.toggleHint);
  document.querySelectorAll("button.toggle-button").forEach(nameToggle);
  new MutationObserver((changes) => changes.forEach((change) => nameToggle(change.target))).observe(
    document.body,
    { subtree: true, attributeFilter: ["data-toggle-hint"] },
  );
  // A citation list is a plain container, not an ARIA list without items.
  document.querySelectorAll(".citation-list[role='list']").forEach((list) => {
    list.removeAttribute("role");
  });
});
// Display formulas wider than the column scroll sideways: let the keyboard reach them.
window.addEventListener("load", () => {
  document.querySelectorAll("div.display-math, div.display-math > .katex").forEach((block) => {
    if (block.scrollWidth > block.clientWidth) block.tabIndex = 0;
  });
});
