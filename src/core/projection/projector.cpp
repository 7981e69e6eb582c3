#include "kopt/projector.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "kopt/anchors.hpp"
#include "kopt/run_facts.hpp"
#include "kopt/contract.hpp"
#include "kopt/derived.hpp"
#include "kopt/events.hpp"
#include "kopt/match.hpp"
#include "kopt/sha256.hpp"
#include "kopt/shell.hpp"
#include "kopt/text_rope.hpp"
#include "kopt/utf16.hpp"

namespace kopt {

namespace {

constexpr std::size_t kNoPoint = std::numeric_limits<std::size_t>::max();
// Pending changes: K-3 only ever takes the last 8 matching one path, so 8 per path are kept; the
// number of distinct paths is bounded so a hostile log cannot grow memory without limit.
constexpr std::size_t kChangesPerPath = 8;
constexpr std::size_t kMaxPendingChanges = 4096;

enum class Branch : std::uint8_t { None, Plan, Env, Profile, Finalize, Change, Bench, Shell, Job };

struct Call {
  std::string name;
  Seq seq;
  Branch branch = Branch::None;
  std::size_t point = kNoPoint;  // bench
  bool evaluate_tool = false;    // bench: the plugin's own evaluator tool by its exact name (DV-13)
  bool has_command = false;      // shell: a non-empty string command, in `arg`
  bool has_job_id = false;       // job: a string job_id, in `arg`
  // shell: the full command; job: the job id (a call is one or the other). A call is kept whole
  // only until its result claims it (Impl::calls), then as one bit (Impl::settled_calls).
  std::string arg;
};

Seq make_seq(const json& ev) {
  Seq s;
  auto it = ev.find("seq");
  if (it != ev.end()) s.raw = *it;
  auto n = as_number(s.raw);
  s.num = n ? *n : std::numeric_limits<double>::quiet_NaN();
  return s;
}

const std::string* str_field(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return nullptr;
  return &it->get_ref<const std::string&>();
}

const std::string* nonempty_str(const json& obj, const char* key) {
  const std::string* s = str_field(obj, key);
  return s && !s->empty() ? s : nullptr;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "(\d+)" at s[i..]: digits as a number (saturating), advancing i.
std::optional<long long> read_digits(std::string_view s, std::size_t& i) {
  std::size_t b = i;
  long long v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    v = v > (std::numeric_limits<long long>::max() - 9) / 10 ? std::numeric_limits<long long>::max()
                                                               : v * 10 + (s[i] - '0');
    ++i;
  }
  if (i == b) return std::nullopt;
  return v;
}

// First match of "(\d+)/(\d+) evaluations used".
bool find_counters(std::string_view text, long long& used, long long& budget) {
  std::size_t pos = 0;
  while ((pos = text.find(anchors::kCountersSuffix, pos)) != std::string_view::npos) {
    // Walk back over "\d+/\d+" ending at pos; the leftmost start wins as in a regex scan, but
    // the earliest suffix with a valid prefix is the first match overall.
    std::size_t e = pos, i = e;
    while (i > 0 && text[i - 1] >= '0' && text[i - 1] <= '9') --i;
    if (i < e && i > 0 && text[i - 1] == '/') {
      std::size_t slash = i - 1, j = slash;
      while (j > 0 && text[j - 1] >= '0' && text[j - 1] <= '9') --j;
      if (j < slash) {
        std::size_t k = j;
        auto a = read_digits(text, k);
        k = slash + 1;
        auto b = read_digits(text, k);
        if (a && b) {
          used = *a;
          budget = *b;
          return true;
        }
      }
    }
    pos += 1;
  }
  return false;
}

// JavaScript \S: anything but whitespace (ASCII and the Unicode spaces).
std::size_t non_space_run(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && js_trim_start(s.substr(i)).size() == s.size() - i) ++i;
  return i;
}

std::optional<std::string> job_announcement(std::string_view text) {
  std::size_t pos = 0;
  while ((pos = text.find(anchors::kBackgroundJobAnnounce, pos)) != std::string_view::npos) {
    std::string_view rest = text.substr(pos + anchors::kBackgroundJobAnnounce.size());
    std::size_t n = non_space_run(rest);
    if (n > 0) return std::string(rest.substr(0, n));
    pos += 1;
  }
  return std::nullopt;
}

// A key held for the whole session as 128 bits of its SHA-256: each point's dedup key (its payload's
// text, ~200 bytes) and each settled call's id (at 1M events 52k and 135k of them). The dedup key
// is the agent's to write, so the digest is cryptographic: dropping a later point as a "duplicate"
// of an earlier one would take a SHA-256 prefix collision.
struct Key128 {
  std::uint64_t hi = 0, lo = 0;
  bool operator==(const Key128&) const = default;
};
struct Key128Hash {
  std::size_t operator()(const Key128& k) const noexcept { return static_cast<std::size_t>(k.lo ^ (k.hi * 0x9E3779B97F4A7C15ULL)); }
};
Key128 key128(std::string_view text) {
  const std::array<std::uint32_t, 8> w = Sha256().update(text).words();
  return {(std::uint64_t{w[0]} << 32) | w[1], (std::uint64_t{w[2]} << 32) | w[3]};
}

}  // namespace

struct Projector::Impl {
  ProjectionConfig cfg;
  FeedStats stats;
  std::uint64_t version = 0;
  bool user_task = false;

