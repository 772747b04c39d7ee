project = "Tiny book"
extensions = ["book"]
book_features = ["summary"]
