extensions = ["reproducible"]
html_static_path = ["_static"]
