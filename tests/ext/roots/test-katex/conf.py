extensions = ["myst_parser", "katex_mathml"]
html_math_renderer = "katex_mathml"
math_numfig = True
myst_enable_extensions = ["dollarmath", "amsmath"]
