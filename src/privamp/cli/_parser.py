"""The argument parser class and the usage error of the command line: light (argparse and re
only), so that ``privamp --help`` does not import the library."""

from __future__ import annotations

import argparse
import re


class CliError(Exception):
    """A usage error: reported as one line ``privamp: error: <message>``, exit status 2.

    The message names the option, the rule it breaks and the value."""


class Parser(argparse.ArgumentParser):
    #: Arguments that are negative numbers, not options: -4, -1e-3, -inf (argparse's own
    #: pattern misses exponents and infinities, so ``--bounds -1e3 1e3`` failed to parse).
    NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$|^-(inf|infinity|nan)$",
                                 re.IGNORECASE)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = self.NEGATIVE_NUMBER

    def error(self, message: str):  # one line, no usage dump
        # "argument --n: must be ..." (a checked option type below) reads "--n must be ..."
        raise CliError(re.sub(r"^argument (\S+): must be ", r"\1 must be ", message))
