extensions = ["myst_parser", "book"]
html_math_renderer = "tex_mathml"
math_numfig = True
myst_enable_extensions = ["dollarmath", "amsmath"]
book_features = []
