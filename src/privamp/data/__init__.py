"""Data shipped with privamp: the UCI Adult census data as preprocessed by the MUST paper's
authors, read by the logistic-regression experiment (``privamp experiment logistic``) and by the
reproduction of MUST Table 8 and Figure S4 (``privamp reproduce``), so that both run in a fresh
install without ``--data``.

``adult_processed.csv.gz`` is the gzip-compressed copy (mtime 0, no file name in the header) of
``adult_processed2.csv`` from the MUST authors' repository (zhao-xingyuan/MUST, MIT licence):
41,292 rows, 13 numeric features and the binary label ``income`` (the last column; it is the
label, never a feature). The underlying data is the UCI Adult data set (Becker & Kohavi 1996,
https://doi.org/10.24432/C5XW20, CC BY 4.0). Sources, licences and the citation:
``LICENSES.md`` in this folder.

Every read of the packaged copy checks the sha256 of the decompressed bytes against
:data:`ADULT_SHA256` and raises :class:`~privamp.errors.DataIntegrityError`, naming the file,
on a mismatch.

>>> from privamp.data import adult_path, adult_text
>>> adult_path().name
'adult_processed.csv.gz'
>>> adult_text().splitlines()[0].split(",")[-1]
'income'
"""

from __future__ import annotations

import gzip
import hashlib
import zlib
from pathlib import Path

from ..errors import DataIntegrityError

__all__ = ["ADULT_FILE", "ADULT_ROWS", "ADULT_SHA256", "adult_bytes", "adult_path", "adult_text"]

#: The packaged file (in this package's folder).
ADULT_FILE = "adult_processed.csv.gz"
#: sha256 of the decompressed CSV (the MUST authors' ``adult_processed2.csv``).
ADULT_SHA256 = "17caf9ab6f4610cb03afca153fe76ab18cbb504e3650c1c62b74a6f447548ece"
#: Data rows of the CSV (30,969 train and 10,323 test in the MUST experiment).
ADULT_ROWS = 41_292


def adult_path() -> Path:
    """The path of the packaged compressed Adult CSV (not checked: read it with
    :func:`adult_bytes` or :func:`adult_text`)."""
    return Path(__file__).resolve().with_name(ADULT_FILE)


def adult_bytes(path: str | Path | None = None) -> bytes:
    """The decompressed bytes of the packaged Adult CSV (``path``: another copy of the
    compressed file, checked the same way), after checking their sha256 against
    :data:`ADULT_SHA256`.

    Raises :class:`~privamp.errors.DataIntegrityError` naming the file when it cannot be read,
    is not gzip data, or decompresses to other bytes.
    """
    p = adult_path() if path is None else Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise DataIntegrityError(p, "it cannot be read ("
                                 + (exc.strerror or type(exc).__name__) + ")") from None
    try:
        data = gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise DataIntegrityError(p, f"it is not gzip data ({exc or type(exc).__name__})") \
            from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != ADULT_SHA256:
        raise DataIntegrityError(p, f"the sha256 of its decompressed bytes is {digest}, not "
                                    f"{ADULT_SHA256}")
    return data


def adult_text(path: str | Path | None = None) -> str:
    """The packaged Adult CSV as text (:func:`adult_bytes`, checked, decoded as UTF-8)."""
    return adult_bytes(path).decode("utf-8")
