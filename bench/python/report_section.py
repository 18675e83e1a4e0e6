"""Sections of results/performance.md that a side-by-side script owns: the text between its two markers
``<!-- NAME:begin (script) -->`` and ``<!-- NAME:end -->``. bench/compare/compare.py rewrites the rest of the
file and keeps every such section (``sections``); a script replaces its own in place, or inserts it before the
criterion log on its first run (``write_section``).
"""

import os
import pathlib
import platform
import re
import subprocess
import time

_SECTION = re.compile(r"<!-- ([a-z0-9-]+):begin[^>]*-->.*?<!-- \1:end -->", re.S)
_CRITERION = "## Criterion benchmarks of this run"
_ROOT = pathlib.Path(__file__).resolve().parents[2]


def sections(text):
    """Every marked section of ``text``, in order, each ending with a newline."""
    return [m.group(0) + "\n" for m in _SECTION.finditer(text)]


def write_section(path, begin, end, section):
    """Replaces the text from ``begin`` to ``end`` in the file at ``path`` by ``section`` (which starts with
    ``begin`` and ends with ``end``); without the markers, inserts it before the criterion log, or appends it."""
    path = pathlib.Path(path)
    text = path.read_text() if path.exists() else ""
    if not section.endswith("\n"):
        section += "\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        text = head + section + ("\n" + tail if tail else "")
    elif _CRITERION in text:
        text = text.replace(_CRITERION, section + "\n" + _CRITERION, 1)
    else:
        text = text + "\n" + section
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)
    print(f"wrote {path}")


def cpu_description():
    """The CPU as `rfx run` records it in a manifest's host.cpu (model, family and model number, and the SIMD
    extensions that pick the BLAS and faer kernels): timings here are this CPU's."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                info.setdefault(k.strip(), v.strip())
    except OSError:
        return platform.processor() or "unknown CPU"
    cpu = info.get("model name") or "unknown CPU"
    if info.get("cpu family") and info.get("model"):
        cpu += f", family {info['cpu family']} model {info['model']}"
    flags = info.get("flags", "").split()
    simd = [x for x in ("avx512f", "avx2", "fma") if x in flags]
    return f"{cpu} ({', '.join(simd)})" if simd else cpu


def provenance(script, libraries):
    """The opening of a section: which script wrote it, when (UTC), at which rfx commit, with which libraries
    (``libraries``, e.g. "numpy 2.4.6, scikit-learn 1.9.1"), on which Python and CPU."""
    commit = subprocess.run(["git", "-C", str(_ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    return (f"Written by `{script}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, rfx commit "
            f"`{commit}`, {libraries}, Python {platform.python_version()}, {os.cpu_count()} CPUs of an "
            f"{cpu_description()}")


def loadavg():
    """The 1/5/15-minute load averages, as printed next to every timing ("1.65 1.85 1.95")."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])
