extensions = ["book"]
book_features = ["provenance"]
