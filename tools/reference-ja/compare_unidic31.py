#!/usr/bin/env python3
"""How much misaki's Japanese output depends on the dictionary: misaki 0.9.4 JAG2P with UniDic 3.1 (the
official pipeline's dictionary when `python -m unidic download` was run) against the committed
expectations (unidic-lite). Dev only, by hand; numbers are quoted in frontend/README.md ("Japanese").

    apt-get download unidic-mecab     # Debian's UniDic 3.1.1 for MeCab (1 GB; installs 5 GB, so unpack only:)
    dpkg-deb --fsys-tarfile unidic-mecab_*.deb | tar -x ./var/lib/mecab/dic/unidic ./usr/share/mecab/dic/unidic/dicrc
    cp usr/share/mecab/dic/unidic/dicrc var/lib/mecab/dic/unidic/ && touch var/lib/mecab/dic/unidic/mecabrc
    .venv-ja/bin/python tools/reference-ja/compare_unidic31.py var/lib/mecab/dic/unidic [differences.txt]
"""
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(here, 'stub'))

import fugashi  # noqa: E402
import misaki.cutlet  # noqa: E402
from misaki import ja  # noqa: E402


def lcs(a, b):
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def without_punctuation(s):
    return ' '.join(re.sub(r'[.,!?“”«»:;—…"()]', ' ', s).split())


def main():
    dicdir = os.path.abspath(sys.argv[1])
    tagger = fugashi.Tagger
    misaki.cutlet.Tagger = lambda: tagger(f'-d {dicdir} -r {dicdir}/mecabrc')
    g2p = ja.JAG2P()
    rows = []
    with open(os.path.join(repo, 'tests/data/ja/expected.tsv'), encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\n')
            if line and not line.startswith('#'):
                text, lite = line.split('\t')
                rows.append((text, g2p(text)[0], lite))
    for name, norm in (('as is', lambda s: s), ('ignoring punctuation', without_punctuation)):
        same = sum(norm(o) == norm(l) for _, o, l in rows)
        words = sum(len(norm(o).split()) for _, o, _ in rows)
        matched = sum(lcs(norm(o).split(), norm(l).split()) for _, o, l in rows)
        print(f'UniDic 3.1 vs unidic-lite, {name}: sentences {same}/{len(rows)} = {100 * same / len(rows):.1f} %, '
              f'words {matched}/{words} = {100 * matched / words:.2f} %')
    if len(sys.argv) > 2:
        with open(sys.argv[2], 'w', encoding='utf-8') as f:
            for text, o, l in rows:
                if without_punctuation(o) != without_punctuation(l):
                    f.write(f'{text}\n  unidic 3.1: {o}\n  unidic-lite: {l}\n')


if __name__ == '__main__':
    main()
