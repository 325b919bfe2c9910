"""The package's cffi declarations (kokoro_rt/_ffi.py) against include/kokoro.h: every function the package
declares has the header's signature, every struct the header's fields in order, every status code its value.
cffi computes struct layouts from its own declarations, so a drift here would corrupt calls."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from kokoro_rt import _ffi

HEADER = Path(__file__).resolve().parents[2] / "include" / "kokoro.h"


def normalize(decl: str) -> str:
    decl = re.sub(r"/\*.*?\*/", " ", decl, flags=re.S)
    decl = decl.replace("KOKORO_API", " ")
    decl = re.sub(r"\s+", " ", decl)
    decl = re.sub(r"\s*([(),;*{}])\s*", r"\1", decl)
    return decl.strip()


def header_text() -> str:
    if not HEADER.exists():
        pytest.fail(f"{HEADER} not found: these tests run from the source tree")
    return normalize(re.sub(r"^\s*#.*$", "", HEADER.read_text(), flags=re.M))  # without preprocessor lines


def declarations(text: str) -> dict[str, str]:
    """name -> normalized declaration, for functions and typedef'd structs and function pointers."""
    out = {}
    for m in re.finditer(r"typedef struct (\w+)\{[^}]*\}\w+;", text):
        out[m.group(1)] = m.group(0)
    text = re.sub(r"typedef struct (\w+)\{[^}]*\}\w+;", ";", text)
    for stmt in text.split(";"):
        stmt = stmt.split("}")[-1].split("{")[-1].strip()  # what follows `extern "C" {` or an enum's braces
        if m := re.fullmatch(r"typedef int\(\*(\w+)\)\(.*\)", stmt):
            out[m.group(1)] = stmt + ";"
        elif m := re.fullmatch(r"[\w ]+?\**(kokoro_\w+)\(.*\)", stmt):
            out[m.group(1)] = stmt + ";"
    return out


def test_every_cdef_declaration_matches_the_header():
    header = declarations(header_text())
    ours = declarations(normalize(_ffi.CDEF))
    assert len(ours) >= 12, ours.keys()
    for name, decl in ours.items():
        assert name in header, f"{name} is declared in _ffi.CDEF but not in kokoro.h"
        assert decl == header[name], f"{name}:\n  cdef:   {decl}\n  header: {header[name]}"


def test_status_codes_match_the_header():
    text = HEADER.read_text()
    codes = {m.group(1): int(m.group(2)) for m in
             re.finditer(r"#define KOKORO_(OK|STOPPED|ERR_\w+) \(?(-?\d+)\)?", text)}
    assert len(codes) == 12, codes
    for name, value in codes.items():
        assert getattr(_ffi, name) == value, name
