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


def distinct_colours(image) -> int:
    """The number of distinct colours of an image read by ``matplotlib.image.imread`` (floats in
    [0, 1], RGB or RGBA; a PNG holds 8 bits per channel, so ×255 and rounding is exact): each
    pixel packed into one integer, which NumPy counts ~30× faster than rows (``axis=0``)."""
    import numpy as np

    channels = np.rint(np.asarray(image, dtype=float) * 255).astype(np.uint64)
    packed = np.zeros(channels.shape[:-1], dtype=np.uint64)
    for c in range(channels.shape[-1]):
        packed = (packed << np.uint64(8)) | channels[..., c]
    return int(np.unique(packed.ravel()).size)
