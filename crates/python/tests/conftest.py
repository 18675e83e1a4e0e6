"""Shared fixtures of the rfxpy tests: the ``rfx`` binary (for the command-line equality tests and the data
fetch) and small data."""

import os
import pathlib
import shutil

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]


def _rfx_binary():
    """$RFX_BIN, else the debug or release binary of $CARGO_TARGET_DIR or target/, else `rfx` on PATH."""
    if os.environ.get("RFX_BIN"):
        return pathlib.Path(os.environ["RFX_BIN"])
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    for profile in ("debug", "release"):
        if (target / profile / "rfx").exists():
            return target / profile / "rfx"
    found = shutil.which("rfx")
    return pathlib.Path(found) if found else None


@pytest.fixture(scope="session")
def rfx_bin():
    path = _rfx_binary()
    if path is None or not path.exists():
        pytest.fail("the rfx binary was not found: build it (cargo build -p rfx-experiments) or set RFX_BIN")
    return path


@pytest.fixture
def rows():
    return np.random.RandomState(0).randn(300, 6)
