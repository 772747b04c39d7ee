# A tiny book with the book's extension and its page-head job only (a test
# page may write its own conf.py over this one).
extensions = ["book"]
book_features = ["head"]
html_static_path = ["_static"]
html_css_files = ["one.css", "two.css", ("print.css", {"media": "print"})]
html_js_files = ["one.js"]
