/* kokoro.h: the C interface of kokoro-rt, a real-time text-to-speech engine for Kokoro-82M.
 *
 *   kokoro_engine* e = kokoro_open(NULL);                 // model and assets found as kokoro-say finds them
 *   if (!e) { fprintf(stderr, "%s\n", kokoro_last_error()); return 1; }
 *   int rc = kokoro_speak(e, "Hello there.", NULL, on_audio, on_event, &state);
 *   if (rc < 0) fprintf(stderr, "%s\n", kokoro_last_error());
 *   kokoro_close(e);
 *
 * Audio: mono 32-bit float samples at KOKORO_SAMPLE_RATE (24000 Hz), nominally within [-1, 1], handed to the
 * audio callback in chunks as soon as the engine has them (the first chunk long before the sentence is
 * synthesized), in order, without gaps.
 *
 * Errors: calls that can fail return an int status: KOKORO_OK (0), KOKORO_STOPPED (1, not an error), or a
 * negative KOKORO_ERR_* code; kokoro_open returns NULL. After a failure, kokoro_last_error() returns a
 * message on the failing thread that says what was wrong (file, voice, language, argument). No C++
 * exception ever leaves this library.
 *
 * Structs passed in begin with a `size` field: set it to sizeof(the struct), or leave the whole struct
 * zero-initialised (size 0 means "this header's version", and every zero field means its default). Later
 * versions only append fields, so a program built against this header keeps working with newer libraries;
 * a size the library does not know is refused with KOKORO_ERR_STRUCT_SIZE.
 *
 * Threads: every function may be called from any thread. One kokoro_speak runs at a time per engine (a
 * second concurrent call on the same engine returns KOKORO_ERR_BUSY). For several voices or listeners at
 * once, open one model and a session per listener (kokoro_model_open, kokoro_session_new, below): they share
 * the weights and the compute threads instead of loading the model once per engine.
 * kokoro_stop is the call meant for other threads (barge-in). Callbacks run on an engine thread, not on the
 * caller's; inside them only kokoro_stop (or returning nonzero) and the functions that take no engine are
 * allowed.
 *
 * Start-up: the first sentence of a process prepares the model's weights for the CPU's kernels (packed and
 * transformed, ~160 MB). The first successful kokoro_speak of an engine then writes them, after its audio,
 * to $XDG_CACHE_HOME/kokoro-rt/prepared (or ~/.cache/kokoro-rt/prepared; once per model file and kernel
 * family, ~0.1-0.2 s), and later processes read them from there: their first sentence starts as fast as
 * the next ones. KOKORO_PREPARED_CACHE=0 turns this off.
 *
 * Handles: kokoro_engine is opaque. A handle that was closed, or was never returned by kokoro_open, is
 * rejected with KOKORO_ERR_INVALID_HANDLE (the library keeps a registry of open engines; it never
 * dereferences an unknown pointer).
 */
#ifndef KOKORO_H
#define KOKORO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KOKORO_API __attribute__((visibility("default")))
#else
#define KOKORO_API
#endif

#define KOKORO_SAMPLE_RATE 24000

/* Status codes. */
#define KOKORO_OK 0
#define KOKORO_STOPPED 1                  /* kokoro_stop, kokoro_close or a callback ended the speech early */
#define KOKORO_ERR_INVALID_ARGUMENT (-1)  /* NULL where a value is needed, empty text, unknown mode, bad speed */
#define KOKORO_ERR_INVALID_HANDLE (-2)    /* NULL, closed or unknown engine */
#define KOKORO_ERR_STRUCT_SIZE (-3)       /* a struct's size field this library does not know */
#define KOKORO_ERR_INVALID_TEXT (-4)      /* text is not valid UTF-8 */
#define KOKORO_ERR_VOICE (-5)             /* unknown or unreadable voice */
#define KOKORO_ERR_LANGUAGE (-6)          /* unsupported language */
#define KOKORO_ERR_BUSY (-7)              /* another kokoro_speak is running on this engine */
#define KOKORO_ERR_SYNTHESIS (-8)         /* the engine could not speak the text (message says why) */
#define KOKORO_ERR_MODEL (-9)             /* model file or assets missing or invalid (kokoro_open) */
#define KOKORO_ERR_INTERNAL (-10)         /* anything else (out of memory, ...) */

/* Version of the library ("0.1.0"); a static string. */
KOKORO_API const char* kokoro_version(void);

/* The message of the most recent failed call on the calling thread ("" if none). Valid until the next call
 * into this library on the same thread. */
KOKORO_API const char* kokoro_last_error(void);

/* A short constant description of a status code ("invalid argument", ...). */
KOKORO_API const char* kokoro_status_string(int status);

typedef struct kokoro_engine kokoro_engine;

