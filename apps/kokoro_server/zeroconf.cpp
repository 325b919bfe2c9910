#include "apps/kokoro_server/zeroconf.h"

#include <avahi-client/client.h>
#include <avahi-client/publish.h>
#include <avahi-common/error.h>
#include <avahi-common/thread-watch.h>

#include <cstdio>

namespace kokoro::server {

struct ZeroconfAnnouncement::State {
  std::string name;
  uint16_t port;
  AvahiThreadedPoll* poll = nullptr;
  AvahiClient* client = nullptr;
  AvahiEntryGroup* group = nullptr;
};

namespace {

void group_changed(AvahiEntryGroup*, AvahiEntryGroupState state, void* user) {
  auto* s = static_cast<ZeroconfAnnouncement::State*>(user);
  if (state == AVAHI_ENTRY_GROUP_ESTABLISHED)
    std::fprintf(stderr, "kokoro-server: zeroconf: announced '%s' as _wyoming._tcp port %u\n", s->name.c_str(), s->port);
  else if (state == AVAHI_ENTRY_GROUP_COLLISION || state == AVAHI_ENTRY_GROUP_FAILURE)
    std::fprintf(stderr, "kokoro-server: zeroconf: announcement of '%s' failed (name taken on the network?)\n", s->name.c_str());
}

// Runs on Avahi's poll thread (and once inside avahi_client_new).
void client_changed(AvahiClient* client, AvahiClientState state, void* user) {
  auto* s = static_cast<ZeroconfAnnouncement::State*>(user);
  if (state == AVAHI_CLIENT_S_RUNNING && !s->group) {
    s->group = avahi_entry_group_new(client, group_changed, s);
    if (!s->group || avahi_entry_group_add_service(s->group, AVAHI_IF_UNSPEC, AVAHI_PROTO_UNSPEC, AvahiPublishFlags(0),
                                                   s->name.c_str(), "_wyoming._tcp", nullptr, nullptr, s->port, nullptr) < 0 ||
        avahi_entry_group_commit(s->group) < 0)
      std::fprintf(stderr, "kokoro-server: zeroconf: %s\n", avahi_strerror(avahi_client_errno(client)));
  } else if (state == AVAHI_CLIENT_CONNECTING) {
    std::fprintf(stderr, "kokoro-server: zeroconf: waiting for avahi-daemon\n");
  } else if (state == AVAHI_CLIENT_FAILURE) {
    std::fprintf(stderr, "kokoro-server: zeroconf: %s\n", avahi_strerror(avahi_client_errno(client)));
  }
}

}  // namespace

ZeroconfAnnouncement::ZeroconfAnnouncement(const std::string& name, uint16_t port) : state_(new State{name, port}) {
  state_->poll = avahi_threaded_poll_new();
  int error = 0;
  if (state_->poll)
    state_->client = avahi_client_new(avahi_threaded_poll_get(state_->poll), AVAHI_CLIENT_NO_FAIL, client_changed, state_, &error);
  if (!state_->client) {
    std::fprintf(stderr, "kokoro-server: zeroconf: %s (no announcement; serving anyway)\n", avahi_strerror(error));
    return;
  }
  avahi_threaded_poll_start(state_->poll);
}

ZeroconfAnnouncement::~ZeroconfAnnouncement() {
  if (state_->poll) avahi_threaded_poll_stop(state_->poll);
  if (state_->client) avahi_client_free(state_->client);  // frees the group too
  if (state_->poll) avahi_threaded_poll_free(state_->poll);
  delete state_;
}

}  // namespace kokoro::server
