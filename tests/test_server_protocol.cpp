// kokoro-server's request layer, without a server or a model: the OpenAI request body (every 400), voice and
// language names, Wyoming's framing (as the wyoming package writes it, delivered whole or a byte at a time,
// and every malformed header), the sentence cuts of streamed text, and the encoders (each format decoded by
// libsndfile or libfaad2 back to the whole signal).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "apps/kokoro_server/audio_encoder.h"
#include "apps/kokoro_server/sentence_splitter.h"
#include "apps/kokoro_server/speech_request.h"
#include "apps/kokoro_server/wyoming_protocol.h"
#include "tests/server_test_support.h"

using namespace kokoro::server;

namespace {

const std::vector<std::string> kVoices = {"af_alloy", "af_bella", "af_heart", "af_nova", "af_sky", "am_echo",
                                          "am_onyx",  "bf_emma",  "bm_fable", "jf_alpha", "zf_xiaobei"};

ApiError error_of(const std::string& body, SpeechLimits limits = {}) {
  auto r = parse_speech_request(body, kVoices, limits);
  if (auto* e = std::get_if<ApiError>(&r)) return *e;
  ADD_FAILURE() << "accepted: " << body;
  return ApiError{0, ""};
}

SpeechRequest request_of(const std::string& body) {
  auto r = parse_speech_request(body, kVoices, {});
  if (auto* e = std::get_if<ApiError>(&r)) {
    ADD_FAILURE() << body << " -> " << e->message;
    return {};
  }
  return std::get<SpeechRequest>(r);
}

}  // namespace

TEST(SpeechRequest, DefaultsAreOpenAIsAndKokoroFastApis) {
  const SpeechRequest r = request_of(R"j({"input": "Hello."})j");
  EXPECT_EQ(r.input, "Hello.");
  EXPECT_EQ(r.voice, "af_heart");
  EXPECT_EQ(r.format, AudioFormat::mp3);
  EXPECT_TRUE(r.stream);
  EXPECT_FLOAT_EQ(r.speed, 1.0f);
  EXPECT_EQ(r.language, "");
}

TEST(SpeechRequest, ReadsEveryField) {
  const SpeechRequest r = request_of(
      R"j({"model": "tts-1-hd", "input": "Bonjour.", "voice": "af_bella(2)+af_sky(1)", "response_format": "flac",
          "speed": 1.5, "stream": false, "lang_code": "f", "return_timestamps": false, "unknown_field": 1})j");
  EXPECT_EQ(r.model, "tts-1-hd");
  EXPECT_EQ(r.voice, "af_bella:2,af_sky:1");
  EXPECT_EQ(r.format, AudioFormat::flac);
  EXPECT_FLOAT_EQ(r.speed, 1.5f);
  EXPECT_FALSE(r.stream);
  EXPECT_EQ(r.language, "fr-fr");
  EXPECT_FALSE(r.return_timestamps);
  for (const char* f : {"wav", "pcm", "mp3", "opus", "flac", "aac"})
    EXPECT_EQ(format_name(request_of(std::string(R"j({"input":"x","response_format":")j") + f + "\"}").format), std::string(f));
}

TEST(SpeechRequest, EveryMistakeIsA400NamingTheField) {
  struct Case {
    const char* body;
    const char* param;
  };
  const Case cases[] = {
      {"{not json", ""},
      {"[1, 2]", ""},
      {"", ""},
      {R"j({"voice": "af_heart"})j", "input"},
      {R"j({"input": 42})j", "input"},
      {R"j({"input": ""})j", "input"},
      {R"j({"input": " \n\t "})j", "input"},
      {R"j({"input": "x", "voice": "xx_nobody"})j", "voice"},
      {R"j({"input": "x", "voice": 7})j", "voice"},
      {R"j({"input": "x", "voice": "../voices/af_heart"})j", "voice"},
      {R"j({"input": "x", "voice": "/etc/passwd"})j", "voice"},
      {R"j({"input": "x", "voice": "af_heart.bin"})j", "voice"},
      {R"j({"input": "x", "voice": "af_bella(0)+af_sky"})j", "voice"},
      {R"j({"input": "x", "voice": "af_bella(-1)+af_sky"})j", "voice"},
      {R"j({"input": "x", "voice": "af_bella(x)"})j", "voice"},
      {R"j({"input": "x", "voice": "af_bella-af_sky"})j", "voice"},
      {R"j({"input": "x", "voice": "af_bella:nan,af_sky:1"})j", "voice"},
      {R"j({"input": "x", "voice": "af_bella,,af_sky"})j", "voice"},
      {R"j({"input": "x", "response_format": "ogg"})j", "response_format"},
      {R"j({"input": "x", "response_format": "MP3"})j", "response_format"},
      {R"j({"input": "x", "speed": 0.2})j", "speed"},
      {R"j({"input": "x", "speed": 4.01})j", "speed"},
      {R"j({"input": "x", "speed": "fast"})j", "speed"},
      {R"j({"input": "x", "stream": "yes"})j", "stream"},
      {R"j({"input": "x", "lang_code": "klingon"})j", "lang_code"},
      {R"j({"input": "x", "lang_code": 1})j", "lang_code"},
      {R"j({"input": "x", "model": "gpt-4o"})j", "model"},
      {R"j({"input": "x", "model": 3})j", "model"},
      {R"j({"input": "x", "return_timestamps": 1})j", "return_timestamps"},
      {"{\"input\": \"caf\xe9\"}", "input"},  // invalid UTF-8
      {"{\"input\": \"\xed\xa0\x80\"}", "input"},  // a UTF-16 surrogate in UTF-8
  };
  for (const auto& c : cases) {
    const ApiError e = error_of(c.body);
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_EQ(e.param, c.param) << c.body << " -> " << e.message;
    EXPECT_FALSE(e.message.empty());
    const auto j = nlohmann::json::parse(e.json());
    EXPECT_EQ(j["error"]["type"], "invalid_request_error");
    EXPECT_EQ(j["error"]["message"], e.message);
  }
}

