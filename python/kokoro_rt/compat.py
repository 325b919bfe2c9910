"""kokoro_rt.compat.Kokoro: kokoro-onnx's Kokoro class over kokoro-rt, so that a kokoro-onnx program switches by
changing its import:

    from kokoro_rt.compat import Kokoro          # was: from kokoro_onnx import Kokoro
    kokoro = Kokoro("kokoro-v1.0.onnx", "voices-v1.0.bin")
    samples, sample_rate = kokoro.create("Hello.", voice="af_heart", speed=1.0, lang="en-us")

Differences (docs/python.md, "Migrating from kokoro-onnx"): the ONNX model and the voices archive are not
read (a CompatWarning says so; the engine's own converted model and voice packs, the same Kokoro-82M voices,
are used), the text goes through kokoro-rt's frontend rather than espeak-ng's phonemizer, and trim,
sentence_pause, clause_pause, continuous, espeak_config and vocab_config are accepted and ignored (the engine
places pauses as the reference pipeline does). A voice given as a style array (a blend computed by the caller)
is used.
"""
from __future__ import annotations

import asyncio
import hashlib
import os
import tempfile
import warnings
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _ffi
from .engine import Engine
from .errors import VoiceError
from .events import SAMPLE_RATE

# kokoro-onnx (espeak-ng) language codes that kokoro-rt spells differently.
LANGUAGE_ALIASES = {"cmn": "zh", "zh-cn": "zh", "en": "en-us", "fr": "fr-fr", "pt": "pt-br", "ja-jp": "ja"}
VOICE_PACK_FLOATS = 510 * 256  # a voice pack: one 256-float style per phoneme count 1..510


@dataclass
class EspeakConfig:
    """kokoro-onnx's espeak-ng location; accepted so that `from kokoro_rt.compat import Kokoro, EspeakConfig`
    works, and not used (kokoro-rt links espeak-ng itself)."""

    lib_path: str | None = None
    data_path: str | None = None


class CompatWarning(UserWarning):
    """A kokoro-onnx argument that kokoro-rt does not use (the note says what is used instead)."""


def _note(message: str) -> None:
    warnings.warn(message, CompatWarning, stacklevel=3)


