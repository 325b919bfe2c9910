// kokoro-say: speak text with Kokoro-82M.
//
//   kokoro-say "Hello there."                  speak on the default audio output
//   kokoro-say                                 interactive: each line is spoken when Enter is pressed
//   echo "From a pipe." | kokoro-say -o out.wav
//   some-llm | kokoro-say                      a pipe: each sentence is spoken as soon as its end arrives
//   kokoro-say --phonemes "Dr. Smith paid $5."  print the phonemes of each segment
//
// Ctrl-C stops the current utterance; a second Ctrl-C (or one when nothing is playing) exits.
#include <CLI/CLI.hpp>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <csignal>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <iterator>

#include "apps/common/input_notes.h"
#include "apps/common/line_reader.h"
#include "apps/common/process_start.h"
#include "apps/common/report.h"
#include "apps/common/shutdown.h"
#include "apps/common/speech_options.h"
#include "apps/common/word_timestamps.h"
#include "apps/kokoro_say/streamed_input.h"
#include "core/assets.h"
#include "core/error.h"
#include "engine/speaker.h"
#include "apps/common/malloc_tuning.h"

namespace {

std::atomic<int> g_interrupts{0};
void on_sigint(int) { g_interrupts.fetch_add(1); }

struct Options {
  kokoro::app::SpeechOptions speech;  // voice, speed, lang, model, assets, threads, seed, resampling (apps/common)
  std::vector<std::string> words;
  std::string output = "auto", out_file, device;
  std::string jack_name = "kokoro";
  std::string timestamps, timestamps_format;
  bool phonemes = false, list_voices = false, list_devices = false, interrupt = false, lines = false;
  double pause_flush = kokoro::StreamEngine::kDefaultPauseFlushSeconds;
  bool quiet = false, verbose = false, reference_noise = false;
};

// Opens the requested output; "auto" tries JACK (if a server runs), then PortAudio's default device,
// then falls back to a WAV file so that a machine without audio still gets the speech.
std::unique_ptr<kokoro::AudioSink> open_output(const Options& o) {
  kokoro::SinkOptions so;
  so.quality = kokoro::parse_resample_quality(o.speech.resample);
  so.device = o.device;
  so.client_name = o.jack_name;
  if (!o.out_file.empty() && (o.output == "auto" || o.output == "wav")) {
    so.kind = kokoro::SinkKind::wav;
    so.path = o.out_file;
    return kokoro::open_sink(so);
  }
  if (o.output != "auto") {
    so.kind = kokoro::parse_sink_kind(o.output);
    if (so.kind == kokoro::SinkKind::wav) so.path = o.out_file.empty() ? "kokoro-say.wav" : o.out_file;
    return kokoro::open_sink(so);
  }
  std::string why;
  for (auto kind : {kokoro::SinkKind::jack, kokoro::SinkKind::portaudio}) {
    so.kind = kind;
    try {
      return kokoro::open_sink(so);
    } catch (const kokoro::Error& e) {
      why += std::string("\n  ") + kokoro::to_string(kind) + ": " + e.what();
    }
  }
  so.kind = kokoro::SinkKind::wav;
  so.path = "kokoro-say.wav";
  if (!o.quiet) std::fprintf(stderr, "kokoro-say: no audio output available, writing kokoro-say.wav%s\n", why.c_str());
  return kokoro::open_sink(so);
}

bool g_stopped = false;  // the last Ctrl-C stopped speech and no input came since: the next one exits

// While reading input: a first Ctrl-C stops speaking (true); a second one, or one while idle, sets `quit`.
// (The worker may still be finishing the segment it was synthesizing when the second one comes: that must
// exit too.)
bool interrupted(kokoro::Speaker& speaker, bool& quit) {
  if (g_interrupts.load() == 0) return false;
  const bool was_idle = speaker.wait_idle(0);
  speaker.stop();
  if (g_interrupts.load() > 1 || was_idle || g_stopped) {
    quit = true;
    return true;
  }
  g_stopped = true;
  g_interrupts.store(0);
  std::fprintf(stderr, "\n(stopped; Ctrl-C again to exit)\n");
  return true;
}

// Waits up to 100 ms for standard input to be readable.
bool stdin_readable() {
  pollfd p{STDIN_FILENO, POLLIN, 0};
  return poll(&p, 1, 100) > 0;
}

// Reads one line from stdin, waking up every 100 ms to look at Ctrl-C. Returns false at end of input.
bool read_line(kokoro::app::InputLine& line, kokoro::Speaker& speaker, bool& quit) {
  static kokoro::app::LineReader reader;
  static std::deque<kokoro::app::InputLine> pending;
  static bool eof = false;
  for (;;) {
    if (!pending.empty()) {
      line = std::move(pending.front());
      pending.pop_front();
      g_stopped = false;
      return true;
    }
    if (eof) return false;
    if (interrupted(speaker, quit) && quit) return false;
    if (!stdin_readable()) continue;
    std::vector<kokoro::app::InputLine> lines;
    eof = !reader.read_available(STDIN_FILENO, "standard input", lines);
    pending.insert(pending.end(), std::make_move_iterator(lines.begin()), std::make_move_iterator(lines.end()));
  }
}

// Hands stdin to the engine as it comes (a pipe: streamed text) until its end; false when Ctrl-C quits.
bool stream_stdin(kokoro::app::StreamedInput& input, kokoro::Speaker& speaker) {
  bool quit = false;
  for (;;) {
    if (interrupted(speaker, quit)) {
      if (quit) return false;
      input.stopped();
    }
    if (!stdin_readable()) continue;
    g_stopped = false;
    if (!input.read_available(STDIN_FILENO, "standard input")) return true;
  }
}

// Standard input is a pipe or socket: its text streams in, unless lines were asked for (--lines, --interrupt).
bool stdin_streams(const Options& o) {
  struct stat st {};
  if (o.lines || o.interrupt || fstat(STDIN_FILENO, &st) != 0) return false;
  return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
}

// since_start_ms: the first utterance's first audio, from the process's start (apps/common/process_start.h).
// counters: those of an audio device (JACK, PortAudio), none for a file.
void print_report(const kokoro::UtteranceReport& r, bool quiet, std::optional<double> since_start_ms,
                  const std::optional<kokoro::app::SinkCounters>& counters) {
  if (!r.error.empty()) {
    std::fprintf(stderr, "kokoro-say: %s\n", r.error.c_str());
    return;
  }
  if (quiet) return;
  std::string line = kokoro::app::format_report(r, counters);
  if (since_start_ms) {
    char note[96];
    std::snprintf(note, sizeof note, "; first audio %.0f ms after the process started", *since_start_ms);
    line += note;
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

// Waits until everything queued is spoken; Ctrl-C stops and returns false (exit).
bool wait_spoken(kokoro::Speaker& speaker) {
  while (!speaker.wait_idle(0.1))
    if (g_interrupts.load() > 0) return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  kokoro::app::tune_malloc_for_tensors();  // before any allocation worth tuning
  CLI::App app{"kokoro-say: speak text with the Kokoro-82M voice (24 kHz, real time, native)"};
  Options o;
  app.add_option("text", o.words, "Text to speak (default: read lines from standard input)");
  kokoro::app::add_speech_options(app, o.speech);
  app.add_option("-o,--out", o.out_file, "Write a WAV file instead of playing");
  app.add_option("--output", o.output, "Where audio goes: auto, jack, portaudio, wav, null")
      ->check(CLI::IsMember({"auto", "jack", "portaudio", "wav", "null"}))->capture_default_str();
  app.add_option("--device", o.device, "PortAudio device (name, substring or index; see --list-devices)");
  app.add_option("--jack-name", o.jack_name, "JACK client name")->capture_default_str();
  app.add_flag("--phonemes", o.phonemes, "Print the phonemes of each segment instead of speaking");
  app.add_flag("--interrupt", o.interrupt, "A new line interrupts the one being spoken (default: queue it; implies --lines)");
  app.add_flag("--lines", o.lines,
               "Read a pipe line by line, each line one utterance (default for a pipe: the text streams in and each "
               "sentence is spoken as soon as its end arrives)");
  app.add_option("--pause-flush", o.pause_flush,
                 "Text streaming in from a pipe: after this many seconds without input, speak the unfinished "
                 "sentence (0: never)")
      ->capture_default_str()->check(CLI::Range(0.0, 3600.0));
  app.add_flag("--list-voices", o.list_voices, "List the available voices");
  app.add_flag("--list-devices", o.list_devices, "List PortAudio output devices");
  app.add_flag("--reference-noise", o.reference_noise,
               "Use the deterministic noise of tools/reference (to compare with the official implementation)");
  app.add_option("--timestamps", o.timestamps,
                 "Write each spoken word's start and end (seconds in the audio output; for -o, in the file) to this "
                 "file: JSON, or WebVTT captions when it ends in .vtt");
  app.add_option("--timestamps-format", o.timestamps_format, "Format of --timestamps: json or vtt (default: by name)")
      ->check(CLI::IsMember({"json", "vtt"}));
  app.add_flag("-q,--quiet", o.quiet, "No status lines");
  app.add_flag("-v,--verbose", o.verbose, "Debug logging");
  CLI11_PARSE(app, argc, argv);
  kokoro::app::setup_logging("kokoro-say", o.verbose);
  // The first utterance's first audio is also reported from the process's start (issue 28: what a one-shot
  // `kokoro-say "..."` waits for, loading included); -v logs when each part of the start was done.
  const auto process_start = kokoro::app::process_start_time();
  auto started = [&](const char* what) {
    if (process_start)
      spdlog::debug("{} {:.1f} ms after the process started", what,
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - *process_start).count());
  };
  started("options read");

  try {
    const std::string assets = kokoro::find_assets_dir(o.speech.assets);
    if (o.list_voices) {
      for (const auto& v : kokoro::VoicePack::list(assets)) std::printf("%s\n", v.c_str());
      return 0;
    }
    if (o.list_devices) {
      for (const auto& d : kokoro::list_output_devices())
        std::printf("%3d %s%s (%s, %d ch, %.0f Hz)\n", d.index, d.name.c_str(), d.is_default ? " [default]" : "",
                    d.host_api.c_str(), d.max_output_channels, d.default_rate);
      return 0;
    }
    // Bytes that are not UTF-8 and texts with nothing to speak are said, not dropped in silence.
    kokoro::app::InputNotes notes("kokoro-say", stderr);
    std::string joined;
    for (const auto& w : o.words) joined += (joined.empty() ? "" : " ") + w;
    if (o.phonemes) {
      auto frontend = kokoro::app::load_frontend(o.speech, assets);
      auto print = [&](const std::string& raw) {
        const std::string text = notes.check(raw);
        const auto segments = frontend->segment(text);
        for (const auto& s : segments) std::printf("%s\n", s.phonemes.c_str());
        if (segments.empty()) {
          kokoro::UtteranceReport none;
          none.text = text;
          notes.spoken(none);
        }
      };
      if (!o.words.empty()) {
        print(joined);
      } else {
        std::string line;
        while (std::getline(std::cin, line)) print(line);
      }
      notes.finish();
      return 0;
    }

    kokoro::app::SpeechEngine engine = kokoro::app::load_speech_engine(o.speech);
    started("frontend and model loaded");
    std::unique_ptr<kokoro::AudioSink> sink = open_output(o);
    started("output opened");
    if (!o.quiet)
      std::fprintf(stderr, "kokoro-say: voice %s, %s, output %s\n", engine.voice.name().c_str(),
                   kokoro::app::describe_speech(o.speech).c_str(), sink->describe().c_str());

    kokoro::SpeakerOptions so = kokoro::app::speaker_options(o.speech, engine);
    so.reference_noise = o.reference_noise;
    kokoro::Speaker speaker(engine.synthesizer, engine.frontend, std::move(engine.voice), *sink, so);
    started("engine started");
    kokoro::app::WordTimestamps timestamps;
    const auto timestamp_format = kokoro::app::parse_timestamp_format(o.timestamps_format, o.timestamps);
    if (!o.timestamps.empty()) speaker.on_event([&](const kokoro::StreamEvent& e) { timestamps.on_event(e); });
    std::optional<std::chrono::steady_clock::time_point> first_said;
    std::atomic<bool> first_reported{false};
    auto say = [&](std::string raw) {
      std::string text = notes.check(raw);
      const std::string copy = o.timestamps.empty() ? std::string() : text;
      if (!first_said) first_said = std::chrono::steady_clock::now();
      const uint64_t id = speaker.say(std::move(text));
      if (!o.timestamps.empty()) timestamps.said(id, copy);
    };
    auto write_timestamps = [&] {
      if (!o.timestamps.empty()) timestamps.write(o.timestamps, timestamp_format);
    };
    std::atomic<bool> failed{false};
    uint64_t underruns_before = 0;  // reports come one after the other, from the speaker's worker
    speaker.on_report([&](const kokoro::UtteranceReport& r) {
      if (!r.error.empty()) failed = true;
      std::optional<kokoro::app::SinkCounters> counters;
      if (sink->plays_in_real_time()) {
        const kokoro::SinkStats s = sink->stats();
        counters = kokoro::app::SinkCounters{s.xruns, s.underruns - underruns_before, s.worst_callback_ns / 1e3};
        underruns_before = s.underruns;
      }
      std::optional<double> since_start;
      if (process_start && first_said && r.audio_seconds > 0 && !first_reported.exchange(true))
        since_start = std::chrono::duration<double, std::milli>(*first_said - *process_start).count() + r.first_audio_ms;
      if (!notes.spoken(r)) print_report(r, o.quiet, since_start, counters);  // not "[spoken] 0.00 s" for nothing speakable
      spdlog::debug("stages (ms before the first audio / in all): {}", kokoro::app::format_stages(r.stages));
    });

    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, nullptr);

    bool quit = false;
    if (!o.words.empty()) {
      say(joined);
      quit = !wait_spoken(speaker);
    } else if (stdin_streams(o)) {
      kokoro::app::StreamedInput input(speaker, notes, o.pause_flush, o.timestamps.empty() ? nullptr : &timestamps,
                                       &first_said);
      quit = !stream_stdin(input, speaker);
      if (!quit) quit = !wait_spoken(speaker);
    } else {
      const bool tty = isatty(STDIN_FILENO);
      if (tty && !o.quiet) std::fprintf(stderr, "Type a line and press Enter to hear it; Ctrl-C stops, Ctrl-C twice exits.\n");
      kokoro::app::InputLine line;
      while (read_line(line, speaker, quit)) {
        if (line.text.find_first_not_of(" \t\r") == std::string::npos) continue;
        if (o.interrupt && !line.continued) speaker.stop();
        say(std::move(line.text));
      }
      // End of input: finish speaking, unless Ctrl-C comes first.
      if (!quit) quit = !wait_spoken(speaker);
    }
    if (quit) {
      // Ctrl-C: stop now; a segment still being synthesized after 2 s is not waited for.
      kokoro::app::stop_speaker_or_exit(speaker, 2.0, 130, "kokoro-say");
      write_timestamps();  // the words spoken before Ctrl-C
      return 130;
    }
    sink->drain(60.0);
    notes.finish();
    write_timestamps();
    kokoro::app::persist_prepared_weights(engine);  // the next start reads them instead of preparing them
    return failed ? 1 : 0;
  } catch (const kokoro::Error& e) {
    std::fprintf(stderr, "kokoro-say: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kokoro-say: unexpected error: %s\n", e.what());
    return 1;
  }
}
