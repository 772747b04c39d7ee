extensions = ["book"]
book_features = ["glossary"]