  std::unordered_map<std::string, Call> calls;          // call id -> a call whose result is still to claim
  std::unordered_map<Key128, bool, Key128Hash> settled_calls;  // call id -> reads_only(name), for every other call
  std::vector<Iteration> iterations;
  std::vector<Plan> plans;
  std::vector<Env> envs;
  std::vector<Round> rounds;
  std::vector<Seq> profile_seqs, uncollected, echoed;
  std::unordered_map<Key128, std::size_t, Key128Hash> dedup;  // compact payload -> point
  std::unordered_map<std::string, std::string> jobs;   // job id -> launching command
  std::vector<Change> pending_changes;
  std::unordered_set<std::string> finalized_ids;
  std::unordered_set<std::string> finalized_artifact_set;
  // Finalize marks and best are kept up to date as points settle (a point's measurement never
  // changes once settled), so a snapshot costs nothing per point.
  std::unordered_map<std::string, std::vector<std::size_t>> points_by_eval_id;
  struct ArtifactBest {
    std::string artifact;
    std::size_t point;
  };
  std::vector<ArtifactBest> artifact_best;  // one per unique finalized artifact (H-3)
  std::vector<std::uint32_t> fin_refs;      // reasons a point is finalized (H-2 id, H-3 artifacts)
  // The latest finalize call by seq (H-8): what it named, and its own replay points (one record, not one per call).
  struct LatestFinalize {
    Seq seq;
    std::optional<std::string> id, artifact;
    std::vector<std::size_t> replays;
  };
  std::optional<LatestFinalize> latest_finalize;
  std::optional<std::size_t> best;          // I-1
  std::size_t min_dirty = kNoPoint;

  // A point's text lives in iter_text only (no second copy per point): in_text[i] says that
  // iter_text holds point i's current text; a point changed or added since is written when asked.
  std::vector<char> in_text;
  // The /series lists' texts, kept between calls as shared blocks: the iterations are cut back to
  // the first fragment that changed (usually near the end); the other lists only grow.
  TextRope iter_text, plans_text, envs_text, rounds_text, profile_text, uncollected_text, echoed_text;
  std::string item_scratch;
  std::string kept;                  // series_pieces: the current texts a cut drops, copied aside
  std::vector<std::size_t> kept_at;  // where each dropped point's text starts in kept
  std::string joined;  // series_json's copy

  // Points changed in place since the last take_touched() (for /series deltas): each listed once,
  // at most kMaxTouched of them; past that only the overflow is known.
  static constexpr std::size_t kMaxTouched = 1 << 16;
  std::vector<std::uint32_t> touched;
  std::vector<char> touched_mark;
  bool touched_overflow = false;
  // The first iteration update_outline must copy again (every change in place goes through touch).
  std::size_t outline_from = 0;
  // The run's title, models and times (run_facts.hpp), and the `time` of the event being fed (NaN:
  // none), which the points it settles keep.
  RunFacts facts;
  double event_time = std::numeric_limits<double>::quiet_NaN();

  void touch(std::size_t point) {
    if (point >= in_text.size()) return;
    in_text[point] = 0;
    min_dirty = std::min(min_dirty, point);
    outline_from = std::min(outline_from, point);
    if (touched_mark.size() <= point) {
      reserve_room(touched_mark, iterations.size());
      touched_mark.resize(iterations.size(), 0);
    }
    if (touched_mark[point]) return;
    if (touched.size() >= kMaxTouched) {
      touched_overflow = true;
      return;
    }
    touched_mark[point] = 1;
    touched.push_back(static_cast<std::uint32_t>(point));
  }

  // Point i's text (the wire form, with finalized as it stands now), appended to out.
  void render(std::string& out, std::size_t i) {
    Iteration& it = iterations[i];
    bool keep = it.finalized;
    it.finalized = finalized(i);
    write_json(out, it);
    it.finalized = keep;
  }

  // Appends a point; `settled` when its measurement is complete (everything but a pending bench call).
  std::size_t add_point(Iteration it, bool settled = true) {
    it.time = event_time;
    reserve_room(iterations, iterations.size() + 1);
    reserve_room(in_text, in_text.size() + 1);
    reserve_room(fin_refs, fin_refs.size() + 1);
    iterations.push_back(std::move(it));
    in_text.push_back(0);
    fin_refs.push_back(0);
    std::size_t i = iterations.size() - 1;
    min_dirty = std::min(min_dirty, i);
    if (settled) settle(i);
    return i;
  }

  bool finalized(std::size_t i) const { return iterations[i].finalized || fin_refs[i] > 0; }

  static bool faster(const Iteration& a, std::size_t ai, const Iteration& b, std::size_t bi) {
    return *a.latencyMs < *b.latencyMs || (*a.latencyMs == *b.latencyMs && ai < bi);
  }

  void add_fin_ref(std::size_t i) {
    ++fin_refs[i];
    touch(i);
  }
  void drop_fin_ref(std::size_t i) {
    --fin_refs[i];
    touch(i);
  }

  // A point's measurement is now final: update best (I-1) and the finalize marks (H-2, H-3).
  void settle(std::size_t i) {
    // N-2: labelled against the best settled before it (what the panel showed when it came in).
    label_point(iterations[i], best ? &iterations[*best] : nullptr, best.value_or(0));
    const Iteration& it = iterations[i];
    if (it.evaluationId) {
      points_by_eval_id[*it.evaluationId].push_back(i);
      if (finalized_ids.count(*it.evaluationId)) add_fin_ref(i);
    }
    if (it.is_replay() || !it.honest_measured()) return;
    if (!best || faster(it, i, iterations[*best], *best)) best = i;
    if (!it.artifactPath) return;
    for (auto& ab : artifact_best) {
      if (!same_path(*it.artifactPath, ab.artifact)) continue;
      if (ab.point != kNoPoint && !faster(it, i, iterations[ab.point], ab.point)) continue;
      if (ab.point != kNoPoint) drop_fin_ref(ab.point);
      ab.point = i;
      add_fin_ref(i);
    }
  }

  void finalize_id(const std::string& id) {
    if (!finalized_ids.insert(id).second) return;
    if (auto p = points_by_eval_id.find(id); p != points_by_eval_id.end())
      for (std::size_t i : p->second) add_fin_ref(i);
  }

