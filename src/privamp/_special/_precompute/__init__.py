"""Generators of the tables in :mod:`privamp._special` (they need mpmath; privamp never
imports them)."""
