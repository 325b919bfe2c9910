"""kokoro_rt: the kokoro-rt engine (Kokoro-82M text to speech, native C++) from Python.

    import kokoro_rt
    engine = kokoro_rt.Engine()                  # finds the model as libkokoro does (see Engine)
    audio = engine.speak("Hello.")               # float32 numpy array, 24000 Hz
    for chunk in engine.stream("A longer text. With two sentences."):
        play(chunk)                              # each chunk as soon as the engine has it

kokoro_rt.compat.Kokoro has kokoro-onnx's call shapes (create, create_stream, get_voices).
"""
from __future__ import annotations

from . import _ffi
from .engine import Audio, Engine, Stream
from .errors import (ArgumentError, BusyError, Error, LanguageError, ModelError, SynthesisError, TextError,
                     VoiceError)
from .events import SAMPLE_RATE, Event, EventKind
from .fetch import data_dir, fetch_model

OK = _ffi.OK
STOPPED = _ffi.STOPPED

__all__ = ["Audio", "Engine", "Stream", "Event", "EventKind", "SAMPLE_RATE", "OK", "STOPPED", "Error",
           "ArgumentError", "BusyError", "LanguageError", "ModelError", "SynthesisError", "TextError", "VoiceError",
           "fetch_model", "data_dir", "library_version"]


def library_version() -> str:
    """The version of the libkokoro in use ("0.1.0")."""
    return _ffi.ffi.string(_ffi.lib().kokoro_version()).decode()
