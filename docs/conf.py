"""Sphinx configuration: numpydoc API reference, the written user guide, the benchmark pages, the example gallery.

Build with ``make docs`` (``python -m sphinx -W --keep-going -b html docs docs/_build/html``). The API reference
follows the registry, so it is generated here, at configuration time, into ``docs/_generated/api.rst``: one
autosummary table per method family over ``sklearn_frontier.__all__`` (plus the datasets, warnings and persistence
helpers), with a stub page per object. The user guide (``docs/guide/``) is written by hand; the benchmark pages
(``docs/benchmarks/``) are written by ``python -m benchmarks report``.

``SKLEARN_FRONTIER_DOCS_GALLERY_ONLY=<examples folder>`` builds only the gallery of that folder (with
the same extensions and theme), which the test suite uses to keep the toolchain working.
"""

import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = Path(os.environ.get("SKLEARN_FRONTIER_REPO", HERE.parent)).resolve()
GALLERY_ONLY = os.environ.get("SKLEARN_FRONTIER_DOCS_GALLERY_ONLY")
sys.path.insert(0, str(REPO))

import sklearn_frontier  # noqa: E402

project = "sklearn_frontier"
author = "the sklearn_frontier developers"
copyright = "2026, " + author  # noqa: A001
release = version = sklearn_frontier.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]
templates_path = [str(REPO / "docs" / "_templates")]
exclude_patterns = ["_build", "_templates", "**.ipynb_checkpoints", "auto_examples/*.md5",
                    "auto_examples/*.py", "auto_examples/*.ipynb", "auto_examples/*.zip"]
default_role = "code"  # `x` renders as code (docstrings use it for parameter names)

autosummary_generate = True
autodoc_typehints = "none"
numpydoc_show_class_members = False  # the class template lists methods itself
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

intersphinx_mapping = {}  # offline builds (CI has no internet); references to numpy/sklearn stay plain text

html_theme = "pydata_sphinx_theme"
html_title = f"sklearn_frontier {release}"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
html_show_sourcelink = False

# --- example gallery ---------------------------------------------------------------------------------
if GALLERY_ONLY:
    _examples_dir = Path(GALLERY_ONLY).resolve()
else:
    _examples_dir = REPO / "examples"
sphinx_gallery_conf = {
    "examples_dirs": os.path.relpath(_examples_dir, HERE),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "image_scrapers": ("matplotlib",),
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "show_memory": False,
    "plot_gallery": "True",
    "reset_modules": ("matplotlib",),
    "capture_repr": (),
}

# --- generated pages ---------------------------------------------------------------------------------
GENERATED = HERE / "_generated"

FAMILY_TITLES = {
    "sdr": "Sufficient dimension reduction (SMAVE)",
    "spanning_trees": "Spanning-tree regression (PR-BAST)",
    "configurations": "Configuration-mixed features (MixConfig)",
    "iv": "Instrumental-variable regression with many treatments",
    "topology": "Collapsed effective operators (CEO)",
    "annotation": "Active annotation (MA3S)",
    "quantization": "Weight quantization (TwinQuant, WUSH)",
}


