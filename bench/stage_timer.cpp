#include "bench/stage_timer.h"

#include <string_view>

namespace kokoro::bench {

namespace {
// Trace event that closes each stage.
struct Boundary {
  std::string_view event;
  Stage stage;
};
constexpr Boundary kBoundaries[] = {
    {"bert_dur", kAlbert},        {"N_pred", kProsody},   {"t_en", kTextEncoder},      {"dec_decode_3", kDecoder},
    {"gen_har", kSource},         {"gen_conv_post", kGenerator}, {"audio", kIstft},
};
}  // namespace

const char* stage_name(int stage) {
  static const char* names[kStageCount] = {"albert", "prosody", "text_encoder", "decoder",
                                           "source", "generator", "istft",  "other"};
  return stage >= 0 && stage < kStageCount ? names[stage] : "?";
}

void add_stage_times(EngineStages& to, const StageTimes& t, bool before_first_audio) {
  to.add(EngineStage::acoustic, t.ms[kAlbert] + t.ms[kProsody] + t.ms[kTextEncoder], before_first_audio);
  to.add(EngineStage::decoder, t.ms[kDecoder], before_first_audio);
  to.add(EngineStage::source, t.ms[kSource], before_first_audio);
  to.add(EngineStage::generator, t.ms[kGenerator] + t.ms[kIstft], before_first_audio);
  to.generator_items_ms.push_back(t.ms[kGenerator] + t.ms[kIstft]);
  to.add(EngineStage::output, t.ms[kOther], before_first_audio);
}

double StageTimes::total() const {
  double t = 0;
  for (double v : ms) t += v;
  return t;
}

StageTimer::StageTimer() {
  trace_ = [this](const std::string& name, const Tensor&) { mark(name); };
}

void StageTimer::start() {
  times_ = {};
  last_ = Clock::now();
}

void StageTimer::mark(const std::string& name) {
  for (const Boundary& b : kBoundaries) {
    if (name != b.event) continue;
    const auto now = Clock::now();
    times_.ms[b.stage] += std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
    return;
  }
}

void StageTimer::stop() {
  const auto now = Clock::now();
  times_.ms[kOther] += std::chrono::duration<double, std::milli>(now - last_).count();
  last_ = now;
}

}  // namespace kokoro::bench
