import sys
from pathlib import Path

# The module documented lives next to this file.
sys.path.insert(0, str(Path(__file__).parent))
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "book"]
# As docs/conf.py: one field list per object, typed from the signature.
autodoc_typehints = "description"
autodoc_typehints_description_target = "documented"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_custom_sections = ["Shape"]
napoleon_use_param = True
napoleon_use_rtype = True
book_features = ["api_layout"]
