"""kokoro_rt.Engine: the model loaded once, speech as numpy arrays or as a stream of chunks and events.

An Engine is a kokoro_model (include/kokoro.h); each Stream speaks on a kokoro_session of it, taken from the
Engine's idle sessions or made for it, so streams on one Engine run at the same time (threads), sharing the
weights and the compute threads.

Threads: the engine computes on its own threads; a call into libkokoro releases the GIL (cffi does so for
every call), and the C callbacks, which run on an engine thread, hand each chunk to the Python caller
through a bounded queue. A Stream runs kokoro_session_speak on a worker thread of its own, so the caller's
thread only waits on that queue and a KeyboardInterrupt or a `break` reaches it at once; closing the stream
calls kokoro_session_stop, which makes the engine abandon its work between chunks.
"""
from __future__ import annotations

import atexit
import queue
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _ffi
from ._ffi import ffi
from .errors import ArgumentError, Error, ModelError, TextError, error_for
from .events import KIND_BY_CODE, SAMPLE_RATE, ByteToChar, Event

Audio = npt.NDArray[np.float32]

PRECISIONS = ("fp32", "bf16", "bf16-all", "int8")
# Sessions kept for reuse once their stream has ended (a new one costs its engine threads, tens of ms).
IDLE_SESSIONS = 4
# Chunks (and events) waiting for the consumer before the engine's output thread is held back. The engine
# keeps computing into its own buffers meanwhile; this bound only keeps a stalled consumer from growing memory.
QUEUE_CHUNKS = 64


# Engines still open when the interpreter exits are closed first, while every library is whole: a stream left
# running at exit would otherwise be joined by libkokoro's own exit-time destructors after the libraries it
# computes with (oneDNN) have torn down theirs.
_open_engines: weakref.WeakSet[Engine] = weakref.WeakSet()


@atexit.register
def _close_open_engines() -> None:
    for engine in list(_open_engines):
        engine.close()


