extensions = ["myst_parser", "claims"]
