project = "Tiny book"
extensions = ["search_summary"]