/* Engine settings. Zero (or NULL) in any field means its default. */
typedef struct kokoro_config {
  size_t size;             /* sizeof(kokoro_config), or 0 */
  const char* model_path;  /* NULL: $KOKORO_MODEL, then <prefix>/share/kokoro-rt/kokoro-v1_0.kokoro when
                              installed, then the build tree's models/ */
  const char* assets_dir;  /* config.json, voices/, lexicons/. NULL: $KOKORO_ASSETS, then
                              <prefix>/share/kokoro-rt/assets when installed, then the build tree's */
  int threads;             /* compute threads (1..64). 0: 2. Process-wide: the last kokoro_open sets it */
  const char* precision;   /* "fp32", "bf16", "bf16-all", "int8". NULL: $KOKORO_PRECISION, then "int8" where the
                              CPU has AVX512-VNNI and AVX512-BF16, "bf16-all" where it has AVX512-BF16, else
                              "fp32". Process-wide */
  int verbose;             /* nonzero: the engine's debug messages on stderr (default: warnings and errors
                              only). Process-wide. The library never writes to stdout */
} kokoro_config;

/* Loads the model, the assets and the voice list (about a second). NULL config: all defaults. Returns NULL
 * on failure (kokoro_last_error says why: which file is missing, which value is wrong). */
KOKORO_API kokoro_engine* kokoro_open(const kokoro_config* config);

/* Stops any speech in progress (the kokoro_speak running on another thread returns KOKORO_STOPPED once it
 * has let go of the engine) and frees the engine. The handle is invalid afterwards; closing it again, or
 * closing NULL, is harmless (KOKORO_ERR_INVALID_HANDLE is set as the last error, nothing else happens). */
KOKORO_API void kokoro_close(kokoro_engine* engine);

/* Voices available in the engine's assets, sorted ("af_heart", ...). On success *names points to
 * *count strings owned by the engine, valid until kokoro_close. */
KOKORO_API int kokoro_list_voices(kokoro_engine* engine, const char* const** names, size_t* count);

/* How to speak. Zero (or NULL) in any field means its default. */
typedef struct kokoro_speak_options {
  size_t size;           /* sizeof(kokoro_speak_options), or 0 */
  const char* voice;     /* a voice name, a .bin path, or a blend "af_heart:0.6,af_bella:0.4". NULL: "af_heart" */
  const char* language;  /* "en-us", "en-gb", "es", "fr-fr", "hi", "it", "pt-br", "ja", "zh". NULL: the
                            voice's (its first letter: af_heart en-us, jf_alpha ja, zf_xiaobei zh, ...),
                            else "en-us" */
  float speed;           /* speaking rate, 0.25..4. 0: 1.0 */
  const char* mode;      /* synthesis mode by name: "exact" or "slice" (see the engine's
                            docs/streaming.md; "stream" was merged into "slice" and is an error now).
                            NULL: the engine's default. A string, so that new modes need no new ABI */
  uint64_t seed;         /* noise seed: the same seed gives the same audio */
  int phonemes;          /* nonzero: the text is a phoneme string (Kokoro's symbols), not text */
} kokoro_speak_options;

/* Events, in the order they happen in the audio: UTTERANCE_START, then per segment (a sentence or part of
 * one) SEGMENT_START, WORD..., SEGMENT_END, and finally UTTERANCE_END (not sent when the speech is stopped).
 * An SSML <mark> comes where it stands: between segments, or inside one just before the WORD it precedes (at
 * that word's start_sample); a mark changes nothing that is said. */
typedef enum kokoro_event_kind {
  KOKORO_EVENT_UTTERANCE_START = 0,
  KOKORO_EVENT_SEGMENT_START = 1,
  KOKORO_EVENT_WORD = 2,
  KOKORO_EVENT_SEGMENT_END = 3,
  KOKORO_EVENT_UTTERANCE_END = 4,
  KOKORO_EVENT_MARK = 5  /* an SSML <mark name="..."/> reached in the audio; `name` holds it */
} kokoro_event_kind;

typedef struct kokoro_event {
  size_t size;            /* sizeof(kokoro_event) as the library fills it; later versions append fields */
  int kind;               /* a kokoro_event_kind; ignore kinds you do not know */
  size_t text_begin;      /* segments and words: byte range in the text given to kokoro_speak */
  size_t text_end;
  uint64_t start_sample;  /* where it starts in this call's audio (samples at KOKORO_SAMPLE_RATE) */
  uint64_t end_sample;    /* segments and words: where it ends; otherwise = start_sample */
  const char* name;       /* MARK: the mark's name (UTF-8, valid during the call); otherwise NULL */
} kokoro_event;

/* Audio: `count` samples, valid only during the call. Events: valid only during the call. An event is sent
 * once the audio up to its start_sample has been handed to the audio callback. Return 0 to go on, nonzero
 * to stop the speech (kokoro_speak then returns KOKORO_STOPPED). Either callback may be NULL. */
