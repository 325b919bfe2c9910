#!/usr/bin/env python3
"""kokoro-server spoken to by real clients we did not write: the `openai` package
(client.audio.speech.with_streaming_response.create, every response_format) and the `wyoming` package
(AsyncTcpClient: describe -> Info, synthesize, Home Assistant's streaming order, parsed with the package's own
event classes). Exits non-zero on any mismatch; writes each format's audio to --out for Whisper.

  bench/server/run-clients.sh                 # makes the venv, starts a server on free loopback ports, runs this
  python clients.py --http-port P --wyoming-port Q --out DIR [--api-key K]
"""
import argparse
import asyncio
import sys
import time
from pathlib import Path

from openai import OpenAI, BadRequestError
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.info import Describe, Info
from wyoming.ping import Ping, Pong
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeStopped, SynthesizeVoice

TEXT = "Streaming speech reaches the client before the sentence is finished."
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def openai_client(port, key, out):
    client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=key or "unused")
    for fmt in ["mp3", "opus", "aac", "flac", "wav", "pcm"]:
        t0 = time.perf_counter()
        first = None
        size = 0
        path = out / f"openai.{fmt}"
        with client.audio.speech.with_streaming_response.create(model="tts-1", voice="af_heart", input=TEXT,
                                                                 response_format=fmt) as response:
            with open(path, "wb") as f:
                for chunk in response.iter_bytes(4096):
                    if first is None:
                        first = time.perf_counter() - t0
                    f.write(chunk)
                    size += len(chunk)
        check(size > 4000, f"openai {fmt}: {size} bytes, first after {1000 * (first or 0):.0f} ms -> {path}")
    try:
        client.audio.speech.create(model="tts-1", voice="no_such_voice", input=TEXT)
        check(False, "openai: unknown voice raises BadRequestError")
    except BadRequestError as e:
        check("no_such_voice" in str(e), f"openai: unknown voice raises BadRequestError ({e})")


async def wyoming_client(port, out):
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Describe().event())
        info = Info.from_event(await client.read_event())
        tts = info.tts[0]
        check(tts.supports_synthesize_streaming and len(tts.voices) == 54 and all(v.languages for v in tts.voices),
              f"wyoming info: {len(tts.voices)} voices, streaming {tts.supports_synthesize_streaming}")
        await client.write_event(Ping(text="hi").event())
        event = await client.read_event()
        check(Pong.is_type(event.type) and Pong.from_event(event).text == "hi", "wyoming ping -> pong")

        async def collect(until):
            kinds, pcm = [], bytearray()
            while True:
                event = await client.read_event()
                if event is None:
                    kinds.append("<closed>")
                    return kinds, pcm
                if AudioChunk.is_type(event.type):
                    chunk = AudioChunk.from_event(event)
                    if (chunk.rate, chunk.width, chunk.channels) != (24000, 2, 1):
                        check(False, f"wyoming audio-chunk format {chunk.rate} Hz, {chunk.width} bytes, {chunk.channels} ch")
                    pcm += chunk.audio
                    if kinds and kinds[-1] == "audio-chunk":
                        continue
                elif AudioStart.is_type(event.type):
                    AudioStart.from_event(event)
                elif AudioStop.is_type(event.type):
                    AudioStop.from_event(event)
                elif Error.is_type(event.type):
                    print("error event:", Error.from_event(event).text)
                kinds.append(event.type)
                if event.type in (until, "error"):
                    return kinds, pcm

        t0 = time.perf_counter()
        await client.write_event(Synthesize(text=TEXT, voice=SynthesizeVoice(name="af_heart")).event())
        kinds, pcm = await collect("audio-stop")
        check(kinds == ["audio-start", "audio-chunk", "audio-stop"] and len(pcm) > 48000,
              f"wyoming synthesize: {kinds}, {len(pcm) / 48000:.2f} s in {time.perf_counter() - t0:.2f} s")
        write_wav(out / "wyoming.wav", pcm)

        # Home Assistant's order for streamed text: start, chunks, the whole text again (for servers without
        # streaming), stop.
        pieces = ["Good evening. The living ", "room lights are now ", "off. Sleep well"]
        await client.write_event(SynthesizeStart(voice=SynthesizeVoice(name="bf_emma")).event())
        for p in pieces:
            await client.write_event(SynthesizeChunk(text=p).event())
        await client.write_event(Synthesize(text="".join(pieces), voice=SynthesizeVoice(name="bf_emma")).event())
        await client.write_event(SynthesizeStop().event())
        kinds, pcm = await collect("synthesize-stopped")
        expected = ["audio-start", "audio-chunk", "audio-stop"] * 3 + ["synthesize-stopped"]
        check(kinds == expected, f"wyoming streaming: {kinds}")
        write_wav(out / "wyoming-stream.wav", pcm)


def write_wav(path, pcm):
    import wave
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(24000)
        w.writeframes(bytes(pcm))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--http-port", type=int, required=True)
    ap.add_argument("--wyoming-port", type=int, required=True)
    ap.add_argument("--api-key", default="")
    ap.add_argument("--out", default="clients-out")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    openai_client(args.http_port, args.api_key, out)
    asyncio.run(wyoming_client(args.wyoming_port, out))
    print(f"{len(failures)} failed" if failures else "all client checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