class Kokoro:
    """kokoro-onnx's Kokoro, spoken by kokoro-rt.

    model_path: a kokoro-rt model (.kokoro) is used; kokoro-onnx's .onnx file is not (a CompatWarning), and
    the engine finds its own model as kokoro_rt.Engine does. voices_path: an assets directory (config.json,
    voices/) or a directory of .bin voice packs is used; kokoro-onnx's voices-v1.0.bin (an .npz archive) is not
    (the engine's voice packs hold the same voices). threads/precision/mode/seed: kokoro-rt's own options.
    """

    def __init__(self, model_path: str | os.PathLike[str] | None = None,
                 voices_path: str | os.PathLike[str] | None = None, espeak_config: Any = None,
                 vocab_config: Any = None, *, threads: int | None = None, precision: str | None = None,
                 mode: str | None = None, seed: int = 0):
        model = None
        if model_path is not None:
            if str(model_path).endswith(".kokoro"):
                model = str(model_path)
            else:
                _note(f"{model_path}: kokoro-rt does not read ONNX models; it uses its own converted "
                      "Kokoro-82M model (kokoro_rt.fetch_model() puts it in place)")
        assets = None
        self._voices_dir: Path | None = None
        if voices_path is not None:
            p = Path(voices_path)
            if p.is_dir() and (p / "config.json").exists():
                assets = str(p)
            elif p.is_dir():
                self._voices_dir = p
                if (p.parent / "config.json").exists():
                    assets = str(p.parent)
            else:
                _note(f"{voices_path}: kokoro-rt does not read kokoro-onnx's voices archive; it uses its own "
                      "voice packs (the same Kokoro-82M voices). A style array passed as `voice` is used")
        if espeak_config is not None or vocab_config is not None:
            _note("espeak_config and vocab_config are not used: kokoro-rt has its own frontend and vocabulary")
        self._engine = Engine(model_path=model, assets_dir=assets, threads=threads, precision=precision)
        self._mode = mode
        self._seed = seed
        self._style_dir: tempfile.TemporaryDirectory[str] | None = None

    @property
    def engine(self) -> Engine:
        """The kokoro_rt.Engine underneath (events, SSML, phonemize, modes)."""
        return self._engine

    # -- kokoro-onnx's calls ------------------------------------------------------------------------------

    def create(self, text: str, voice: str | npt.NDArray[np.float32], speed: float = 1.0, lang: str = "en-us",
               is_phonemes: bool = False, trim: bool = True, sentence_pause: float = 0.25,
               clause_pause: float = 0.1, continuous: bool = False) -> tuple[npt.NDArray[np.float32], int]:
        """The audio of `text` as (float32 samples, 24000). voice: a name, a blend "af_heart:0.6,af_bella:0.4"
        or a style array of 510x256 floats. speed: 0.25..4. trim, sentence_pause, clause_pause and continuous
        are accepted and ignored. An unknown voice or language raises a ValueError (kokoro_rt.VoiceError,
        LanguageError)."""
        audio = self._engine.speak(text, **self._speak_args(voice, speed, lang, is_phonemes))
        return audio, SAMPLE_RATE

    async def create_stream(self, text: str, voice: str | npt.NDArray[np.float32], speed: float = 1.0,
                            lang: str = "en-us", is_phonemes: bool = False, trim: bool = True,
                            sentence_pause: float = 0.25, clause_pause: float = 0.1
                            ) -> AsyncGenerator[tuple[npt.NDArray[np.float32], int], None]:
        """Yields (samples, 24000) as the engine produces them: the first chunk after the engine's first
        slice (well before the first sentence is synthesized), each chunk all the audio ready at that
        moment. Leaving the loop stops the synthesis."""
        stream = self._engine.stream(text, **self._speak_args(voice, speed, lang, is_phonemes))
        loop = asyncio.get_running_loop()
        try:
            while True:
                chunk = await loop.run_in_executor(None, stream.read_available)
                if chunk is None:
                    break
                yield chunk, SAMPLE_RATE
        finally:
            stream.close()

    def get_voices(self) -> list[str]:
        """The voice names, sorted."""
        if self._voices_dir is not None:
            return sorted(p.stem for p in self._voices_dir.glob("*.bin"))
        return self._engine.voices()

    def get_voice_style(self, name: str) -> npt.NDArray[np.float32]:
        """A voice's style array (510, 1, 256), to blend and pass back as `voice`."""
        return np.fromfile(self._voice_pack_path(name), dtype="<f4").reshape(510, 1, 256)

    # -- helpers ------------------------------------------------------------------------------------------

    def _speak_args(self, voice: Any, speed: float, lang: str | None, is_phonemes: bool) -> dict[str, Any]:
        lang = LANGUAGE_ALIASES.get(lang, lang) if lang else None
        return {"voice": self._voice_spec(voice), "speed": speed, "lang": lang, "mode": self._mode,
                "seed": self._seed, "phonemes": is_phonemes}

    def _voice_spec(self, voice: Any) -> str:
        if isinstance(voice, np.ndarray):
            return self._style_file(voice)
        name = str(voice)
        if self._voices_dir is not None and ":" not in name and not name.endswith(".bin"):
            return str(self._voices_dir / f"{name}.bin")
        return name

    def _voice_pack_path(self, name: str) -> str:
        spec = self._voice_spec(name)
        if spec.endswith(".bin"):
            return spec
        path = Path(self._engine.assets_dir) / "voices" / f"{name}.bin"
        if not path.exists():
            raise VoiceError(_ffi.ERR_VOICE, f"voice {name!r}: no {path}")
        return str(path)

    def _style_file(self, style: npt.NDArray[Any]) -> str:
        """A caller's style array as a voice pack file the engine reads (one file per distinct array)."""
        data = np.ascontiguousarray(style, dtype="<f4")
        if data.size != VOICE_PACK_FLOATS:
            raise VoiceError(_ffi.ERR_VOICE, f"a voice style array must hold 510 x 256 floats (shape (510, 1, 256)),"
                                             f" got shape {style.shape}")
        if self._style_dir is None:
            self._style_dir = tempfile.TemporaryDirectory(prefix="kokoro_rt-styles-")
        path = Path(self._style_dir.name) / (hashlib.sha1(data.tobytes()).hexdigest() + ".bin")
        if not path.exists():
            data.tofile(path)
        return str(path)