  // H-8: a finalize call that names something, later by seq than the one on record, takes its place (a
  // seq that is no number orders by arrival); the same call met again keeps its replays.
  void note_finalize_call(const Seq& seq, const std::string* id, const std::string* artifact) {
    if (!id && !artifact) return;  // a call that names nothing (no string id, no artifact) claims nothing
    LatestFinalize next{seq, id ? std::optional<std::string>(*id) : std::nullopt,
                        artifact ? std::optional<std::string>(*artifact) : std::nullopt, {}};
    if (latest_finalize) {
      const LatestFinalize& was = *latest_finalize;
      if (seq.num < was.seq.num) return;
      if (seq.raw == was.seq.raw && next.id == was.id && next.artifact == was.artifact) return;
    }
    latest_finalize = std::move(next);
  }

  std::optional<FinalizeCall> finalize_record() const {
    if (!latest_finalize) return std::nullopt;
    const LatestFinalize& lf = *latest_finalize;
    FinalizeCall f;
    f.seq = lf.seq;
    f.replays = lf.replays;
    // The evaluation it names by id (its latest point); else, or when no point has that id, its artifact's best (H-3).
    if (lf.id)
      if (auto p = points_by_eval_id.find(*lf.id); p != points_by_eval_id.end() && !p->second.empty()) f.named = p->second.back();
    if (!f.named && lf.artifact)
      for (const auto& ab : artifact_best)
        if (ab.artifact == *lf.artifact && ab.point != kNoPoint) f.named = ab.point;
    return f;
  }

  void finalize_artifact(const std::string& art) {
    if (!finalized_artifact_set.insert(art).second) return;
    ArtifactBest ab{art, kNoPoint};
    for (std::size_t i = 0; i < iterations.size(); ++i) {
      const Iteration& it = iterations[i];
      if (it.pending || it.is_replay() || !it.honest_measured() || !it.artifactPath || !same_path(*it.artifactPath, art))
        continue;
      if (ab.point == kNoPoint || faster(it, i, iterations[ab.point], ab.point)) ab.point = i;
    }
    if (ab.point != kNoPoint) add_fin_ref(ab.point);
    artifact_best.push_back(std::move(ab));
  }

  // ---- changes (K) ----
  void add_change(Change c) {
    std::size_t same = 0;
    for (const auto& p : pending_changes)
      if (p.filePath == c.filePath) ++same;
    if (same >= kChangesPerPath)
      for (auto it = pending_changes.begin(); it != pending_changes.end(); ++it)
        if (it->filePath == c.filePath) {
          pending_changes.erase(it);
          break;
        }
    if (pending_changes.size() >= kMaxPendingChanges) pending_changes.erase(pending_changes.begin());
    pending_changes.push_back(std::move(c));
  }

  std::vector<Change> matching_changes(const std::optional<std::string>& path) const {
    std::vector<Change> out;
    if (!path) return out;
    for (auto it = pending_changes.rbegin(); it != pending_changes.rend() && out.size() < 8; ++it)
      if (same_path(it->filePath, *path)) out.push_back(*it);
    return {out.rbegin(), out.rend()};
  }

  // ---- events ----
  void feed_event(const json& ev) {
    ++stats.events;
    if (!ev.is_object()) {
      ++stats.skipped;
      return;
    }
    const std::string* type = str_field(ev, "type");
    if (!type) return;
    const bool projected = projected_type(*type);
    if (projected || run_fact_type(*type)) facts.take(ev);
    if (!projected) return;
    auto t = ev.find("time");
    event_time = t != ev.end() && t->is_number() ? t->get<double>() : std::numeric_limits<double>::quiet_NaN();
    // One handler per type projected_type names (events.hpp; the log reader passes over the rest unbuilt).
    if (*type == "tool/call") on_call(ev);
    else if (*type == "tool/result") on_result(ev);
    else if (*type == "user/message") on_user_message(ev);
  }

  void on_call(const json& ev) {
    auto d = ev.find("data");
    if (d == ev.end() || !d->is_object()) {
      ++stats.skipped;
      return;
    }
    const std::string* id = str_field(*d, "callId");
    const std::string* name = str_field(*d, "name");
    if (!id || !name) {
      ++stats.skipped;
      return;
    }
    ++version;
    Call call;
    call.name = *name;
    call.seq = make_seq(ev);
    const std::string* args_text = str_field(*d, "arguments");
    json args = json::object();
    if (args_text)
      if (auto parsed = parse_result_json(*args_text)) args = std::move(*parsed);

    if (*name == kPlanTool) {
      call.branch = Branch::Plan;
      on_plan(call, args);
    } else if (*name == kEnvTool) {
      call.branch = Branch::Env;
      on_env(call, args);
    } else if (matches_any_tool(*name, cfg.profileTools)) {
      call.branch = Branch::Profile;
      profile_seqs.push_back(call.seq);
    } else if (matches_any_tool(*name, cfg.finalizeTools)) {
      call.branch = Branch::Finalize;
      const std::string* eid = str_field(args, "evaluation_id");
      if (eid) finalize_id(*eid);
      auto ap = args.find("artifact_path");
      const json* art = nullptr;
      if (ap != args.end() && !ap->is_null()) art = &*ap;
      else if (auto a = args.find("artifact"); a != args.end()) art = &*a;
      const std::string* artifact = nullptr;
      if (art && art->is_string() && !art->get_ref<const std::string&>().empty()) {
        artifact = &art->get_ref<const std::string&>();
        finalize_artifact(*artifact);
      }
      note_finalize_call(call.seq, eid, artifact);
    } else if (matches_any_tool(*name, cfg.changeTools)) {
      call.branch = Branch::Change;
      on_change(call, args);
    } else if (matches_any_tool(*name, cfg.benchTools)) {
      call.branch = Branch::Bench;
      call.evaluate_tool = *name == anchors::kEvaluateTool;
      Iteration it;
      it.seq = call.seq;
      it.tool = *name;
      it.pending = true;
      if (const std::string* ap = nonempty_str(args, "artifact_path")) it.artifactPath = *ap;
      else if (call.evaluate_tool) it.artifactPath = first_solution(args);
      if (auto w = args.find("workload_indices"); w != args.end())
        if (auto ws = workload_subset(*w)) it.workloadSubset = *ws;
      it.changes = matching_changes(it.artifactPath);
      pending_changes.clear();
      call.point = add_point(std::move(it), /*settled=*/false);
    } else if (matches_any_tool(*name, cfg.shellTools)) {
      call.branch = Branch::Shell;
      if (const std::string* cmd = nonempty_str(args, "command")) {
        call.has_command = true;
        call.arg = *cmd;
        if (matches_profile_command(*cmd, cfg.profileCommands)) profile_seqs.push_back(call.seq);
      }
    } else if (matches_any_tool(*name, cfg.jobTools)) {
      call.branch = Branch::Job;
      if (const std::string* j = str_field(args, "job_id")) {
        call.has_job_id = true;
        call.arg = *j;
      }
    }
    if (call.branch == Branch::Bench || call.branch == Branch::Shell || call.branch == Branch::Job || call.branch == Branch::Finalize) {
      settled_calls.erase(key128(*id));
      calls.insert_or_assign(*id, std::move(call));
    } else {
      calls.erase(*id);
      settle_call(*id, call.name);
    }
  }

