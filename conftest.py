"""Root pytest configuration: skip collecting modules whose optional extra is not installed."""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("torch") is None:  # the `torch` extra (see pyproject.toml)
    collect_ignore.append("src/privamp/applications/torch_sampler.py")
if importlib.util.find_spec("opacus") is None:  # the `opacus` extra
    collect_ignore.append("src/privamp/integrations/opacus.py")
if importlib.util.find_spec("dp_accounting") is None:  # the `dp_accounting` extra
    collect_ignore.append("src/privamp/integrations/dp_accounting.py")
