#include "apps/kokoro_server/audio_encoder.h"

#include <FLAC/stream_encoder.h>
#include <lame/lame.h>
#include <opus/opusenc.h>
#include <vo-aacenc/cmnMemory.h>
#include <vo-aacenc/voAAC.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace kokoro::server {

namespace {

int16_t to_s16(float x) {
  const float c = std::clamp(x, -1.0f, 1.0f);
  return static_cast<int16_t>(std::lrintf(c * 32767.0f));
}

void put_u32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void put_u16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v & 0xFF));
  out->push_back(static_cast<char>(v >> 8));
}

void append_s16(const float* samples, size_t count, std::string* out) {
  const size_t at = out->size();
  out->resize(at + 2 * count);
  char* p = out->data() + at;
  for (size_t i = 0; i < count; ++i) {
    const auto v = static_cast<uint16_t>(to_s16(samples[i]));
    p[2 * i] = static_cast<char>(v & 0xFF);
    p[2 * i + 1] = static_cast<char>(v >> 8);
  }
}

class PcmEncoder : public AudioEncoder {
 public:
  void encode(const float* samples, size_t count, std::string* out) override { append_s16(samples, count, out); }
  void finish(std::string*) override {}
};

// RIFF/WAVE, 16-bit mono 24 kHz. Unknown length: both sizes 0xFFFFFFFF, as ffmpeg, sox, browsers and
// Python's soundfile read (to the end of the stream).
class WavEncoder : public PcmEncoder {
 public:
  explicit WavEncoder(std::optional<size_t> total) : total_(total) {}
  void encode(const float* samples, size_t count, std::string* out) override {
    if (!header_written_) write_header(out);
    append_s16(samples, count, out);
  }
  void finish(std::string* out) override {
    if (!header_written_) write_header(out);
  }

 private:
  void write_header(std::string* out) {
    header_written_ = true;
    const uint32_t data_bytes = total_ ? static_cast<uint32_t>(std::min<size_t>(*total_ * 2, 0xFFFFFFFFu - 36)) : 0xFFFFFFFFu;
    const uint32_t riff_bytes = total_ ? data_bytes + 36 : 0xFFFFFFFFu;
    out->append("RIFF");
    put_u32(out, riff_bytes);
    out->append("WAVEfmt ");
    put_u32(out, 16);
    put_u16(out, 1);  // PCM
    put_u16(out, 1);  // mono
    put_u32(out, kSampleRate);
    put_u32(out, kSampleRate * 2);
    put_u16(out, 2);
    put_u16(out, 16);
    out->append("data");
    put_u32(out, data_bytes);
  }
  std::optional<size_t> total_;
  bool header_written_ = false;
};

// MPEG-2 Layer III at 24 kHz, CBR 64 kbit/s: constant-size frames need no Xing header (which a stream cannot
// go back to write) for players to know the duration.
class Mp3Encoder : public AudioEncoder {
 public:
  Mp3Encoder() : lame_(lame_init()) {
    if (!lame_) throw std::runtime_error("lame_init failed");
    lame_set_in_samplerate(lame_, kSampleRate);
    lame_set_out_samplerate(lame_, kSampleRate);
    lame_set_num_channels(lame_, 1);
    lame_set_mode(lame_, MONO);
    lame_set_brate(lame_, 64);
    lame_set_VBR(lame_, vbr_off);
    lame_set_quality(lame_, 5);
    lame_set_bWriteVbrTag(lame_, 0);
    if (lame_init_params(lame_) < 0) {
      lame_close(lame_);
      throw std::runtime_error("LAME refused 24 kHz mono 64 kbit/s");
    }
  }
  ~Mp3Encoder() override { lame_close(lame_); }
  void encode(const float* samples, size_t count, std::string* out) override {
    while (count > 0) {
      const int n = static_cast<int>(std::min<size_t>(count, 8192));
      buffer_.resize(n + n / 4 + 7200);  // LAME's documented worst case
      const int bytes = lame_encode_buffer_ieee_float(lame_, samples, samples, n, buffer_.data(),
                                                      static_cast<int>(buffer_.size()));
      if (bytes < 0) throw std::runtime_error("LAME failed to encode (" + std::to_string(bytes) + ")");
      out->append(reinterpret_cast<const char*>(buffer_.data()), bytes);
      samples += n;
      count -= n;
    }
  }
  void finish(std::string* out) override {
    buffer_.resize(7200);
    const int bytes = lame_encode_flush(lame_, buffer_.data(), static_cast<int>(buffer_.size()));
    if (bytes > 0) out->append(reinterpret_cast<const char*>(buffer_.data()), bytes);
  }

