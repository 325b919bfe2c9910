// The plugin's URIs (they must match kokoro.ttl.in) and the URIDs it maps once at instantiation: run() never
// calls the host's map function.
#pragma once
#include <lv2/atom/atom.h>
#include <lv2/log/log.h>
#include <lv2/midi/midi.h>
#include <lv2/patch/patch.h>
#include <lv2/urid/urid.h>

#define KOKORO_LV2_URI "urn:kokoro-rt:speaker"
#define KOKORO_LV2_NS KOKORO_LV2_URI "#"

// Properties a host or GUI sets with patch:Set (and saves with the state).
#define KOKORO_LV2_TEXT KOKORO_LV2_NS "text"  // atom:String, what note-ons speak
#define KOKORO_LV2_FILE KOKORO_LV2_NS "file"  // atom:Path, a UTF-8 text file; when set it is spoken instead

// Notifications (atom:Object types and their properties), sent on the notify port.
#define KOKORO_LV2_UTTERANCE_START KOKORO_LV2_NS "UtteranceStart"
#define KOKORO_LV2_UTTERANCE_END KOKORO_LV2_NS "UtteranceEnd"
#define KOKORO_LV2_SEGMENT_START KOKORO_LV2_NS "SegmentStart"
#define KOKORO_LV2_SEGMENT_END KOKORO_LV2_NS "SegmentEnd"
#define KOKORO_LV2_WORD KOKORO_LV2_NS "Word"
#define KOKORO_LV2_MARK KOKORO_LV2_NS "Mark"
#define KOKORO_LV2_MESSAGE KOKORO_LV2_NS "Message"
#define KOKORO_LV2_CUE KOKORO_LV2_NS "cue"                  // atom:Int, index of the cue (sentence), -1: whole text
#define KOKORO_LV2_TEXT_BEGIN KOKORO_LV2_NS "textBegin"     // atom:Long, byte offset in the text
#define KOKORO_LV2_TEXT_END KOKORO_LV2_NS "textEnd"         // atom:Long
#define KOKORO_LV2_STATUS KOKORO_LV2_NS "status"            // atom:String: "ok", "stopped" or the error
#define KOKORO_LV2_UNDERRUNS KOKORO_LV2_NS "underrunFrames" // atom:Long, frames of silence inserted (real time)
#define KOKORO_LV2_LEVEL KOKORO_LV2_NS "level"              // atom:URID, log:Error / log:Warning / log:Note

namespace kokoro::lv2 {

struct Urids {
  LV2_URID atom_Blank, atom_Object, atom_String, atom_Path, atom_URID;
  LV2_URID midi_MidiEvent;
  LV2_URID patch_Set, patch_Get, patch_property, patch_value;
  LV2_URID log_Error, log_Warning, log_Note;
  LV2_URID rdfs_comment, rdfs_label;
  LV2_URID text, file;
  LV2_URID UtteranceStart, UtteranceEnd, SegmentStart, SegmentEnd, Word, Mark, Message;
  LV2_URID cue, text_begin, text_end, status, underruns, level;

  void map_all(const LV2_URID_Map* m) {
    const auto u = [m](const char* uri) { return m->map(m->handle, uri); };
    atom_Blank = u(LV2_ATOM__Blank);
    atom_Object = u(LV2_ATOM__Object);
    atom_String = u(LV2_ATOM__String);
    atom_Path = u(LV2_ATOM__Path);
    atom_URID = u(LV2_ATOM__URID);
    midi_MidiEvent = u(LV2_MIDI__MidiEvent);
    patch_Set = u(LV2_PATCH__Set);
    patch_Get = u(LV2_PATCH__Get);
    patch_property = u(LV2_PATCH__property);
    patch_value = u(LV2_PATCH__value);
    log_Error = u(LV2_LOG__Error);
    log_Warning = u(LV2_LOG__Warning);
    log_Note = u(LV2_LOG__Note);
    rdfs_comment = u("http://www.w3.org/2000/01/rdf-schema#comment");  // a message's text
    rdfs_label = u("http://www.w3.org/2000/01/rdf-schema#label");      // a word's or mark's text
    text = u(KOKORO_LV2_TEXT);
    file = u(KOKORO_LV2_FILE);
    UtteranceStart = u(KOKORO_LV2_UTTERANCE_START);
    UtteranceEnd = u(KOKORO_LV2_UTTERANCE_END);
    SegmentStart = u(KOKORO_LV2_SEGMENT_START);
    SegmentEnd = u(KOKORO_LV2_SEGMENT_END);
    Word = u(KOKORO_LV2_WORD);
    Mark = u(KOKORO_LV2_MARK);
    Message = u(KOKORO_LV2_MESSAGE);
    cue = u(KOKORO_LV2_CUE);
    text_begin = u(KOKORO_LV2_TEXT_BEGIN);
    text_end = u(KOKORO_LV2_TEXT_END);
    status = u(KOKORO_LV2_STATUS);
    underruns = u(KOKORO_LV2_UNDERRUNS);
    level = u(KOKORO_LV2_LEVEL);
  }
};

// Port indices, as in kokoro.ttl.in.
enum Port : uint32_t {
  kPortControl = 0,     // atom:Sequence in: MIDI and patch messages
  kPortNotify = 1,      // atom:Sequence out: events and messages
  kPortOut = 2,         // audio out, mono, the host's rate
  kPortSpeed = 3,       // 0.5 .. 2
  kPortGain = 4,        // dB
  kPortVoice = 5,       // index into voices.txt
  kPortContinuous = 6,  // toggle: a note-on speaks the whole text
  kPortFreewheel = 7,   // lv2:freeWheeling: offline render, run() waits for synthesis
  kPortLatency = 8,     // out, always 0
  kPortCount = 9
};

}  // namespace kokoro::lv2