typedef int (*kokoro_audio_callback)(const float* samples, size_t count, void* user_data);
typedef int (*kokoro_event_callback)(const kokoro_event* event, void* user_data);

/* Speaks `text` (UTF-8, NUL-terminated) and returns when all of it has been handed to the callbacks
 * (KOKORO_OK), when it was stopped (KOKORO_STOPPED), or on failure (a KOKORO_ERR_* code; nothing more is
 * delivered). `options` may be NULL (defaults). `text` and `options` are copied; they need not outlive the
 * call. The first audio arrives after the engine's first chunk, long before the call returns. */
KOKORO_API int kokoro_speak(kokoro_engine* engine, const char* text, const kokoro_speak_options* options,
                            kokoro_audio_callback on_audio, kokoro_event_callback on_event, void* user_data);

/* Barge-in: stops the kokoro_speak running on this engine (from any thread, including inside a callback).
 * Once kokoro_stop returns, no further callback of that speech starts (one already running finishes), and
 * kokoro_speak returns KOKORO_STOPPED promptly (the engine abandons its work between chunks). Nothing
 * running: nothing happens. Returns KOKORO_OK, or KOKORO_ERR_INVALID_HANDLE. Not async-signal-safe. */
KOKORO_API int kokoro_stop(kokoro_engine* engine);

/* ---- One model, many sessions ------------------------------------------------------------------------
 *
 *   kokoro_model* m = kokoro_model_open(NULL);           // weights, frontends, voices: loaded once
 *   kokoro_session* a = kokoro_session_new(m, NULL);     // one stream of utterances each (a listener)
 *   kokoro_session* b = kokoro_session_new(m, NULL);
 *   // on two threads at once:
 *   kokoro_session_speak(a, "Hello.", &opts_a, on_audio, on_event, &state_a);
 *   kokoro_session_speak(b, "Bonjour.", &opts_b, on_audio, on_event, &state_b);
 *   kokoro_session_close(a); kokoro_session_close(b);
 *   kokoro_model_close(m);                                // freed once its last session is closed
 *
 * A model is immutable once open and shared by any number of sessions; its compute threads (kokoro_config.
 * threads) are shared by all of them, and a scheduler serves first the session whose audio would run out
 * first. A session holds what one stream of utterances needs (its engine threads, rings, output). Voice,
 * language, speed and seed may change from one kokoro_session_speak to the next at no cost; a change of mode
 * rebuilds the session's engine (tens of ms). Sessions never share audio, events or errors.
 *
 * kokoro_open/kokoro_speak/kokoro_stop/kokoro_close above are a model with one session. */
typedef struct kokoro_model kokoro_model;
typedef struct kokoro_session kokoro_session;

/* Loads the model (as kokoro_open). NULL on failure (kokoro_last_error says why). */
KOKORO_API kokoro_model* kokoro_model_open(const kokoro_config* config);

/* Lets go of the caller's reference: the model is freed when its last session is closed too. Closing it
 * again, or NULL, is harmless (KOKORO_ERR_INVALID_HANDLE as last error). Sessions stay usable. */
KOKORO_API void kokoro_model_close(kokoro_model* model);

/* As kokoro_list_voices, for a model (strings valid until the model is freed). */
KOKORO_API int kokoro_model_list_voices(kokoro_model* model, const char* const** names, size_t* count);

/* A new session on `model`. `defaults` (may be NULL) are the options its calls start from: a field a call's
 * options leave at zero takes the session's value. NULL on failure (invalid handle, unknown voice or mode). */
KOKORO_API kokoro_session* kokoro_session_new(kokoro_model* model, const kokoro_speak_options* defaults);

/* As kokoro_speak, on a session: one call at a time per session (KOKORO_ERR_BUSY otherwise); calls on
 * different sessions run at the same time. */
KOKORO_API int kokoro_session_speak(kokoro_session* session, const char* text, const kokoro_speak_options* options,
                                    kokoro_audio_callback on_audio, kokoro_event_callback on_event, void* user_data);

/* As kokoro_stop, on a session; other sessions are not touched. */
KOKORO_API int kokoro_session_stop(kokoro_session* session);

/* Stops and frees the session (as kokoro_close). */
KOKORO_API void kokoro_session_close(kokoro_session* session);

