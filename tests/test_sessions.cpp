// One model, many sessions (engine/model.h): sessions on one model in parallel produce exactly what each
// produces alone; per-utterance settings (voice, language, speed, seed) on one session equal fresh sessions
// with those settings; a session stopped or destroyed while another speaks leaves the other untouched.
// Real model, slice mode (the default) and exact mode, onto recording sinks (no device clock: the slice plan is
// the nominal one, hence deterministic).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/shared_model.h"
#include "tests/stream_engine_support.h"

namespace kokoro {
namespace {

using stream_test::RecordingSink;
using stream_test::Watchdog;

struct Line {
  std::string voice, language, text;
  float speed;
  uint64_t seed;
};

const Line kA{"af_heart", "en-us", "The lamp flickered twice. Then it went dark.", 1.0f, 7};
const Line kB{"bf_emma", "en-gb", "Good morning! The kettle is on, and the post has come.", 1.2f, 11};

EngineVoice voice_of(const Line& l) { return EngineVoice{l.speed, false, l.seed, false}; }

std::vector<float> alone(const Model& m, const Line& l, SynthesisMode mode) {
  RecordingSink sink;
  auto s = m.new_session(sink, mode, l.voice, l.language, voice_of(l));
  s->say(l.text);
  EXPECT_TRUE(s->wait_idle(300 * stream_test::kTimeScale));
  return sink.audio();
}

void expect_parallel_equals_alone(SynthesisMode mode) {
  REQUIRE_MODEL(m);
  Watchdog dog(600);
  const std::vector<float> a = alone(*m, kA, mode), b = alone(*m, kB, mode);
  ASSERT_GT(a.size(), 24000u);
  ASSERT_GT(b.size(), 24000u);
  RecordingSink sink_a, sink_b;
  auto sa = m->new_session(sink_a, mode, kA.voice, kA.language, voice_of(kA));
  auto sb = m->new_session(sink_b, mode, kB.voice, kB.language, voice_of(kB));
  EXPECT_EQ(m->scheduler()->load().sessions, 2);
  sa->say(kA.text);
  sb->say(kB.text);
  EXPECT_TRUE(sa->wait_idle(300 * stream_test::kTimeScale));
  EXPECT_TRUE(sb->wait_idle(300 * stream_test::kTimeScale));
  EXPECT_EQ(sink_a.audio(), a) << "session A together with B differs from A alone";
  EXPECT_EQ(sink_b.audio(), b) << "session B together with A differs from B alone";
  EXPECT_EQ(m->scheduler()->load().speaking, 0);
}

TEST(Sessions, ParallelSessionsSoundExactlyAsEachAloneSlice) { expect_parallel_equals_alone(SynthesisMode::slice); }
TEST(Sessions, ParallelSessionsSoundExactlyAsEachAloneExact) { expect_parallel_equals_alone(SynthesisMode::exact); }

// Voice, language, speed and seed travel with each utterance: one session saying A then B equals a fresh
// session for each, and its threads are not rebuilt (the same engine object says both).
TEST(Sessions, PerUtteranceSettingsEqualFreshSessions) {
  REQUIRE_MODEL(m);
  Watchdog dog(600);
  const std::vector<float> a = alone(*m, kA, SynthesisMode::slice), b = alone(*m, kB, SynthesisMode::slice);
  RecordingSink sink;
  auto s = m->new_session(sink, SynthesisMode::slice, "af_heart", "en-us", EngineVoice{});
  for (const Line* l : {&kA, &kB}) {
    UtteranceSettings u;
    u.voice = m->voice(l->voice);
    u.frontend = m->frontend(l->language);
    u.voice_options = voice_of(*l);
    s->say(l->text, u);
  }
  ASSERT_TRUE(s->wait_idle(300 * stream_test::kTimeScale));
  std::vector<float> both = a;
  both.insert(both.end(), b.begin(), b.end());
  EXPECT_EQ(sink.audio(), both);
}

// A session stopped, then destroyed, while another speaks: the other's audio is what it is alone.
TEST(Sessions, StoppingOrClosingOneSessionLeavesTheOtherUntouched) {
  REQUIRE_MODEL(m);
  Watchdog dog(600);
  const Line long_a{"af_heart", "en-us",
                    "The lamp flickered twice. Then it went dark. Somewhere below, a door closed, and the house "
                    "settled into the kind of silence that makes every small sound seem loud.",
                    1.0f, 3};
  const std::vector<float> a = alone(*m, long_a, SynthesisMode::slice);
  RecordingSink sink_a;
  auto sa = m->new_session(sink_a, SynthesisMode::slice, long_a.voice, long_a.language, voice_of(long_a));
  sa->say(long_a.text);
  {
    RecordingSink sink_b;
    auto sb = m->new_session(sink_b, SynthesisMode::slice, kB.voice, kB.language, voice_of(kB));
    sb->say(kB.text);
    while (sink_b.audio().empty() && !sb->wait_idle(0)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    sb->stop();
    EXPECT_TRUE(sb->wait_idle(60 * stream_test::kTimeScale));
    sb->say(kB.text);  // and destroyed mid-utterance
  }
  ASSERT_TRUE(sa->wait_idle(300 * stream_test::kTimeScale));
  EXPECT_EQ(sink_a.audio(), a);
  EXPECT_EQ(m->scheduler()->load().sessions, 1);
}

TEST(Sessions, ModelCachesAreSharedAndErrorsAreClear) {
  REQUIRE_MODEL(m);
  EXPECT_EQ(m->voice("af_heart").get(), m->voice("af_heart").get());
  EXPECT_EQ(m->frontend("en-gb").get(), m->frontend("en-gb").get());
  EXPECT_FALSE(m->voice_names().empty());
  try {
    m->voice("no_such_voice");
    ADD_FAILURE() << "an unknown voice must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_voice"), std::string::npos) << e.what();
  }
  EXPECT_THROW(m->frontend("xx-nowhere"), Error);
}

}  // namespace
}  // namespace kokoro
