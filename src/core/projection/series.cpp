#include "kopt/series.hpp"
#include "kopt/verdict.hpp"

namespace kopt {

namespace {

// Small writer for JSON objects with JavaScript-compatible values.
class ObjectWriter {
 public:
  explicit ObjectWriter(std::string& out) : out_(out) { out_.push_back('{'); }
  ~ObjectWriter() { out_.push_back('}'); }
  ObjectWriter(const ObjectWriter&) = delete;
  ObjectWriter& operator=(const ObjectWriter&) = delete;

  void key(std::string_view k) {
    if (!first_) out_.push_back(',');
    first_ = false;
    js_quote_to(out_, k);
    out_.push_back(':');
  }
  void str(std::string_view k, std::string_view v) { key(k), js_quote_to(out_, v); }
  void num(std::string_view k, double v) { key(k), out_ += js_number(v); }
  void boolean(std::string_view k, bool v) { key(k), out_ += v ? "true" : "false"; }
  void raw(std::string_view k, const json& v) { key(k), js_stringify_to(out_, v); }
  void opt(std::string_view k, const std::optional<std::string>& v) {
    if (v) str(k, *v);
  }
  void flag(std::string_view k, bool v) {
    if (v) boolean(k, true);
  }
  void strings(std::string_view k, const std::optional<std::vector<std::string>>& v) {
    if (!v) return;
    key(k);
    out_.push_back('[');
    for (std::size_t i = 0; i < v->size(); ++i) {
      if (i) out_.push_back(',');
      js_quote_to(out_, (*v)[i]);
    }
    out_.push_back(']');
  }
  std::string& out() { return out_; }

 private:
  std::string& out_;
  bool first_ = true;
};

void write_source(ObjectWriter& w, std::string_view key, const SourceHash& h) {
  w.key(key);
  ObjectWriter o(w.out());
  o.str("path", h.path);
  o.str("sha256", h.sha256);
}

// A list of them under `key`, as [{path, sha256}, …].
void write_sources(ObjectWriter& w, std::string& out, std::string_view key, const std::vector<SourceHash>& list) {
  w.key(key);
  out.push_back('[');
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i) out.push_back(',');
    ObjectWriter o(out);
    o.str("path", list[i].path);
    o.str("sha256", list[i].sha256);
  }
  out.push_back(']');
}

void write_change(std::string& out, const Change& c) {
  ObjectWriter w(out);
  w.raw("seq", c.seq.raw);
  w.str("tool", c.tool);
  w.str("kind", c.kind);
  w.opt("content", c.content);
  w.opt("oldText", c.oldText);
  w.opt("newText", c.newText);
  w.flag("replaceAll", c.replaceAll);
  w.flag("truncated", c.truncated);
}

}  // namespace

void write_json(std::string& out, const Iteration& it) {
  ObjectWriter w(out);
  w.raw("seq", it.seq.raw);
  w.str("tool", it.tool);
  w.opt("jobId", it.jobId);
  w.opt("evaluationId", it.evaluationId);
  w.opt("channel", it.channel);
  w.opt("command", it.command);
  if (it.commandLength) w.num("commandLength", static_cast<double>(*it.commandLength));
  w.opt("artifactPath", it.artifactPath);
  if (it.compiled) w.boolean("compiled", *it.compiled);
  if (it.correct) w.boolean("correct", *it.correct);
  if (it.latencyMs) w.num("latencyMs", *it.latencyMs);
  if (it.speedup) w.num("speedup", *it.speedup);
  if (it.noise) {
    auto interval = [&](const char* key, const std::optional<Interval>& v) {
      if (!v) return;
      w.key(key);
      out.push_back('[');
      out += js_number(v->lo);
      out.push_back(',');
      out += js_number(v->hi);
      out.push_back(']');
    };
    interval("latencyCi", it.noise->latencyCi);
    interval("referenceCi", it.noise->referenceCi);
    if (it.noise->samples) w.num("samples", static_cast<double>(*it.noise->samples));
  }
  if (it.vsBest != Versus::none) {
    w.str("vsBest", versus_name(it.vsBest));
    w.num("vsBestOf", it.bestBefore);
  }
  if (it.vsReference != Versus::none) w.str("vsReference", versus_name(it.vsReference));
  if (!it.metrics.empty()) {
    w.key("metrics");
    ObjectWriter m(w.out());
    for (const auto& [k, v] : it.metrics) m.num(k, v);
  }
  if (it.slurm) {
    w.key("slurm");
    ObjectWriter m(w.out());
    m.opt("jobId", it.slurm->jobId);
    m.opt("node", it.slurm->node);
    m.opt("partition", it.slurm->partition);
    m.opt("gpu", it.slurm->gpu);
  }
  w.flag("rewardHack", it.rewardHack);
  w.opt("error", it.error);
  w.flag("pending", it.pending);
  w.flag("finalized", it.finalized);
  w.strings("blocking", it.blocking);
  w.strings("advisory", it.advisory);
  w.strings("notMeasured", it.notMeasured);
  w.flag("evaluatorFailed", it.evaluatorFailed);
  w.str("verdict", verdict_of(it));
  w.str("trust", trust_of(it));
  w.strings("trustLowered", trust_lowered(it));
  if (it.workloadSubset) w.raw("workloadSubset", *it.workloadSubset);
  if (it.sources) {
    w.key("sources");
    ObjectWriter src(w.out());
    write_sources(src, out, "solution", it.sources->solution);
    if (it.sources->reference) write_source(src, "reference", *it.sources->reference);
    if (it.sources->inputs) write_source(src, "inputs", *it.sources->inputs);
    if (!it.sources->read.empty()) write_sources(src, out, "read", it.sources->read);
  }
  if (!it.changes.empty()) {
    w.key("changes");
    out.push_back('[');
    for (std::size_t i = 0; i < it.changes.size(); ++i) {
      if (i) out.push_back(',');
      write_change(out, it.changes[i]);
    }
    out.push_back(']');
  }
}

