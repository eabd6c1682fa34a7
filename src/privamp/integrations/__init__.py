"""Adapters to other differential-privacy libraries (each needs its optional extra).

Import the submodule you need, e.g. ``privamp.integrations.dp_accounting``; importing
``privamp`` or this package imports none of those libraries.
"""
