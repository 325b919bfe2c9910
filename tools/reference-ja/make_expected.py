#!/usr/bin/env python3
"""Writes misaki 0.9.4's Japanese phonemes for a corpus, as KPipeline(lang_code='j') computes them.

    .venv-ja/bin/python tools/reference-ja/make_expected.py [corpus.txt] [expected.tsv]

Input: one sentence per line ("# " lines are section names, kept as comments). Output: TSV lines
"sentence<TAB>phonemes". A sentence misaki fails on is written as "sentence<TAB>!error: ..." so that the
test can report it instead of silently losing it.
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(here, 'stub'))

from misaki import ja  # noqa: E402


def main():
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(repo, 'tests/data/ja/corpus.txt')
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(repo, 'tests/data/ja/expected.tsv')
    g2p = ja.JAG2P()  # KPipeline's call: version='cutlet'
    lines = []
    with open(corpus, encoding='utf-8') as f:
        for raw in f:
            text = raw.rstrip('\n')
            if not text:
                continue
            if text.startswith('#'):
                lines.append(text)
                continue
            try:
                ps, _ = g2p(text)
            except Exception as e:  # misaki asserts on some inputs (numbers of 10+ digits)
                ps = '!error: ' + type(e).__name__
            assert '\t' not in ps and '\n' not in ps, (text, ps)
            lines.append(f'{text}\t{ps}')
    with open(out, 'w', encoding='utf-8') as f:
        f.write('# misaki 0.9.4 JAG2P (cutlet) with fugashi 1.5.2 + unidic-lite 1.0.8; tools/reference-ja\n')
        f.write('\n'.join(lines) + '\n')
    print(f'wrote {out}: {sum(1 for l in lines if not l.startswith("#"))} sentences')


if __name__ == '__main__':
    main()