class Engine:
    """The Kokoro-82M model, its voices and frontends, loaded once (about a second).

    model_path/assets_dir: None finds them as the C API does ($KOKORO_MODEL / $KOKORO_ASSETS, then the data
    installed with the package, where kokoro_rt.fetch_model() puts the model, then the source tree it was
    built from). threads: compute threads (default 2). precision: "fp32", "bf16", "bf16-all" or "int8" (default:
    $KOKORO_PRECISION, else int8 where the CPU has AVX512-VNNI and -BF16, bf16-all where it has AVX512-BF16, else
    fp32). threads and precision are
    process-wide in libkokoro: the last Engine opened sets them.
    """

    sample_rate: int = SAMPLE_RATE

    def __init__(self, model_path: str | None = None, assets_dir: str | None = None, threads: int | None = None,
                 precision: str | None = None, verbose: bool = False):
        if threads is not None and not 1 <= int(threads) <= 64:
            raise ArgumentError(_ffi.ERR_INVALID_ARGUMENT, f"threads {threads} is outside 1..64")
        if precision is not None and precision not in PRECISIONS:
            raise ArgumentError(_ffi.ERR_INVALID_ARGUMENT, f"precision {precision!r} is not one of {PRECISIONS}")
        lib = _ffi.lib()
        keep: list = []
        cfg = ffi.new("kokoro_config*")
        cfg.size = ffi.sizeof("kokoro_config")
        cfg.model_path = _ffi.cstr(None if model_path is None else str(model_path), keep)
        cfg.assets_dir = _ffi.cstr(None if assets_dir is None else str(assets_dir), keep)
        cfg.threads = int(threads or 0)
        cfg.precision = _ffi.cstr(precision, keep)
        cfg.verbose = 1 if verbose else 0
        handle = lib.kokoro_model_open(cfg)
        if handle == ffi.NULL:
            message = _ffi.last_error()
            if "fetch" in message:
                message += "\n(from Python: kokoro_rt.fetch_model())"
            raise ModelError(_ffi.ERR_MODEL, message)
        self._lib = lib
        self._handle = handle
        self._lock = threading.Lock()
        self._streams: set[_Synthesis] = set()
        self._idle: list = []  # sessions with no stream
        _open_engines.add(self)

    # -- lifetime -------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Stops every stream of this engine and frees it. Calls after this raise kokoro_rt.Error."""
        with self._lock:
            handle, self._handle = self._handle, None
            streams = list(self._streams)
        for s in streams:
            s.close()
        with self._lock:
            idle, self._idle = self._idle, []
        for session in idle:
            self._lib.kokoro_session_close(session)
        if handle is not None:
            self._lib.kokoro_model_close(handle)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is not None:
            self.close()

    def _require_open(self):
        handle = self._handle
        if handle is None:
            raise Error(_ffi.ERR_INVALID_HANDLE, "the engine is closed")
        return handle

    # -- queries --------------------------------------------------------------------------------------------

    def voices(self) -> list[str]:
        """The voices of the engine's assets, sorted ("af_alloy", ..., "zm_yunyang")."""
        names = ffi.new("const char* const**")
        count = ffi.new("size_t*")
        status = self._lib.kokoro_model_list_voices(self._require_open(), names, count)
        if status != _ffi.OK:
            raise error_for(status, _ffi.last_error())
        return [ffi.string(names[0][i]).decode("utf-8") for i in range(count[0])]

    @property
    def assets_dir(self) -> str:
        """The assets directory the engine reads (config.json, voices/<name>.bin, lexicons/)."""
        out = ffi.new("const char**")
        status = self._lib.kokoro_model_assets_dir(self._require_open(), out)
        if status != _ffi.OK:
            raise error_for(status, _ffi.last_error())
        return ffi.string(out[0]).decode("utf-8", "surrogateescape")

    def phonemize(self, text: str, lang: str | None = None) -> str:
        """The phonemes the engine speaks for `text` in `lang` (None: "en-us"): Kokoro's symbols, one segment
        per line (a line of text, its sentences joined up to 510 symbols, as the model is called on them).
        Each line can be spoken with speak(line, phonemes=True). Text with nothing to say gives ""."""
        data = _encode_text(text, allow_empty=True)
        keep: list = []
        out = ffi.new("const char**")
        status = self._lib.kokoro_model_phonemize(self._require_open(), data, _ffi.cstr(lang, keep), out)
        if status != _ffi.OK:
            raise error_for(status, _ffi.last_error())
        return ffi.string(out[0]).decode("utf-8")

    # -- speech ---------------------------------------------------------------------------------------------

    def speak(self, text: str | bytes, voice: str = "af_heart", speed: float = 1.0, lang: str | None = None,
              mode: str | None = None, seed: int = 0, phonemes: bool = False) -> Audio:
        """Speaks `text` and returns all of its audio: float32 samples at 24000 Hz, mono.

        voice: a name ("af_heart"), a .bin voice pack path, or a blend "af_heart:0.6,af_bella:0.4".
        lang: "en-us", "en-gb", "es", "fr-fr", "hi", "it", "pt-br", "ja", "zh"; None: the voice's (its first
        letter). mode: "slice" (default) or "exact" (docs/streaming.md). seed: the noise seed; the
        same seed gives the same audio. phonemes: `text` is a string of Kokoro's phoneme symbols. Text that
        starts with <speak> is read as SSML. A KeyboardInterrupt stops the synthesis and propagates.
        """
        with self.stream(text, voice=voice, speed=speed, lang=lang, mode=mode, seed=seed, phonemes=phonemes) as s:
            chunks = list(s)
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)

    def stream(self, text: str | bytes, voice: str = "af_heart", speed: float = 1.0, lang: str | None = None,
               mode: str | None = None, seed: int = 0, phonemes: bool = False, events: bool = False) -> Stream:
        """Speaks `text` as an iterator of audio chunks (float32 numpy arrays), each as soon as the engine
        has it; their concatenation is what speak() returns for the same arguments. events=True also yields
        Event objects, in order with the audio: an event comes after the chunk that holds its start.

        Synthesis starts at once, on the engine's threads. close(), leaving a `with` block, or dropping the
        iterator (a `break` out of a for loop over it) stops it; arguments as for speak().
        """
        return Stream(self, text, voice=voice, speed=speed, lang=lang, mode=mode, seed=seed, phonemes=phonemes,
                      events=events)

    # A stream's session: an idle one, or a new one; back to the idle ones when the stream ends.
    def _start(self, stream: _Synthesis):
        with self._lock:
            handle = self._require_open()
            session = self._idle.pop() if self._idle else None
            self._streams.add(stream)
        if session is None:
            session = self._lib.kokoro_session_new(handle, ffi.NULL)
            if session == ffi.NULL:
                message = _ffi.last_error()
                with self._lock:
                    self._streams.discard(stream)
                raise Error(_ffi.ERR_INTERNAL, message)
        return session

    def _end(self, stream: _Synthesis, session) -> None:
        with self._lock:
            self._streams.discard(stream)
            keep = self._handle is not None and len(self._idle) < IDLE_SESSIONS
            if keep:
                self._idle.append(session)
        if not keep:
            self._lib.kokoro_session_close(session)