 private:
  lame_global_flags* lame_;
  std::vector<unsigned char> buffer_;
};

// Ogg Opus (what OpenAI's "opus" is). libopusenc resamples 24 -> 48 kHz itself; muxing delay 0 sends each
// page as soon as its packets exist instead of holding up to a second of audio, decision delay 0 encodes
// each 20 ms frame as soon as it is complete.
class OpusEncoder : public AudioEncoder {
 public:
  OpusEncoder() {
    OpusEncCallbacks callbacks{&OpusEncoder::write, &OpusEncoder::close};
    comments_ = ope_comments_create();
    ope_comments_add(comments_, "ENCODER", "kokoro-server");
    int error = 0;
    enc_ = ope_encoder_create_callbacks(&callbacks, this, comments_, kSampleRate, 1, 0, &error);
    if (!enc_) {
      ope_comments_destroy(comments_);
      throw std::runtime_error(std::string("libopusenc: ") + ope_strerror(error));
    }
    ope_encoder_ctl(enc_, OPE_SET_MUXING_DELAY(0));
    ope_encoder_ctl(enc_, OPE_SET_DECISION_DELAY(0));  // its default holds 2 s back to choose frame sizes
    ope_encoder_ctl(enc_, OPUS_SET_BITRATE(48000));
    ope_encoder_ctl(enc_, OPUS_SET_SIGNAL(OPUS_SIGNAL_VOICE));
  }
  ~OpusEncoder() override {
    ope_encoder_destroy(enc_);
    ope_comments_destroy(comments_);
  }
  void encode(const float* samples, size_t count, std::string* out) override {
    if (!header_flushed_) {
      ope_encoder_flush_header(enc_);  // the two header pages go out with the first audio
      header_flushed_ = true;
    }
    if (count > 0 && ope_encoder_write_float(enc_, samples, static_cast<int>(count)) != OPE_OK)
      throw std::runtime_error("libopusenc failed to encode");
    out->append(pending_);
    pending_.clear();
  }
  void finish(std::string* out) override {
    if (!header_flushed_) encode(nullptr, 0, out);
    if (ope_encoder_drain(enc_) != OPE_OK) throw std::runtime_error("libopusenc failed to drain");
    out->append(pending_);
    pending_.clear();
  }

 private:
  static int write(void* user, const unsigned char* ptr, opus_int32 len) {
    static_cast<OpusEncoder*>(user)->pending_.append(reinterpret_cast<const char*>(ptr), static_cast<size_t>(len));
    return 0;
  }
  static int close(void*) { return 0; }
  OggOpusComments* comments_ = nullptr;
  OggOpusEnc* enc_ = nullptr;
  std::string pending_;
  bool header_flushed_ = false;
};

// FLAC, 16-bit, written as a stream: streamed, the STREAMINFO says "length unknown" (no seek back), which
// the flac tool, ffmpeg and libsndfile's sf_read accept (Python soundfile's read() wants a length: it has one
// when the response is not streamed).
class FlacEncoder : public AudioEncoder {
 public:
  explicit FlacEncoder(std::optional<size_t> total) : enc_(FLAC__stream_encoder_new()) {
    if (!enc_) throw std::runtime_error("FLAC__stream_encoder_new failed");
    FLAC__stream_encoder_set_channels(enc_, 1);
    FLAC__stream_encoder_set_bits_per_sample(enc_, 16);
    FLAC__stream_encoder_set_sample_rate(enc_, kSampleRate);
    FLAC__stream_encoder_set_compression_level(enc_, 5);
    FLAC__stream_encoder_set_streamable_subset(enc_, true);
    if (total) FLAC__stream_encoder_set_total_samples_estimate(enc_, *total);  // exact when not streamed
    if (FLAC__stream_encoder_init_stream(enc_, &FlacEncoder::write, nullptr, nullptr, nullptr, this) !=
        FLAC__STREAM_ENCODER_INIT_STATUS_OK) {
      FLAC__stream_encoder_delete(enc_);
      throw std::runtime_error("libFLAC refused 24 kHz mono 16-bit");
    }
  }
  ~FlacEncoder() override { FLAC__stream_encoder_delete(enc_); }
  void encode(const float* samples, size_t count, std::string* out) override {
    pcm_.resize(count);
    for (size_t i = 0; i < count; ++i) pcm_[i] = to_s16(samples[i]);
    if (count > 0 && !FLAC__stream_encoder_process_interleaved(enc_, pcm_.data(), static_cast<unsigned>(count)))
      throw std::runtime_error("libFLAC failed to encode");
    out->append(pending_);
    pending_.clear();
  }
  void finish(std::string* out) override {
    FLAC__stream_encoder_finish(enc_);
    out->append(pending_);
    pending_.clear();
  }