  void on_plan(const Call& call, const json& args) {
    const std::string* phase = str_field(args, "phase");
    const std::string* approach = str_field(args, "approach");
    if (!phase || !approach) return;
    Plan p{call.seq, *phase, *approach, {}, {}};
    if (const std::string* h = nonempty_str(args, "hypothesis")) p.hypothesis = *h;
    if (const std::string* n = nonempty_str(args, "next")) p.next = *n;
    plans.push_back(std::move(p));
  }

  void on_env(const Call& call, const json& args) {
    const std::string* location = str_field(args, "location");
    const std::string* device = str_field(args, "device");
    if (!location || !device) return;
    Env e{call.seq, *location, *device, {}, {}, {}, {}};
    if (const std::string* s = nonempty_str(args, "constraint")) e.constraint = *s;
    if (const std::string* s = nonempty_str(args, "probe")) e.probe = *s;
    if (const std::string* s = nonempty_str(args, "notes")) e.notes = *s;
    if (auto v = args.find("versions"); v != args.end() && v->is_object()) {
      json kept = json::object();
      for (auto it = v->begin(); it != v->end(); ++it) {
        if (it.value().is_string() && !it.value().get_ref<const std::string&>().empty()) kept[it.key()] = it.value();
        else if (auto n = as_number(it.value())) kept[it.key()] = js_number(*n);
      }
      if (!kept.empty()) e.versions = std::move(kept);
    }
    envs.push_back(std::move(e));
  }

  void on_change(const Call& call, const json& args) {
    const std::string* path = nonempty_str(args, "file_path");
    if (!path) return;
    Change c;
    c.seq = call.seq;
    c.tool = call.name;
    c.filePath = *path;
    bool cut = false;
    if (const std::string* content = str_field(args, "content")) {
      c.kind = "write";
      c.content = utf16_cap(*content, 12000, &cut);
      c.truncated = cut;
    } else {
      const std::string* o = str_field(args, "old_string");
      const std::string* n = str_field(args, "new_string");
      if (!o || !n) return;
      c.kind = "edit";
      bool cut_o = false, cut_n = false;
      c.oldText = utf16_cap(*o, 3000, &cut_o);
      c.newText = utf16_cap(*n, 3000, &cut_n);
      c.truncated = cut_o || cut_n;
      if (auto r = args.find("replace_all"); r != args.end() && r->is_boolean() && r->get<bool>()) c.replaceAll = true;
    }
    add_change(std::move(c));
  }

  // A reading tool's result may quote a contract line without reporting one (no uncollected seq).
  static bool reads_only(std::string_view name) {
    return name == "read" || name == "glob" || name == "grep" || name == "notebook_read" || name == "skill";
  }
  void uncollect(const Seq& result_seq, bool reading, std::size_t payloads) {
    if (reading) return;
    for (std::size_t i = 0; i < payloads; ++i) uncollected.push_back(result_seq);
  }
  void uncollect(const Seq& result_seq, const Call& call, std::size_t payloads) { uncollect(result_seq, reads_only(call.name), payloads); }
  // A call whose result claims nothing (any branch but bench, shell, job and finalize), or one
  // answered already: a later result of it only counts its contract lines as uncollected, so all
  // that is kept of it is whether it reads (every call is kept for the whole session).
  void settle_call(const std::string& id, std::string_view name) {
    settled_calls.insert_or_assign(key128(id), reads_only(name));
  }

  void on_result(const json& ev) {
    auto d = ev.find("data");
    if (d == ev.end() || !d->is_object()) {
      ++stats.skipped;
      return;
    }
    auto id = result_call_id(*d);
    if (!id) return;
    auto found = calls.find(*id);
    auto settled = found == calls.end() ? settled_calls.find(key128(*id)) : settled_calls.end();
    if (found == calls.end() && settled == settled_calls.end()) return;
    ++version;
    Seq rseq = make_seq(ev);
    static const json kNull;
    auto m = d->find("message");
    std::string text = result_text(m != d->end() ? *m : kNull);

    if (found == calls.end()) {
      uncollect(rseq, settled->second, contract_payloads(text).size());
      return;
    }
    // The first result of a bench, shell, job or finalize call claims it; the call is settled then.
    Call& call = found->second;
    switch (call.branch) {
      case Branch::Bench: on_bench_result(call, text, m != d->end() && result_is_error(*m)); break;
      case Branch::Shell: on_shell_result(call, text); break;
      case Branch::Job: on_job_result(call, text); break;
      case Branch::Finalize: on_finalize_result(call, rseq, text); break;
      default: break;
    }
    settle_call(*id, call.name);
    calls.erase(found);
  }