TEST(SpeechRequest, InputLimitIsInCharactersNotBytes) {
  SpeechLimits limits;
  limits.max_input_chars = 5;
  EXPECT_TRUE(std::holds_alternative<SpeechRequest>(parse_speech_request(R"j({"input": "日本語です"})j", kVoices, limits)));
  const ApiError e = error_of(R"j({"input": "日本語ですね"})j", limits);
  EXPECT_EQ(e.code, "input_too_long");
  EXPECT_NE(e.message.find("5"), std::string::npos);
}

TEST(Voices, NamesBlendsAndOpenAIsVoices) {
  std::string why;
  EXPECT_EQ(engine_voice_spec("af_heart", kVoices, &why), "af_heart");
  EXPECT_EQ(engine_voice_spec(" af_heart ", kVoices, &why), "af_heart");
  EXPECT_EQ(engine_voice_spec("af_heart:0.6,af_bella:0.4", kVoices, &why), "af_heart:0.6,af_bella:0.4");
  EXPECT_EQ(engine_voice_spec("af_bella(2)+af_sky(1)", kVoices, &why), "af_bella:2,af_sky:1");
  EXPECT_EQ(engine_voice_spec("af_bella+af_sky", kVoices, &why), "af_bella:1,af_sky:1");
  EXPECT_EQ(engine_voice_spec("alloy", kVoices, &why), "af_alloy");
  EXPECT_EQ(engine_voice_spec("onyx", kVoices, &why), "am_onyx");
  EXPECT_EQ(engine_voice_spec("nova+shimmer", kVoices, &why), "af_nova:1,af_bella:1");
  EXPECT_EQ(engine_voice_spec("ash", kVoices, &why), "");
  EXPECT_NE(why.find("ash"), std::string::npos);
}

TEST(Languages, KokoroFastApiLettersAndOurCodes) {
  EXPECT_EQ(engine_language("a"), "en-us");
  EXPECT_EQ(engine_language("b"), "en-gb");
  EXPECT_EQ(engine_language("j"), "ja");
  EXPECT_EQ(engine_language("z"), "zh");
  EXPECT_EQ(engine_language("en-US"), "en-us");
  EXPECT_EQ(engine_language("pt_BR"), "pt-br");
  EXPECT_EQ(engine_language("fr"), "fr-fr");
  EXPECT_EQ(engine_language("de"), "");
  for (const auto& code : engine_languages()) EXPECT_EQ(engine_language(code), code);
}

TEST(Utf8, LengthAndValidity) {
  EXPECT_EQ(utf8_length("abc"), 3);
  EXPECT_EQ(utf8_length("日本"), 2);
  EXPECT_EQ(utf8_length("\xF0\x9F\x98\x80"), 1);
  EXPECT_EQ(utf8_length("\xC0\x80"), -1);          // overlong
  EXPECT_EQ(utf8_length("\xED\xA0\x80"), -1);      // surrogate
  EXPECT_EQ(utf8_length("\xF4\x90\x80\x80"), -1);  // past U+10FFFF
  EXPECT_EQ(utf8_length("\xE6\x97"), -1);          // cut short
}

// ---- Wyoming ----

// Bytes as the wyoming package's async_write_event writes them (header with data_length, data, payload).
std::string wyoming_package_bytes(const std::string& type, const std::string& data, const std::string& payload) {
  std::string header = "{\"type\": \"" + type + "\", \"version\": \"1.7.2\"";
  if (!data.empty()) header += ", \"data_length\": " + std::to_string(data.size());
  if (!payload.empty()) header += ", \"payload_length\": " + std::to_string(payload.size());
  return header + "}\n" + data + payload;
}

