#include "realtime/rt_log.h"

#include <spdlog/spdlog.h>

namespace kokoro::rt {

std::size_t RtLog::drain(const std::function<void(const RtLogRecord&)>& sink) {
  std::size_t n = 0;
  RtLogRecord record;
  while (ring_.pop(record)) {
    sink(record);
    ++n;
  }
  return n;
}

std::string RtLog::format(const RtLogRecord& record) {
  if (!record.format) return {};
  try {
    return fmt::format(fmt::runtime(record.format), record.a, record.b);  // unused arguments are allowed
  } catch (const fmt::format_error&) {
    return record.format;  // a malformed literal is a bug, but logging must not throw
  }
}

std::size_t RtLog::drain_to_spdlog(const std::string& prefix) {
  return drain([&](const RtLogRecord& r) {
    const auto level = r.level == RtLogLevel::debug  ? spdlog::level::debug
                       : r.level == RtLogLevel::info ? spdlog::level::info
                       : r.level == RtLogLevel::warn ? spdlog::level::warn
                                                     : spdlog::level::err;
    spdlog::log(level, "{}: {}", prefix, format(r));
  });
}

}  // namespace kokoro::rt
