#include "kopt/session.hpp"

#include <algorithm>
#include <cmath>

#include "kopt/derived.hpp"

namespace kopt {

namespace {

bool projected_type(const json& ev) {
  auto t = ev.find("type");
  if (t == ev.end() || !t->is_string()) return false;
  const auto& s = t->get_ref<const std::string&>();
  return s == "tool/call" || s == "tool/result" || s == "user/message";
}

}  // namespace

Session::Session(Projector& projector, std::string session_id, ChartOptions chart)
    : projector_(projector), id_(std::move(session_id)), chart_(chart) {}

FeedStats Session::feed(const json& events) {
  auto note = [&](const json& ev) {
    if (!ev.is_object() || !projected_type(ev)) return;
    auto t = ev.find("time");
    if (t != ev.end() && t->is_number()) {
      const double v = t->get<double>();
      if (v > updated_at_) updated_at_ = v;
    }
  };
  if (events.is_array())
    for (const auto& ev : events) note(ev);
  else
    note(events);
  return projector_.feed(events);
}

void Session::refresh_outline() {
  if (outline_version_ == projector_.version()) return;
  projector_.series_outline(outline_);
  evals_ = kopt::completed_evals(outline_);
  outline_version_ = projector_.version();
}

long long Session::completed_evals() {
  refresh_outline();
  return evals_;
}

std::uint64_t Session::revise(std::string_view control_json) {
  const std::uint64_t v = projector_.version();
  const bool control_changed = control_json != control_;
  if (v == seen_version_ && updated_at_ == seen_updated_ && !control_changed) return revision_;
  // The armed budget is not read by the chart: each row's phase comes from the budget its run
  // logged (DV-11), so re-arming relabels nothing and a replay draws what was seen live.
  if (control_changed) control_.assign(control_json);
  seen_version_ = v;
  seen_updated_ = updated_at_;
  ++revision_;
  pieces_ok_ = body_ok_ = false;
  return revision_;
}

Session::Pieces Session::pieces() {
  if (revision_ == 0) revise(control_);
  // series_json keeps its text between calls and returns it unchanged when nothing changed.
  const std::string& series = projector_.series_json(id_, updated_at_, control_);
  if (!pieces_ok_) {
    refresh_outline();
    chart_text_.clear();
    write_chart_json(chart_text_, outline_, chart_);
    pieces_ok_ = true;
  }
  // The series object is never `{}`: the chart goes before its closing brace.
  return {std::string_view(series).substr(0, series.size() - 1), chart_text_};
}

void Session::Pieces::copy_to(char* out) const {
  out = std::copy(head.begin(), head.end(), out);
  constexpr std::string_view key = ",\"chart\":";
  out = std::copy(key.begin(), key.end(), out);
  out = std::copy(chart.begin(), chart.end(), out);
  *out = '}';
}

const std::string& Session::body() {
  if (body_ok_) return body_;
  const Pieces p = pieces();
  body_.resize(p.size());
  p.copy_to(body_.data());
  body_ok_ = true;
  return body_;
}

}  // namespace kopt
