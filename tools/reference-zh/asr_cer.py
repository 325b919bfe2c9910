"""Is the Mandarin speech intelligible? Character error rate of Whisper base on kokoro-say's output (dev check).

Speaks corpus sentences without digits or Latin letters (their written form is ambiguous) with each voice,
transcribes them with faster-whisper + Whisper base (bench/quality/asr.py assembles the model), converts
the transcript to simplified characters (proces, the converter cn2an uses) and compares ideographs only.

  bench/quality/.venv/bin/pip install proces==0.1.7      # besides bench/quality/requirements.txt
  bench/quality/.venv/bin/python tools/reference-zh/asr_cer.py [--voices zf_xiaobei,zm_yunjian] [--n 25]
"""
import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'bench' / 'quality'))
import asr  # noqa: E402
from faster_whisper import WhisperModel  # noqa: E402
from proces import preprocess  # noqa: E402


def ideographs(s):
    s = preprocess(s, pipelines=['traditional_to_simplified'])
    return ''.join(c for c in s if '\u4e00' <= c <= '\u9fff')


def edits(a, b):
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
        prev = cur
    return prev[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--voices', default='zf_xiaobei,zm_yunjian')
    ap.add_argument('--n', type=int, default=25)
    ap.add_argument('--say', default=str(ROOT / 'build' / 'bin' / 'kokoro-say'))
    args = ap.parse_args()
    lines = [l.strip() for l in open(ROOT / 'tests' / 'data' / 'zh' / 'corpus.txt', encoding='utf-8')]
    sents = [l for l in lines if l and not l.startswith('#') and not any(c.isascii() and c.isalnum() for c in l)]
    sents = sents[::max(1, len(sents) // args.n)][:args.n]
    model = WhisperModel(str(asr.ensure_model_dir()), device='cpu', compute_type='float32')
    with tempfile.TemporaryDirectory() as tmp:
        for voice in args.voices.split(','):
            errors = chars = 0
            for i, s in enumerate(sents):
                wav = f'{tmp}/{voice}-{i}.wav'
                subprocess.run([args.say, '--voice', voice, '-o', wav, s], check=True, capture_output=True)
                segs, _ = model.transcribe(wav, language='zh', beam_size=5, temperature=0.0,
                                           condition_on_previous_text=False)
                ref, hyp = ideographs(s), ideographs(''.join(x.text for x in segs))
                errors += edits(ref, hyp)
                chars += len(ref)
            print(f'{voice}: CER {100 * errors / chars:.1f} % ({errors}/{chars} characters, {len(sents)} sentences)')


if __name__ == '__main__':
    main()
