import sys
from pathlib import Path

# The module the listings show lives next to this file.
sys.path.insert(0, str(Path(__file__).parent))
extensions = ["myst_parser", "book"]
book_features = []
