# lesson_notebooks reads a built book's labels and doctrees; the test builds
# one with MyST (dollar math, as the book) and sphinx-exercise, and calls the
# converter on its pages (no notebook is executed or written).
extensions = ["myst_parser", "sphinx_exercise"]
myst_enable_extensions = ["dollarmath"]
