"""The counter-based noise that replaces torch's random draws in the reference's source module (SineGen).

The official model draws torch.rand / torch.randn_like inside SineGen and SourceModuleHnNSF, so its audio is
not reproducible. make_goldens.py swaps those draws for this generator, which the C++ engine implements
identically, so golden audio can be compared sample by sample. Definition (all integer arithmetic mod 2^64):

    splitmix64(x): z = x + 0x9E3779B97F4A7C15
                   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
                   z = (z ^ (z >> 27)) * 0x94D049BB133111EB
                   return z ^ (z >> 31)
    uniform(stream, i) = float32(((splitmix64((stream << 32) + i) >> 40) + 0.5) * 2^-24)
                         (the product is exact in float64; the float32 conversion rounds to nearest-even, so
                          the top value 1 - 2^-25 becomes 1.0; the smallest is 2^-25, so ln(u) is finite)
    normal(stream, i)  = float32(sqrt(-2 * ln(u1)) * cos((2 * pi) * u2)), evaluated in float64 with libm,
                         u1 = uniform(stream, 2i), u2 = uniform(stream, 2i + 1), the float32 values widened

    streams: 1 = SineGen initial phases  rand_ini[0, h] = uniform(1, h), h = 0..8 (column 0 then zeroed)
             2 = SineGen additive noise  noise[0, t, h] = normal(2, t * 9 + h)
             3 = SourceModuleHnNSF noise  noise[0, t, 0] = normal(3, t)   (unused downstream)

Run this file to self-check it and print the first values (docs/golden-data.md quotes them for C++ tests).
"""
from __future__ import annotations

import math

import numpy as np

STREAM_SINE_PHASE = 1
STREAM_SINE_NOISE = 2
STREAM_SOURCE_NOISE = 3

_MASK = (1 << 64) - 1


def splitmix64(x: np.ndarray) -> np.ndarray:
    """Vectorised splitmix64 finaliser on uint64 arrays (numpy wraps uint64 arithmetic mod 2^64)."""
    z = np.asarray(x, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _splitmix64_scalar(x: int) -> int:
    """Plain-integer version used only to cross-check the vectorised one."""
    z = (x + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def uniform(stream: int, index: np.ndarray) -> np.ndarray:
    """float32 uniforms in (0, 1] for counter values `index` (any shape) of `stream`."""
    index = np.asarray(index, dtype=np.uint64)
    bits = splitmix64((np.uint64(stream) << np.uint64(32)) + index) >> np.uint64(40)
    return ((bits.astype(np.float64) + 0.5) * 2.0 ** -24).astype(np.float32)


def normal(stream: int, index: np.ndarray) -> np.ndarray:
    """float32 standard normals (Box-Muller, cosine branch) for counter values `index` of `stream`.

    The transcendental functions go through Python's math module (the C library's log/cos/sqrt in double),
    not numpy's SIMD versions, so C++ using std::log/std::cos/std::sqrt on doubles gets the same values.
    """
    index = np.asarray(index, dtype=np.uint64)
    u1 = uniform(stream, 2 * index).astype(np.float64).ravel().tolist()
    u2 = uniform(stream, 2 * index + 1).astype(np.float64).ravel().tolist()
    two_pi = 2.0 * math.pi
    values = [math.sqrt(-2.0 * math.log(a)) * math.cos(two_pi * b) for a, b in zip(u1, u2)]
    return np.asarray(values, dtype=np.float64).astype(np.float32).reshape(index.shape)


def sine_initial_phase(harmonics: int) -> np.ndarray:
    """SineGen's rand_ini for batch 1, shape [1, harmonics], before the reference zeroes column 0."""
    return uniform(STREAM_SINE_PHASE, np.arange(harmonics)).reshape(1, harmonics)


def sine_noise(length: int, harmonics: int) -> np.ndarray:
    """SineGen's standard-normal noise for batch 1, shape [1, length, harmonics] (flat row-major index)."""
    return normal(STREAM_SINE_NOISE, np.arange(length * harmonics)).reshape(1, length, harmonics)


def source_noise(length: int) -> np.ndarray:
    """SourceModuleHnNSF's standard-normal noise for batch 1, shape [1, length, 1]."""
    return normal(STREAM_SOURCE_NOISE, np.arange(length)).reshape(1, length, 1)


def _self_test() -> None:
    xs = [0, 1, 2, (1 << 32) + 5, (3 << 32) + 123456, _MASK]
    vec = splitmix64(np.array(xs, dtype=np.uint64))
    for x, v in zip(xs, vec):
        assert int(v) == _splitmix64_scalar(x), x
    # splitmix64's published first output for seed 0 (state advanced once by the golden gamma).
    assert _splitmix64_scalar(0) == 0xE220A8397B1DCDAF
    u = uniform(STREAM_SINE_NOISE, np.arange(200000))
    assert u.dtype == np.float32 and u.min() > 0.0 and u.max() <= 1.0
    assert abs(float(u.mean()) - 0.5) < 0.005
    n = normal(STREAM_SINE_NOISE, np.arange(200000))
    assert np.all(np.isfinite(n)) and abs(float(n.mean())) < 0.01 and abs(float(n.std()) - 1.0) < 0.01
    # Streams are independent counters: same index, different stream, different value.
    assert uniform(1, np.arange(4)).tolist() != uniform(2, np.arange(4)).tolist()


if __name__ == "__main__":
    _self_test()
    np.set_printoptions(precision=9, floatmode="unique")
    print("splitmix64(0) =", hex(_splitmix64_scalar(0)))
    print("uniform(1, 0..8) =", [float(v) for v in sine_initial_phase(9)[0]])
    print("normal(2, 0..8)  =", [float(v) for v in normal(STREAM_SINE_NOISE, np.arange(9))])
    print("normal(3, 0..3)  =", [float(v) for v in normal(STREAM_SOURCE_NOISE, np.arange(4))])
    print("self-test passed")
