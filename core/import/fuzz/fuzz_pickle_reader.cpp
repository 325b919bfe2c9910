// libFuzzer entry point for the restricted pickle reader and the state-dict walk behind it. Storages are
// synthesised (zero bytes of the size the pickle declares, up to 1 MiB) so layouts, offsets and strides are
// exercised without an archive. Any kokoro::Error is an accepted outcome; crashes, leaks, hangs and
// sanitizer reports are bugs.
//
//   cmake -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
//         -DKOKORO_FUZZ=ON -DKOKORO_SANITIZE=address,undefined && cmake --build build-fuzz --target fuzz_pickle_reader
//   mkdir corpus && for f in tests/data/checkpoints/*.pth; do unzip -p "$f" '*/data.pkl' > corpus/$(basename $f).pkl; done
//   build-fuzz/bin/fuzz_pickle_reader corpus -max_total_time=120
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "core/import/torch_archive.h"

using namespace kokoro;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string what = "fuzz input";
  try {
    const ckpt::Unpickled g = ckpt::unpickle(data, size, what);
    const ckpt::StorageReader synthetic = [](const ckpt::StorageRef& s) {
      const uint64_t nbytes = static_cast<uint64_t>(s.numel) * ckpt::dtype_size(s.dtype);
      if (nbytes > (uint64_t{1} << 20)) throw Error("synthetic storage too large");
      return std::vector<uint8_t>(nbytes, 0);
    };
    if (g.at(g.root).kind == ckpt::Kind::Tensor) {
      const std::vector<ckpt::NamedTensor> one{{"tensor", ckpt::collect_single_tensor(g, what)}};
      ckpt::materialise(g, one, synthetic, what);
    } else {
      ckpt::materialise(g, ckpt::collect_state_dict(g, what), synthetic, what);
    }
  } catch (const Error&) {
  }
  return 0;
}
