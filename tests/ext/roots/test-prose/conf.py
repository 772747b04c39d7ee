extensions = ["myst_parser", "prose_checks"]
myst_enable_extensions = ["dollarmath"]
