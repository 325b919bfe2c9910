"""kokoro_rt.Engine against the C API: same audio, streams, events, errors, stopping, threads."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

import kokoro_rt
from conftest import LONG_TEXT, TEXT, capi_say, subprocess_env


# -- audio ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode,voice,seed", [(None, "af_heart", 0), ("exact", "bm_george", 7), ("slice", "af_bella", 3)])
def test_speak_equals_the_c_api(engine, mode, voice, seed):
    ours = engine.speak(TEXT, voice=voice, seed=seed, mode=mode)
    assert ours.dtype == np.float32 and ours.ndim == 1
    assert ours.size > 2 * kokoro_rt.SAMPLE_RATE  # two sentences: seconds of speech, not a click
    reference = capi_say(TEXT, voice=voice, seed=seed, mode=mode)
    assert ours.shape == reference.shape
    assert np.array_equal(ours, reference)


def test_seed_changes_the_audio(engine):
    a = engine.speak("Hello there.", seed=1, mode="exact")
    b = engine.speak("Hello there.", seed=2, mode="exact")
    assert a.shape != b.shape or not np.array_equal(a, b)


def test_stream_chunks_concatenate_to_speak(engine):
    whole = engine.speak(TEXT, seed=5)
    chunks = list(engine.stream(TEXT, seed=5))
    assert len(chunks) > 1
    assert all(c.dtype == np.float32 and c.ndim == 1 for c in chunks)
    assert np.array_equal(np.concatenate(chunks), whole)


def test_read_available_joins_waiting_chunks(engine):
    whole = engine.speak(TEXT, seed=5)
    s = engine.stream(TEXT, seed=5)
    parts = []
    while (part := s.read_available()) is not None:
        parts.append(part)
    assert s.status == kokoro_rt.OK
    assert np.array_equal(np.concatenate(parts), whole)


def test_voice_blend_and_phoneme_input(engine):
    blend = engine.speak("Hello there.", voice="af_heart:0.5,af_bella:0.5", mode="exact")
    assert np.array_equal(blend, capi_say("Hello there.", voice="af_heart:0.5,af_bella:0.5", mode="exact"))
    phonemes = engine.speak("həlˈO ðˈɛɹ.", phonemes=True, mode="exact")
    assert phonemes.size > kokoro_rt.SAMPLE_RATE // 2


def test_voices(engine):
    voices = engine.voices()
    assert "af_heart" in voices and "jf_alpha" in voices
    assert voices == sorted(voices) and len(voices) >= 50


# -- events ---------------------------------------------------------------------------------------------------

def test_events_in_order_with_the_audio():
    text = 'Café au lait, naïve reader. <mark name="here"/> Second sentence.'
    with kokoro_rt.Engine() as e:
        items = list(e.stream("<speak>" + text + "</speak>", events=True, seed=1))
    events = [i for i in items if isinstance(i, kokoro_rt.Event)]
    kinds = [ev.kind for ev in events]
    assert kinds[0] == "utterance_start" and kinds[-1] == "utterance_end"
    assert kinds.count("segment_start") == kinds.count("segment_end") >= 1
    assert "mark" in kinds and next(ev for ev in events if ev.kind == "mark").name == "here"
    # Words come inside their segment, with their own text (character offsets into the str given: the SSML).
    source = "<speak>" + text + "</speak>"
    words = [ev for ev in events if ev.kind == kokoro_rt.EventKind.WORD]
    assert [w.text for w in words][:4] == ["Café", "au", "lait", "naïve"]
    assert all(source[w.text_begin:w.text_end] == w.text for w in words)
    # Each event comes once the audio up to its start has been delivered; times never go back.
    delivered, last_start = 0, 0
    for item in items:
        if isinstance(item, np.ndarray):
            delivered += item.size
            continue
        assert item.start_sample <= delivered, item
        assert item.start_sample >= last_start, item
        assert item.end_sample >= item.start_sample
        last_start = item.start_sample
    assert events[-1].start_sample == delivered
    assert words[0].start == pytest.approx(words[0].start_sample / 24000)


# -- errors ---------------------------------------------------------------------------------------------------

def test_unknown_voice(engine):
    with pytest.raises(kokoro_rt.VoiceError, match="xx_nobody") as info:
        engine.speak("Hello.", voice="xx_nobody")
    assert isinstance(info.value, kokoro_rt.Error) and isinstance(info.value, ValueError)
    assert info.value.status == -5


def test_unknown_language(engine):
    with pytest.raises(kokoro_rt.LanguageError, match="tlh"):
        engine.speak("Hello.", lang="tlh")


def test_bad_text(engine):
    with pytest.raises(kokoro_rt.TextError, match="UTF-8"):
        engine.speak(b"caf\xe9 \xff")  # the engine's own check and message
    with pytest.raises(kokoro_rt.TextError, match="empty"):
        engine.speak("")
    with pytest.raises(kokoro_rt.TextError, match="NUL"):
        engine.speak("a\0b")
    with pytest.raises(TypeError):
        engine.speak(42)  # type: ignore[arg-type]


def test_bad_arguments(engine):
    with pytest.raises(kokoro_rt.ArgumentError, match="speed"):
        engine.speak("Hello.", speed=10)
    with pytest.raises(kokoro_rt.ArgumentError, match="warp"):
        engine.speak("Hello.", mode="warp")
    with pytest.raises(kokoro_rt.ArgumentError):
        kokoro_rt.Engine(threads=0)
    with pytest.raises(kokoro_rt.ArgumentError):
        kokoro_rt.Engine(precision="fp8")


def test_missing_model_and_assets(tmp_path):
    with pytest.raises(kokoro_rt.ModelError, match="nowhere.kokoro"):
        kokoro_rt.Engine(model_path=str(tmp_path / "nowhere.kokoro"))
    with pytest.raises(kokoro_rt.ModelError, match="config.json"):
        kokoro_rt.Engine(assets_dir=str(tmp_path))


def test_closed_engine():
    e = kokoro_rt.Engine()
    e.close()
    e.close()  # harmless
    with pytest.raises(kokoro_rt.Error, match="closed"):
        e.speak("Hello.")


def test_huge_text_is_spoken_or_stopped_not_crashed(engine):
    s = engine.stream("word " * 200_000)  # 1 MB of text: must start, and stop when asked
    assert next(s).size > 0
    s.close()
    assert s.status == kokoro_rt.STOPPED


# -- stopping ---------------------------------------------------------------------------------------------------

def test_close_stops_the_synthesis(engine):
    s = engine.stream(LONG_TEXT)
    first = next(s)
    assert first.size > 0
    s.close()
    assert s.status == kokoro_rt.STOPPED  # kokoro_speak returned KOKORO_STOPPED: ended early, not finished
    assert list(s) == []
    assert engine.speak("Next.").size > 0  # the engine is free again


def test_break_out_of_the_loop_stops_it(engine):
    for i, _ in enumerate(engine.stream(LONG_TEXT)):
        if i == 2:
            break
    # The dropped stream closed itself at once: nothing of this engine is running any more.
    assert not engine._streams
    assert engine.speak("Next.").size > 0


def test_keyboard_interrupt_stops_synthesis(engine):
    def interrupt_soon():
        os.kill(os.getpid(), signal.SIGINT)

    s = engine.stream(LONG_TEXT)
    next(s)  # synthesis is under way
    timer = threading.Timer(0.2, interrupt_soon)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        for _ in s:  # the consumer waits on the engine's queue, where Ctrl-C reaches it
            pass
    timer.join()
    assert s.status == kokoro_rt.STOPPED
    assert not engine._streams
    # speak() too: the interrupt propagates out of it and the engine is usable afterwards.
    timer = threading.Timer(0.5, interrupt_soon)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        engine.speak(LONG_TEXT)
    timer.join()
    assert not engine._streams
    assert engine.speak("Next.").size > 0


# -- threads ---------------------------------------------------------------------------------------------------

def test_two_engines_in_threads():
    texts = [("Hello from the first thread. It keeps talking for a while.", "af_heart"),
             ("And this is the second one, speaking at the same time.", "bm_george")]
    engines = [kokoro_rt.Engine(), kokoro_rt.Engine()]
    alone = [e.speak(t, voice=v, seed=2) for e, (t, v) in zip(engines, texts)]
    results: list = [None, None]

    def run(i):
        results[i] = engines[i].speak(texts[i][0], voice=texts[i][1], seed=2)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in engines:
        e.close()
    assert all(np.array_equal(r, a) for r, a in zip(results, alone))


def test_closing_the_engine_ends_a_stream_read_on_another_thread():
    e = kokoro_rt.Engine()
    s = e.stream(LONG_TEXT)
    first = threading.Event()
    ended = threading.Event()

    def consume():
        for _ in s:
            first.set()
        ended.set()

    t = threading.Thread(target=consume)
    t.start()
    assert first.wait(120)
    e.close()
    t.join(60)
    assert ended.is_set() and s.status == kokoro_rt.STOPPED


def test_exit_after_use_is_clean():
    # The interpreter unloads libkokoro at exit (cffi dlclose()s it), with an Engine and a stream still open:
    # that must not crash or hang.
    code = ("import kokoro_rt; e = kokoro_rt.Engine(); print(e.speak('Hi.').size); "
            "s = e.stream('A stream left open at exit. ' * 20); next(s)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120, env=subprocess_env())
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    assert int(out.stdout) > 0


def test_two_streams_on_one_engine_in_threads(engine):
    # Sessions on one model: both speak at once, each exactly as it does alone.
    texts = [("Hello from the first thread. It keeps talking for a while.", "af_heart", "slice"),
             ("And this is the second one, speaking at the same time.", "bm_george", "exact")]
    alone = [engine.speak(t, voice=v, mode=m, seed=4) for t, v, m in texts]
    results: list = [None, None]
    started = threading.Barrier(2)

    def run(i):
        text, voice, mode = texts[i]
        with engine.stream(text, voice=voice, mode=mode, seed=4) as s:
            started.wait()
            results[i] = np.concatenate(list(s))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(r, a) for r, a in zip(results, alone))


def test_stopping_one_stream_leaves_the_other(engine):
    text = "This stream goes on to the end while the other one is stopped."
    alone = engine.speak(text, seed=9)
    long = engine.stream(LONG_TEXT)
    other = engine.stream(text, seed=9)
    next(long)
    long.close()
    assert long.status == kokoro_rt.STOPPED
    assert np.array_equal(np.concatenate(list(other)), alone)


# -- phonemes ---------------------------------------------------------------------------------------------------

def test_phonemize(engine):
    ph = engine.phonemize("Hello world.\nHow are you?")
    lines = ph.split("\n")
    assert len(lines) == 2 and "wˈɜɹld" in lines[0]
    assert engine.phonemize("Bonjour.", "fr-fr")
    assert engine.phonemize("   ") == ""
    # What phonemize gives is what speak says: the same audio from the text and from its phonemes.
    text = "The weather is lovely today."
    assert np.array_equal(engine.speak(text, mode="exact", seed=1),
                          engine.speak(engine.phonemize(text), phonemes=True, mode="exact", seed=1))
    with pytest.raises(kokoro_rt.LanguageError, match="tlh"):
        engine.phonemize("Hi.", "tlh")
    with pytest.raises(kokoro_rt.TextError):
        engine.phonemize(b"caf\xe9")
