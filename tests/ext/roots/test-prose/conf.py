extensions = ["myst_parser", "book"]
myst_enable_extensions = ["dollarmath"]
book_features = ["prose"]
