"""Events the engine reports with the audio: where utterances, segments, words and SSML marks start and end."""
from __future__ import annotations

import bisect
import enum
from dataclasses import dataclass

SAMPLE_RATE = 24000


class EventKind(enum.StrEnum):
    """What an Event marks (include/kokoro.h, kokoro_event_kind); compares equal to its value ("word")."""

    UTTERANCE_START = "utterance_start"
    SEGMENT_START = "segment_start"
    WORD = "word"
    SEGMENT_END = "segment_end"
    UTTERANCE_END = "utterance_end"
    MARK = "mark"


# kokoro_event_kind's values, in the C enum's order.
KIND_BY_CODE = {0: EventKind.UTTERANCE_START, 1: EventKind.SEGMENT_START, 2: EventKind.WORD,
                3: EventKind.SEGMENT_END, 4: EventKind.UTTERANCE_END, 5: EventKind.MARK}


@dataclass(frozen=True)
class Event:
    """One event, in the order it happens in the audio.

    start_sample/end_sample count samples of this call's audio (24000 per second; start == end for
    utterance and mark events). text_begin/text_end index the str given to speak()/stream() (characters,
    not bytes; for SSML the source text, tags included); `text` is that slice (words and segments) and
    `name` a mark's name.
    """

    kind: EventKind
    start_sample: int
    end_sample: int
    text_begin: int = 0
    text_end: int = 0
    text: str = ""
    name: str | None = None

    @property
    def start(self) -> float:
        """Start time in seconds from the beginning of this call's audio."""
        return self.start_sample / SAMPLE_RATE

    @property
    def end(self) -> float:
        """End time in seconds."""
        return self.end_sample / SAMPLE_RATE


class ByteToChar:
    """Maps the engine's byte offsets into the UTF-8 text back to character offsets of the caller's str."""

    def __init__(self, text: str):
        self.text = text
        self.starts = []  # byte offset where each character starts
        pos = 0
        for ch in text:
            self.starts.append(pos)
            pos += len(ch.encode("utf-8", "surrogatepass"))
        self.total = pos

    def __call__(self, byte_offset: int) -> int:
        if byte_offset >= self.total:
            return len(self.text)
        return bisect.bisect_right(self.starts, byte_offset) - 1
