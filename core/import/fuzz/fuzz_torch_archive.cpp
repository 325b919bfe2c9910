// libFuzzer entry point for whole checkpoint archives held in memory: zip parsing (libzip), record lookup,
// size checks, pickle and tensor decoding, then weight-norm folding. Seed it with the committed fixtures:
//   build-fuzz/bin/fuzz_torch_archive corpus-archive tests/data/checkpoints -max_total_time=120
// (see fuzz_pickle_reader.cpp for the build). Any kokoro::Error is an accepted outcome.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "core/import/torch_archive.h"

using namespace kokoro;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const ckpt::ZipArchive zip = ckpt::ZipArchive::open_memory(data, size, "fuzz archive");
    StateDict sd = ckpt::read_state_dict(zip);
    fold_weight_norm(sd);
  } catch (const Error&) {
  }
  return 0;
}