class _End:
    """The last item of a synthesis' queue: how kokoro_session_speak returned."""

    def __init__(self, status: int, message: str):
        self.status = status
        self.message = message


class _Synthesis:
    """One kokoro_session_speak on a worker thread, and the queue its callbacks fill. Held by the worker thread and
    the callbacks, never by the user: the Stream that the user holds closes it when dropped."""

    def __init__(self, engine: Engine, data: bytes, options, offsets: ByteToChar | None):
        self.engine = engine
        self.text = ffi.new("char[]", data)
        self.options = options
        self.offsets = offsets
        self.queue: queue.Queue = queue.Queue(QUEUE_CHUNKS)
        self.lock = threading.Lock()
        self.closing = False
        self.finished = False
        self.callback_error: BaseException | None = None
        self.status: int | None = None
        self.handle = ffi.new_handle(self)
        self.session = engine._start(self)
        self.thread = threading.Thread(target=self.run, name="kokoro_rt.stream", daemon=True)
        self.thread.start()

    def run(self) -> None:
        status, message = _ffi.ERR_INTERNAL, "internal error"
        try:
            if self.closing:
                status, message = _ffi.STOPPED, "stopped"
            else:
                on_event = _on_event if self.offsets is not None else ffi.NULL
                status = self.engine._lib.kokoro_session_speak(self.session, self.text, self.options, _on_audio,
                                                               on_event, self.handle)
                message = _ffi.last_error() if status != _ffi.OK else ""
        except Error as ex:
            status, message = ex.status, ex.message
        except BaseException as ex:  # noqa: BLE001 - handed to the consumer, which raises it
            self.callback_error = self.callback_error or ex
        finally:
            self.status = status
            self.put(_End(status, message))

    def put(self, item: object) -> int:
        """Hands an item to the consumer, waiting while the queue is full; 1 (stop) once closing."""
        while not self.closing:
            try:
                self.queue.put(item, timeout=0.05)
                return 0
            except queue.Full:
                pass
        return 1

    def audio(self, samples, count: int) -> int:
        chunk = np.frombuffer(ffi.buffer(samples, count * 4), dtype=np.float32).copy()
        return self.put(chunk)

    def event(self, ev) -> int:
        kind = KIND_BY_CODE.get(ev.kind)
        to_char = self.offsets
        if kind is None or to_char is None:
            return 0  # a kind this package does not know (a newer library): ignored, as kokoro.h asks
        begin, end = to_char(ev.text_begin), to_char(ev.text_end)
        name = ffi.string(ev.name).decode("utf-8", "replace") if ev.name != ffi.NULL else None
        text = to_char.text[begin:end] if end > begin else ""
        return self.put(Event(kind, int(ev.start_sample), int(ev.end_sample), begin, end, text, name))

    def close(self) -> None:
        with self.lock:  # the session is ours until finish() gives it back: never stop another stream's
            if self.finished:
                return
            self.closing = True
            self.engine._lib.kokoro_session_stop(self.session)
        self.finish()
        # A consumer waiting in next() on another thread (Engine.close() from elsewhere) ends with the stream.
        while True:
            try:
                self.queue.get_nowait()
            except queue.Empty:
                break
        self.queue.put_nowait(_End(_ffi.STOPPED, "stopped"))

    def finish(self) -> None:
        self.thread.join()
        with self.lock:
            if self.finished:
                return
            self.finished = True
        self.engine._end(self, self.session)


