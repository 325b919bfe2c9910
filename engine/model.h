// The model side of the model/session split (as whisper.cpp splits whisper_context from whisper_state): what
// every session of a process shares and nobody changes once loaded: the weights (Synthesizer), the frontends
// per language, the voice packs, the slice mode's statistics predictor, and the one compute scheduler that
// orders all sessions' work (engine/compute_scheduler.h). A session is a StreamEngine made by new_session():
// its own threads, rings and sink; voice, language, speed and seed travel with each utterance.
//
// Thread-safe: frontends and voices are built on first use under a mutex and never change after; everything
// else is immutable. Sessions hold a shared_ptr to the model, so it lives as long as any of them.
#pragma once
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/voice.h"
#include "engine/compute_scheduler.h"
#include "engine/stream_engine.h"
#include "engine/synthesizer.h"
#include "frontend/frontend.h"
#include "realtime/audio_sink.h"

namespace kokoro {

struct ModelOptions {
  std::string model_path;   // resolved (core/assets.h default_model_path)
  std::string assets_dir;   // resolved (core/assets.h find_assets_dir)
  int compute_slots = 0;    // work items computed at once over all sessions; 0: the compute threads
};

class Model {
 public:
  // Loads the weights and lists the voices; builds the default language's frontend (en-us) so that broken
  // assets fail here. Throws kokoro::Error.
  static std::shared_ptr<Model> open(const ModelOptions& options);
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const std::shared_ptr<const Synthesizer>& synthesizer() const { return synth_; }
  const std::string& assets_dir() const { return assets_dir_; }
  const std::vector<std::string>& voice_names() const { return voice_names_; }
  // Cached; throws kokoro::Error for an unsupported language or an unknown or unreadable voice.
  std::shared_ptr<const Frontend> frontend(const std::string& language) const;
  std::shared_ptr<const VoicePack> voice(const std::string& spec) const;
  // The engine options docs/streaming.md recommends for a mode (slice mode's predictor is read once),
  // with this model's scheduler. Throws kokoro::Error (a corrupt predictor file).
  StreamOptions stream_options(SynthesisMode mode) const;
  const std::shared_ptr<ComputeScheduler>& scheduler() const { return scheduler_; }

  // A new session speaking into `sink` (which must outlive it), with a default voice and language for
  // say(text); say(text, settings) overrides them per utterance.
  std::unique_ptr<StreamEngine> new_session(AudioSink& sink, SynthesisMode mode, const std::string& voice,
                                            const std::string& language, EngineVoice defaults) const;

 private:
  Model() = default;
  std::shared_ptr<const Synthesizer> synth_;
  std::string assets_dir_;
  std::vector<std::string> voice_names_;
  std::shared_ptr<ComputeScheduler> scheduler_;
  // oneDNN's kernels being generated while the model opens and afterwards (a first request that needs them
  // sooner waits inside oneDNN); joined when the model goes.
  std::future<void> kernels_ready_;
  mutable std::mutex mutex_;  // the caches below
  mutable std::map<std::string, std::shared_ptr<const Frontend>> frontends_;
  mutable std::map<std::string, std::shared_ptr<const VoicePack>> voices_;
  mutable std::unique_ptr<StreamOptions> slice_options_;
};

}  // namespace kokoro
