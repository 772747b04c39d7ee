extensions = ["glossary_backlinks"]
