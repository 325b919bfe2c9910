"""The C API of libkokoro (include/kokoro.h) as cffi sees it, and where the library is loaded from.

cffi's ABI mode: the declarations below are parsed at import, the library is dlopen'ed, and calls go through
libffi. No compiler, no Python headers, one package for every CPython 3.11+. The declarations must match
include/kokoro.h; python/tests/test_header.py compares them with the header field by field.
"""
from __future__ import annotations

import os
from pathlib import Path

import cffi

# The part of include/kokoro.h the package uses (the model/session calls), copied declaration by declaration (cffi cannot read the
# header's preprocessor lines). Structs are complete: cffi computes their layout, and the library checks
# `size` against its own sizeof.
CDEF = """
const char* kokoro_version(void);
const char* kokoro_last_error(void);
const char* kokoro_status_string(int status);

typedef struct kokoro_config {
  size_t size;
  const char* model_path;
  const char* assets_dir;
  int threads;
  const char* precision;
  int verbose;
} kokoro_config;


typedef struct kokoro_speak_options {
  size_t size;
  const char* voice;
  const char* language;
  float speed;
  const char* mode;
  uint64_t seed;
  int phonemes;
} kokoro_speak_options;

typedef struct kokoro_event {
  size_t size;
  int kind;
  size_t text_begin;
  size_t text_end;
  uint64_t start_sample;
  uint64_t end_sample;
  const char* name;
} kokoro_event;

typedef int (*kokoro_audio_callback)(const float* samples, size_t count, void* user_data);
typedef int (*kokoro_event_callback)(const kokoro_event* event, void* user_data);

typedef struct kokoro_model kokoro_model;
typedef struct kokoro_session kokoro_session;
kokoro_model* kokoro_model_open(const kokoro_config* config);
void kokoro_model_close(kokoro_model* model);
int kokoro_model_list_voices(kokoro_model* model, const char* const** names, size_t* count);
kokoro_session* kokoro_session_new(kokoro_model* model, const kokoro_speak_options* defaults);
int kokoro_session_speak(kokoro_session* session, const char* text, const kokoro_speak_options* options,
                         kokoro_audio_callback on_audio, kokoro_event_callback on_event, void* user_data);
int kokoro_session_stop(kokoro_session* session);
void kokoro_session_close(kokoro_session* session);
int kokoro_model_assets_dir(kokoro_model* model, const char** dir);
int kokoro_model_phonemize(kokoro_model* model, const char* text, const char* language,
                           const char** phonemes);
"""

ffi = cffi.FFI()
ffi.cdef(CDEF)

# Status codes (include/kokoro.h).
OK = 0
STOPPED = 1
ERR_INVALID_ARGUMENT = -1
ERR_INVALID_HANDLE = -2
ERR_STRUCT_SIZE = -3
ERR_INVALID_TEXT = -4
ERR_VOICE = -5
ERR_LANGUAGE = -6
ERR_BUSY = -7
ERR_SYNTHESIS = -8
ERR_MODEL = -9
ERR_INTERNAL = -10

SONAME = "libkokoro.so.0"
PACKAGE_DIR = Path(__file__).resolve().parent

_lib = None


def library_candidates() -> list[str]:
    """Where libkokoro is looked for, in order: $KOKORO_RT_LIBRARY (the file, or a directory holding it,
    e.g. a build tree's build/lib), the copy installed inside this package by `pip install .`, then the
    system's loader path (the .deb's /usr/lib/x86_64-linux-gnu)."""
    out = []
    env = os.environ.get("KOKORO_RT_LIBRARY")
    if env:
        out.append(str(Path(env) / SONAME) if Path(env).is_dir() else env)
    out.append(str(PACKAGE_DIR / "lib" / SONAME))
    out.append(SONAME)
    return out


def lib():
    """The loaded library (loaded on first use, so that `import kokoro_rt` and fetch_model() work without it)."""
    global _lib
    if _lib is None:
        from .errors import ModelError

        tried = []
        for cand in library_candidates():
            if os.sep in cand and not os.path.exists(cand):
                tried.append(f"{cand} (missing)")
                continue
            try:
                _lib = ffi.dlopen(cand)
                break
            except OSError as ex:
                tried.append(f"{cand} ({ex})")
        if _lib is None:
            raise ModelError(ERR_MODEL, "libkokoro not found; tried:\n  " + "\n  ".join(tried) +
                        "\n(pip install . builds it into the package; set KOKORO_RT_LIBRARY to use a build tree's)")
    return _lib


def library_path() -> str:
    """The file the library was loaded from."""
    lib()
    import ctypes
    import ctypes.util  # noqa: F401

    # dladdr through the loader's own bookkeeping: the path of an exported symbol's object.
    class DlInfo(ctypes.Structure):
        _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                    ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]

    libdl = ctypes.CDLL(None)
    info = DlInfo()
    addr = int(ffi.cast("uintptr_t", ffi.addressof(lib(), "kokoro_version")))
    if libdl.dladdr(ctypes.c_void_p(addr), ctypes.byref(info)) and info.dli_fname:
        return os.fsdecode(info.dli_fname)
    return ""


def last_error() -> str:
    return ffi.string(lib().kokoro_last_error()).decode("utf-8", "replace")


def cstr(s: str | None, keep: list):
    """A NUL-terminated UTF-8 copy of `s` that lives as long as `keep` (NULL for None)."""
    if s is None:
        return ffi.NULL
    b = ffi.new("char[]", s.encode("utf-8"))
    keep.append(b)
    return b
