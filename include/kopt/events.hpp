// The session log as the projection reads it (spec A): event shapes and log files
// (a JSON array of events, a DSH session.jsonl, or session.jsonl.zstd of concatenated frames).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "kopt/json.hpp"

namespace kopt {

// The event types the projection reads (spec A: a call, its result, a user message); every
// other event is counted and passed over.
bool projected_type(std::string_view type);

// The other event types the log reader builds: what a run's facts are read from (compare.hpp
// RunFacts: `session/title`, `request/header`); the projection itself passes over them.
bool run_fact_type(std::string_view type);

// Who sent a `user/message` event, read from its `data` (the message is `data.message`, or `data`
// itself): the person (`source.kind` "user"), the plugin's loop (kind "plugin", plugin kLoopPluginId),
// another sender, or none (no source object). The one reading of `source`: the projection, the
// report's task and the run's supervisors read it here.
enum class Sender { none, user, loop, other };
struct MessageFrom {
  Sender sender = Sender::none;
  const json* message = nullptr;  // null when `data` is not an object
  const json* source = nullptr;   // the source object, or null
};
MessageFrom message_from(const json& data);

// message.source.callId, then data.callId, then message.content[0].toolCallId.
std::optional<std::string> result_call_id(const json& data);
// every string `text` of every record under `message`, depth first, joined with "\n".
std::string result_text(const json& message);
// Whether a tool result says it failed: a record of `message.content` with `isError: true` (the host's
// form for a tool that threw, was refused its arguments, or does not exist).
bool result_is_error(const json& message);

struct LogReadStats {
  std::size_t lines = 0;    // non-empty lines (JSONL) or array elements
  std::size_t events = 0;   // handed to the callback
  std::size_t skipped = 0;     // unparsable or oversized lines
  std::size_t non_events = 0;  // rows that are not events: the session header, packed chunk rows
  bool truncated = false;   // the compressed stream ended inside a frame, or a read failed midway
  // One past the largest integer `seq` of an event read (0: none carried one): where a live
  // session's in-memory events continue after its log file (lib/store.mjs).
  std::uint64_t seq_end = 0;
  std::string error;        // why reading stopped early or failed
};

using EventSink = std::function<void(const json& event)>;

// Largest single line accepted from a JSONL log; longer lines are skipped and counted.
inline constexpr std::size_t kMaxLogLine = 64u << 20;

// Reads a JSON array of events or JSONL text. Returns false (with stats.error) when nothing usable.
bool read_log_text(std::string_view text, const EventSink& sink, LogReadStats& stats);
// What feed() takes from JavaScript, for the Projector and the Session alike (one rule): a JSON
// array of events (an element that does not parse, nested too deep, is skipped and counted), one
// event object, or JSONL text (lines that do not parse skipped and counted, as in a log file).
// Refused (ok false) when it is none of these: an array whose structure is broken (what came before
// the break was read), or text of which no line is an event.
struct EventsText {
  bool ok = true;
  std::size_t positions = 0;   // the log positions it covered: array elements, or non-empty lines
  std::size_t unreadable = 0;  // of them, skipped as unparsable
};
EventsText read_events_text(std::string_view text, const EventSink& sink);
// Reads a file: zstd (by magic number) is decompressed as a stream of frames; JSONL is streamed
// line by line so memory stays bounded by the longest line. Returns false when the file cannot be read.
bool read_log_file(const std::string& path, const EventSink& sink, LogReadStats& stats);
// The same over an open stream (not closed); `name` is used in messages.
bool read_log_stream(std::FILE* file, const std::string& name, const EventSink& sink, LogReadStats& stats);

}  // namespace kopt