  // DV-13: kernel_evaluate's `solution` argument (a path, or a list whose first entry) names the artifact
  // when no artifact_path was given, as kopt-bench names it.
  static std::optional<std::string> first_solution(const json& args) {
    auto s = args.find("solution");
    if (s == args.end()) return std::nullopt;
    const json* first = &*s;
    if (s->is_array()) {
      if (s->empty()) return std::nullopt;
      first = &(*s)[0];
    }
    if (!first->is_string() || first->get_ref<const std::string&>().empty()) return std::nullopt;
    return first->get<std::string>();
  }

  void on_bench_result(const Call& call, std::string_view text, bool is_error) {
    Iteration& it = iterations[call.point];
    it.pending = false;
    it.time = event_time;
    ToolResult r = parse_tool_result(text);
    if (auto& p = r.payload) {
      // DV-13: measured by the plugin's evaluator only through the tool of that exact name, in a result
      // that is no error, carrying the plugin's mark; nothing a shell line, a job or another tool prints.
      if (call.evaluate_tool && !is_error && is_plugin_measurement(*p)) {
        it.plugin = true;
        it.sources = measured_sources(*p);
      }
      apply_payload_fields(it, *p);
      if (const std::string* eid = str_field(*p, "evaluation_id")) it.evaluationId = *eid;
      if (!r.rejected.empty())  // limits.md §5: a value a double cannot carry is an error, with its reason
        it.error = "rejected non-finite number: " + r.rejected + (it.error ? "; " + *it.error : "");
    } else if (call.evaluate_tool && is_error) {
      // DV-13: the plugin's evaluation ended without a verdict (the host's own result: the user's stop
      // aborted it, or its arguments were refused): the row says so instead of showing nothing.
      std::string why(js_trim(text.substr(0, std::min<std::size_t>(text.find('\n'), 300))));
      it.error = why.empty() ? std::string("the evaluation ended without a result") : why;
    }
    touch(call.point);
    settle(call.point);
  }

  Iteration contract_point(const Call& call, const json& payload) {
    Iteration it;
    it.seq = call.seq;
    it.tool = call.name;
    it.channel = "shell";
    apply_contract_only_fields(it, payload);
    apply_payload_fields(it, payload);
    return it;
  }

  static void set_command(Iteration& it, const std::string& full) {
    WireCommand w = wire_command(full);
    it.command = std::move(w.command);
    it.commandLength = w.length;
    it.fullCommand = full;
  }

  // The payloads of a result that are points, each handed to take with its dedup key: one that the
  // command which printed it spells itself is an echo (D-8, counted against the call; the spelling
  // is built only when a payload needs judging), one that is no point is left out.
  template <class Take>
  void each_point(const std::vector<ContractPayload>& payloads, const std::string* command, const Seq& seq, Take take) {
    std::optional<CommandSpelling> spelled;
    if (command && !payloads.empty()) spelled.emplace(*command);
    for (const auto& cp : payloads) {
      if (spelled && spelled->spells(cp.text, cp.payload)) {
        echoed.push_back(seq);
        continue;
      }
      if (!payload_is_point(cp.payload)) continue;
      take(cp, key128(js_stringify(cp.payload)));
    }
  }

  void on_shell_result(const Call& call, std::string_view text) {
    if (call.has_command)
      if (auto job = job_announcement(text)) jobs[*job] = call.arg;
    CommandKind kind = call.has_command ? command_kind(call.arg) : CommandKind::Run;
    if (kind == CommandKind::ReadBack) return;
    auto payloads = contract_payloads(text);
    if (kind == CommandKind::Echo) {
      for (std::size_t i = 0; i < payloads.size(); ++i) echoed.push_back(call.seq);
      return;
    }
    std::size_t produced = 0;
    each_point(payloads, call.has_command ? &call.arg : nullptr, call.seq, [&](const ContractPayload& cp, Key128 key) {
      if (dedup.count(key)) return;
      Iteration it = contract_point(call, cp.payload);
      if (call.has_command) set_command(it, call.arg);
      it.changes = matching_changes(it.artifactPath);
      dedup.emplace(key, add_point(std::move(it)));
      ++produced;
    });
    if (produced > 0) pending_changes.clear();
  }

  void on_job_result(const Call& call, std::string_view text) {
    const std::string* launch = nullptr;
    if (call.has_job_id)
      if (auto j = jobs.find(call.arg); j != jobs.end()) launch = &j->second;
    std::size_t produced = 0;
    auto payloads = contract_payloads(text);
    // D-8 judged against the launching command.
    each_point(payloads, launch, call.seq, [&](const ContractPayload& cp, Key128 key) {
      if (auto existing = dedup.find(key); existing != dedup.end()) {
        Iteration& old = iterations[existing->second];
        if (launch && !old.commandUpgraded) {
          set_command(old, *launch);
          old.commandUpgraded = true;
          touch(existing->second);
        }
        return;
      }
      Iteration it = contract_point(call, cp.payload);
      if (call.has_job_id && !call.arg.empty()) it.jobId = call.arg;
      if (launch) set_command(it, *launch);
      it.changes = matching_changes(it.artifactPath);
      dedup.emplace(key, add_point(std::move(it)));
      ++produced;
    });
    if (produced > 0) pending_changes.clear();
  }