TEST(Wyoming, ReadsEventsWholeOrAByteAtATime) {
  const std::string bytes = wyoming_package_bytes("synthesize", R"j({"text": "Hi.", "voice": {"name": "af_heart"}})j", "") +
                            wyoming_package_bytes("describe", "", "") +
                            wyoming_package_bytes("audio-chunk", R"j({"rate": 24000, "width": 2, "channels": 1})j",
                                                  std::string("\x01\x00\x02\x00", 4)) +
                            "{\"type\": \"ping\", \"data\": {\"text\": \"inline\"}}\n";
  for (size_t step : {bytes.size(), size_t(1), size_t(7)}) {
    wyoming::FrameReader reader;
    std::vector<wyoming::Event> events;
    std::string error;
    for (size_t at = 0; at < bytes.size(); at += step) {
      reader.feed(std::string_view(bytes).substr(at, step));
      wyoming::Event e;
      for (;;) {
        const auto s = reader.next(&e, &error);
        ASSERT_NE(s, wyoming::FrameReader::Status::error) << error;
        if (s == wyoming::FrameReader::Status::need_more) break;
        events.push_back(e);
      }
    }
    ASSERT_EQ(events.size(), 4u) << "step " << step;
    EXPECT_EQ(events[0].type, "synthesize");
    EXPECT_EQ(events[0].data["text"], "Hi.");
    EXPECT_EQ(events[0].data["voice"]["name"], "af_heart");
    EXPECT_EQ(events[1].type, "describe");
    EXPECT_EQ(events[2].payload, std::string("\x01\x00\x02\x00", 4));
    EXPECT_EQ(events[2].data["rate"], 24000);
    EXPECT_EQ(events[3].data["text"], "inline");
    EXPECT_EQ(reader.buffered(), 0u);
  }
}

TEST(Wyoming, SerializeRoundTrips) {
  const std::string bytes = wyoming::serialize("audio-chunk", {{"rate", 24000}}, std::string("\0\1\2", 3)) +
                            wyoming::serialize("audio-stop");
  wyoming::FrameReader reader;
  reader.feed(bytes);
  wyoming::Event e;
  std::string error;
  ASSERT_EQ(reader.next(&e, &error), wyoming::FrameReader::Status::event);
  EXPECT_EQ(e.type, "audio-chunk");
  EXPECT_EQ(e.data["rate"], 24000);
  EXPECT_EQ(e.payload, std::string("\0\1\2", 3));
  ASSERT_EQ(reader.next(&e, &error), wyoming::FrameReader::Status::event);
  EXPECT_EQ(e.type, "audio-stop");
  EXPECT_TRUE(e.data.empty());
  // The header line is what the wyoming package reads: type, version, lengths.
  const auto header = nlohmann::json::parse(bytes.substr(0, bytes.find('\n')));
  EXPECT_EQ(header["data_length"], nlohmann::json({{"rate", 24000}}).dump().size());
  EXPECT_EQ(header["payload_length"], 3);
}

TEST(Wyoming, MalformedFramesAreErrors) {
  wyoming::FrameLimits limits;
  limits.max_header = 256;
  limits.max_data = 64;
  limits.max_payload = 64;
  const std::string cases[] = {
      "not json\n",
      "[1]\n",
      "{}\n",
      "{\"type\": 3}\n",
      "{\"type\": \"\"}\n",
      "{\"type\": \"x\", \"data\": 5}\n",
      "{\"type\": \"x\", \"data_length\": -1}\n",
      "{\"type\": \"x\", \"data_length\": \"3\"}\n",
      "{\"type\": \"x\", \"payload_length\": 1e3}\n",
      "{\"type\": \"x\", \"data_length\": 65}\n",
      "{\"type\": \"x\", \"payload_length\": 18446744073709551615}\n",
      "{\"type\": \"x\", \"data_length\": 3}\n[1]",
      "{\"type\": \"x\", \"data_length\": 3}\nabc",
      std::string(300, 'x'),  // no newline within the header limit
  };
  for (const auto& bytes : cases) {
    wyoming::FrameReader reader(limits);
    reader.feed(bytes);
    wyoming::Event e;
    std::string error;
    EXPECT_EQ(reader.next(&e, &error), wyoming::FrameReader::Status::error) << bytes;
    EXPECT_FALSE(error.empty());
  }
}

// ---- sentences ----

