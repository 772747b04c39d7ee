extensions = ["myst_parser", "sphinx_exercise", "self_check"]
myst_enable_extensions = ["dollarmath"]
