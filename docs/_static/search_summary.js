/*
 * Search result snippets from the page's text only.
 *
 * Sphinx's searchtools.js fetches each result's page and builds the snippet
 * from the text of its [role="main"] element. sphinx-book-theme (through
 * pydata-sphinx-theme's layout.html) puts role="main" on <main id="main-content">,
 * which holds much more than the page: the article header with its buttons
 * (download, full screen, the colour-mode menu "System Settings Light Dark"),
 * the table of contents printed for paper, the "On this page" sidebar and the
 * previous/next links. So a snippet began with the button labels.
 *
 * The page's own text is the <article class="bd-article"> inside it. This
 * file narrows Sphinx's text extraction to that article (and, for a hit on a
 * section, to that section inside it); pages without such an article keep
 * Sphinx's behaviour. Loaded with "defer" on the search page only, it runs
 * after searchtools.js has defined Search and before the search starts.
 */
"use strict";

(() => {
  if (typeof Search === "undefined") return;
  const sphinxHtmlToText = Search.htmlToText;

  Search.htmlToText = (htmlString, anchor) => {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    const article = page.querySelector('[role="main"] article.bd-article');
    if (!article) return sphinxHtmlToText(htmlString, anchor);
    for (const query of [".headerlink", "script", "style"]) {
      article.querySelectorAll(query).forEach((element) => element.remove());
    }
    if (anchor) {
      const section = page.getElementById(decodeURIComponent(anchor.slice(1)));
      if (section && article.contains(section)) return section.textContent;
    }
    return article.textContent;
  };
})();
