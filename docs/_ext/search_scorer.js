/*
 * The book's search scorer (conf.py: html_search_scorer).
 *
 * Sphinx scores a hit by where the words were found: an object name of the
 * API (up to 26), a title (15), the text (5). With those weights alone the
 * API pages and the examples come first for the very words a lesson is
 * named after ("positional" finds the module lessons_code.positional before
 * the lesson "Positional encoding"). A reader who searches a word of the
 * book wants the lesson that teaches it first, then the example that runs
 * it, then the reference. So each hit keeps Sphinx's score, plus a bonus
 * for the kind of page it is on: a lesson's hits all rank above every
 * example's, an example's above every reference page's, and inside each
 * group a hit whose page or section title holds the whole query comes
 * first ("layer normalisation" finds the section of that name before the
 * pages that only mention it), then Sphinx's own order decides.
 *
 * The weights below are Sphinx's defaults (searchtools.js, Sphinx 9).
 */
var Scorer = {
  // Reference pages: the API, the glossary, the notation, the bibliography, the indexes.
  _reference: /^(api(\/|$)|glossary$|notation$|bibliography$|genindex$|py-modindex$|search$)/,
  // The gallery of examples.
  _example: /^auto_examples\//,
  // Far above any score Sphinx gives (an index entry reaches 100), so the
  // groups never mix.
  _groupBonus: 1000,

  // Below the group bonus, above any score Sphinx gives.
  _titleBonus: 500,

  // Lower case, and every run of other characters one space ("multi-head"
  // and "Multi-head" and "multi head" read the same).
  _words: (text) =>
    text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, " ")
      .trim(),

  score: (result) => {
    // title is the page's title, or "Page > Section" for a hit on a section.
    const [docName, title, , , score] = result;
    // Sphinx does not pass the query to the scorer; the search page has it.
    const query = Scorer._words(new URLSearchParams(window.location.search).get("q") || "");
    const bonus = query && Scorer._words(title).includes(query) ? Scorer._titleBonus : 0;
    if (Scorer._reference.test(docName)) return score + bonus;
    if (Scorer._example.test(docName)) return score + bonus + Scorer._groupBonus;
    // The landing page lists every lesson's words: ranked with the examples.
    if (docName === "index") return score + bonus + Scorer._groupBonus;
    return score + bonus + 2 * Scorer._groupBonus;
  },

  // Sphinx's defaults from here on.
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: {
    0: 15,
    1: 5,
    2: -5,
  },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