void write_json(std::string& out, const Plan& p) {
  ObjectWriter w(out);
  w.raw("seq", p.seq.raw);
  w.str("phase", p.phase);
  w.str("approach", p.approach);
  w.opt("hypothesis", p.hypothesis);
  w.opt("next", p.next);
}

void write_json(std::string& out, const Env& e) {
  ObjectWriter w(out);
  w.raw("seq", e.seq.raw);
  w.str("location", e.location);
  w.str("device", e.device);
  w.opt("constraint", e.constraint);
  if (e.versions) w.raw("versions", *e.versions);
  w.opt("probe", e.probe);
  w.opt("notes", e.notes);
}

void write_json(std::string& out, const Round& r) {
  ObjectWriter w(out);
  w.raw("seq", r.seq.raw);
  if (r.round) w.num("round", static_cast<double>(*r.round));
  if (r.evalsUsed) w.num("evalsUsed", static_cast<double>(*r.evalsUsed));
  if (r.budget) w.num("budget", static_cast<double>(*r.budget));
  w.opt("review", r.review);
  w.opt("reviewNote", r.reviewNote);
  w.flag("reviewFailed", r.reviewFailed);
  w.flag("wrapUp", r.wrapUp);
  w.flag("audit", r.audit);
  w.flag("challenge", r.challenge);
}

void write_json(std::string& out, const FinalizeCall& f) {
  ObjectWriter w(out);
  w.raw("seq", f.seq.raw);
  if (f.named) w.num("named", static_cast<double>(*f.named));
  w.key("replays");
  out.push_back('[');
  for (std::size_t i = 0; i < f.replays.size(); ++i) {
    if (i) out.push_back(',');
    out += std::to_string(f.replays[i]);
  }
  out.push_back(']');
}

template <class T>
static json via_text(const T& v) {
  std::string s;
  write_json(s, v);
  auto j = parse_json(s, 1u << 20);
  return j ? std::move(*j) : json();
}

json to_json(const Iteration& it) { return via_text(it); }
json to_json(const Plan& p) { return via_text(p); }
json to_json(const Env& e) { return via_text(e); }
json to_json(const Round& r) { return via_text(r); }

json to_json(const Series& s, std::string_view session_id, double updated_at) {
  json j = json::object();
  j["sessionId"] = std::string(session_id);
  j["updatedAt"] = updated_at;
  auto list = [](const auto& v) {
    json a = json::array();
    for (const auto& x : v) a.push_back(to_json(x));
    return a;
  };
  auto seqs = [](const std::vector<Seq>& v) {
    json a = json::array();
    for (const auto& x : v) a.push_back(x.raw);
    return a;
  };
  j["iterations"] = list(s.iterations);
  j["plans"] = list(s.plans);
  j["envs"] = list(s.envs);
  j["profileSeqs"] = seqs(s.profileSeqs);
  j["uncollectedSeqs"] = seqs(s.uncollectedSeqs);
  j["echoedSeqs"] = seqs(s.echoedSeqs);
  j["rounds"] = list(s.rounds);
  j["bestIndex"] = s.bestIndex ? json(*s.bestIndex) : json(nullptr);
  if (s.finalize) j["finalize"] = via_text(*s.finalize);
  return j;
}

}  // namespace kopt
