"""Exceptions: every failure of the engine is a kokoro_rt.Error carrying the engine's message and status.

The subclasses that describe a bad argument (voice, language, text, argument) also derive from ValueError, so
code written for kokoro-onnx (which raises ValueError for an unknown voice or a bad speed) keeps catching them.
"""
from __future__ import annotations

from . import _ffi


class Error(Exception):
    """A call into the engine failed. `status` is the C API's KOKORO_ERR_* code, `message` the engine's text."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class ArgumentError(Error, ValueError):
    """An argument the engine refused: speed outside 0.25..4, unknown mode, threads outside 1..64..."""


class TextError(Error, ValueError):
    """The text cannot be spoken: empty, or bytes that are not UTF-8."""


class VoiceError(Error, ValueError):
    """Unknown or unreadable voice (name, .bin path or blend)."""


class LanguageError(Error, ValueError):
    """Unsupported language, or a language whose data is missing (Japanese or Mandarin dictionaries)."""


class ModelError(Error):
    """The model file or the assets are missing or invalid, or libkokoro itself was not found."""


class BusyError(Error):
    """Another synthesis is running on the same handle (one speak at a time per engine or session)."""


class SynthesisError(Error):
    """The engine could not speak the text (the message says why)."""


_BY_STATUS: dict[int, type[Error]] = {
    _ffi.ERR_INVALID_ARGUMENT: ArgumentError,
    _ffi.ERR_INVALID_TEXT: TextError,
    _ffi.ERR_VOICE: VoiceError,
    _ffi.ERR_LANGUAGE: LanguageError,
    _ffi.ERR_MODEL: ModelError,
    _ffi.ERR_BUSY: BusyError,
    _ffi.ERR_SYNTHESIS: SynthesisError,
}


def error_for(status: int, message: str) -> Error:
    """The exception for a negative status from the C API."""
    return _BY_STATUS.get(status, Error)(status, message)
