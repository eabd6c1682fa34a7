"""The Adult data shipped with privamp (:mod:`privamp.data`): the packaged file is the MUST
authors' CSV byte for byte (sha256), deterministic gzip, in the package data with its licences;
a damaged copy is refused by name; ``load_adult`` reads it by default and reads plain or gzip
copies given by path."""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import tomllib
from pathlib import Path

import numpy as np
import pytest

import privamp.data
from cli_helpers import run_error
from conftest import ADULT
from privamp.data import ADULT_FILE, ADULT_ROWS, ADULT_SHA256, adult_bytes, adult_path, adult_text
from privamp.errors import DataIntegrityError, InvalidParameterError, PrivampError
from privamp.reproduce.must2023.experiments import ADULT_COLUMNS, ADULT_LABEL, load_adult

ROOT = Path(__file__).resolve().parents[1]
#: the sha256 published in ../shared/data/README.md for adult_processed.csv
PUBLISHED_SHA256 = "17caf9ab6f4610cb03afca153fe76ab18cbb504e3650c1c62b74a6f447548ece"


def packaged() -> bytes:
    """The packaged compressed file, found as package data (what an installed wheel holds)."""
    return importlib.resources.files("privamp.data").joinpath(ADULT_FILE).read_bytes()


def test_packaged_copy_decompresses_to_the_published_sha256():
    assert ADULT_SHA256 == PUBLISHED_SHA256
    raw = gzip.decompress(packaged())
    assert hashlib.sha256(raw).hexdigest() == PUBLISHED_SHA256
    assert adult_bytes() == raw and adult_text() == raw.decode("utf-8")
    assert adult_path().read_bytes() == packaged()


def test_packaged_gzip_is_deterministic():
    """gzip header: deflate, no flags (no file name), mtime 0; recompressing the CSV at level 9
    with mtime 0 gives the same bytes."""
    gz = packaged()
    assert gz[:3] == b"\x1f\x8b\x08" and gz[3] == 0 and gz[4:8] == b"\0\0\0\0"
    assert gzip.compress(adult_bytes(), compresslevel=9, mtime=0) == gz


def test_package_data_and_licences():
    """The wheel contains the data and the licences (package data, read via importlib.resources;
    pyproject lists them)."""
    folder = importlib.resources.files("privamp.data")
    assert folder.joinpath(ADULT_FILE).is_file()
    licences = folder.joinpath("LICENSES.md").read_text(encoding="utf-8")
    for needed in ("zhao-xingyuan/MUST", "adult_processed2.csv", "MIT License",
                   "Copyright (c) 2023 zhao-xingyuan", "CC BY 4.0",
                   "Becker, B. & Kohavi, R. (1996). Adult. UCI Machine", "10.24432/C5XW20",
                   PUBLISHED_SHA256, "never a feature"):
        assert needed in " ".join(licences.split()), needed
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = config["tool"]["setuptools"]["package-data"]["privamp"]
    assert {"data/adult_processed.csv.gz", "data/LICENSES.md"} <= set(data)


@pytest.mark.skipif(not ADULT.exists(), reason="../shared/data not available")
def test_packaged_copy_equals_the_shared_file_row_for_row():
    shared = ADULT.read_bytes()
    assert hashlib.sha256(shared).hexdigest() == PUBLISHED_SHA256
    ours, theirs = adult_text().splitlines(), shared.decode("utf-8").splitlines()
    assert len(ours) == len(theirs) == ADULT_ROWS + 1
    assert ours == theirs
    for a, b in zip(load_adult(), load_adult(ADULT), strict=True):
        np.testing.assert_array_equal(a, b)


def test_load_adult_reads_the_packaged_copy():
    features, labels, names = load_adult()
    assert features.shape == (ADULT_ROWS, len(ADULT_COLUMNS)) and labels.shape == (ADULT_ROWS,)
    assert names == list(ADULT_COLUMNS) and ADULT_LABEL not in names  # the label is no feature
    assert set(np.unique(labels)) == {0.0, 1.0}


def damaged_copy(tmp_path: Path) -> Path:
    """The packaged CSV with one value changed (the first record's age 25 -> 26), recompressed."""
    text = adult_bytes()
    changed = text.replace(b"\n25,1,226802,", b"\n26,1,226802,", 1)
    assert changed != text and len(changed) == len(text)
    path = tmp_path / "adult_processed.csv.gz"
    path.write_bytes(gzip.compress(changed, mtime=0))
    return path


def test_a_damaged_copy_is_refused_by_name(tmp_path):
    path = damaged_copy(tmp_path)
    with pytest.raises(DataIntegrityError) as info:
        adult_bytes(path)
    message = str(info.value)
    assert str(path) in message and "sha256" in message and PUBLISHED_SHA256 in message
    assert info.value.path == str(path) and isinstance(info.value, PrivampError | ValueError)
    garbage = tmp_path / "garbage.csv.gz"
    garbage.write_bytes(b"not gzip at all")
    with pytest.raises(DataIntegrityError, match="not gzip data") as info:
        adult_bytes(garbage)
    assert str(garbage) in str(info.value)
    truncated = tmp_path / "truncated.csv.gz"
    truncated.write_bytes(packaged()[:1000])
    with pytest.raises(DataIntegrityError, match="truncated.csv.gz"):
        adult_bytes(truncated)
    with pytest.raises(DataIntegrityError, match="cannot be read"):
        adult_bytes(tmp_path / "missing.csv.gz")


def test_load_adult_and_the_cli_refuse_a_damaged_packaged_copy(tmp_path, monkeypatch, capsys):
    path = damaged_copy(tmp_path)
    monkeypatch.setattr(privamp.data, "adult_path", lambda: path)
    with pytest.raises(DataIntegrityError, match="adult_processed.csv.gz"):
        load_adult()
    line = run_error(["experiment", "logistic", "--quick"], capsys)
    assert str(path) in line and "damaged" in line and "reinstall privamp" in line


def test_load_adult_reads_a_given_copy_plain_or_gzip(tmp_path):
    """A path is the user's copy: read as it is (no sha256 check), gzip when named ``.gz``."""
    cols = [*ADULT_COLUMNS, ADULT_LABEL]
    text = ",".join(cols) + "\n" + "".join(
        ",".join(["1"] * (len(cols) - 1) + [str(i % 2)]) + "\n" for i in range(4))
    plain = tmp_path / "small.csv"
    plain.write_text(text)
    gz = tmp_path / "small.CSV.GZ"
    gz.write_bytes(gzip.compress(text.encode()))
    a, b = load_adult(plain), load_adult(gz)
    assert a[0].shape == (4, len(ADULT_COLUMNS))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    load_adult(damaged_copy(tmp_path))  # a modified copy given by path is the user's choice
    not_gz = tmp_path / "plain.csv.gz"
    not_gz.write_text(text)
    with pytest.raises(InvalidParameterError, match="gzip-compressed CSV file") as info:
        load_adult(not_gz)
    assert info.value.parameter == "data" and str(not_gz) in str(info.value)
    with pytest.raises(InvalidParameterError, match="existing"):
        load_adult(tmp_path / "missing.csv.gz")


def test_cli_logistic_gz_data_errors_name_the_option(tmp_path, capsys):
    bad = tmp_path / "bad.csv.gz"
    bad.write_bytes(b"\x1f\x8b\x08 broken")
    line = run_error(["experiment", "logistic", "--data", str(bad), "--quick"], capsys)
    assert "--data must be a gzip-compressed CSV file" in line and str(bad) in line
