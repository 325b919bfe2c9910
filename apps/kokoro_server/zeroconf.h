// --zeroconf: announces the Wyoming service as _wyoming._tcp on the local network through the Avahi daemon
// (libavahi-client), as wyoming-piper does, so that Home Assistant discovers it. The announcement lasts as
// long as this object; without a running avahi-daemon it waits for one (and says so) instead of failing.
#pragma once

#include <cstdint>
#include <string>

namespace kokoro::server {

class ZeroconfAnnouncement {
 public:
  ZeroconfAnnouncement(const std::string& name, uint16_t port);
  ~ZeroconfAnnouncement();
  ZeroconfAnnouncement(const ZeroconfAnnouncement&) = delete;
  ZeroconfAnnouncement& operator=(const ZeroconfAnnouncement&) = delete;

  struct State;

 private:
  State* state_;
};

}  // namespace kokoro::server