def _write(path, text):
    """Write only on change, so that Sphinx's incremental build sees unchanged pages as unchanged."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _heading(text, char):
    return f"{text}\n{char * len(text)}\n"


def _autosummary(names, module="sklearn_frontier", toctree="api"):
    if not names:
        return "*(nothing public yet)*\n"
    body = "\n".join(f"   {n}" for n in names)
    options = f"   :toctree: {toctree}\n   :template: autosummary/object.rst\n" if toctree else ""
    return f".. currentmodule:: {module}\n\n.. autosummary::\n{options}   :nosignatures:\n\n{body}\n"


def generate_api_reference():
    from sklearn_frontier import persistence

    exports = sklearn_frontier._EXPORTS
    lines = [".. _api:\n", _heading("API reference", "="),
             "Every public class and function of ``sklearn_frontier`` (``sklearn_frontier.__all__``), "
             "importable from the top-level package, grouped by method family.\n"]
    general = [n for n in sklearn_frontier.__all__ if n not in sklearn_frontier._LAZY and not n.startswith("__")]
    lines += [_heading("Configuration and registry", "-"), _autosummary(sorted(general))]
    for module, names in exports.items():
        family = module.rsplit(".", 1)[-1]
        title = FAMILY_TITLES.get(family, {"datasets": "Datasets", "exceptions": "Warnings and errors"}.get(
            family, family))
        lines += [_heading(title, "-"), f"From ``{module}``.\n", _autosummary(sorted(names))]
    persistence_names = ["trusted_types", "dump", "load", "type_name"]
    lines += [_heading("Persistence", "-"), "From ``sklearn_frontier.persistence`` (skops, no pickle).\n",
              _autosummary([f"persistence.{n}" for n in persistence_names if hasattr(persistence, n)])]
    _write(GENERATED / "api.rst", "\n".join(lines))


if not GALLERY_ONLY:
    generate_api_reference()


# --- docstring hygiene and gallery shims -------------------------------------------------------------
_CODE = re.compile(r"(``.*?``|`[^`]*`)")
_TRAILING_UNDERSCORE = re.compile(r"(?<![\w`\\])([A-Za-z]\w*)_(?=[\s,.;:)\]]|$)")
_VERBATIM = re.compile(r"^\s*(>>>|\.\.\.|\.\. |:[\w ]+:(\s|$))")
_SUBSTITUTION = re.compile(r"(?<![\w`\\])\|(\w[^|`]*?)\|")


def _escape_plain_text(line):
    """Keep ``n_features_in_`` and ``|x|`` in prose from being read as reST references/substitutions."""
    if _VERBATIM.match(line):  # doctest lines, directives and field-list markers stay as they are
        return line
    parts = _CODE.split(line)
    for i in range(0, len(parts), 2):  # even parts are outside code spans
        parts[i] = _SUBSTITUTION.sub(r"\\|\1\\|", _TRAILING_UNDERSCORE.sub(r"\1\\_", parts[i]))
    return "".join(parts)


def _indent(line):
    return len(line) - len(line.lstrip())


def _process_docstring(app, what, name, obj, options, lines):
    out, block_indent = [], None  # inside a directive (math, code) or literal block: leave verbatim
    for line in lines:
        if block_indent is not None and (not line.strip() or _indent(line) > block_indent):
            out.append(line)
            continue
        block_indent = None
        if re.match(r"^\s*\.\. [\w:-]+::", line) or line.rstrip().endswith("::"):
            block_indent = _indent(line)
            out.append(line)
            continue
        out.append(_escape_plain_text(line))
    lines[:] = out


_GENERATED_METHODS = re.compile(r"^set_\w+_request$")


def _skip_member(app, what, name, obj, skip, options):
    # metadata-routing request methods are generated by scikit-learn (their docstrings point to
    # scikit-learn's own user guide); set_output and friends are scikit-learn's
    if _GENERATED_METHODS.match(name) or name in ("set_output",):
        return True
    return None


def _provide_example_file():
    """Give executed examples ``__file__`` (sphinx-gallery withholds it) so they can save their PNG."""
    from sphinx_gallery import gen_rst

    original = gen_rst.execute_code_block
    if getattr(original, "_sets_file", False):
        return

    def execute_code_block(compiler, block, example_globals, script_vars, *args, **kwargs):
        if example_globals is not None and "src_file" in script_vars:
            example_globals.setdefault("__file__", str(script_vars["src_file"]))
        return original(compiler, block, example_globals, script_vars, *args, **kwargs)

    execute_code_block._sets_file = True
    gen_rst.execute_code_block = execute_code_block


_provide_example_file()


def _example_output_folder(app):
    """Examples run in their source folder: their own PNGs go to the build folder instead (the gallery takes its
    images from the open figures)."""
    folder = Path(app.outdir) / "_example_figures"
    folder.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SKLEARN_FRONTIER_EXAMPLE_DIR", str(folder))


def setup(app):
    app.connect("builder-inited", _example_output_folder, priority=100)  # before sphinx-gallery runs them
    app.connect("autodoc-process-docstring", _process_docstring, priority=900)  # after numpydoc (500)
    app.connect("autodoc-skip-member", _skip_member)
