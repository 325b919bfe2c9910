// Decoding kokoro-server's responses in tests with libraries we did not write: libsndfile (WAV, FLAC, Ogg
// Opus, MP3 through mpg123) and libfaad2 (ADTS AAC). Plus the small comparisons the server tests make.
#pragma once

#include <neaacdec.h>
#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace server_test {

// Float samples from s16le bytes.
inline std::vector<float> from_pcm16(const std::string& bytes) {
  std::vector<float> out(bytes.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    const auto lo = static_cast<unsigned char>(bytes[2 * i]), hi = static_cast<unsigned char>(bytes[2 * i + 1]);
    out[i] = static_cast<int16_t>(lo | (hi << 8)) / 32768.0f;
  }
  return out;
}

struct Decoded {
  std::vector<float> samples;
  int rate = 0;
};

// libsndfile from memory (a virtual file over the bytes). Reads until sf_read returns 0, so that a streamed
// file of unknown length (FLAC's STREAMINFO 0, WAV's 0xFFFFFFFF) is read to its end.
inline Decoded decode_sndfile(const std::string& bytes) {
  struct Memory {
    const std::string* data;
    sf_count_t pos = 0;
  } mem{&bytes};
  SF_VIRTUAL_IO io{};
  io.get_filelen = [](void* u) -> sf_count_t { return static_cast<Memory*>(u)->data->size(); };
  io.seek = [](sf_count_t offset, int whence, void* u) -> sf_count_t {
    auto* m = static_cast<Memory*>(u);
    const sf_count_t size = m->data->size();
    sf_count_t p = whence == SEEK_SET ? offset : whence == SEEK_CUR ? m->pos + offset : size + offset;
    m->pos = std::clamp<sf_count_t>(p, 0, size);
    return m->pos;
  };
  io.read = [](void* ptr, sf_count_t count, void* u) -> sf_count_t {
    auto* m = static_cast<Memory*>(u);
    const sf_count_t n = std::min<sf_count_t>(count, m->data->size() - m->pos);
    std::memcpy(ptr, m->data->data() + m->pos, n);
    m->pos += n;
    return n;
  };
  io.write = [](const void*, sf_count_t, void*) -> sf_count_t { return 0; };
  io.tell = [](void* u) -> sf_count_t { return static_cast<Memory*>(u)->pos; };
  SF_INFO info{};
  SNDFILE* f = sf_open_virtual(&io, SFM_READ, &info, &mem);
  if (!f) throw std::runtime_error(std::string("libsndfile: ") + sf_strerror(nullptr));
  Decoded out;
  out.rate = info.samplerate;
  std::vector<float> block(4096 * std::max(1, info.channels));
  for (;;) {
    const sf_count_t frames = sf_readf_float(f, block.data(), 4096);
    if (frames <= 0) break;
    for (sf_count_t i = 0; i < frames; ++i) out.samples.push_back(block[i * info.channels]);
  }
  sf_close(f);
  return out;
}

// ADTS AAC with libfaad2, at the stream's own rate (no implicit-SBR upsampling).
inline Decoded decode_aac(const std::string& bytes) {
  NeAACDecHandle h = NeAACDecOpen();
  NeAACDecConfigurationPtr config = NeAACDecGetCurrentConfiguration(h);
  config->outputFormat = FAAD_FMT_FLOAT;
  config->dontUpSampleImplicitSBR = 1;
  NeAACDecSetConfiguration(h, config);
  std::vector<unsigned char> buf(bytes.begin(), bytes.end());
  unsigned long rate = 0;
  unsigned char channels = 0;
  const long skip = NeAACDecInit(h, buf.data(), buf.size(), &rate, &channels);
  if (skip < 0) {
    NeAACDecClose(h);
    throw std::runtime_error("libfaad: not an AAC stream");
  }
  Decoded out;
  out.rate = static_cast<int>(rate);
  size_t pos = static_cast<size_t>(skip);
  while (pos < buf.size()) {
    NeAACDecFrameInfo info{};
    auto* samples = static_cast<float*>(NeAACDecDecode(h, &info, buf.data() + pos, buf.size() - pos));
    if (info.error != 0) {
      NeAACDecClose(h);
      throw std::runtime_error(std::string("libfaad: ") + NeAACDecGetErrorMessage(info.error));
    }
    if (info.bytesconsumed == 0) break;
    pos += info.bytesconsumed;
    for (unsigned long i = 0; samples && i < info.samples; i += std::max<unsigned char>(1, info.channels))
      out.samples.push_back(samples[i]);
  }
  NeAACDecClose(h);
  return out;
}

// Normalised correlation of `reference` with `x` at the lag (0..max_lag samples) that fits best: codecs
// delay their output (LAME ~1105 samples, AAC ~1024-2048). The lag is found on a window from the middle of the
// reference (where the speech is), the correlation taken over the whole reference. -1 when x is too short.
inline std::pair<double, size_t> best_alignment(const std::vector<float>& reference, const std::vector<float>& x,
                                                size_t max_lag) {
  auto correlation = [&](size_t lag, size_t begin, size_t end) {
    double rx = 0, rr = 0, xx = 0;
    for (size_t i = begin; i < end; ++i) {
      rx += double(reference[i]) * x[lag + i];
      rr += double(reference[i]) * reference[i];
      xx += double(x[lag + i]) * x[lag + i];
    }
    return rx / std::sqrt(std::max(rr * xx, 1e-30));
  };
  const size_t n = reference.size();
  const size_t begin = n / 4, end = std::min(n, begin + 12000);
  double best = -2;
  size_t best_lag = 0;
  for (size_t lag = 0; lag <= max_lag && lag + n <= x.size(); ++lag) {
    const double c = correlation(lag, begin, end);
    if (c > best) {
      best = c;
      best_lag = lag;
    }
  }
  if (best < -1) return {-1.0, 0};
  return {correlation(best_lag, 0, n), best_lag};
}

}  // namespace server_test
