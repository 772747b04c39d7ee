extensions = ["myst_parser", "book"]
book_features = ["claims"]
