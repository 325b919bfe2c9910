"""Writes the official pipeline's phonemes for the G2P agreement corpus.

    .venv-g2p/bin/python tools/g2p_reference/make_expected.py            # en-us and en-gb
    .venv-g2p/bin/python tools/g2p_reference/make_expected.py --check    # verify committed files

Input:  tests/data/g2p/corpus_en.txt and corpus_en_heldout.txt (one sentence a line, '#' lines are
        category headers)
Output: tests/data/g2p/expected_en-us.jsonl, expected_en-gb.jsonl (and expected_heldout_en-*.jsonl),
        one JSON object a line:
        {"category", "text", "ps", "words": [[text, spacy_tag, phonemes, whitespace], ...]}
"ps" is what kokoro's KPipeline would feed the model for that line (KPipeline.tokens_to_ps of the
misaki tokens); "words" are misaki's merged tokens, kept for diagnosing disagreements.
"""
import argparse
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from reference_g2p import make_g2p, tokens_to_ps  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "g2p"


def read_corpus(path):
    category = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# ---"):
            category = line[5:].strip()
        elif line.strip() and not line.startswith("#"):
            yield category, line.strip()


def run(lang, corpus):
    g2p = make_g2p(british=(lang == "en-gb"))
    rows = []
    for category, text in read_corpus(DATA / corpus):
        _, tokens = g2p(text)
        ps = tokens_to_ps(tokens)
        assert len(ps) <= 510, (text, len(ps))
        words = [[t.text, t.tag, t.phonemes or "", t.whitespace] for t in tokens]
        rows.append({"category": category, "text": text, "ps": ps, "words": words})
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def run_other():
    """Other languages: misaki's EspeakG2P, which KPipeline uses for es, fr-fr, hi, it, pt-br."""
    from misaki import espeak
    g2ps = {}
    rows = []
    for line in (DATA / "corpus_other.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        lang, text = line.split("\t", 1)
        if lang not in g2ps:
            g2ps[lang] = espeak.EspeakG2P(language=lang)
        ps, _ = g2ps[lang](text)
        rows.append({"language": lang, "text": text, "ps": ps})
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="fail if the committed files differ")
    ap.add_argument("--lang", choices=["en-us", "en-gb"], action="append")
    args = ap.parse_args()
    status = 0
    jobs = [(lang, corpus, prefix) for lang in args.lang or ["en-us", "en-gb"]
            for corpus, prefix in (("corpus_en.txt", "expected"), ("corpus_en_heldout.txt", "expected_heldout"))]
    for lang, corpus, prefix in jobs:
        out = DATA / f"{prefix}_{lang}.jsonl"
        text = run(lang, corpus)
        if args.check:
            same = out.exists() and out.read_text(encoding="utf-8") == text
            print(f"{out.name}: {'up to date' if same else 'DIFFERS'}")
            status |= 0 if same else 1
        else:
            out.write_text(text, encoding="utf-8")
            print(f"wrote {out} ({text.count(chr(10))} lines)")
    out = DATA / "expected_other.jsonl"
    text = run_other()
    if args.check:
        same = out.exists() and out.read_text(encoding="utf-8") == text
        print(f"{out.name}: {'up to date' if same else 'DIFFERS'}")
        status |= 0 if same else 1
    else:
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out} ({text.count(chr(10))} lines)")
    sys.exit(status)


if __name__ == "__main__":
    main()
