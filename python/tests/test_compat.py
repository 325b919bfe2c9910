"""kokoro_rt.compat.Kokoro: kokoro-onnx's call shapes over kokoro-rt."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kokoro_rt
from conftest import subprocess_env
from kokoro_rt.compat import CompatWarning, Kokoro

TEXT = "Hello. How are you today?"


@pytest.fixture(scope="module")
def kokoro():
    with pytest.warns(CompatWarning) as notes:
        k = Kokoro("kokoro-v1.0.onnx", "voices-v1.0.bin")
    assert [("ONNX" in str(n.message), "voices archive" in str(n.message)) for n in notes] == \
        [(True, False), (False, True)]
    yield k
    k.engine.close()


def test_create_returns_samples_and_rate(kokoro, engine):
    samples, rate = kokoro.create(TEXT, voice="af_sarah", speed=1.0, lang="en-us")
    assert rate == 24000
    assert samples.dtype == np.float32 and samples.ndim == 1 and samples.size > rate
    assert np.array_equal(samples, engine.speak(TEXT, voice="af_sarah", lang="en-us"))


def test_create_stream_yields_the_same_audio(kokoro):
    whole, _ = kokoro.create(TEXT, voice="af_heart")

    async def collect():
        chunks = []
        async for samples, rate in kokoro.create_stream(TEXT, voice="af_heart"):
            assert rate == 24000
            chunks.append(samples)
        return chunks

    chunks = asyncio.run(collect())
    assert chunks and np.array_equal(np.concatenate(chunks), whole)


def test_leaving_create_stream_early_stops_it(kokoro):
    async def first_only():
        gen = kokoro.create_stream(" ".join([TEXT] * 30), voice="af_heart")
        async for samples, _ in gen:
            await gen.aclose()
            return samples

    assert asyncio.run(first_only()).size > 0
    assert not kokoro.engine._streams
    assert kokoro.create("Next.", voice="af_heart")[0].size > 0


def test_style_array_voice(kokoro):
    style = kokoro.get_voice_style("af_heart")
    assert style.shape == (510, 1, 256)
    by_name, _ = kokoro.create(TEXT, voice="af_heart")
    by_array, _ = kokoro.create(TEXT, voice=style)
    assert np.array_equal(by_name, by_array)
    blend = kokoro.get_voice_style("af_heart") * 0.5 + kokoro.get_voice_style("af_bella") * 0.5
    assert kokoro.create(TEXT, voice=blend)[0].size > 0
    with pytest.raises(ValueError, match="510"):
        kokoro.create(TEXT, voice=np.zeros((3, 256), dtype=np.float32))


def test_espeak_config_is_accepted():
    from kokoro_rt.compat import EspeakConfig
    with pytest.warns(CompatWarning, match="espeak_config"):
        k = Kokoro(None, None, espeak_config=EspeakConfig(lib_path="/nowhere/libespeak-ng.so"))
    assert k.create("Hi.", voice="af_heart")[0].size > 0
    k.engine.close()


def test_voices_and_errors_as_kokoro_onnx_raises_them(kokoro):
    assert "af_sarah" in kokoro.get_voices() and kokoro.get_voices() == sorted(kokoro.get_voices())
    with pytest.raises(ValueError):
        kokoro.create(TEXT, voice="nobody")
    with pytest.raises(ValueError):
        kokoro.create(TEXT, voice="af_heart", speed=10)
    with pytest.raises(ValueError):
        kokoro.create(TEXT, voice="af_heart", lang="xx-yy")


def test_our_own_files_are_used(tmp_path, engine):
    assets = engine.assets_dir
    k = Kokoro(None, os.path.join(assets, "voices"))  # a directory of voice packs: used, no warning
    assert "af_heart" in k.get_voices()
    assert np.array_equal(k.create(TEXT, voice="af_heart")[0], engine.speak(TEXT, voice="af_heart", lang="en-us"))
    k.engine.close()
    with pytest.raises(kokoro_rt.ModelError, match="missing.kokoro"):
        Kokoro(str(tmp_path / "missing.kokoro"), assets)


def test_a_kokoro_onnx_program_runs_with_only_its_import_changed(tmp_path):
    # kokoro-onnx's README example (examples/save.py): its calls unchanged, only the import line differs.
    program = textwrap.dedent("""
        import soundfile as sf
        from kokoro_rt.compat import Kokoro  # was: from kokoro_onnx import Kokoro

        kokoro = Kokoro("kokoro-v1.0.onnx", "voices-v1.0.bin")
        samples, sample_rate = kokoro.create(
            "Hello. How are you today?", voice="af_sarah", speed=1.0, lang="en-us"
        )
        sf.write("audio.wav", samples, sample_rate)
        print("Created audio.wav")
    """)
    (tmp_path / "save.py").write_text(program)
    out = subprocess.run([sys.executable, "save.py"], cwd=tmp_path, capture_output=True, timeout=300,
                         env=subprocess_env())
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    assert b"Created audio.wav" in out.stdout
    import soundfile as sf
    audio, rate = sf.read(tmp_path / "audio.wav")
    assert rate == 24000 and audio.size > rate
