extensions = ["myst_parser", "site_pointers"]
