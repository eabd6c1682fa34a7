"""Generate ``privamp/_special/_erfcx_table.py``: the piecewise polynomials of privamp's erfcx.

privamp evaluates the scaled complementary error function ``erfcx(x) = exp(x²) erfc(x)`` on
0 ≤ x ≤ 46 with one polynomial per cell of a uniform partition of ``y = 4/(4 + x)`` into
``CELLS`` cells (the change of variable makes the cells short where erfcx bends and long where it
is flat, ≈ 1/(√π x)). On each cell the polynomial of degree ``DEGREE`` in ``t = x − x_c``
interpolates erfcx at Chebyshev nodes, computed here with mpmath at 60 significant digits; the
cells are widened by 0.1 % on each side so that an index computed from a rounded y may pick a
neighbouring cell. The script then measures, in mpmath, the relative error of the stored
(double-rounded) polynomials at 41 points of every cell and refuses to write a table worse than
``1.2e-16`` (0.54 ulp: the truncation error is below 3e-18, the rest is the rounding of the
coefficients to doubles). Beyond x = 46 privamp uses the asymptotic series, not a table.

Run it as a module (needs mpmath, a test dependency; the file also runs by its path, it imports
nothing from privamp)::

    python -m privamp._special._precompute.erfcx_table          # writes the module
    python -m privamp._special._precompute.erfcx_table --check  # compares with the stored one

``tests/test_special.py`` runs ``--check`` so the stored table is the output of this script.
(SciPy keeps its generators the same way, in ``scipy/special/_precompute/``.)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import mpmath as mp

CELLS = 100
DEGREE = 11
X_MAX = 46  # y = 4/(4 + 46) = 0.08: cells 8 … 99
FIRST = CELLS * 4 // (4 + X_MAX)
WIDEN = mp.mpf("1e-3")
TOLERANCE = mp.mpf("1.2e-16")
TARGET = Path(__file__).resolve().parents[1] / "_erfcx_table.py"


def erfcx(x):
    return mp.exp(x * x) * mp.erfc(x)


def cell(i: int):
    """Centre (a double) and coefficients (doubles) of cell i, and its worst relative error."""
    ya, yb = mp.mpf(i) / CELLS, mp.mpf(i + 1) / CELLS
    xa, xb = 4 / yb - 4, 4 / ya - 4
    w = xb - xa
    xa, xb = max(xa - WIDEN * w, mp.mpf(0)), xb + WIDEN * w
    xc = mp.mpf(float((xa + xb) / 2))
    h = max(xc - xa, xb - xc)
    nodes = [xc + h * mp.cos(mp.pi * (2 * k + 1) / (2 * (DEGREE + 1))) for k in range(DEGREE + 1)]
    vander = mp.matrix([[((x - xc) / h) ** j for j in range(DEGREE + 1)] for x in nodes])
    b = mp.lu_solve(vander, mp.matrix([erfcx(x) for x in nodes]))
    coefs = [float(b[j] / h**j) for j in range(DEGREE + 1)]
    worst = mp.mpf(0)
    for k in range(41):
        x = xa + (xb - xa) * k / 40
        p = mp.mpf(0)
        for c in reversed(coefs):
            p = p * (x - xc) + mp.mpf(c)
        worst = max(worst, abs(p / erfcx(x) - 1))
    return float(xc), coefs, worst


def _tuple_lines(row) -> list[str]:
    """One coefficient row as a tuple of three numbers a line (lines under 100 characters)."""
    body = [", ".join(repr(c) for c in row[i:i + 3]) + "," for i in range(0, len(row), 3)]
    return ["    (", *[f"        {line}" for line in body], "    ),"]


def render() -> str:
    mp.mp.dps = 60
    centres, rows, worst = [], [], mp.mpf(0)
    for i in range(FIRST, CELLS):
        xc, coefs, err = cell(i)
        centres.append(xc)
        rows.append(coefs)
        worst = max(worst, err)
    if worst > TOLERANCE:
        raise SystemExit(f"table error {mp.nstr(worst, 3)} exceeds {mp.nstr(TOLERANCE, 3)}")
    lines = [
        '"""Piecewise polynomials of erfcx on 0 ≤ x ≤ 46 (generated; do not edit).',
        "",
        "Written by ``python -m privamp._special._precompute.erfcx_table``; see there and",
        ":mod:`privamp._special`.",
        f"Worst relative error of the stored polynomials (in exact arithmetic): "
        f"{mp.nstr(worst, 3)}.",
        '"""',
        "",
        f"CELLS = {CELLS}",
        f"FIRST = {FIRST}",
        f"X_MAX = {float(X_MAX)!r}",
        "",
        "CENTRES = (",
        *[f"    {c!r}," for c in centres],
        ")",
        "",
        "# COEFFICIENTS[k][j]: the coefficient of (x − CENTRES[k])**j in cell FIRST + k",
        "COEFFICIENTS = (",
        *[line for row in rows for line in _tuple_lines(row)],
        ")",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the stored table instead of writing it")
    args = parser.parse_args()
    text = render()
    if args.check:
        same = TARGET.read_text(encoding="utf-8") == text
        sys.stdout.write("stored table matches\n" if same
                         else "stored table differs from the generator\n")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    sys.stdout.write(f"wrote {TARGET}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
