// Copying a formula copies its TeX. The browser would copy a MathML formula's
// characters one per line, with its fractions and roots gone ("Q K ⊤ d k").
// Each formula keeps its TeX as an annotation (docs/_ext/book/mathml.py): a
// selection that touches formulas is copied as its text with every formula
// it touches, whole, written as $TeX$ (inline) or $$TeX$$ (display).
document.addEventListener("copy", (event) => {
  const selection = document.getSelection();
  if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return;
  const range = selection.getRangeAt(0);
  const formulas = Array.from(document.querySelectorAll("span.formula")).filter((formula) =>
    range.intersectsNode(formula),
  );
  if (formulas.length === 0 || !event.clipboardData) return;
  const tex = (formula) => {
    const annotation = formula.querySelector("annotation[encoding='application/x-tex']");
    const source = annotation ? annotation.textContent.trim() : formula.textContent;
    const block = formula.querySelector("math[display='block']") !== null;
    return block ? `$$${source}$$` : `$${source}$`;
  };
  let text;
  const inside = range.commonAncestorContainer;
  const within = (inside.nodeType === Node.ELEMENT_NODE ? inside : inside.parentElement)?.closest(
    "span.formula",
  );
  if (within) {
    text = tex(within); // a selection inside one formula copies all of it
  } else {
    // The selection's copy, laid out as the page shows it (innerText keeps
    // the line breaks), with the formulas it holds, in order, as TeX.
    const holder = document.createElement("div");
    holder.style.cssText = "position: fixed; left: -10000px; top: 0; white-space: normal";
    holder.append(range.cloneContents());
    holder.querySelectorAll("span.formula").forEach((copy, index) => {
      copy.replaceWith(document.createTextNode(tex(formulas[index])));
    });
    document.body.append(holder);
    text = holder.innerText;
    holder.remove();
  }
  event.clipboardData.setData("text/plain", text);
  event.preventDefault();
});
