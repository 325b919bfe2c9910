"""misaki's Mandarin phonemes for a corpus, as KPipeline 0.9.4 produces them for Kokoro-82M v1.0.

KPipeline(lang_code='z', repo_id='hexgrad/Kokoro-82M') builds misaki.zh.ZHG2P(version=None): the legacy
path (cn2an numbers, punctuation mapping, jieba.lcut, pypinyin lazy_pinyin TONE3, pinyin_to_ipa). We call
that G2P directly on each corpus line (one sentence each).

  .venv-zh/bin/python tools/reference-zh/reference.py tests/data/zh/corpus.txt \
      > tests/data/zh/expected.txt

Output: one line per corpus line (comments and blank lines are kept as they are, so line numbers match):
the phonemes, a tab, then the reading of each ideograph of the normalised text as "char:phonemes" separated
by spaces (the same steps legacy_call takes, split per character so that the test can report agreement per
character; checked to give the same string as the G2P). A sentence misaki fails on is "!ERROR <name>".
"""
import logging
import re
import sys

import cn2an
import jieba
from misaki import zh
from pypinyin import Style, lazy_pinyin

jieba.setLogLevel(logging.ERROR)


def per_character(line, ps):
    text = zh.ZHG2P.map_punctuation(cn2an.transform(line, 'an2cn'))
    pairs, joined = [], []
    for run in re.findall('[\u4E00-\u9FFF]+', text):
        for word in jieba.lcut(run, cut_all=False):
            pinyins = lazy_pinyin(word, style=Style.TONE3, neutral_tone_with_five=True)
            ipa = [zh.ZHG2P.py2ipa(py).replace(chr(815), '') for py in pinyins]
            pairs += [c + ':' + p for c, p in zip(word, ipa)]
            joined.append(''.join(ipa))
    assert all(w in ps for w in joined), (line, joined, ps)
    return pairs


def main():
    g2p = zh.ZHG2P(version=None)
    with open(sys.argv[1], encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\n')
            if not line.strip() or line.startswith('#'):
                print(line)
                continue
            try:
                ps, _ = g2p(line)
            except Exception as e:  # misaki raises for readings pinyin_to_ipa does not know
                print('!ERROR ' + type(e).__name__)
                continue
            print(ps + '\t' + ' '.join(per_character(line, ps)))


if __name__ == '__main__':
    main()
