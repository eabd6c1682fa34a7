"""Running the command line in tests: the contract every command keeps.

``--json`` prints exactly one JSON object on one line and nothing on stderr (no progress bar,
no warning); bad input exits with status 2, prints nothing on stdout and one line (no
traceback) on stderr.
"""

from __future__ import annotations

import json

from privamp.cli import main


def run_json(argv, capsys):
    """Run ``privamp ARGV --json``; the parsed object."""
    status = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert err == ""
    lines = out.strip().splitlines()
    assert len(lines) == 1  # exactly one JSON object and nothing else
    return json.loads(lines[0])


def run_error(argv, capsys):
    """Run ``privamp ARGV`` expecting bad input; the one-line message."""
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in err
    return lines[0]
