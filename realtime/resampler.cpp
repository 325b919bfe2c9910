#include "realtime/resampler.h"

#include <samplerate.h>

#include <cmath>
#include <string>

#include "core/error.h"

namespace kokoro {
namespace {

int converter_type(ResampleQuality q) {
  switch (q) {
    case ResampleQuality::best: return SRC_SINC_BEST_QUALITY;
    case ResampleQuality::medium: return SRC_SINC_MEDIUM_QUALITY;
    case ResampleQuality::fastest: return SRC_SINC_FASTEST;
    case ResampleQuality::linear: return SRC_LINEAR;
  }
  return SRC_SINC_MEDIUM_QUALITY;
}

std::string rates(double in, double out) {
  return std::to_string(static_cast<long>(in)) + " Hz -> " + std::to_string(static_cast<long>(out)) + " Hz";
}

}  // namespace

StreamResampler::StreamResampler(double input_rate, double output_rate, ResampleQuality quality)
    : input_rate_(input_rate), output_rate_(output_rate), quality_(quality) {
  rebuild();
}

StreamResampler::~StreamResampler() {
  if (state_) src_delete(state_);
}

void StreamResampler::rebuild() {
  if (!(input_rate_ > 0) || !(output_rate_ > 0))
    throw Error("resampler: sample rates must be positive, got " + rates(input_rate_, output_rate_));
  const double ratio = output_rate_ / input_rate_;
  if (!src_is_valid_ratio(ratio)) throw Error("resampler: unsupported conversion " + rates(input_rate_, output_rate_));
  if (state_) {
    src_delete(state_);
    state_ = nullptr;
  }
  if (input_rate_ == output_rate_) return;  // passthrough
  int err = 0;
  state_ = src_new(converter_type(quality_), 1, &err);
  if (!state_) throw Error(std::string("resampler: libsamplerate src_new failed: ") + src_strerror(err));
}

void StreamResampler::run(const float* in, std::size_t n, bool end_of_input, std::vector<float>& out) {
  const double ratio = output_rate_ / input_rate_;
  SRC_DATA d{};
  d.src_ratio = ratio;
  d.end_of_input = end_of_input ? 1 : 0;
  std::size_t used = 0;
  static const float kNoInput = 0.0f;  // libsamplerate wants a valid pointer even for zero frames
  for (;;) {
    const std::size_t room = static_cast<std::size_t>(std::ceil((n - used) * ratio)) + 256;
    const std::size_t base = out.size();
    out.resize(base + room);
    d.data_in = in ? in + used : &kNoInput;
    d.input_frames = static_cast<long>(n - used);
    d.data_out = out.data() + base;
    d.output_frames = static_cast<long>(room);
    const int err = src_process(state_, &d);
    if (err) throw Error(std::string("resampler: libsamplerate failed: ") + src_strerror(err));
    out.resize(base + static_cast<std::size_t>(d.output_frames_gen));
    used += static_cast<std::size_t>(d.input_frames_used);
    // Done when all input is consumed and (at end of input) the filter has nothing more to give.
    if (used >= n && (!end_of_input || d.output_frames_gen == 0)) break;
    if (d.input_frames_used == 0 && d.output_frames_gen == 0) break;  // no progress possible
  }
}

void StreamResampler::process(const float* in, std::size_t n, std::vector<float>& out) {
  if (n == 0) return;
  if (passthrough()) {
    out.insert(out.end(), in, in + n);
    return;
  }
  run(in, n, false, out);
}

void StreamResampler::finish(std::vector<float>& out) {
  if (passthrough()) return;
  run(nullptr, 0, true, out);
  src_reset(state_);
}

void StreamResampler::reset() {
  if (state_) src_reset(state_);
}

void StreamResampler::set_output_rate(double output_rate) {
  if (output_rate == output_rate_) return;
  output_rate_ = output_rate;
  rebuild();  // a new converter: the stream in progress restarts, which a rate change interrupts anyway
}

}  // namespace kokoro
