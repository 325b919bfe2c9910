#include "engine/model.h"

#include <algorithm>
#include <future>
#include <thread>

#include "core/error.h"
#include "core/model_file.h"
#include "core/onednn_matmul.h"
#include "core/parallel.h"

namespace kokoro {

std::shared_ptr<Model> Model::open(const ModelOptions& options) {
  std::shared_ptr<Model> m(new Model());
  m->assets_dir_ = options.assets_dir;
  // oneDNN's GEMM kernels are generated while the model opens, not in the first sentence's first product
  // (the future's destructor waits for it, also when the open throws).
  m->kernels_ready_ = std::async(std::launch::async, onednn_warm_up);
  m->synth_ = std::make_shared<const Synthesizer>(ModelFile::open(options.model_path));
  m->voice_names_ = VoicePack::list(options.assets_dir);
  m->frontend("en-us");
  const int slots = options.compute_slots > 0 ? options.compute_slots : std::max(1, num_threads());
  m->scheduler_ = std::make_shared<ComputeScheduler>(slots);
  return m;
}

std::shared_ptr<const Frontend> Model::frontend(const std::string& language) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = frontends_.find(language);
  if (it != frontends_.end()) return it->second;
  FrontendOptions fo;
  fo.language = language;
  fo.assets_dir = assets_dir_;
  fo.first_segment_max_words = 0;  // whole sentences, as the reference (slice mode starts early without a cut)
  auto fe = std::make_shared<const Frontend>(fo);
  frontends_.emplace(language, fe);
  return fe;
}

std::shared_ptr<const VoicePack> Model::voice(const std::string& spec) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = voices_.find(spec);
  if (it != voices_.end()) return it->second;
  auto v = std::make_shared<const VoicePack>(VoicePack::resolve(spec, assets_dir_));
  voices_.emplace(spec, v);
  return v;
}

StreamOptions Model::stream_options(SynthesisMode mode) const {
  StreamOptions so;
  if (mode == SynthesisMode::slice) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!slice_options_) slice_options_ = std::make_unique<StreamOptions>(recommended_slice_options(synth_->model()));
    so = *slice_options_;
  }
  so.scheduler = scheduler_;
  return so;
}

std::unique_ptr<StreamEngine> Model::new_session(AudioSink& sink, SynthesisMode mode, const std::string& voice_name,
                                                 const std::string& language, EngineVoice defaults) const {
  std::shared_ptr<const VoicePack> v = voice(voice_name);
  return std::make_unique<StreamEngine>(synth_, frontend(language), *v, sink, defaults, mode,
                                        stream_options(mode));
}

}  // namespace kokoro
