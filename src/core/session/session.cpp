#include "kopt/session.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kopt/derived.hpp"
#include "kopt/events.hpp"
#include "kopt/report.hpp"

namespace kopt {

namespace {

bool projected_event(const json& ev) {
  auto t = ev.find("type");
  return t != ev.end() && t->is_string() && projected_type(t->get_ref<const std::string&>());
}

}  // namespace

Session::Session(Projector& projector, std::string session_id, ChartOptions chart, std::uint64_t revision_base)
    : projector_(&projector), id_(std::move(session_id)), chart_(chart), revision_(revision_base) {}

double Session::event_time(const json& ev) {
  if (!ev.is_object() || !projected_event(ev)) return std::nan("");
  auto t = ev.find("time");
  return t != ev.end() && t->is_number() ? t->get<double>() : std::nan("");
}

FeedStats Session::feed(const json& events) {
  auto note = [&](const json& ev) { note_time(event_time(ev)); };
  if (events.is_array())
    for (const auto& ev : events) note(ev);
  else
    note(events);
  return projector_->feed(events);
}

std::string Session::control_json() {
  json c = loop_.control_json(completed_evals());
  if (evaluation_) c["evaluation"] = *evaluation_;
  return js_stringify(c);
}

namespace {
// The session's run as the offline report reads a log: its whole series, named by the session id; the
// JSON's series carries the session's updatedAt, as /series does.
Report run_report(const Projector& projector, const std::string& id, double updated_at) {
  ReportInput in;
  in.series = projector.series();
  in.source = id;
  in.generatedAtMs = updated_at;
  in.facts = projector.run_facts();
  return build_report(std::move(in));
}
}  // namespace

std::string Session::run_csv() const { return report_csv(run_report(*projector_, id_, updated_at_)); }
std::string Session::run_json() const { return js_stringify(report_json(run_report(*projector_, id_, updated_at_))) + "\n"; }
std::string Session::run_markdown(bool zh) const {
  return report_markdown(run_report(*projector_, id_, updated_at_), zh ? ReportLang::Zh : ReportLang::En);
}

EventsText Session::feed_text(std::string_view text) {
  EventsText r = read_events_text(text, [&](const json& ev) {
    note_time(event_time(ev));
    projector_->feed_event(ev);
  });
  if (r.ok) {
    fed_ += r.positions;
    unreadable_ += r.unreadable;
  }
  return r;
}

void Session::refresh_outline() {
  if (outline_version_ == projector_->version()) return;
  const std::size_t from = projector_->update_outline(outline_, rows_);
  chart_rows_from_ = std::min(chart_rows_from_, from);
  phases_.update(rows_, outline_.rounds, chart_.budget, chart_.fixedBudget, from);
  outline_version_ = projector_->version();
}

const RunSummary& Session::summary() {
  refresh_outline();
  const RunFacts& facts = projector_->run_facts();
  if (summary_version_ != projector_->version() || summary_facts_ != facts.version) {
    summary_ = summarize_run(id_, SeriesView(projector_->points(), outline_), rows_, phases_.completed(), facts);
    summary_version_ = projector_->version();
    summary_facts_ = facts.version;
  }
  return summary_;
}

std::string Session::summary_key() const {
  return std::to_string(projector_->version()) + "." + std::to_string(projector_->run_facts().version);
}

long long Session::completed_evals() {
  refresh_outline();
  return phases_.completed();
}

std::uint64_t Session::revise(std::string_view control_json) {
  const std::uint64_t v = projector_->version();
  const bool control_changed = control_json != control_;
  if (revised_ && v == seen_version_ && updated_at_ == seen_updated_ && !control_changed) return revision_;
  revised_ = true;
  // The armed budget is not read by the chart: each row's phase comes from the budget its run
  // logged (DV-11), so re-arming relabels nothing and a replay draws what was seen live.
  if (control_changed) control_.assign(control_json);
  const double updated_before = seen_updated_;
  seen_updated_ = updated_at_;
  const bool projection = v != seen_version_;
  seen_version_ = v;
  ++revision_;
  if (projection || seen_updated_ != updated_before) head_.clear();
  chart_ok_ = chart_ok_ && !projection;
  deltas_.clear();
  // The history: what this revision changed, oldest dropped past kHistory revisions or
  // kHistoryRows recorded rows (a delta from before the oldest kept is a full answer).
  Step step{revision_, projector_->lengths(), {}, true, projection};
  step.complete = projector_->take_touched(step.touched);
  history_rows_ += step.touched.size();
  history_.push_back(std::move(step));
  while (history_.size() > kHistory || (history_rows_ > kHistoryRows && history_.size() > 1)) {
    history_rows_ -= history_.front().touched.size();
    history_.pop_front();
  }
  return revision_;
}

void Session::write_chart() {
  if (chart_ok_) return;
  refresh_outline();
  // Rows before chart_rows_from_ are as the last chart saw them: not compared again.
  chart_writer_.write(SeriesView(projector_->points(), outline_), rows_, phases_, chart_, chart_rows_from_);
  chart_rows_from_ = std::numeric_limits<std::size_t>::max();
  chart_ok_ = true;
  if (!history_.empty() && history_.back().rev == revision_) {
    Step& step = history_.back();
    step.chart = true;
    step.chart_from = chart_writer_.first_change();  // 0 for a first chart
    step.profiled_from = chart_writer_.profiled_first_change();
  }
}

std::string Session::chart() {
  write_chart();
  std::string out;
  chart_writer_.write_to(out);
  return out;
}

const std::vector<TextPiece>& Session::body_head() {
  if (!revised_) revise(control_);
  if (!head_.empty()) return head_;
  static const TextPiece kChartKey = std::make_shared<const std::string>(",\"chart\":");
  write_chart();
  std::vector<TextPiece> head;
  projector_->series_pieces(head, id_, updated_at_);
  head.push_back(kChartKey);
  chart_writer_.pieces(head);
  head_ = std::move(head);
  return head_;
}

std::string Session::body_tail() const {
  if (control_.empty()) return "}";
  std::string tail = ",\"control\":";
  tail += control_;
  tail.push_back('}');
  return tail;
}

std::size_t Session::Answer::size() const {
  if (delta) return delta->size();
  std::size_t n = prefix.size() + tail.size();
  for (const TextPiece& p : head) n += p->size();
  return n;
}

void Session::Answer::copy_to(char* out) const {
  if (delta) {
    std::copy(delta->begin(), delta->end(), out);
    return;
  }
  out = std::copy(prefix.begin(), prefix.end(), out);
  for (const TextPiece& p : head) out = std::copy(p->begin(), p->end(), out);
  std::copy(tail.begin(), tail.end(), out);
}

Session::Answer Session::answer_parts(std::optional<std::uint64_t> since) {
  Answer a;
  if (since && (a.delta = delta(*since))) return a;
  a.head = body_head();
  a.tail = body_tail();
  if (since) {
    a.prefix = "{\"kind\":\"full\",\"revision\":" + std::to_string(revision_) + ",\"body\":";
    a.tail.push_back('}');
  }
  return a;
}

namespace {
std::string joined(const Session::Answer& a) {
  std::string out(a.size(), '\0');
  a.copy_to(out.data());
  return out;
}
}  // namespace

std::string Session::body() { return joined(answer_parts(std::nullopt)); }

std::string Session::answer(std::uint64_t since) { return joined(answer_parts(since)); }

const std::string* Session::delta(std::uint64_t since) {
  if (!revised_) revise(control_);
  for (const auto& [s, text] : deltas_)
    if (s == since) return &text;
  if (history_.empty() || since < history_.front().rev || since > revision_) return nullptr;
  const std::size_t at = static_cast<std::size_t>(since - history_.front().rev);
  const Projector::Lengths& was = history_[at].len;
  const Projector::Lengths now = projector_->lengths();
  // Rows that existed at `since` and changed in place after it; rows past its length are new.
  std::vector<std::uint32_t> rows;
  bool projection = false;
  for (std::size_t k = at + 1; k < history_.size(); ++k) {
    const Step& step = history_[k];
    if (!step.complete) return nullptr;
    projection = projection || step.projection;
    for (std::uint32_t i : step.touched)
      if (i < was.iterations) rows.push_back(i);
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());

  std::string out = "{\"kind\":\"delta\",\"revision\":";
  out += std::to_string(revision_);
  out += ",\"since\":";
  out += std::to_string(since);
  out += ",\"sessionId\":";
  js_quote_to(out, id_);
  out += ",\"updatedAt\":";
  out += js_number(updated_at_);
  const auto best = projector_->best_index();
  out += ",\"bestIndex\":";
  out += best ? std::to_string(*best) : "null";
  if (const auto fin = projector_->finalize_call()) {
    out += ",\"finalize\":";
    write_json(out, *fin);
  }
  out += ",\"iterations\":{\"from\":";
  out += std::to_string(was.iterations);
  out += ",\"items\":[";
  for (std::size_t i = was.iterations; i < now.iterations; ++i) {
    if (i > was.iterations) out.push_back(',');
    out += projector_->iteration_json(i);
  }
  out += "],\"changed\":[";
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (k) out.push_back(',');
    out.push_back('[');
    out += std::to_string(rows[k]);
    out.push_back(',');
    out += projector_->iteration_json(rows[k]);
    out.push_back(']');
  }
  out += "]}";
  // The other lists only grow: their new items, a list with none left out.
  auto list = [&](const char* key, Projector::List which, std::size_t from, std::size_t to) {
    if (from >= to) return;
    out += ",\"";
    out += key;
    out += "\":{\"from\":";
    out += std::to_string(from);
    out += ",\"items\":[";
    projector_->write_list(out, which, from);
    out += "]}";
  };
  list("plans", Projector::List::Plans, was.plans, now.plans);
  list("envs", Projector::List::Envs, was.envs, now.envs);
  list("profileSeqs", Projector::List::ProfileSeqs, was.profileSeqs, now.profileSeqs);
  list("uncollectedSeqs", Projector::List::UncollectedSeqs, was.uncollectedSeqs, now.uncollectedSeqs);
  list("echoedSeqs", Projector::List::EchoedSeqs, was.echoedSeqs, now.echoedSeqs);
  list("rounds", Projector::List::Rounds, was.rounds, now.rounds);
  out += ",\"control\":";
  out += control_.empty() ? std::string_view("null") : std::string_view(control_);
  if (projection) {
    out += ",\"chart\":";
    write_chart_since(out, at);
  }
  out.push_back('}');
  // A few answers per revision are kept (pollers at the same revision share one).
  if (deltas_.size() >= 4) deltas_.pop_front();
  deltas_.emplace_back(since, std::move(out));
  return &deltas_.back().second;
}

