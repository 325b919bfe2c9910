// Explicit instantiations of the rings the engine uses, so that each is compiled (and warned about) once.
#include "ringbuffer/spsc_ring.h"

namespace kokoro {

template class SpscRing<float>;
template class SpscRing<uint64_t>;

}  // namespace kokoro