  void on_finalize_result(const Call& call, const Seq& rseq, std::string_view text) {
    if (call.name != anchors::kReplayTool) {
      uncollect(rseq, call, contract_payloads(text).size());
      return;
    }
    bool in_block = false;
    std::optional<std::string> command;
    std::size_t start = 0;
    while (start <= text.size()) {
      std::size_t nl = text.find('\n', start);
      std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
      std::string_view t = js_trim_start(line);
      if (starts_with(t, anchors::kReplayLinePrefix)) {
        in_block = true;
        std::string_view rest = js_trim(t.substr(anchors::kReplayLinePrefix.size()));
        command = rest.empty() ? std::nullopt : std::optional<std::string>(rest);
      } else if (auto p = contract_line_payload(line)) {
        if (!in_block) {
          uncollect(rseq, call, 1);
        } else if (payload_is_point(*p)) {
          Iteration it = contract_point(call, *p);
          it.channel = "replay";
          it.finalized = true;
          if (command) set_command(it, *command);
          const std::size_t at = add_point(std::move(it));
          if (latest_finalize && latest_finalize->seq.raw == call.seq.raw) latest_finalize->replays.push_back(at);
        }
      }
      if (nl == std::string_view::npos) break;
      start = nl + 1;
    }
  }

  void on_user_message(const json& ev) {
    auto d = ev.find("data");
    if (d == ev.end() || !d->is_object()) {
      ++stats.skipped;
      return;
    }
    const MessageFrom from = message_from(*d);
    if (from.sender == Sender::user) {
      if (!user_task) ++version;
      user_task = true;
      return;
    }
    if (from.sender != Sender::loop) return;
    const json* msg = from.message;
    static const json kNull;
    auto c = msg->find("content");
    std::string text = result_text(c != msg->end() ? *c : kNull);
    on_loop_message(make_seq(ev), text);
  }

  void on_loop_message(const Seq& seq, std::string_view text) {
    Round r;
    r.seq = seq;
    if (starts_with(text, anchors::kWrapupLinePrefix)) r.wrapUp = true;
    else if (starts_with(text, anchors::kAuditLinePrefix)) r.audit = true;
    else if (!starts_with(text, anchors::kLoopLinePrefix)) return;
    ++version;
    if (text.find(anchors::kChallengeLine) != std::string_view::npos) r.challenge = true;
    long long used = 0, budget = 0;
    if (find_counters(text, used, budget)) {
      r.evalsUsed = used;
      r.budget = budget;
    }
    if (!r.wrapUp && !r.audit) {
      std::size_t i = anchors::kLoopLinePrefix.size();
      auto n = read_digits(text, i);
      if (n && i < text.size() && text[i] == ']') r.round = *n;
    }
    if (auto ok = text.find(anchors::kReviewOkLine); ok != std::string_view::npos) {
      r.review = "ok";
      std::string_view rest = text.substr(ok + anchors::kReviewOkLine.size());
      rest = rest.substr(0, rest.find('\n'));
      rest = js_trim(rest);
      if (!rest.empty()) r.reviewNote = std::string(rest);
    } else if (auto h = text.find(anchors::kReviewHeader); h != std::string_view::npos) {
      std::string_view after = text.substr(h + anchors::kReviewHeader.size());
      std::size_t end = after.size();
      for (auto a : {anchors::kContinueTrailer, anchors::kWrapupCloseLine, anchors::kAuditCloseLine})
        end = std::min(end, after.find(a));
      std::string_view advice = js_trim(after.substr(0, end));
      if (!advice.empty()) r.review = std::string(advice);
    } else if (text.find(anchors::kReviewFailedLine) != std::string_view::npos) {
      r.reviewFailed = true;
    }
    rounds.push_back(std::move(r));
  }

  template <class T>
  void append_items(TextRope& text, const std::vector<T>& items) {
    for (std::size_t i = text.items(); i < items.size(); ++i) {
      item_scratch.clear();
      write_json(item_scratch, items[i]);
      text.append(item_scratch);
    }
  }

  void append_seqs(TextRope& text, const std::vector<Seq>& items) {
    for (std::size_t i = text.items(); i < items.size(); ++i) {
      item_scratch.clear();
      js_stringify_to(item_scratch, items[i].raw);
      text.append(item_scratch);
    }
  }
};

Projector::Projector(ProjectionConfig config) : impl_(std::make_unique<Impl>()) { impl_->cfg = std::move(config); }
Projector::~Projector() = default;
Projector::Projector(Projector&&) noexcept = default;
Projector& Projector::operator=(Projector&&) noexcept = default;

void Projector::feed_event(const json& event) { impl_->feed_event(event); }

FeedStats Projector::feed(const json& events) {
  FeedStats before = impl_->stats;
  if (events.is_array()) {
    for (const auto& ev : events) impl_->feed_event(ev);
  } else {
    impl_->feed_event(events);
  }
  return {impl_->stats.events - before.events, impl_->stats.skipped - before.skipped};
}

const FeedStats& Projector::stats() const { return impl_->stats; }
std::size_t Projector::approx_bytes() const {
  const Impl& m = *impl_;
  std::size_t b = sizeof(Impl);
  b += m.iterations.capacity() * sizeof(Iteration);
  // A point's own strings (command, error, metrics …) are about as long as its text.
  b += m.iter_text.text_bytes();
  b += m.in_text.capacity() + m.joined.capacity() + m.item_scratch.capacity() + m.kept.capacity() + m.kept_at.capacity() * sizeof(std::size_t);
  for (const TextRope* t : {&m.iter_text, &m.plans_text, &m.envs_text, &m.rounds_text, &m.profile_text, &m.uncollected_text, &m.echoed_text})
    b += t->approx_bytes();
  b += m.plans.capacity() * (sizeof(Plan) + 128) + m.envs.capacity() * (sizeof(Env) + 128) + m.rounds.capacity() * (sizeof(Round) + 128);
  b += (m.profile_seqs.capacity() + m.uncollected.capacity() + m.echoed.capacity()) * (sizeof(Seq) + 16);
  constexpr std::size_t kNode = 64;  // a hash node and its bucket, about
  b += m.calls.size() * (sizeof(Call) + kNode + 32) + m.settled_calls.size() * kNode;
  b += m.dedup.size() * kNode;
  for (const auto& [key, cmd] : m.jobs) b += key.capacity() + cmd.capacity() + kNode;
  for (const auto& [key, pts] : m.points_by_eval_id) b += key.capacity() + pts.capacity() * sizeof(std::size_t) + kNode;
  b += (m.finalized_ids.size() + m.finalized_artifact_set.size()) * (kNode + 32);
  b += m.fin_refs.capacity() * sizeof(std::uint32_t) + m.touched.capacity() * sizeof(std::uint32_t) + m.touched_mark.capacity();
  return b;
}