std::size_t Session::approx_bytes() const {
  BytesMemo& m = bytes_memo_;
  const std::string* head = head_.empty() ? nullptr : head_.back().get();
  if (m.version == projector_->version() && m.head == head && m.chart == chart_ok_) return m.bytes;
  m = {projector_->version(), head, chart_ok_, 0};
  std::size_t& b = m.bytes;
  b = sizeof(Session) + projector_->approx_bytes();
  b += outline_.rounds.capacity() * sizeof(Round);
  b += outline_.profileSeqs.capacity() * sizeof(Seq) + rows_.approx_bytes() + phases_.approx_bytes();
  // The head's pieces are the projector's blocks and the chart, counted with them.
  b += head_.capacity() * sizeof(TextPiece) + chart_writer_.approx_bytes() + control_.capacity();
  for (const auto& step : history_) b += sizeof(Step) + step.touched.capacity() * sizeof(std::uint32_t);
  for (const auto& [since, text] : deltas_) b += sizeof(since) + text.capacity();
  // A comparison's row, once made (summary()).
  b += summary_.points.capacity() * sizeof(RunSummary::Point) + summary_.latencies.capacity() * sizeof(double) + summary_.pointsText.capacity() +
       summary_.facts.approx_bytes();
  return b;
}

void Session::write_chart_since(std::string& out, std::size_t at) {
  write_chart();
  // The chart the reader holds is the last snapshot at or before its revision, provided the
  // projection did not change after that snapshot (it always holds: every answer that changed the
  // projection carried a chart, and writing one makes a snapshot; checked all the same).
  std::size_t k0 = at + 1;
  for (std::size_t k = at + 1; k-- > 0;) {
    if (history_[k].chart) {
      k0 = k;
      break;
    }
    if (history_[k].projection) break;
  }
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::size_t from = 0, profiled_from = 0;
  if (k0 <= at) {
    from = profiled_from = kNone;
    for (std::size_t k = k0 + 1; k < history_.size(); ++k)
      if (history_[k].chart) {
        from = std::min(from, history_[k].chart_from);
        profiled_from = std::min(profiled_from, history_[k].profiled_from);
      }
    if (from == kNone) from = 0;
    if (profiled_from == kNone) profiled_from = 0;
  }
  if (from == 0) chart_writer_.write_to(out);
  else chart_writer_.write_append(out, from, profiled_from);
}

}  // namespace kopt
