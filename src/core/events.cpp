#include "kopt/events.hpp"

#include <zstd.h>

#include <cstdio>
#include <memory>
#include <vector>

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

namespace {

// Accepts one JSONL line; returns whether it yielded an event.
void take_line(std::string_view line, const EventSink& sink, LogReadStats& stats) {
  line = js_trim(line);
  if (line.empty()) return;
  ++stats.lines;
  if (line.size() > kMaxLogLine) {
    ++stats.skipped;
    return;
  }
  auto ev = parse_json(line);
  // Header rows (no seq) and packed chunk rows carry nothing the projection reads.
  if (!ev || !ev->is_object() || !ev->contains("seq")) {
    ++stats.skipped;
    return;
  }
  ++stats.events;
  sink(*ev);
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
    auto arr = parse_json(text);
    if (!arr || !arr->is_array()) {
      stats.error = "not a JSON array of events (parse error)";
      return false;
    }
    for (const auto& ev : *arr) {
      ++stats.lines;
      ++stats.events;
      sink(ev);
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

bool read_log_file(const std::string& path, const EventSink& sink, LogReadStats& stats) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) {
    stats.error = "cannot open " + path;
    return false;
  }
  std::vector<char> in(1 << 20);
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

}  // namespace kopt