std::uint64_t Projector::version() const { return impl_->version; }
std::optional<FinalizeCall> Projector::finalize_call() const { return impl_->finalize_record(); }
const std::vector<Iteration>& Projector::points() const { return impl_->iterations; }
bool Projector::has_user_task() const { return impl_->user_task; }
const RunFacts& Projector::run_facts() const { return impl_->facts; }
const ProjectionConfig& Projector::config() const { return impl_->cfg; }

Series Projector::series() const {
  Series s;
  s.iterations = impl_->iterations;
  for (std::size_t i = 0; i < s.iterations.size(); ++i) s.iterations[i].finalized = impl_->finalized(i);
  s.plans = impl_->plans;
  s.envs = impl_->envs;
  s.profileSeqs = impl_->profile_seqs;
  s.uncollectedSeqs = impl_->uncollected;
  s.echoedSeqs = impl_->echoed;
  s.rounds = impl_->rounds;
  s.bestIndex = impl_->best;
  s.finalize = impl_->finalize_record();
  return s;
}

Series Projector::series_outline() const {
  Series s;
  series_outline(s);
  return s;
}

namespace {

// An iteration's outline fields (presence is all an outline's readers need of `error`).
void copy_outline(Iteration& it, const Iteration& src, bool finalized) {
  it.seq = src.seq;
  it.channel = src.channel;
  it.compiled = src.compiled;
  it.correct = src.correct;
  it.latencyMs = src.latencyMs;
  it.speedup = src.speedup;
  if (src.error.has_value() != it.error.has_value()) {
    if (src.error) it.error.emplace();
    else it.error.reset();
  }
  it.rewardHack = src.rewardHack;
  it.pending = src.pending;
  it.evaluatorFailed = src.evaluatorFailed;
  it.finalized = finalized;
  it.time = src.time;
  // The interval and labels (spec S): the chart's whiskers and words read them.
  it.noise = src.noise;
  it.vsBest = src.vsBest, it.vsReference = src.vsReference, it.bestBefore = src.bestBefore;
  // The fractions of the machine's limits (spec S-5): the chart's labels and limit line and the loop read them.
  it.metrics.clear();
  for (const auto& m : src.metrics)
    if (always_kept_metric(m.first)) it.metrics.push_back(m);
  // A plugin-measured point's hashes (DV-13): the comparison reads the reference's.
  it.plugin = src.plugin;
  if (src.plugin) it.sources = src.sources;
  else it.sources.reset();
}

void copy_outline(Round& r, const Round& src) {
  r.seq = src.seq;
  r.round = src.round;
  r.budget = src.budget;  // the phase split reads the budget each run logged (DV-11)
  r.wrapUp = src.wrapUp;
  r.audit = src.audit;
  r.challenge = src.challenge;
  // Whether a review came back or failed (Round::reviewed, Round::label_key: the chart's reviews), not
  // its text: the body carries that.
  r.reviewFailed = src.reviewFailed;
  if (src.review) r.review.emplace();
}

}  // namespace

void Projector::series_outline(Series& s) const {
  const Impl& m = *impl_;
  s.iterations.resize(m.iterations.size());
  for (std::size_t i = 0; i < m.iterations.size(); ++i) copy_outline(s.iterations[i], m.iterations[i], m.finalized(i));
  s.profileSeqs = m.profile_seqs;
  s.rounds.resize(m.rounds.size());
  for (std::size_t i = 0; i < m.rounds.size(); ++i) copy_outline(s.rounds[i], m.rounds[i]);
  s.bestIndex = m.best;
  s.finalize = m.finalize_record();
}

std::size_t Projector::update_outline(Series& s, RowTable& rows) {
  Impl& m = *impl_;
  if (rows.rows.size() > m.iterations.size() || s.rounds.size() > m.rounds.size() || s.profileSeqs.size() > m.profile_seqs.size()) {
    m.outline_from = 0;  // not an outline of this projector: copy it all
    rows.rows.clear(), s.rounds.clear(), s.profileSeqs.clear();
  }
  s.iterations.clear();
  const std::size_t from = std::min(m.outline_from, rows.rows.size());
  // Room to grow: filled from empty, resize would leave no spare capacity, and the next point
  // would then move every row (a small copy: 32 bytes a row).
  if (rows.rows.capacity() < m.iterations.size()) rows.rows.reserve(2 * m.iterations.size());
  rows.rows.resize(m.iterations.size());
  for (std::size_t i = from; i < m.iterations.size(); ++i) rows.rows[i] = RowTable::facts_of(m.iterations[i], m.finalized(i), 0);
  m.outline_from = m.iterations.size();
  // The other lists only grow.
  s.profileSeqs.insert(s.profileSeqs.end(), m.profile_seqs.begin() + static_cast<std::ptrdiff_t>(s.profileSeqs.size()), m.profile_seqs.end());
  const std::size_t had = s.rounds.size();
  s.rounds.resize(m.rounds.size());
  for (std::size_t i = had; i < m.rounds.size(); ++i) copy_outline(s.rounds[i], m.rounds[i]);
  s.bestIndex = m.best;
  s.finalize = m.finalize_record();
  return from;
}

namespace {

TextPiece literal(const char* text) { return std::make_shared<const std::string>(text); }

}  // namespace

