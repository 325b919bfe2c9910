# Stand-in for pyopenjtalk: misaki.ja imports it at module level, but the "cutlet" JAG2P that KPipeline
# uses never calls it. Anything that does call it fails loudly instead of giving wrong phonemes.
def run_frontend(*args, **kwargs):
    raise RuntimeError("pyopenjtalk stub called: the reference must use JAG2P(version='cutlet')")
