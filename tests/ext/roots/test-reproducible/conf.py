extensions = ["book"]
html_static_path = ["_static"]
book_features = ["zips"]
