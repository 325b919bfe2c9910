// Waiting on the I/O thread for what an engine job produces: the job's SpeechStream wakes a timer through
// the io_context when audio arrives (the engine thread never touches the socket), and PlaybackClock counts
// the times a client playing the audio as it arrives would have run dry.
#pragma once

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it

#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <memory>

#include "apps/kokoro_server/speech_stream.h"

namespace kokoro::server {

class StreamWaiter {
 public:
  StreamWaiter(boost::asio::any_io_executor ex, std::shared_ptr<SpeechStream> stream)
      : stream_(std::move(stream)), timer_(std::make_shared<boost::asio::steady_timer>(ex)) {
    // One I/O thread: the posted cancel runs after the coroutine is suspended in async_wait, never before.
    std::weak_ptr<boost::asio::steady_timer> weak = timer_;
    stream_->set_waker([weak, ex] {
      boost::asio::post(ex, [weak] {
        if (auto t = weak.lock()) t->cancel();
      });
    });
  }
  ~StreamWaiter() { stream_->set_waker(nullptr); }

  // The next batch; false when the engine produced nothing for `stall`.
  boost::asio::awaitable<bool> next(SpeechStream::Batch* batch, std::chrono::steady_clock::duration stall) {
    for (;;) {
      if (stream_->take(batch)) co_return true;
      timer_->expires_after(stall);
      boost::system::error_code ec;
      co_await timer_->async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
      if (!ec) co_return false;  // the deadline passed: the engine is stuck
    }
  }

 private:
  std::shared_ptr<SpeechStream> stream_;
  std::shared_ptr<boost::asio::steady_timer> timer_;
};

// Counts underruns of a client that plays the audio as it arrives, from the first byte on.
class PlaybackClock {
 public:
  // Call when `samples` more audio is about to be sent; returns true when the client had run dry before it.
  bool on_audio(uint64_t samples) {
    const auto now = std::chrono::steady_clock::now();
    bool dry = false;
    if (sent_ == 0) {
      start_ = now;
    } else {
      const double played = std::chrono::duration<double>(now - start_).count();
      const double had = static_cast<double>(sent_) / 24000.0;
      dry = played > had + 0.02;  // 20 ms of slack for scheduling
      if (dry) start_ += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(played - had));  // the player resumes from here
    }
    sent_ += samples;
    return dry;
  }
  uint64_t samples() const { return sent_; }

 private:
  std::chrono::steady_clock::time_point start_{};
  uint64_t sent_ = 0;
};

}  // namespace kokoro::server
