#include "realtime/rt_section.h"

namespace kokoro::rt {
namespace {
// constinit: plain TLS access with no lazy-init wrapper, so reading it from an interposed malloc is safe.
constinit thread_local int t_realtime_depth = 0;
}  // namespace

RealtimeSection::RealtimeSection() noexcept { ++t_realtime_depth; }
RealtimeSection::~RealtimeSection() noexcept { --t_realtime_depth; }
bool in_realtime_section() noexcept { return t_realtime_depth > 0; }

}  // namespace kokoro::rt
