extensions = ["myst_parser", "tex_mathml"]
html_math_renderer = "tex_mathml"
math_numfig = True
myst_enable_extensions = ["dollarmath", "amsmath"]
