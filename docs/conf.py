"""Sphinx configuration of privamp's documentation site (``make docs``).

Built with warnings as errors in CI. No network at build time: no intersphinx inventories are
fetched (cross-references to NumPy/SciPy stay plain text), and the tutorials are executed by
sphinx-gallery from ``tutorials_src/`` with the installed privamp.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import privamp  # noqa: E402

project = "privamp"
author = "privamp developers"
copyright = "2026, privamp developers"  # noqa: A001
version = release = privamp.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "sphinx.ext.napoleon",
    "sphinx.ext.doctest",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "README.md", "tutorials_src/README.rst", "images/README.md",
                    "**/GALLERY_HEADER.rst", "figures.py"]
templates_path = ["_templates"]

# ---- autodoc / autosummary / napoleon (NumPy-style docstrings) -------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "show-inheritance": True, "member-order": "bysource",
                           "ignore-module-all": True}
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
napoleon_preprocess_types = False
add_module_names = False
python_use_unqualified_type_names = True
nitpicky = False
# short names in parameter types ("path", "kind", "steps") match several attributes of the API;
# Sphinx links the first, which is what a reader of the type expects: no warning for that
suppress_warnings = ["ref.python"]

# ---- Markdown --------------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "deflist", "colon_fence"]
myst_heading_anchors = 3

# ---- tutorials: executed by sphinx-gallery ---------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": ["tutorials_src"],
    "gallery_dirs": ["tutorials"],
    "filename_pattern": r"/plot_|/tutorial_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "show_memory": False,
    "min_reported_time": 1,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "plot_gallery": os.environ.get("PRIVAMP_DOCS_RUN", "1") != "0",
}

# ---- HTML ------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"privamp {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_sidebars = {"index": [], "glossary": [], "faq": []}


# ---- docstrings written for the terminal: |x| is an absolute value, not a substitution ------
import re  # noqa: E402

_LITERAL = re.compile(r"(``.*?``|:[\w:.-]+:`[^`]*`|`[^`]*`_?)")


def _escape_bars(line: str) -> str:
    """Escape the bars of ``|x|`` (absolute values, norms) outside literals and roles, so that
    reStructuredText does not read them as substitution references; table rows are kept."""
    stripped = line.strip()
    table_row = (stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 2) or (
        stripped.startswith("+") and stripped.endswith("+"))
    if "|" not in line or table_row:
        return line
    parts = _LITERAL.split(line)
    for i in range(0, len(parts), 2):  # the even parts are outside literals
        parts[i] = re.sub(r"(?<!\\)\|", r"\\|", parts[i])
    return "".join(parts)


def _process_docstring(app, what, name, obj, options, lines):
    lines[:] = [_escape_bars(line) for line in lines]


def _make_figures(app):
    """``docs/images/`` is a build output: the figures of the manifest ``docs/figures.py``,
    made in-process (those up to date are skipped; see its docstring)."""
    from sphinx.util import logging

    sys.path.insert(0, str(HERE))
    import figures

    figures.build(HERE / "images", log=logging.getLogger("privamp.figures").info)


def setup(app):
    app.connect("autodoc-process-docstring", _process_docstring)
    app.connect("builder-inited", _make_figures)

# the doctest builder runs the pages' {doctest} blocks only: the docstrings' examples are run by
# pytest (--doctest-modules)
doctest_test_doctest_blocks = ""

# the sweeps tutorial runs an in-process Dask cluster, whose INFO lines would clutter the build log
import logging  # noqa: E402

for _name in ("distributed", "tornado"):
    logging.getLogger(_name).setLevel(logging.WARNING)
# distributed sets its loggers' levels from Dask's configuration when it is imported
os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")
