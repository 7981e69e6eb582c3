#include "kopt/events.hpp"

#include <zstd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "kopt/anchors.hpp"
#include "kopt/contract.hpp"

namespace kopt {

std::optional<std::string> result_call_id(const json& data) {
  if (!data.is_object()) return std::nullopt;
  auto msg = data.find("message");
  if (msg != data.end() && msg->is_object()) {
    auto src = msg->find("source");
    if (src != msg->end() && src->is_object()) {
      auto id = src->find("callId");
      if (id != src->end() && id->is_string()) return id->get<std::string>();
    }
  }
  if (auto id = data.find("callId"); id != data.end() && id->is_string()) return id->get<std::string>();
  if (msg != data.end() && msg->is_object()) {
    auto content = msg->find("content");
    if (content != msg->end() && content->is_array() && !content->empty() && (*content)[0].is_object()) {
      auto id = (*content)[0].find("toolCallId");
      if (id != (*content)[0].end() && id->is_string()) return id->get<std::string>();
    }
  }
  return std::nullopt;
}

std::string result_text(const json& message) {
  // Iterative depth-first walk (hostile logs can nest deeply).
  std::string out;
  bool first = true;
  std::vector<const json*> stack{&message};
  while (!stack.empty()) {
    const json* node = stack.back();
    stack.pop_back();
    if (node->is_object()) {
      auto t = node->find("text");
      if (t != node->end() && t->is_string()) {
        if (!first) out.push_back('\n');
        first = false;
        out += t->get_ref<const std::string&>();
      }
      // Push children in reverse so they are visited in key order.
      std::vector<const json*> kids;
      for (auto it = node->begin(); it != node->end(); ++it)
        if (it.key() != "text" && it.value().is_structured()) kids.push_back(&it.value());
      for (auto k = kids.rbegin(); k != kids.rend(); ++k) stack.push_back(*k);
    } else if (node->is_array()) {
      for (auto it = node->rbegin(); it != node->rend(); ++it)
        if (it->is_structured()) stack.push_back(&*it);
    }
  }
  return out;
}

bool result_is_error(const json& message) {
  if (!message.is_object()) return false;
  auto content = message.find("content");
  if (content == message.end() || !content->is_array()) return false;
  for (const auto& c : *content) {
    if (!c.is_object()) continue;
    auto e = c.find("isError");
    if (e != c.end() && e->is_boolean() && e->get<bool>()) return true;
  }
  return false;
}

bool projected_type(std::string_view type) { return type == "tool/call" || type == "tool/result" || type == "user/message"; }
bool run_fact_type(std::string_view type) { return type == "session/title" || type == "request/header"; }

namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::size_t skip_ws(std::string_view s, std::size_t i) {
  while (i < s.size() && is_ws(s[i])) ++i;
  return i;
}

// End of the JSON string starting at s[i] == '"' (index after the closing quote), or npos.
std::size_t skip_string(std::string_view s, std::size_t i, bool* escaped = nullptr) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      if (escaped) *escaped = true;
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// End of the JSON value starting at s[i] (structure only; contents are checked by the real parser).
std::size_t skip_value(std::string_view s, std::size_t i) {
  if (i >= s.size()) return std::string_view::npos;
  if (s[i] == '"') return skip_string(s, i);
  if (s[i] == '{' || s[i] == '[') {
    std::size_t depth = 0;
    for (; i < s.size(); ++i) {
      char c = s[i];
      if (c == '"') {
        i = skip_string(s, i);
        if (i == std::string_view::npos) return i;
        --i;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
    }
    return std::string_view::npos;
  }
  while (i < s.size() && !is_ws(s[i]) && s[i] != ',' && s[i] != '}' && s[i] != ']') ++i;
  return i;
}

enum class Peek { Read, Ignore, NoSeq, Unknown };

// Looks at an event's top-level keys without building it: only tool/call, tool/result and
// user/message are read by the projection (and the run's title and model route by its facts), so
// the rest need no full parse (most of a real log).
// *seq: the value of a "seq" key that is a plain non-negative integer (left alone otherwise).
Peek peek_event(std::string_view s, std::uint64_t* seq) {
  std::size_t i = skip_ws(s, 0);
  if (i >= s.size() || s[i] != '{') return Peek::Unknown;
  std::string_view type;
  bool has_type = false, has_seq = false;
  i = skip_ws(s, i + 1);
  if (i < s.size() && s[i] == '}') return Peek::NoSeq;
  while (i < s.size()) {
    if (s[i] != '"') return Peek::Unknown;
    bool escaped = false;
    std::size_t kend = skip_string(s, i, &escaped);
    if (kend == std::string_view::npos || escaped) return Peek::Unknown;
    std::string_view key = s.substr(i + 1, kend - i - 2);
    i = skip_ws(s, kend);
    if (i >= s.size() || s[i] != ':') return Peek::Unknown;
    i = skip_ws(s, i + 1);
    std::size_t vend = skip_value(s, i);
    if (vend == std::string_view::npos) return Peek::Unknown;
    if (key == "type") {  // the last duplicate wins, as in JSON.parse
      has_type = true;
      type = {};
      if (s[i] == '"') {
        bool esc = false;
        skip_string(s, i, &esc);
        if (esc) return Peek::Unknown;
        type = s.substr(i + 1, vend - i - 2);
      }
    } else if (key == "seq") {
      has_seq = true;
      std::uint64_t v = 0;
      auto [end, ec] = std::from_chars(s.data() + i, s.data() + vend, v);
      if (ec == std::errc() && end == s.data() + vend) *seq = v;
    }
    i = skip_ws(s, vend);
    if (i < s.size() && s[i] == ',') {
      i = skip_ws(s, i + 1);
      continue;
    }
    if (i < s.size() && s[i] == '}') break;
    return Peek::Unknown;
  }
  if (!has_seq) return Peek::NoSeq;
  if (has_type && (projected_type(type) || run_fact_type(type))) return Peek::Read;
  return Peek::Ignore;
}

const json& ignored_event() {
  static const json e = json::object();
  return e;
}

// One event's text (a JSONL line or an array element).
void take_event(std::string_view text, const EventSink& sink, LogReadStats& stats, bool need_seq) {
  std::uint64_t seq = UINT64_MAX;
  Peek peek = peek_event(text, &seq);
  if (seq != UINT64_MAX) stats.seq_end = std::max(stats.seq_end, seq + 1);
  if (peek == Peek::Ignore || (peek == Peek::NoSeq && !need_seq)) {
    ++stats.events;
    sink(ignored_event());  // counted; carries nothing the projection reads
    return;
  }
  if (peek == Peek::NoSeq) {  // a header row or a packed chunk row: not an event, not an error
    ++stats.non_events;
    return;
  }
  auto ev = parse_json(text);
  if (!ev || (need_seq && !ev->is_object())) {
    ++stats.skipped;
    return;
  }
  if (need_seq && !ev->contains("seq")) {
    ++stats.non_events;
    return;
  }
  if (ev->is_object()) {  // a row peek could not read (escaped keys): its seq from the parse
    auto it = ev->find("seq");
    if (it != ev->end() && it->is_number_unsigned()) stats.seq_end = std::max(stats.seq_end, it->get<std::uint64_t>() + 1);
  }
  ++stats.events;
  sink(*ev);
}

// Accepts one JSONL line.
void take_line(std::string_view line, const EventSink& sink, LogReadStats& stats) {
  line = js_trim(line);
  if (line.empty()) return;
  ++stats.lines;
  if (line.size() > kMaxLogLine) {
    ++stats.skipped;
    return;
  }
  take_event(line, sink, stats, /*need_seq=*/true);
}

// A JSON array of events, element by element; false when its structure is broken (what came
// before the break was read).
bool take_array(std::string_view text, const EventSink& sink, LogReadStats& stats) {
  std::size_t i = skip_ws(text, 0);
  if (i >= text.size() || text[i] != '[') return false;
  i = skip_ws(text, i + 1);
  if (i < text.size() && text[i] == ']') return skip_ws(text, i + 1) == text.size();
  while (i < text.size()) {
    std::size_t end = skip_value(text, i);
    if (end == std::string_view::npos) return false;
    ++stats.lines;
    std::string_view el = text.substr(i, end - i);
    if (el[0] == '{') {
      take_event(el, sink, stats, /*need_seq=*/false);
    } else if (auto v = parse_json(el)) {  // not an event: the projector counts it as skipped
      ++stats.events;
      sink(*v);
    } else {
      ++stats.skipped;
    }
    i = skip_ws(text, end);
    if (i < text.size() && text[i] == ',') {
      i = skip_ws(text, i + 1);
      continue;
    }
    return i < text.size() && text[i] == ']' && skip_ws(text, i + 1) == text.size();
  }
  return false;
}

class LineSplitter {
 public:
  LineSplitter(const EventSink& sink, LogReadStats& stats) : sink_(sink), stats_(stats) {}
  void push(std::string_view chunk) {
    std::size_t start = 0;
    while (true) {
      std::size_t nl = chunk.find('\n', start);
      if (nl == std::string_view::npos) break;
      if (overflow_) {
        overflow_ = false;
        ++stats_.lines;
        ++stats_.skipped;
      } else if (buf_.empty()) {
        take_line(chunk.substr(start, nl - start), sink_, stats_);
      } else {
        buf_.append(chunk.substr(start, nl - start));
        take_line(buf_, sink_, stats_);
        buf_.clear();
      }
      start = nl + 1;
    }
    if (!overflow_) {
      buf_.append(chunk.substr(start));
      if (buf_.size() > kMaxLogLine) {
        overflow_ = true;
        buf_.clear();
        buf_.shrink_to_fit();
      }
    }
  }
  void finish() {
    if (overflow_) {
      ++stats_.lines;
      ++stats_.skipped;
    } else if (!buf_.empty()) {
      take_line(buf_, sink_, stats_);
    }
    buf_.clear();
  }

 private:
  const EventSink& sink_;
  LogReadStats& stats_;
  std::string buf_;
  bool overflow_ = false;
};

bool looks_like_array(std::string_view text) {
  std::string_view t = js_trim_start(text);
  return !t.empty() && t[0] == '[';
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

bool read_log_text(std::string_view text, const EventSink& sink, LogReadStats& stats) {
  if (looks_like_array(text)) {
    if (!take_array(text, sink, stats)) {
      stats.error = "not a well-formed JSON array of events; read the " + std::to_string(stats.events) +
                    " event(s) before the break";
      stats.truncated = true;
      return stats.events > 0;
    }
    return true;
  }
  LineSplitter split(sink, stats);
  split.push(text);
  split.finish();
  if (stats.lines > 0 && stats.events == 0) {
    stats.error = "no session events found (not JSONL of events)";
    return false;
  }
  return true;
}

EventsText read_events_text(std::string_view text, const EventSink& sink) {
  EventsText out;
  LogReadStats stats;
  if (looks_like_array(text)) {
    out.ok = take_array(text, sink, stats) || stats.events > 0;
  } else if (auto one = parse_json(text); one && one->is_object()) {
    sink(*one);
    stats.lines = 1;
  } else {
    LineSplitter split(sink, stats);
    split.push(text);
    split.finish();
    out.ok = stats.lines == 0 || stats.events > 0;
  }
  out.positions = stats.lines;
  out.unreadable = stats.skipped;
  return out;
}

bool read_log_file(const std::string& path, const EventSink& sink, LogReadStats& stats) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) {
    stats.error = "cannot open " + path;
    return false;
  }
  return read_log_stream(f.get(), path, sink, stats);
}

bool read_log_stream(std::FILE* file, const std::string& path, const EventSink& sink, LogReadStats& stats) {
  struct Borrowed {
    std::FILE* p;
    std::FILE* get() const { return p; }
  } f{file};
  std::vector<char> in(1 << 20);
  long file_size = 0;
  if (std::fseek(f.get(), 0, SEEK_END) == 0) file_size = std::ftell(f.get());
  std::rewind(f.get());
  std::size_t got = std::fread(in.data(), 1, in.size(), f.get());
  const bool zstd = got >= 4 && static_cast<unsigned char>(in[0]) == 0x28 && static_cast<unsigned char>(in[1]) == 0xB5 &&
                    static_cast<unsigned char>(in[2]) == 0x2F && static_cast<unsigned char>(in[3]) == 0xFD;

  // Decoded text arrives in chunks; a JSON array needs the whole text, JSONL is streamed.
  std::string whole;
  bool decided = false, array_mode = false;
  LineSplitter split(sink, stats);
  auto emit = [&](std::string_view chunk) {
    if (!decided) {
      whole.append(chunk);
      std::string_view t = js_trim_start(whole);
      if (t.empty()) return;
      decided = true;
      array_mode = t[0] == '[';
      if (array_mode && file_size > 0 && !zstd) whole.reserve(static_cast<std::size_t>(file_size) + 1);
      if (!array_mode) {
        split.push(whole);
        whole.clear();
      }
      return;
    }
    if (array_mode) whole.append(chunk);
    else split.push(chunk);
  };

  if (zstd) {
    std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
    std::vector<char> out(ZSTD_DStreamOutSize());
    std::size_t last = 0;
    bool failed = false;
    while (got > 0 && !failed) {
      ZSTD_inBuffer ib{in.data(), got, 0};
      while (ib.pos < ib.size) {
        ZSTD_outBuffer ob{out.data(), out.size(), 0};
        last = ZSTD_decompressStream(dctx.get(), &ob, &ib);
        if (ZSTD_isError(last)) {
          stats.error = std::string("zstd: ") + ZSTD_getErrorName(last);
          stats.truncated = true;
          failed = true;
          break;
        }
        emit(std::string_view(out.data(), ob.pos));
      }
      got = std::fread(in.data(), 1, in.size(), f.get());
    }
    // Drain what the decoder still holds.
    while (!failed) {
      ZSTD_inBuffer ib{nullptr, 0, 0};
      ZSTD_outBuffer ob{out.data(), out.size(), 0};
      std::size_t r = ZSTD_decompressStream(dctx.get(), &ob, &ib);
      if (ZSTD_isError(r) || ob.pos == 0) break;
      emit(std::string_view(out.data(), ob.pos));
    }
    if (!failed && last != 0) {
      stats.error = "zstd: stream ends inside a frame (truncated); the complete part was read";
      stats.truncated = true;
    }
  } else {
    while (got > 0) {
      emit(std::string_view(in.data(), got));
      got = std::fread(in.data(), 1, in.size(), f.get());
    }
    if (std::ferror(f.get())) {
      stats.error = "read error on " + path;
      stats.truncated = true;
    }
  }

  if (array_mode) {
    std::string err = stats.error;
    bool ok = read_log_text(whole, sink, stats);
    if (!err.empty()) stats.error = err + (stats.error.empty() || stats.error == err ? "" : "; " + stats.error);
    return ok;
  }
  split.finish();
  if (stats.lines > 0 && stats.events == 0 && stats.error.empty()) {
    stats.error = "no session events found in " + path;
    return false;
  }
  return stats.events > 0 || stats.error.empty();
}

MessageFrom message_from(const json& data) {
  MessageFrom out;
  if (!data.is_object()) return out;
  out.message = &data;
  if (auto m = data.find("message"); m != data.end() && m->is_object()) out.message = &*m;
  auto src = out.message->find("source");
  if (src == out.message->end() || !src->is_object()) return out;
  out.source = &*src;
  auto kind = src->find("kind");
  auto plugin = src->find("plugin");
  const bool is_kind = kind != src->end() && kind->is_string();
  if (is_kind && *kind == "user")
    out.sender = Sender::user;
  else if (is_kind && *kind == "plugin" && plugin != src->end() && plugin->is_string() && *plugin == anchors::kLoopPluginId)
    out.sender = Sender::loop;
  else
    out.sender = Sender::other;
  return out;
}

}  // namespace kopt
