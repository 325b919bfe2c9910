#!/usr/bin/env python3
"""Speaks a text on the default audio device as it is synthesized, printing each word as its audio goes out.

    pip install sounddevice          # PortAudio bindings (Debian: libportaudio2)
    python examples/python/stream_to_speakers.py "Any text you like."

Ctrl-C stops the speech at once (the engine abandons its work between chunks).
"""
import sys

import sounddevice as sd

import kokoro_rt

text = " ".join(sys.argv[1:]) or "Streaming starts after the first slice. The rest is synthesized while you listen."
engine = kokoro_rt.Engine()
with sd.OutputStream(samplerate=kokoro_rt.SAMPLE_RATE, channels=1, dtype="float32") as out:
    for item in engine.stream(text, events=True):
        if isinstance(item, kokoro_rt.Event):
            if item.kind == "word":
                print(f"{item.start:6.2f} s  {item.text}", flush=True)
        else:
            out.write(item)  # blocks while the device buffer is full: the stream waits with it
