#!/usr/bin/env python3
"""Index marks of sd_kokoro, two ways (run by tests/test_speechd.sh):

  module SD_KOKORO CONF   drives the module over its stdin/stdout protocol as speech-dispatcher 0.11 does
                          (INIT, AUDIO, SET, SPEAK with the server's SSML) and reads every audio block and
                          index mark it sends: the marks come in order, each after the audio before it and
                          before the audio after it (counted in samples), at the word they stand before; the
                          audio is that of the text without marks; PAUSE ends with 704 PAUSE after the marks
                          reached; CHAR, KEY, SOUND_ICON and spelling mode speak.
  client MODULE_LOG       through the private speech-dispatcher of test_speechd.sh with its own Python client
                          (Debian's python3-speechd): an SSML message's marks reach the client in order before
                          its END; a text message's marks (the server's, one per sentence end) reach the module's
                          engine in order. (PAUSE and resume through the server are not checked: its playback
                          into the null PCM takes no time, and speech-dispatcher 0.11 then misses the mark it
                          should pause at, a race of its own that real-time playback does not have.)

Prints one line per check; exits nonzero at the first failure.
"""
import subprocess
import sys
import threading
import time

RATE = 24000


def fail(msg):
    print(f"test_speechd_marks: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


# ------------------------------------------------------------------------------------- module protocol

class Module:
    """sd_kokoro on pipes; a reader thread turns its output into events:
    ("reply", line), ("audio", samples as bytes), ("mark", name), ("begin",), ("end",), ("stop",), ("pause",)."""

    def __init__(self, binary, conf):
        self.proc = subprocess.Popen([binary, conf], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.events = []
        self.cv = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        mark_lines = []
        while True:
            line = out.readline()
            if not line:
                self._add(("eof",))
                return
            line = line[:-1] if line.endswith(b"\n") else line
            if line.startswith(b"705-AUDIO\x00"):
                self._add(("audio", unescape(line[len(b"705-AUDIO\x00"):])))
            elif line.startswith(b"705"):
                continue  # the block's header lines and its closing "705 AUDIO"
            elif line.startswith(b"700-"):
                mark_lines.append(line[4:].decode())
            elif line == b"700 INDEX MARK":
                check(len(mark_lines) == 1, f"an index mark reply with {len(mark_lines)} names")
                self._add(("mark", mark_lines.pop()))
            elif line == b"701 BEGIN":
                self._add(("begin",))
            elif line == b"702 END":
                self._add(("end",))
            elif line == b"703 STOP":
                self._add(("stop",))
            elif line == b"704 PAUSE":
                self._add(("pause",))
            else:
                self._add(("reply", line.decode(errors="replace")))

    def _add(self, ev):
        with self.cv:
            self.events.append(ev)
            self.cv.notify_all()

    def wait_for(self, pred, since, timeout=180):
        """Waits for an event at index >= since matching pred; returns its index."""
        deadline = time.monotonic() + timeout
        with self.cv:
            while True:
                for i in range(since, len(self.events)):
                    if pred(self.events[i]):
                        return i
                    if self.events[i][0] == "eof":
                        fail(f"the module exited (events: {self.events[since:][-5:]})")
                left = deadline - time.monotonic()
                if left <= 0:
                    fail(f"timeout waiting (last events: {[e[0] for e in self.events[since:]][-8:]})")
                self.cv.wait(left)

    def send(self, text):
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def command(self, lines, expect):
        """Sends lines, waits for a reply line starting with `expect`."""
        since = len(self.events)
        self.send("".join(l + "\n" for l in lines))
        i = self.wait_for(lambda e: e[0] == "reply" and e[1][3:4] != "-", since, timeout=300)  # "299-..." goes on
        check(self.events[i][1].startswith(expect), f"{lines[0]}: {self.events[i][1]!r}, expected {expect}")
        return i

    def settings(self, kind, params, expect="203"):
        self.command([kind], "207")
        return self.command(params + ["."], expect)

    def speak(self, kind, text, wait=True):
        """Sends a message as the server does (a line that starts with '.' gets another); returns the index of
        its first event and, when waiting, of its 702 END. (Its events may come before "200 OK SPEAKING": the
        server tells events from replies by their first digit.)"""
        self.command([kind], "202")
        body = [("." + l if l.startswith(".") else l) for l in text.split("\n")]
        start = len(self.events)
        self.command(body + ["."], "200 OK SPEAKING")
        if not wait:
            return start, None
        end = self.wait_for(lambda e: e[0] in ("end", "stop", "pause"), start)
        check(self.events[end][0] == "end", f"{kind} ended with {self.events[end][0]}")
        return start, end

    def audio_and_marks(self, start, end):
        """The PCM (bytes) between two event indices, and each mark with the samples sent before it."""
        pcm, marks = bytearray(), []
        for ev in self.events[start:end]:
            if ev[0] == "audio":
                pcm += ev[1]
            elif ev[0] == "mark":
                marks.append((ev[1], len(pcm) // 2))
        return bytes(pcm), marks

    def quit(self):
        self.send("QUIT\n")
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("the module did not quit")


def unescape(data):
    out = bytearray()
    i = 0
    while i < len(data):
        if data[i] == 0x7D and i + 1 < len(data):
            out.append(data[i + 1] ^ 0x20)
            i += 2
        else:
            out.append(data[i])
            i += 1
    return bytes(out)


def rms(pcm, begin, end):
    import array
    a = array.array("h")
    a.frombytes(pcm[2 * max(begin, 0):2 * max(end, 0)])
    return (sum(x * x for x in a) / max(len(a), 1)) ** 0.5


# What the server sends for a text-mode message "Mr. Smith came home late. The lamp flickered twice. Then
# the house went dark." (speech-dispatcher's log at LogLevel 5), with a client mark added inside a sentence.
MARKED = ('<speak>Mr.<mark name="__spd_0"/> Smith came <mark name="m"/>home late.<mark name="__spd_1"/> '
          'The lamp flickered twice.<mark name="__spd_2"/> Then the house went dark.<mark name="end"/></speak>')
PLAIN = "<speak>Mr. Smith came home late. The lamp flickered twice. Then the house went dark.</speak>"


def module_checks(binary, conf):
    m = Module(binary, conf)
    m.command(["INIT"], "299 OK")
    m.settings("AUDIO", ["audio_output_method=server"])
    m.settings("SET", ["rate=0", "volume=0", "pitch=0", "language=en", "voice=female1", "punctuation_mode=none",
                       "spelling_mode=off", "cap_let_recogn=none", "synthesis_voice=NULL"])

    # Marks in order, each where the audio before it ends.
    start, end = m.speak("SPEAK", MARKED)
    pcm, marks = m.audio_and_marks(start, end)
    total = len(pcm) // 2
    print(f"test_speechd_marks: {total / RATE:.2f} s of audio, marks after "
          + ", ".join(f"{n} {s / RATE:.2f} s" for n, s in marks))
    check([n for n, _ in marks] == ["__spd_0", "m", "__spd_1", "__spd_2", "end"], f"marks {marks}")
    positions = [s for _, s in marks]
    check(all(a < b for a, b in zip(positions, positions[1:])), f"marks not in the order of the audio: {marks}")
    check(positions[0] > 0.3 * RATE, f"the first mark came before the audio of 'Mr.': {marks}")
    check(positions[-2] < total - 0.5 * RATE, f"the marks inside the text came at its end: {marks}")
    check(positions[-1] == total, f"the last mark did not come after all the audio: {marks}, {total} samples")
    # After a sentence end the mark stands in the pause between the sentences: the 20 ms before it are quiet.
    # ("Mr." is no sentence end: "Mister Smith" is said in one breath.)
    loud = rms(pcm, 0, total)
    for name, at in marks[:-1]:
        quiet = rms(pcm, at - RATE // 50, at)
        print(f"test_speechd_marks: {name}: rms of the 20 ms before it {quiet:.0f} (whole message {loud:.0f})")
        if name in ("__spd_1", "__spd_2"):
            check(quiet < 0.25 * loud, f"mark {name} is not in a pause ({quiet:.0f} vs {loud:.0f})")
    # The marks change nothing said.
    start, end = m.speak("SPEAK", PLAIN)
    plain_pcm, plain_marks = m.audio_and_marks(start, end)
    check(plain_marks == [], f"marks in a message without any: {plain_marks}")
    check(plain_pcm == pcm, f"the marks changed the audio ({len(plain_pcm) // 2} vs {total} samples)")
    print("test_speechd_marks: marks in order with the audio, audio identical to the unmarked text")

    # PAUSE: the module speaks on up to the server's next mark (a client's mark does not count), sends it and
    # stops there with 704 PAUSE, as speech-dispatcher's modules do (the server pauses its playback at that
    # mark and resumes from it). PAUSE in the last sentence: the message ends (702 END).
    long_text = ("<speak>" + "".join(f"Sentence number {k} of a long <mark name=\"c{k}\"/>message goes on a while."
                                     f"<mark name=\"__spd_{k}\"/> " for k in range(8)) + "</speak>")
    start, _ = m.speak("SPEAK", long_text, wait=False)
    paused_after = m.wait_for(lambda e: e == ("mark", "__spd_0"), start)
    m.send("PAUSE\n")
    end = m.wait_for(lambda e: e[0] in ("end", "stop", "pause"), start)
    check(m.events[end][0] == "pause", f"PAUSE ended with {m.events[end][0]}")
    _, marks = m.audio_and_marks(start, end)
    names = [n for n, _ in marks]
    expected = [n for k in range(8) for n in (f"c{k}", f"__spd_{k}")][:len(names)]
    check(names == expected and names[-1].startswith("__spd_") and 2 < len(names) < 16,
          f"marks before 704 PAUSE: {names}")
    check(m.events[end - 1][0] == "mark", f"audio between the last mark and 704 PAUSE: {m.events[end - 1][0]}")
    check(any(e[0] == "audio" for e in m.events[paused_after:end]), "no audio between PAUSE and its mark")
    time.sleep(0.5)
    check(all(e[0] not in ("mark", "audio") for e in m.events[end + 1:]), "audio or marks after 704 PAUSE")
    print(f"test_speechd_marks: PAUSE after __spd_0 -> spoke on to {names[-1]}, then 704 PAUSE")
    start, _ = m.speak("SPEAK", '<speak>The first.<mark name="__spd_0"/> The last one.</speak>', wait=False)
    m.wait_for(lambda e: e == ("mark", "__spd_0"), start)
    m.send("PAUSE\n")
    end = m.wait_for(lambda e: e[0] in ("end", "stop", "pause"), start)
    check(m.events[end][0] == "end", f"PAUSE in the last sentence ended with {m.events[end][0]}")
    # STOP is at once: 703 STOP.
    start, _ = m.speak("SPEAK", long_text, wait=False)
    m.wait_for(lambda e: e == ("mark", "c0"), start)
    m.send("STOP\n")
    end = m.wait_for(lambda e: e[0] in ("end", "stop", "pause"), start)
    check(m.events[end][0] == "stop", f"STOP ended with {m.events[end][0]}")
    _, marks = m.audio_and_marks(start, end)
    check(len(marks) <= 2, f"STOP after c0 went on to {marks}")

    # The other messages still speak.
    for kind, text, spelling in [("CHAR", "a", False), ("KEY", "shift_a", False), ("SPEAK", "<speak>ab</speak>", True)]:
        if spelling:
            m.settings("SET", ["spelling_mode=on"])
        start, end = m.speak(kind, text)
        pcm, _ = m.audio_and_marks(start, end)
        check(len(pcm) // 2 > 0.2 * RATE, f"{kind} {text!r}: {len(pcm) // 2} samples")
        print(f"test_speechd_marks: {kind} {text!r}{' spelled' if spelling else ''}: {len(pcm) / 2 / RATE:.2f} s")
    m.settings("SET", ["spelling_mode=off"])
    start, end = m.speak("SOUND_ICON", "message")
    kinds = [e[0] for e in m.events[start:end + 1] if e[0] != "reply"]
    check(kinds == ["begin", "end"], f"SOUND_ICON: {kinds}, expected begin, end and no audio")
    m.quit()
    print("test_speechd_marks: module ok")


# ------------------------------------------------------------------------------------- through the server

def client_checks(module_log):
    import speechd  # Debian's python3-speechd

    def log_lines():
        with open(module_log) as f:
            return f.read().splitlines()

    client = speechd.SSIPClient("kokoro-rt-test")
    try:
        client.set_output_module("kokoro")

        # An SSML message's marks reach the client in order, before its END.
        got, done = [], threading.Event()

        def on_event(kind, index_mark=None):
            got.append(index_mark if kind == speechd.CallbackType.INDEX_MARK else kind)
            if kind in (speechd.CallbackType.END, speechd.CallbackType.CANCEL):
                done.set()

        client.set_data_mode(speechd.DataMode.SSML)
        client.speak('<speak>One <mark name="first"/>two three.<mark name="second"/> Four five.'
                     '<mark name="third"/></speak>', callback=on_event)
        check(done.wait(180), f"no END for the SSML message (events {got})")
        marks = [e for e in got if e in ("first", "second", "third")]
        check(marks == ["first", "second", "third"], f"client index marks {got}")
        check(got[-1] == speechd.CallbackType.END, f"events after END: {got}")
        print(f"test_speechd_marks: the client got {marks} in order, then END")

        # A text message: the server's own marks (after each sentence end) go through the engine in order;
        # the server keeps them to itself (they are where PAUSE stops and resume starts).
        client.set_data_mode(speechd.DataMode.TEXT)
        got.clear()
        done.clear()
        before = len(log_lines())
        client.speak("The first sentence is short. Mr. Smith said so. The third one ends the message.",
                     callback=on_event)
        check(done.wait(180), f"no END for the text message (events {got})")
        marks = [l.split("mark ")[1].split()[0] for l in log_lines()[before:] if ": mark " in l]
        check(marks == ["__spd_0", "__spd_1", "__spd_2"], f"the module's marks for the text message: {marks}")
        check(got == [speechd.CallbackType.BEGIN, speechd.CallbackType.END], f"the client got {got}")
        print(f"test_speechd_marks: a text message's server marks {marks} went through the engine in order")
    finally:
        client.close()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "module":
        module_checks(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "client":
        client_checks(sys.argv[2])
    else:
        sys.exit(__doc__)
