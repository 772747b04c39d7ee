"""Self-check questions: sphinx-exercise's exercises that say "Question".

A lesson's "Check your understanding" section asks its questions with
sphinx-exercise's ``exercise`` directive, unnumbered and with the class
``self-check``, and answers each with a ``solution`` in a dropdown, so that
they share the exercises' handling everywhere (hidden answers on the site,
the notebook's "Solutions" section, the PDF's appendix). sphinx-exercise
titles every exercise "Exercise" and every solution "Solution to Exercise";
this extension titles a self-check "Question (...)" and its answer "Answer to
Question (...)", before sphinx-exercise writes the titles out.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_exercise.nodes import (  # type: ignore[import-untyped]
    exercise_title,
    is_exercise_node,
    solution_node,
)

#: The class that marks an exercise as a self-check question.
SELF_CHECK = "self-check"
QUESTION = "Question"
ANSWER = "Answer to"
#: The class of a self-check question's answer.
ANSWER_CLASS = "self-check-answer"


def is_self_check(node: nodes.Node) -> bool:
    """Whether ``node`` is an exercise marked as a self-check question."""
    return (
        isinstance(node, nodes.Element)
        and is_exercise_node(node)
        and SELF_CHECK in node.get("classes", [])
    )


class NameSelfChecks(SphinxPostTransform):
    """Rename the titles' leading word before sphinx-exercise resolves them (at 20)."""

    default_priority = 19

    def run(self, **kwargs: Any) -> None:
        registry = getattr(self.env, "sphinx_exercise_registry", {})
        for node in self.document.findall(is_self_check):
            title = node.children[0]
            if isinstance(title, exercise_title) and isinstance(title.children[0], nodes.Text):
                title.children[0].parent = None
                title[0] = nodes.Text(QUESTION)
        for node in self.document.findall(solution_node):
            target = registry.get(node.get("target_label"), {}).get("node")
            if target is not None and is_self_check(target):
                node["title"] = ANSWER
                # The page's script (a11y.js) names its button "Show answer".
                node["classes"].append(ANSWER_CLASS)
                # The exercise may sit on another page, or later on this one:
                # its title word is renamed here too, for the solution's copy.
                title = target.children[0]
                if isinstance(title, exercise_title) and isinstance(title.children[0], nodes.Text):
                    title[0] = nodes.Text(QUESTION)


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sphinx_exercise")
    app.add_post_transform(NameSelfChecks)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
