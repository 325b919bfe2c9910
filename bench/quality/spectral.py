"""Signal measures of a system's audio against the reference audio of the same text (both 24 kHz mono).

Frame alignment is by sample index (no time warping): frame f of both covers samples [f*HOP, f*HOP+N_FFT)
of the common length. When the durations differ the later frames compare different sounds; the duration
column says when that is the case.

  LSD   log-spectral distance, dB: Hann window (numpy.hanning) of 1024 samples every 256, L = 20 log10(|rfft|
        + 1e-5); per frame sqrt(mean over bins (L_sys - L_ref)^2); mean over the frames where the reference
        is not silent (frame RMS >= -60 dBFS). lsd_all_db: the same over every frame, which is the
        definition of bench/stream_metrics.h (the figures of docs/streaming.md).
  MCD   mel-cepstral distortion, dB, on the same frames as LSD: power spectrum -> 80 triangular HTK-mel bands
        (0-12 kHz) -> natural log (floor 1e-10) -> orthonormal DCT-II -> c1..c13 (c0, the level, left out);
        per frame (10 / ln 10) sqrt(2 sum_d (c_d - c'_d)^2); mean over non-silent reference frames.
        (bench/stream_metrics.h uses the same pipeline with c1..c24.)
  level RMS of the system over RMS of the reference, dB (whole files).
  leak  20 ms frames (480 samples) where the reference is silent (RMS < -60 dBFS): the system's largest
        frame RMS there (dBFS), its largest sample there (dBFS), and how many of those frames exceed -50 dBFS.
"""
import numpy as np
from scipy.fft import dct

SAMPLE_RATE = 24000
N_FFT = 1024
HOP = 256
MEL_BANDS = 80
CEPSTRA = 13
SILENT_DBFS = -60.0
LEAK_FRAME = 480            # 20 ms
LEAK_AUDIBLE_DBFS = -50.0
TINY = 1e-12


def dbfs(x):
    return 20.0 * np.log10(np.maximum(x, TINY))


def frames(x, length, hop):
    count = 0 if x.size < length else 1 + (x.size - length) // hop
    if count == 0:
        return np.zeros((0, length), dtype=np.float64)
    idx = np.arange(length)[None, :] + hop * np.arange(count)[:, None]
    return x[idx].astype(np.float64)


def _mel_filters():
    def hz_to_mel(f):
        return 2595.0 * np.log10(1.0 + f / 700.0)

    def mel_to_hz(m):
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)

    bins = N_FFT // 2 + 1
    freqs = np.arange(bins) * SAMPLE_RATE / N_FFT
    edges = mel_to_hz(np.linspace(0.0, hz_to_mel(SAMPLE_RATE / 2), MEL_BANDS + 2))
    filters = np.zeros((MEL_BANDS, bins))
    for b in range(MEL_BANDS):
        lo, mid, hi = edges[b], edges[b + 1], edges[b + 2]
        rising = (freqs - lo) / (mid - lo)
        falling = (hi - freqs) / (hi - mid)
        filters[b] = np.maximum(0.0, np.minimum(rising, falling))
    return filters


MEL_FILTERS = _mel_filters()


def _spectra(x):
    return np.abs(np.fft.rfft(frames(x, N_FFT, HOP) * np.hanning(N_FFT), axis=1))


def _mel_cepstra(magnitude):
    logmel = np.log(np.maximum((magnitude ** 2) @ MEL_FILTERS.T, 1e-10))
    return dct(logmel, type=2, norm="ortho", axis=1)[:, 1:CEPSTRA + 1]


def compare(system, reference):
    """All measures of one file pair (float arrays at 24 kHz)."""
    system = np.asarray(system, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    n = min(system.size, reference.size)
    sys_c, ref_c = system[:n], reference[:n]
    result = {"duration_diff_samples": int(system.size - reference.size),
              "level_diff_db": float(dbfs(np.sqrt(np.mean(system ** 2))) - dbfs(np.sqrt(np.mean(reference ** 2))))}

    mag_sys, mag_ref = _spectra(sys_c), _spectra(ref_c)
    voiced = dbfs(np.sqrt(np.mean(frames(ref_c, N_FFT, HOP) ** 2, axis=1))) >= SILENT_DBFS
    per_frame_lsd = np.sqrt(np.mean((20 * np.log10(mag_sys + 1e-5) - 20 * np.log10(mag_ref + 1e-5)) ** 2, axis=1))
    diff = _mel_cepstra(mag_sys) - _mel_cepstra(mag_ref)
    per_frame_mcd = (10.0 / np.log(10.0)) * np.sqrt(2.0 * np.sum(diff ** 2, axis=1))
    result["lsd_db"] = float(np.mean(per_frame_lsd[voiced])) if voiced.any() else float("nan")
    result["lsd_all_db"] = float(np.mean(per_frame_lsd)) if per_frame_lsd.size else float("nan")
    result["mcd_db"] = float(np.mean(per_frame_mcd[voiced])) if voiced.any() else float("nan")
    result["compared_frames"] = int(voiced.sum())

    ref_frames, sys_frames = frames(ref_c, LEAK_FRAME, LEAK_FRAME), frames(sys_c, LEAK_FRAME, LEAK_FRAME)
    silent = dbfs(np.sqrt(np.mean(ref_frames ** 2, axis=1))) < SILENT_DBFS
    leak_rms = dbfs(np.sqrt(np.mean(sys_frames[silent] ** 2, axis=1)))
    leak_peak = dbfs(np.max(np.abs(sys_frames[silent]), axis=1)) if silent.any() else np.zeros(0)
    result["silent_frames"] = int(silent.sum())
    result["leak_max_rms_dbfs"] = float(leak_rms.max()) if leak_rms.size else None
    result["leak_max_peak_dbfs"] = float(leak_peak.max()) if leak_peak.size else None
    result["leak_frames_over_-50dbfs"] = int(np.sum(leak_rms > LEAK_AUDIBLE_DBFS))
    return result
