"""Reader and writer of the engine's ".kokoro" container (numpy only), as described in core/model_file.h.

    bytes 0..7    magic "KOKORORT"
    bytes 8..11   format version, uint32 little-endian (1)
    bytes 12..15  reserved, zero
    bytes 16..23  header length H, uint64 little-endian
    bytes 24..    UTF-8 JSON {"config": {...}, "tensors": [{"name", "dtype", "shape", "offset", "nbytes"}...], ...}
    then          float32 little-endian tensor data, each tensor at a 64-byte aligned absolute offset

The same container holds model weights and golden test data (tests/data/golden/), so the C++ ModelFile
class reads both.
"""
from __future__ import annotations

import json
import os
import struct

import numpy as np

MAGIC = b"KOKORORT"
VERSION = 1
ALIGNMENT = 64
PREFIX_SIZE = 24


class KokoroFileError(Exception):
    pass


def _align_up(v: int) -> int:
    return (v + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def read(path: str, mmap: bool = True) -> tuple[dict, dict[str, np.ndarray]]:
    """Returns (header, {name: float32 array}). Validates layout like ModelFile::open; raises naming the file."""
    def fail(what: str) -> KokoroFileError:
        return KokoroFileError(f"model file {path}: {what}")

    size = os.path.getsize(path)
    with open(path, "rb") as f:
        prefix = f.read(PREFIX_SIZE)
        if len(prefix) < PREFIX_SIZE:
            raise fail(f"truncated: {size} bytes is smaller than the 24-byte prefix")
        if prefix[:8] != MAGIC:
            raise fail("wrong magic")
        version, _reserved, header_len = struct.unpack("<IIQ", prefix[8:])
        if version != VERSION:
            raise fail(f"format version {version}, this reader knows {VERSION}")
        if header_len > size - PREFIX_SIZE:
            raise fail("truncated: header runs past the end of the file")
        try:
            header = json.loads(f.read(header_len).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise fail(f"corrupt header: {e}") from e
    data_start = PREFIX_SIZE + header_len
    raw = np.memmap(path, dtype=np.uint8, mode="r") if mmap else np.fromfile(path, dtype=np.uint8)
    tensors: dict[str, np.ndarray] = {}
    for t in header["tensors"]:
        name, shape, offset, nbytes = t["name"], list(t["shape"]), int(t["offset"]), int(t["nbytes"])
        if t["dtype"] != "f32":
            raise fail(f"tensor {name}: dtype {t['dtype']} is not supported")
        if name in tensors:
            raise fail(f"duplicate tensor {name}")
        if any(d < 0 for d in shape) or nbytes != int(np.prod(shape, dtype=np.int64)) * 4:
            raise fail(f"tensor {name}: {nbytes} bytes do not match shape {shape}")
        if offset % ALIGNMENT or offset < data_start:
            raise fail(f"tensor {name}: misplaced offset {offset}")
        if offset + nbytes > size:
            raise fail(f"truncated: tensor {name} ends at byte {offset + nbytes} but the file has {size}")
        tensors[name] = raw[offset:offset + nbytes].view("<f4").reshape(shape)
    return header, tensors


def write(path: str, config: dict, tensors: dict[str, np.ndarray], source: str = "",
          converter: str = "tools/reference/kokoro_file.py") -> int:
    """Writes tensors (converted to float32, C order) in insertion order; returns the file size.

    Writes to path + ".tmp" and renames, so a failure never leaves a half-written file behind.
    """
    arrays = []
    for name, a in tensors.items():
        a = np.asarray(a, dtype="<f4")
        a = np.ascontiguousarray(a).reshape(a.shape)  # ascontiguousarray alone turns 0-d into 1-d
        if not np.all(np.isfinite(a)):
            raise KokoroFileError(f"{path}: tensor {name} has non-finite values")
        arrays.append((name, a))
    entries = [{"name": n, "dtype": "f32", "shape": list(a.shape), "offset": 0, "nbytes": a.nbytes}
               for n, a in arrays]
    header = {"config": config, "tensors": entries, "source": source, "converter": converter}
    # The header lists the offsets, whose digits change its length: lay the data out after a header budget
    # with room for 20-digit offsets, then pad the JSON with spaces up to that budget.
    budget = len(json.dumps(header, ensure_ascii=False).encode("utf-8")) + 24 * len(entries) + 64
    offset = _align_up(PREFIX_SIZE + budget)
    for e in entries:
        e["offset"] = offset
        offset = _align_up(offset + e["nbytes"])
    header_bytes = json.dumps(header, ensure_ascii=False).encode("utf-8")
    assert len(header_bytes) <= budget
    header_bytes += b" " * (budget - len(header_bytes))
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(MAGIC + struct.pack("<IIQ", VERSION, 0, len(header_bytes)) + header_bytes)
        for e, (_, a) in zip(entries, arrays):
            f.write(b"\0" * (e["offset"] - f.tell()))
            f.write(a.tobytes())
    os.replace(tmp, path)
    return os.path.getsize(path)