void Projector::series_pieces(std::vector<TextPiece>& out, std::string_view session_id, double updated_at) {
  Impl& m = *impl_;
  // Cost: the fragments from the first that changed (or the start of its sealed block) on, and
  // the small tail; the blocks before are handed out as they are.
  const std::size_t dirty = std::min(m.min_dirty, m.iterations.size());
  m.min_dirty = kNoPoint;
  // The points the cut drops whose text is still current are copied aside and appended again,
  // the others written anew.
  const std::size_t from = m.iter_text.kept_by_cut(dirty), had = m.iter_text.items();
  m.kept.clear();
  m.kept_at.clear();
  for (std::size_t i = from; i < had; ++i) {
    m.kept_at.push_back(m.kept.size());
    if (m.in_text[i]) m.kept += m.iter_text.item(i);
  }
  m.kept_at.push_back(m.kept.size());
  m.iter_text.cut(dirty);
  for (std::size_t i = from; i < m.iterations.size(); ++i) {
    if (i < had && m.in_text[i]) {
      m.iter_text.append(std::string_view(m.kept).substr(m.kept_at[i - from], m.kept_at[i - from + 1] - m.kept_at[i - from]));
    } else {
      m.item_scratch.clear();
      m.render(m.item_scratch, i);
      m.iter_text.append(m.item_scratch);
      m.in_text[i] = 1;
    }
  }
  // The copy aside is at most a block in the usual case (a change near the end); a larger one goes.
  if (m.kept.capacity() > TextRope::kBlockBytes) std::string().swap(m.kept);
  if (m.kept_at.capacity() > TextRope::kBlockBytes / 64) std::vector<std::size_t>().swap(m.kept_at);
  m.append_items(m.plans_text, m.plans);
  m.append_items(m.envs_text, m.envs);
  m.append_items(m.rounds_text, m.rounds);
  m.append_seqs(m.profile_text, m.profile_seqs);
  m.append_seqs(m.uncollected_text, m.uncollected);
  m.append_seqs(m.echoed_text, m.echoed);
  // The keys between the lists never change: made once, shared by every body and thread.
  static const TextPiece kOpen = literal("{\"iterations\":["), kPlans = literal("],\"plans\":["), kEnvs = literal("],\"envs\":["),
                         kProfile = literal("],\"profileSeqs\":["), kUncollected = literal("],\"uncollectedSeqs\":["),
                         kEchoed = literal("],\"echoedSeqs\":["), kRounds = literal("],\"rounds\":[");
  out.push_back(kOpen);
  m.iter_text.pieces(out);
  for (auto [key, text] : {std::pair{&kPlans, &m.plans_text}, {&kEnvs, &m.envs_text}, {&kProfile, &m.profile_text},
                           {&kUncollected, &m.uncollected_text}, {&kEchoed, &m.echoed_text}, {&kRounds, &m.rounds_text}}) {
    out.push_back(*key);
    text->pieces(out);
  }
  auto end = std::make_shared<std::string>("],\"bestIndex\":");
  *end += m.best ? std::to_string(*m.best) : "null";
  if (const auto fin = m.finalize_record()) {
    *end += ",\"finalize\":";
    write_json(*end, *fin);
  }
  *end += ",\"sessionId\":";
  js_quote_to(*end, session_id);
  *end += ",\"updatedAt\":";
  *end += js_number(updated_at);
  out.push_back(std::move(end));
}

const std::string& Projector::series_json(std::string_view session_id, double updated_at, std::string_view control_json) {
  std::vector<TextPiece> pieces;
  series_pieces(pieces, session_id, updated_at);
  std::string& out = impl_->joined;
  out.clear();
  for (const TextPiece& p : pieces) out += *p;
  if (!control_json.empty()) {
    out += ",\"control\":";
    out += control_json;
  }
  out.push_back('}');
  return out;
}

bool Projector::take_touched(std::vector<std::uint32_t>& out) {
  Impl& m = *impl_;
  for (std::uint32_t i : m.touched) {
    out.push_back(i);
    m.touched_mark[i] = 0;
  }
  m.touched.clear();
  const bool complete = !m.touched_overflow;
  if (m.touched_overflow) std::fill(m.touched_mark.begin(), m.touched_mark.end(), 0);
  m.touched_overflow = false;
  return complete;
}

std::string_view Projector::iteration_json(std::size_t i) {
  Impl& m = *impl_;
  if (m.in_text[i]) return m.iter_text.item(i);
  m.item_scratch.clear();
  m.render(m.item_scratch, i);
  return m.item_scratch;
}

Projector::Lengths Projector::lengths() const {
  const Impl& m = *impl_;
  return {m.iterations.size(), m.plans.size(),       m.envs.size(),  m.rounds.size(),
          m.profile_seqs.size(), m.uncollected.size(), m.echoed.size()};
}

std::optional<std::size_t> Projector::best_index() const { return impl_->best; }

void Projector::write_list(std::string& out, List which, std::size_t from) const {
  const Impl& m = *impl_;
  auto items = [&](const auto& v) {
    for (std::size_t i = from; i < v.size(); ++i) {
      if (i > from) out.push_back(',');
      write_json(out, v[i]);
    }
  };
  auto seqs = [&](const std::vector<Seq>& v) {
    for (std::size_t i = from; i < v.size(); ++i) {
      if (i > from) out.push_back(',');
      js_stringify_to(out, v[i].raw);
    }
  };
  switch (which) {
    case List::Plans: return items(m.plans);
    case List::Envs: return items(m.envs);
    case List::Rounds: return items(m.rounds);
    case List::ProfileSeqs: return seqs(m.profile_seqs);
    case List::UncollectedSeqs: return seqs(m.uncollected);
    case List::EchoedSeqs: return seqs(m.echoed);
  }
}

}  // namespace kopt
