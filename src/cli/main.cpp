// kopt: the core from a terminal.
//   kopt project LOG [--config CONFIG.json] [--loop LOOP.json] [--session-id ID]
//   kopt parse [FILE]           contract lines of a benchmark's output (stdin when no file)
//   kopt bench LOG [--feed N]   timings of cold projection and a warm incremental feed
//   kopt report LOG -o run.html [--csv F] [--json F] [--md F] [--lang zh|en]   offline report (src/cli/report_command.cpp)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "kopt/contract.hpp"
#include "kopt/derived.hpp"
#include "kopt/events.hpp"
#include "kopt/projector.hpp"
#include "report_command.hpp"

namespace {

int usage() {
  std::fputs(
      "usage:\n"
      "  kopt project LOG [--config CONFIG.json] [--loop LOOP.json] [--session-id ID]\n"
      "      LOG: a JSON array of events, session.jsonl or session.jsonl.zstd; prints {series, derived}\n"
      "  kopt parse [FILE]      every KERNEL_EVAL= line of FILE (or stdin): point, degraded point or rejected, and why;\n"
      "                         exit 1 when a line was rejected or none was found\n"
      "  kopt bench LOG [--feed N]   cold projection time, warm feed of N events (default 100), peak RSS\n"
      "  kopt report LOG -o run.html [--csv OUT.csv] [--json OUT.json] [--md OUT.md] [--lang zh|en] [--budget N]\n"
      "              [--config C.json]\n"
      "      offline, self-contained HTML report of a past session; the run as CSV / JSON / a markdown table\n",
      stderr);
  return 2;
}

bool read_file(const std::string& path, std::string& out, std::string& err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err = "cannot open " + path;
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

bool read_json_file(const std::string& path, kopt::json& out, std::string& err) {
  std::string text;
  if (!read_file(path, text, err)) return false;
  auto j = kopt::parse_json(text);
  if (!j) {
    err = path + ": not valid JSON";
    return false;
  }
  out = std::move(*j);
  return true;
}

std::string base_name(const std::string& path) {
  std::string b = path.substr(path.find_last_of('/') + 1);
  for (const char* ext : {".events.json", ".session.jsonl.zstd", ".jsonl.zstd", ".jsonl", ".json"}) {
    std::size_t n = std::strlen(ext);
    if (b.size() > n && b.compare(b.size() - n, n, ext) == 0) return b.substr(0, b.size() - n);
  }
  return b;
}

double now_ms() {
  using namespace std::chrono;
  return static_cast<double>(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

long peak_rss_kb() {
  std::ifstream st("/proc/self/status");
  std::string line;
  while (std::getline(st, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

struct Loaded {
  kopt::Projector projector;
  kopt::LogReadStats stats;
};

bool load(const std::string& log, const kopt::ProjectionConfig& cfg, Loaded& out, std::string& err) {
  out.projector = kopt::Projector(cfg);
  bool ok = kopt::read_log_file(log, [&](const kopt::json& ev) { out.projector.feed_event(ev); }, out.stats);
  if (!ok) {
    err = log + ": " + out.stats.error;
    return false;
  }
  return true;
}

int cmd_project(const std::vector<std::string>& args) {
  std::string log, config_path, loop_path, session_id;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--config" && i + 1 < args.size()) config_path = args[++i];
    else if (args[i] == "--loop" && i + 1 < args.size()) loop_path = args[++i];
    else if (args[i] == "--session-id" && i + 1 < args.size()) session_id = args[++i];
    else if (log.empty() && args[i].rfind("--", 0) != 0) log = args[i];
    else return usage();
  }
  if (log.empty()) return usage();
  std::string err;
  kopt::ProjectionConfig cfg;
  if (!config_path.empty()) {
    kopt::json c;
    if (!read_json_file(config_path, c, err)) {
      std::fprintf(stderr, "kopt: %s\n", err.c_str());
      return 1;
    }
    if (std::string e = cfg.apply_json(c); !e.empty()) {
      std::fprintf(stderr, "kopt: %s: %s\n", config_path.c_str(), e.c_str());
      return 1;
    }
  }
  kopt::json loop = kopt::json::object();
  if (!loop_path.empty() && !read_json_file(loop_path, loop, err)) {
    std::fprintf(stderr, "kopt: %s\n", err.c_str());
    return 1;
  }
  Loaded l;
  if (!load(log, cfg, l, err)) {
    std::fprintf(stderr, "kopt: %s\n", err.c_str());
    return 1;
  }
  if (!l.stats.error.empty()) std::fprintf(stderr, "kopt: warning: %s\n", l.stats.error.c_str());
  if (l.stats.skipped || l.projector.stats().skipped)
    std::fprintf(stderr, "kopt: skipped %zu unreadable line(s) and %zu malformed event(s)\n", l.stats.skipped,
                 l.projector.stats().skipped);
  if (session_id.empty()) session_id = base_name(log);
  std::string series = l.projector.series_json(session_id, now_ms());
  kopt::Series s = l.projector.series();
  std::string derived = kopt::js_stringify(kopt::derived_json(s, l.projector.has_user_task(), loop));
  std::string out = "{\"series\":" + series + ",\"derived\":" + derived + "}\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int cmd_parse(const std::vector<std::string>& args) {
  std::string text, err;
  if (args.empty()) {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else if (!read_file(args[0], text, err)) {
    std::fprintf(stderr, "kopt: %s\n", err.c_str());
    return 1;
  }
  // Every line that starts with KERNEL_EVAL=: a point, a point with degraded fields, or rejected,
  // by the same rules the panel applies (src/core/projection/contract.cpp says why).
  auto reports = kopt::contract_line_reports(text);
  std::size_t points = 0, degraded = 0, rejected = 0;
  for (const auto& r : reports) {
    using K = kopt::ContractLineReport::Kind;
    std::string body = r.payload ? kopt::js_stringify(*r.payload) : std::string();
    if (r.kind == K::Rejected) {
      ++rejected;
      std::printf("line %zu: rejected: %s%s%s\n", r.line + 1, r.reason.c_str(), body.empty() ? "" : " ", body.c_str());
      continue;
    }
    ++points;
    if (r.kind == K::Point) {
      std::printf("line %zu: point %s\n", r.line + 1, body.c_str());
      continue;
    }
    ++degraded;
    std::printf("line %zu: point, degraded %s\n", r.line + 1, body.c_str());
    for (const auto& n : r.notes) std::printf("  %s: %s\n", n.field.c_str(), n.reason.c_str());
  }
  std::printf("%zu contract line(s): %zu point(s) (%zu degraded), %zu rejected\n", reports.size(), points, degraded,
              rejected);
  // 0: every contract line is a point; 1: a line was rejected or there was no contract line at all
  return rejected == 0 && points > 0 ? 0 : 1;
}

int cmd_bench(const std::vector<std::string>& args) {
  if (args.empty()) return usage();
  std::size_t feed_n = 100;
  for (std::size_t i = 1; i + 1 < args.size(); ++i)
    if (args[i] == "--feed") feed_n = std::stoul(args[i + 1]);
  using clock = std::chrono::steady_clock;
  auto ms = [](clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };

  // Cold: read, parse, project, serialise. CPU time is reported too: on a loaded machine it is
  // the steadier figure.
  auto cpu_ms = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
  };
  double c0 = cpu_ms();
  auto t0 = clock::now();
  Loaded l;
  std::string err;
  if (!load(args[0], {}, l, err)) {
    std::fprintf(stderr, "kopt: %s\n", err.c_str());
    return 1;
  }
  std::string body = l.projector.series_json("bench", now_ms());
  double cold = ms(clock::now() - t0);
  double cold_cpu = cpu_ms() - c0;

  // Warm: hold back the last feed_n events, project the rest, then feed them and serialise.
  std::vector<kopt::json> events;
  kopt::LogReadStats st;
  kopt::read_log_file(args[0], [&](const kopt::json& ev) { events.push_back(ev); }, st);
  std::size_t split = events.size() > feed_n ? events.size() - feed_n : 0;
  kopt::Projector p;
  for (std::size_t i = 0; i < split; ++i) p.feed_event(events[i]);
  {
    std::vector<kopt::TextPiece> first;
    p.series_pieces(first, "bench", 0);
  }
  kopt::json tail = kopt::json::array();
  for (std::size_t i = split; i < events.size(); ++i) tail.push_back(events[i]);
  std::string tail_text = tail.dump();
  auto t1 = clock::now();
  auto parsed = kopt::parse_json(tail_text);
  auto t2 = clock::now();
  p.feed(*parsed);
  auto t3 = clock::now();
  // The body as the route takes it: the projector's shared pieces (series_json adds a copy).
  std::vector<kopt::TextPiece> warm_pieces;
  p.series_pieces(warm_pieces, "bench", 0);
  auto t4 = clock::now();
  double warm = ms(t4 - t1);
  // Serialising again with nothing new: the floor of a poll.
  std::vector<kopt::TextPiece> idle_pieces;
  p.series_pieces(idle_pieces, "bench", 0);
  double idle = ms(clock::now() - t4);
  std::size_t series_bytes = 1;  // the closing brace
  for (const auto& piece : warm_pieces) series_bytes += piece->size();

  std::printf("{\"events\":%zu,\"iterations\":%zu,\"seriesBytes\":%zu,\"coldMs\":%.3f,\"coldCpuMs\":%.3f,\"warmFeed\":%zu,"
              "\"warmMs\":%.4f,\"warmParseMs\":%.4f,\"warmFeedMs\":%.4f,\"warmSerializeMs\":%.4f,\"idleSerializeMs\":%.4f,"
              "\"peakRssKb\":%ld}\n",
              events.size(), p.series().iterations.size(), series_bytes, cold, cold_cpu, events.size() - split, warm,
              ms(t2 - t1), ms(t3 - t2), ms(t4 - t3), idle, peak_rss_kb());
  return body.empty() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (cmd == "project") return cmd_project(args);
    if (cmd == "parse") return cmd_parse(args);
    if (cmd == "bench") return cmd_bench(args);
    if (cmd == "report") return kopt::report_command(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kopt: internal error: %s\n", e.what());
    return 3;
  }
  return usage();
}