 private:
  static FLAC__StreamEncoderWriteStatus write(const FLAC__StreamEncoder*, const FLAC__byte buffer[], size_t bytes, unsigned,
                                              unsigned, void* user) {
    // Also called inside init_stream (the "fLaC" marker and STREAMINFO): kept until the first encode().
    static_cast<FlacEncoder*>(user)->pending_.append(reinterpret_cast<const char*>(buffer), bytes);
    return FLAC__STREAM_ENCODER_WRITE_STATUS_OK;
  }
  FLAC__StreamEncoder* enc_;
  std::vector<FLAC__int32> pcm_;
  std::string pending_;
};

// AAC-LC in ADTS frames (what OpenAI's "aac" is), 64 kbit/s, from VisualOn's encoder (Debian's
// libvo-aacenc). It takes 1024 samples per frame; finish() pads the last frame and pushes two frames of
// silence through so that its look-ahead lets go of the end of the speech.
class AacEncoder : public AudioEncoder {
 public:
  AacEncoder() {
    voGetAACEncAPI(&api_);
    mem_.Alloc = cmnMemAlloc;
    mem_.Copy = cmnMemCopy;
    mem_.Free = cmnMemFree;
    mem_.Set = cmnMemSet;
    mem_.Check = cmnMemCheck;
    VO_CODEC_INIT_USERDATA user{};
    user.memflag = VO_IMF_USERMEMOPERATOR;
    user.memData = &mem_;
    if (api_.Init(&handle_, VO_AUDIO_CodingAAC, &user) != VO_ERR_NONE) throw std::runtime_error("vo-aacenc: Init failed");
    AACENC_PARAM params{};
    params.sampleRate = kSampleRate;
    params.bitRate = 64000;
    params.nChannels = 1;
    params.adtsUsed = 1;
    if (api_.SetParam(handle_, VO_PID_AAC_ENCPARAM, &params) != VO_ERR_NONE) {
      api_.Uninit(handle_);
      throw std::runtime_error("vo-aacenc refused 24 kHz mono 64 kbit/s");
    }
  }
  ~AacEncoder() override { api_.Uninit(handle_); }
  void encode(const float* samples, size_t count, std::string* out) override {
    for (size_t i = 0; i < count; ++i) {
      frame_.push_back(to_s16(samples[i]));
      if (frame_.size() == kFrame) encode_frame(out);
    }
  }
  void finish(std::string* out) override {
    if (!frame_.empty()) {
      frame_.resize(kFrame, 0);
      encode_frame(out);
    }
    for (int i = 0; i < 2; ++i) {
      frame_.assign(kFrame, 0);
      encode_frame(out);
    }
  }

 private:
  static constexpr size_t kFrame = 1024;
  void encode_frame(std::string* out) {
    VO_CODECBUFFER input{};
    input.Buffer = reinterpret_cast<VO_PBYTE>(frame_.data());
    input.Length = static_cast<VO_U32>(frame_.size() * sizeof(int16_t));
    api_.SetInputData(handle_, &input);
    unsigned char buffer[8192];
    VO_CODECBUFFER output{};
    VO_AUDIO_OUTPUTINFO info{};
    output.Buffer = buffer;
    output.Length = sizeof buffer;
    if (api_.GetOutputData(handle_, &output, &info) != VO_ERR_NONE) throw std::runtime_error("vo-aacenc failed to encode");
    out->append(reinterpret_cast<const char*>(buffer), output.Length);
    frame_.clear();
  }
  VO_AUDIO_CODECAPI api_{};
  VO_MEM_OPERATOR mem_{};
  VO_HANDLE handle_ = nullptr;
  std::vector<int16_t> frame_;
};

}  // namespace

std::unique_ptr<AudioEncoder> make_encoder(AudioFormat format, std::optional<size_t> total_samples) {
  switch (format) {
    case AudioFormat::wav: return std::make_unique<WavEncoder>(total_samples);
    case AudioFormat::pcm: return std::make_unique<PcmEncoder>();
    case AudioFormat::mp3: return std::make_unique<Mp3Encoder>();
    case AudioFormat::opus: return std::make_unique<OpusEncoder>();
    case AudioFormat::flac: return std::make_unique<FlacEncoder>(total_samples);
    case AudioFormat::aac: return std::make_unique<AacEncoder>();
  }
  throw std::runtime_error("unknown audio format");
}

}  // namespace kokoro::server
