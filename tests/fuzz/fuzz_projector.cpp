// Event ingestion + projection. Half the inputs are read as JSON text fed in chunks; the other
// half build event sequences from a small vocabulary so the fuzzer reaches deep projection states
// (calls, results out of order, duplicate ids, finalize, replay blocks, loop messages).
#include <cstddef>
#include <cstdint>
#include <string>

#include "kopt/derived.hpp"
#include "kopt/projector.hpp"

namespace {

using kopt::json;

struct Bytes {
  const std::uint8_t* d;
  std::size_t n, i = 0;
  std::uint8_t next() { return i < n ? d[i++] : 0; }
  bool done() const { return i >= n; }
  std::string text(std::size_t max) {
    std::size_t len = next() % (max + 1);
    std::string s;
    while (len-- && !done()) s.push_back(static_cast<char>(next()));
    return s;
  }
};

const char* kNames[] = {"bash", "kernel_evaluate", "mcp__x__kernel_evaluate", "kernel_finalize", "run_finalize",
                        "job_output", "write", "edit", "kernel_plan", "kernel_env", "kernel_profile", "read"};
const char* kTexts[] = {
    "KERNEL_EVAL={\"artifact\":\"k.cu\",\"correct\":true,\"latency_ms\":1.5}",
    "KERNEL_EVAL={\"artifact\":\"k.cu\",\"correct\":false,\"error\":\"x\"}",
    "KERNEL_EVAL={\"artifact\":\"a/k.cu\",\"correct\":true,\"latency_ms\":-1,\"speedup\":2}",
    "[replay] ./bench --x\nKERNEL_EVAL={\"artifact\":\"k.cu\",\"correct\":true,\"latency_ms\":1.2}",
    "started background job j1\n",
    "{\"correct\":true,\"latency_ms\":0.5,\"evaluation_id\":\"e1\",\"native_metrics\":{\"speedup\":3}}",
    "[kernel-loop round 2] 3/5 evaluations used\nSupervisor review: OK. fine",
    "[kernel-loop wrap-up] 5/5 evaluations used",
};
const char* kCommands[] = {"./bench", "cat log", "echo KERNEL_EVAL={}", "ncu -o r ./a", "sudo -u x tail -f l", ""};

json build_event(Bytes& b, int seq) {
  std::uint8_t kind = b.next() % 4;
  std::string id = "c" + std::to_string(b.next() % 6);
  int s = (b.next() % 8 == 0) ? seq - 3 : seq;  // seq may go backwards
  if (kind == 0) {
    json args = json::object();
    std::uint8_t a = b.next();
    if (a & 1) args["command"] = kCommands[b.next() % 6];
    if (a & 2) args["artifact_path"] = (a & 4) ? "k.cu" : "";
    if (a & 8) args["evaluation_id"] = "e1";
    if (a & 16) args["job_id"] = "j1";
    if (a & 32) args["file_path"] = "k.cu", args["content"] = b.text(40);
    if (a & 64) args["phase"] = "p", args["approach"] = b.text(10);
    std::string arguments = (a & 128) ? b.text(60) : kopt::js_stringify(args);
    return json{{"type", "tool/call"}, {"seq", s}, {"data", {{"callId", id}, {"name", kNames[b.next() % 12]}, {"arguments", arguments}}}};
  }
  if (kind == 1 || kind == 2) {
    std::string text = (b.next() % 4 == 0) ? b.text(80) : kTexts[b.next() % 8];
    return json{{"type", "tool/result"}, {"seq", s},
                {"data", {{"callId", id}, {"message", {{"content", json::array({{{"type", "text"}, {"text", text}}})}}}}}};
  }
  return json{{"type", "user/message"}, {"seq", s},
              {"data", {{"content", json::array({{{"type", "text"}, {"text", kTexts[6 + b.next() % 2]}}})},
                        {"source", {{"kind", (b.next() & 1) ? "plugin" : "user"}, {"plugin", "kernel-opt"}}}}}};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  kopt::Projector p;
  if (data[0] & 1) {
    std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    if (auto j = kopt::parse_json(text)) {
      p.feed(*j);
      p.feed(*j);  // the same events again: duplicate ids and results
    }
  } else {
    Bytes b{data + 1, size - 1};
    int seq = 0;
    while (!b.done()) {
      p.feed_event(build_event(b, seq++));
      if (b.next() % 5 == 0) (void)p.series_json("f", 0);
    }
  }
  std::string body = p.series_json("f", 0);
  if (!kopt::parse_json(body)) __builtin_trap();  // the body must always be valid JSON
  (void)kopt::derived_json(p.series(), p.has_user_task(), kopt::json{{"state", {{"budget", 3}}}});
  return 0;
}