/* ---- Text that streams in ----------------------------------------------------------------------------
 *
 *   kokoro_session_begin_text(s, &options, on_audio, on_event, &state, 0);   // returns at once
 *   while ((piece = next_piece_from_the_llm()))                               // returns at once
 *     kokoro_session_append_text(s, piece, strlen(piece));
 *   rc = kokoro_session_end_text(s);              // returns when all of it has been spoken, as _speak does
 *
 * For text that is produced while it is spoken (a language model's answer, a chat message being typed): one
 * utterance whose text comes in pieces of any size, on the session's engine. Each sentence is spoken as soon
 * as the text after it shows that it ended (the next character: "3." may still become "3.5"), never split to
 * start earlier, with the sentence rules of the language's frontend (abbreviations, decimals, quotes); a
 * line break ends a sentence too. When no text comes for pause_flush_seconds, what is there is spoken as it
 * is. The audio depends on the text only, not on how it was cut into pieces or when they came (the pause
 * flush aside): each sentence is synthesized on its own, which is what makes that possible; so a whole text
 * appended at once is spoken sentence by sentence, not in the up-to-510-phoneme groups of sentences that
 * kokoro_session_speak makes. Text starting with '<' (SSML) and phoneme input are spoken at the end, whole.
 *
 * Callbacks and events are those of kokoro_session_speak: one UTTERANCE_START, SEGMENT/WORD events whose
 * text_begin/text_end are byte offsets in the whole text appended so far, one UTTERANCE_END. They run on an
 * engine thread while the caller appends. kokoro_session_stop (or a callback returning nonzero) ends the
 * stream: the text not spoken yet is dropped, later appends return KOKORO_STOPPED, and
 * kokoro_session_end_text returns KOKORO_STOPPED at once. A stream must be ended with
 * kokoro_session_end_text before the session takes another call (KOKORO_ERR_BUSY until then). */

/* Opens a text stream on the session (KOKORO_ERR_BUSY while a speak or another stream is open). `options`
 * as kokoro_session_speak's. pause_flush_seconds: how long the text may stop coming before the unfinished
 * sentence is spoken as it is (0: 1.0 s; up to 3600). Returns at once. */
KOKORO_API int kokoro_session_begin_text(kokoro_session* session, const kokoro_speak_options* options,
                                         kokoro_audio_callback on_audio, kokoro_event_callback on_event,
                                         void* user_data, double pause_flush_seconds);

/* Appends `length` bytes of UTF-8 text (need not be NUL-terminated; a character may be split between two
 * appends). Returns at once: KOKORO_OK; KOKORO_STOPPED when the stream was stopped or has failed (the text
 * is dropped; kokoro_session_end_text returns the reason); KOKORO_ERR_INVALID_TEXT for bytes that are not
 * UTF-8 (nothing of the piece is appended, the stream goes on); KOKORO_ERR_INVALID_ARGUMENT when no stream
 * is open. */
KOKORO_API int kokoro_session_append_text(kokoro_session* session, const char* text, size_t length);

/* Ends the text: the rest is spoken, and the call returns when all of it has been handed to the callbacks,
 * with kokoro_session_speak's statuses (KOKORO_OK, KOKORO_STOPPED, KOKORO_ERR_SYNTHESIS). Text that ended
 * inside a UTF-8 character gives KOKORO_ERR_INVALID_TEXT after the rest has been spoken. The session is free
 * for its next call afterwards, whatever the status. */
KOKORO_API int kokoro_session_end_text(kokoro_session* session);

/* How busy the model's compute is, for admission (a server turns admit == 0 into "503, retry later"). */
typedef struct kokoro_load {
  size_t size;            /* sizeof(kokoro_load), or 0 */
  int sessions;           /* open sessions */
  int speaking;           /* sessions inside kokoro_session_speak now */
  double demand;          /* cores the speaking sessions need to stay real-time (their measured compute
                             seconds per audio second, summed; a new one counts with a nominal estimate) */
  double capacity;        /* cores the model computes on (its threads, at most the machine's) */
  int admit;              /* nonzero: one more real-time stream fits (demand + one more <= capacity) */
} kokoro_load;

/* Fills *load (set load->size to sizeof(kokoro_load) or 0). */
KOKORO_API int kokoro_model_load(kokoro_model* model, kokoro_load* load);

/* The assets directory the model reads (config.json, voices/<name>.bin, lexicons/), as found when it was opened;
 * *dir is valid until the model is freed. */
KOKORO_API int kokoro_model_assets_dir(kokoro_model* model, const char** dir);

/* The phonemes the model speaks for `text` (UTF-8; SSML and inline markup read as kokoro_session_speak reads
 * them) in `language` (NULL: "en-us"): Kokoro's symbols, one segment per line (the sentences of a line of text
 * up to 510 symbols, as the model is called on them), each line speakable with kokoro_speak_options.phonemes =
 * 1. Text with nothing to say gives "". On success *phonemes points to a string owned by the library, valid until the next
 * kokoro_model_phonemize on the same thread. */
KOKORO_API int kokoro_model_phonemize(kokoro_model* model, const char* text, const char* language,
                                      const char** phonemes);

#ifdef __cplusplus
}
#endif

#endif /* KOKORO_H */
