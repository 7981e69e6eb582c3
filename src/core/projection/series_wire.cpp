// Series from its wire form (P-2, P-3): the one reader of a /series body (or a vector's `series`),
// for the loop's and the chart's tests and oracles alike. Numbers outside what the projector could
// have written are left out: a round's budget must be a whole 1…1e9, bestIndex a row that exists.
#include <cmath>
#include <limits>

#include "kopt/series.hpp"

namespace kopt {

namespace {

Seq seq_of(const json& v) {
  Seq s;
  s.raw = v;
  s.num = as_number(v).value_or(std::nan(""));
  return s;
}

std::optional<std::string> opt_str(const json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<double> opt_num(const json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end()) return std::nullopt;
  return as_number(*it);
}

// A whole number in [lo, hi], else nothing.
std::optional<long long> opt_int(const json& o, const char* key, double lo = -9007199254740992.0, double hi = 9007199254740992.0) {
  auto v = opt_num(o, key);
  if (!v || !(*v >= lo && *v <= hi) || *v != std::floor(*v)) return std::nullopt;
  return static_cast<long long>(*v);
}

bool flag(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_boolean() && it->get<bool>();
}

std::optional<bool> opt_bool(const json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

std::optional<std::vector<std::string>> opt_strings(const json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& v : *it) if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

const json& arr(const json& o, const char* key) {
  static const json empty = json::array();
  auto it = o.find(key);
  return it != o.end() && it->is_array() ? *it : empty;
}

}  // namespace

Series series_from_wire(const json& body) {
  Series s;
  if (!body.is_object()) return s;
  for (const auto& j : arr(body, "iterations")) {
    if (!j.is_object()) continue;
    Iteration it;
    it.seq = seq_of(j.value("seq", json()));
    it.tool = opt_str(j, "tool").value_or("");
    it.jobId = opt_str(j, "jobId");
    it.evaluationId = opt_str(j, "evaluationId");
    it.channel = opt_str(j, "channel");
    it.command = opt_str(j, "command");
    if (auto n = opt_int(j, "commandLength", 0)) it.commandLength = static_cast<std::size_t>(*n);
    it.fullCommand = it.command.value_or("");
    it.artifactPath = opt_str(j, "artifactPath");
    it.compiled = opt_bool(j, "compiled");
    it.correct = opt_bool(j, "correct");
    it.latencyMs = opt_num(j, "latencyMs");
    it.speedup = opt_num(j, "speedup");
    {
      Noise n;
      auto interval = [&](const char* key) -> std::optional<Interval> {
        auto v = j.find(key);
        if (v == j.end() || !v->is_array() || v->size() != 2) return std::nullopt;
        auto lo = as_number((*v)[0]), hi = as_number((*v)[1]);
        return lo && hi ? valid_interval(*lo, *hi, std::numeric_limits<double>::quiet_NaN()) : std::nullopt;
      };
      n.latencyCi = interval("latencyCi");
      n.referenceCi = interval("referenceCi");
      n.samples = opt_int(j, "samples", 1, 1e9);
      if (n.latencyCi || n.referenceCi || n.samples) it.noise = std::move(n);
      if (auto v = opt_str(j, "vsBest")) it.vsBest = versus_from(*v);
      if (auto b = opt_int(j, "vsBestOf", 0, 4294967294.0)) it.bestBefore = static_cast<std::uint32_t>(*b);
      if (auto v = opt_str(j, "vsReference")) it.vsReference = versus_from(*v);
    }
    if (auto m = j.find("metrics"); m != j.end() && m->is_object()) {
      for (const auto& [k, v] : m->items()) {
        if (auto n = as_number(v)) it.metrics.emplace_back(k, *n);
      }
    }
    if (auto m = j.find("slurm"); m != j.end() && m->is_object()) {
      SlurmWhere w{opt_str(*m, "jobId"), opt_str(*m, "node"), opt_str(*m, "partition"), opt_str(*m, "gpu")};
      if (w.jobId || w.node || w.partition || w.gpu) it.slurm = std::move(w);
    }
    it.rewardHack = flag(j, "rewardHack");
    it.pending = flag(j, "pending");
    it.finalized = flag(j, "finalized");
    it.evaluatorFailed = flag(j, "evaluatorFailed");
    it.error = opt_str(j, "error");
    it.blocking = opt_strings(j, "blocking");
    it.advisory = opt_strings(j, "advisory");
    it.notMeasured = opt_strings(j, "notMeasured");
    if (auto w = j.find("workloadSubset"); w != j.end()) it.workloadSubset = *w;
    for (const auto& c : arr(j, "changes")) {
      if (!c.is_object()) continue;
      Change ch;
      ch.seq = seq_of(c.value("seq", json()));
      ch.tool = opt_str(c, "tool").value_or("");
      ch.kind = opt_str(c, "kind").value_or("");
      ch.filePath = opt_str(c, "filePath").value_or(opt_str(c, "file_path").value_or(""));
      ch.content = opt_str(c, "content");
      ch.oldText = opt_str(c, "oldText");
      ch.newText = opt_str(c, "newText");
      ch.replaceAll = flag(c, "replaceAll");
      ch.truncated = flag(c, "truncated");
      it.changes.push_back(std::move(ch));
    }
    s.iterations.push_back(std::move(it));
  }
  for (const auto& j : arr(body, "plans")) {
    if (!j.is_object()) continue;
    Plan p;
    p.seq = seq_of(j.value("seq", json()));
    p.phase = opt_str(j, "phase").value_or("");
    p.approach = opt_str(j, "approach").value_or("");
    p.hypothesis = opt_str(j, "hypothesis");
    p.next = opt_str(j, "next");
    s.plans.push_back(std::move(p));
  }
  for (const auto& j : arr(body, "envs")) {
    if (!j.is_object()) continue;
    Env e;
    e.seq = seq_of(j.value("seq", json()));
    e.location = opt_str(j, "location").value_or("");
    e.device = opt_str(j, "device").value_or("");
    e.constraint = opt_str(j, "constraint");
    e.probe = opt_str(j, "probe");
    e.notes = opt_str(j, "notes");
    if (auto v = j.find("versions"); v != j.end() && v->is_object()) e.versions = *v;
    s.envs.push_back(std::move(e));
  }
  for (const auto& v : arr(body, "profileSeqs")) s.profileSeqs.push_back(seq_of(v));
  for (const auto& v : arr(body, "uncollectedSeqs")) s.uncollectedSeqs.push_back(seq_of(v));
  for (const auto& v : arr(body, "echoedSeqs")) s.echoedSeqs.push_back(seq_of(v));
  for (const auto& j : arr(body, "rounds")) {
    if (!j.is_object()) continue;
    Round r;
    r.seq = seq_of(j.value("seq", json()));
    r.round = opt_int(j, "round");
    r.evalsUsed = opt_int(j, "evalsUsed");
    r.budget = opt_int(j, "budget", 1, 1e9);
    r.review = opt_str(j, "review");
    r.reviewNote = opt_str(j, "reviewNote");
    r.reviewFailed = flag(j, "reviewFailed");
    r.wrapUp = flag(j, "wrapUp");
    r.audit = flag(j, "audit");
    r.challenge = flag(j, "challenge");
    s.rounds.push_back(std::move(r));
  }
  if (auto n = opt_int(body, "bestIndex", 0); n && static_cast<std::size_t>(*n) < s.iterations.size())
    s.bestIndex = static_cast<std::size_t>(*n);
  if (auto f = body.find("finalize"); f != body.end() && f->is_object()) {
    FinalizeCall fc;
    fc.seq = seq_of(f->value("seq", json()));
    if (auto n = opt_int(*f, "named", 0); n && static_cast<std::size_t>(*n) < s.iterations.size()) fc.named = static_cast<std::size_t>(*n);
    for (const auto& v : arr(*f, "replays"))
      if (v.is_number_unsigned() && v.get<std::size_t>() < s.iterations.size()) fc.replays.push_back(v.get<std::size_t>());
    s.finalize = std::move(fc);
  }
  return s;
}

}  // namespace kopt