class Stream(Iterator[Any]):
    """An utterance being spoken: iterate for numpy chunks (and Events when asked for); close() stops it.

    `status` is None while it runs, then 0 (OK: spoken to the end) or 1 (STOPPED: stopped early); a failure
    raises from the iteration instead.
    """

    def __init__(self, engine: Engine, text: str | bytes, *, voice: str, speed: float, lang: str | None,
                 mode: str | None, seed: int, phonemes: bool, events: bool):
        data = _encode_text(text)
        if not 0 <= int(seed) < 2**64:
            raise ArgumentError(_ffi.ERR_INVALID_ARGUMENT, f"seed {seed} is outside 0..2**64-1")
        keep: list = []
        opts = ffi.new("kokoro_speak_options*")
        opts.size = ffi.sizeof("kokoro_speak_options")
        opts.voice = _ffi.cstr(voice, keep)
        opts.language = _ffi.cstr(lang, keep)
        opts.speed = float(speed)
        opts.mode = _ffi.cstr(mode, keep)
        opts.seed = int(seed)
        opts.phonemes = 1 if phonemes else 0
        self._keep = keep
        offsets = ByteToChar(text if isinstance(text, str) else data.decode("utf-8", "replace")) if events else None
        self._pending: object | None = None  # an item taken from the queue ahead of next() (read_available)
        self._synthesis = _Synthesis(engine, data, opts, offsets)
        self._keep.append(opts)

    @property
    def status(self) -> int | None:
        s = self._synthesis
        return s.status if s.finished else None

    def __iter__(self) -> Stream:
        return self

    def __next__(self) -> Any:
        s = self._synthesis
        if self._pending is not None:
            item, self._pending = self._pending, None
        elif s.finished:
            raise StopIteration
        else:
            try:
                item = s.queue.get()
            except BaseException:
                s.close()  # KeyboardInterrupt while waiting: stop the engine, then let it propagate
                raise
        if not isinstance(item, _End):
            return item
        s.finish()
        if s.callback_error is not None:
            raise s.callback_error
        if item.status < 0:
            raise error_for(item.status, item.message)
        raise StopIteration

    def read_available(self) -> Audio | None:
        """The next chunk joined with every chunk already waiting behind it (waits for the first only); None
        at the end. For players that want fewer, larger writes. Events, if asked for, are dropped."""
        parts = []
        for item in self:
            if isinstance(item, np.ndarray):
                parts.append(item)
                break
        if not parts:
            return None
        q = self._synthesis.queue
        while self._pending is None:
            try:
                item = q.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, _End):
                self._pending = item  # next() finishes the stream with it
            elif isinstance(item, np.ndarray):
                parts.append(item)
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def close(self) -> None:
        """Stops the synthesis (kokoro_session_stop) and waits until the engine has let go of it. Idempotent."""
        self._synthesis.close()

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        s = getattr(self, "_synthesis", None)
        if s is not None:
            s.close()


def _encode_text(text: str | bytes, allow_empty: bool = False) -> bytes:
    if isinstance(text, str):
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as ex:
            raise TextError(_ffi.ERR_INVALID_TEXT, f"text is not valid Unicode: {ex}") from None
    elif isinstance(text, (bytes, bytearray, memoryview)):
        data = bytes(text)  # checked by the engine: invalid UTF-8 raises TextError with its message
    else:
        raise TypeError(f"text must be str or bytes, not {type(text).__name__}")
    if not data and not allow_empty:
        raise TextError(_ffi.ERR_INVALID_ARGUMENT, "text is empty")
    if b"\0" in data:
        raise TextError(_ffi.ERR_INVALID_ARGUMENT, "text contains a NUL character")
    return data


# The C callbacks, once for the process (libffi closures are a scarce resource): user_data is the Stream.
@ffi.callback("int(const float*, size_t, void*)")
def _on_audio(samples, count, user):
    synthesis = ffi.from_handle(user)
    try:
        return synthesis.audio(samples, count)
    except BaseException as ex:  # noqa: BLE001 - re-raised on the consumer's thread
        synthesis.callback_error = ex
        return 1


@ffi.callback("int(const kokoro_event*, void*)")
def _on_event(ev, user):
    synthesis = ffi.from_handle(user)
    try:
        return synthesis.event(ev)
    except BaseException as ex:  # noqa: BLE001
        synthesis.callback_error = ex
        return 1
