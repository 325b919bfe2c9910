#include "engine/speaker.h"

namespace kokoro {

Speaker::Speaker(std::shared_ptr<const Synthesizer> synth, std::shared_ptr<const Frontend> frontend, VoicePack voice,
                 AudioSink& sink, SpeakerOptions options)
    : engine_(std::make_unique<StreamEngine>(std::move(synth), std::move(frontend), std::move(voice), sink,
                                             EngineVoice{options.speed, options.phoneme_input, options.seed, options.reference_noise},
                                             options.mode, std::move(options.stream))) {}

Speaker::~Speaker() = default;

uint64_t Speaker::say(std::string text) { return engine_->say(std::move(text)); }
void Speaker::stop() { engine_->stop(); }
uint64_t Speaker::begin_text(double pause_flush_seconds) { return engine_->begin_text(pause_flush_seconds); }
bool Speaker::append_text(uint64_t utterance, std::string_view text) { return engine_->append_text(utterance, text); }
bool Speaker::end_text(uint64_t utterance) { return engine_->end_text(utterance); }
bool Speaker::wait_idle(double timeout_seconds) { return engine_->wait_idle(timeout_seconds); }
void Speaker::on_report(std::function<void(const UtteranceReport&)> callback) { engine_->on_report(std::move(callback)); }
void Speaker::on_event(std::function<void(const StreamEvent&)> callback) { engine_->on_event(std::move(callback)); }

}  // namespace kokoro