TEST(SentenceSplitter, SentencesAsSoonAsTheyAreComplete) {
  SentenceSplitter s;
  EXPECT_TRUE(s.add("The weather today ").empty());
  EXPECT_EQ(s.add("is sunny. Tomorrow"), std::vector<std::string>{"The weather today is sunny."});
  EXPECT_TRUE(s.add(" it costs 3.").empty());  // "3." may become "3.5"
  EXPECT_TRUE(s.add("5 dollars, says Mr. Smith").empty());
  EXPECT_EQ(s.add("! Really?\" he asked. "), std::vector<std::string>{"Tomorrow it costs 3.5 dollars, says Mr. Smith!"});
  EXPECT_EQ(s.add("Bye"), std::vector<std::string>{"Really?\" he asked."});  // the next word decides
  EXPECT_EQ(s.finish(), "Bye");
  EXPECT_EQ(s.finish(), "");
  EXPECT_EQ(s.add("今日は晴れ。明日は"), std::vector<std::string>{"今日は晴れ。"});
  EXPECT_EQ(s.add("雨です\n\nNext"), std::vector<std::string>{"明日は雨です"});
  EXPECT_EQ(s.finish(), "Next");
}

// ---- encoders ----

std::vector<float> test_signal(size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) {
    const double t = i / 24000.0;
    x[i] = static_cast<float>(0.3 * std::sin(2 * M_PI * 220 * t) * std::sin(2 * M_PI * 1.5 * t) +
                              0.1 * std::sin(2 * M_PI * 1250 * t));
  }
  return x;
}

std::string encode(AudioFormat f, const std::vector<float>& x, bool known_length, size_t piece = 4000) {
  auto enc = make_encoder(f, known_length ? std::optional<size_t>(x.size()) : std::nullopt);
  std::string out;
  for (size_t at = 0; at < x.size(); at += piece) enc->encode(x.data() + at, std::min(piece, x.size() - at), &out);
  enc->finish(&out);
  return out;
}

TEST(Encoders, EveryFormatDecodesToTheWholeSignal) {
  const std::vector<float> x = test_signal(3 * 24000 + 123);
  struct Case {
    AudioFormat format;
    double min_correlation;
  };
  for (const Case c : {Case{AudioFormat::wav, 0.9999}, Case{AudioFormat::flac, 0.9999}, Case{AudioFormat::mp3, 0.98},
                       Case{AudioFormat::opus, 0.95}, Case{AudioFormat::aac, 0.95}})
    for (bool known : {false, true}) {
      SCOPED_TRACE(std::string(format_name(c.format)) + (known ? " whole" : " streamed"));
      const std::string bytes = encode(c.format, x, known);
      const server_test::Decoded d =
          c.format == AudioFormat::aac ? server_test::decode_aac(bytes) : server_test::decode_sndfile(bytes);
      EXPECT_EQ(d.rate, 24000);
      ASSERT_GE(d.samples.size(), x.size());  // nothing lost at the end
      const auto [corr, lag] = server_test::best_alignment(x, d.samples, 4096);
      EXPECT_GE(corr, c.min_correlation) << "lag " << lag;
      if (c.format == AudioFormat::wav || c.format == AudioFormat::flac || c.format == AudioFormat::opus)
        EXPECT_EQ(d.samples.size(), x.size());  // exact length (Opus: its pre-skip and end trim)
    }
}

TEST(Encoders, StreamedWavSaysUnknownLengthAndWholeWavTheTrueOne) {
  const std::vector<float> x = test_signal(1000);
  const std::string streamed = encode(AudioFormat::wav, x, false), whole = encode(AudioFormat::wav, x, true);
  auto u32 = [](const std::string& b, size_t at) {
    return uint32_t(uint8_t(b[at])) | uint32_t(uint8_t(b[at + 1])) << 8 | uint32_t(uint8_t(b[at + 2])) << 16 |
           uint32_t(uint8_t(b[at + 3])) << 24;
  };
  EXPECT_EQ(u32(streamed, 4), 0xFFFFFFFFu);
  EXPECT_EQ(u32(streamed, 40), 0xFFFFFFFFu);
  EXPECT_EQ(u32(whole, 4), 36u + 2000u);
  EXPECT_EQ(u32(whole, 40), 2000u);
  EXPECT_EQ(streamed.size(), 44u + 2000u);
  EXPECT_EQ(streamed.substr(44), whole.substr(44));
  EXPECT_EQ(encode(AudioFormat::pcm, x, false), whole.substr(44));
}

TEST(Encoders, FirstBytesComeBeforeTheEnd) {
  // Streaming is only worth it if an encoder hands out bytes before finish(): half a second in, each has.
  const std::vector<float> x = test_signal(12000);
  for (AudioFormat f : {AudioFormat::wav, AudioFormat::pcm, AudioFormat::mp3, AudioFormat::opus, AudioFormat::flac,
                        AudioFormat::aac}) {
    auto enc = make_encoder(f);
    std::string out;
    enc->encode(x.data(), x.size(), &out);
    EXPECT_GT(out.size(), 100u) << format_name(f);
  }
}
