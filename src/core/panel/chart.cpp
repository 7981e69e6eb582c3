#include "kopt/chart.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "kopt/derived.hpp"
#include "kopt/verdict.hpp"

namespace kopt {
namespace {

double r1(double v) { return std::round(v * 10) / 10; }

// The smallest step of 1, 2, 2.5 or 5 × 10^k that is at least `raw` (> 0).
double round_step(double raw) {
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (m * mag >= raw) return m * mag;
  return mag * 10;
}

std::optional<double> num_of(const json& o, const char* k) {
  auto it = o.find(k);
  if (it == o.end()) return std::nullopt;
  return as_number(*it);
}

}  // namespace

std::vector<std::pair<double, double>> quantity_ticks(double qlo, double qhi, bool speedup, bool log_scale,
                                                      const std::function<double(double)>& y_of, double top, double bottom) {
  static const double kMant[] = {1, 5, 2, 2.5, 1.5, 3, 4, 6, 8, 1.2, 1.4, 1.6, 1.8, 2.2, 2.4, 2.6, 2.8,
                                 3.5, 4.5, 7, 9, 1.1, 1.3, 1.7, 1.9};
  // Decades from a thousandth of the top (a linear domain may start at 0).
  const int k0 = static_cast<int>(std::floor(std::log10(std::max({qlo, qhi * 1e-3, 1e-300})))) - 1;
  const int k1 = static_cast<int>(std::ceil(std::log10(std::max(qhi, 1e-300)))) + 1;
  std::vector<double> chosen_y;
  std::vector<std::pair<double, double>> chosen;  // (y, quantity)
  for (double m : kMant) {
    for (int k = k0; k <= k1; ++k) {
      const double q = m * std::pow(10.0, k);
      if (q < qlo || q > qhi || q < qhi * 1e-3) continue;
      const double y = y_of(q);
      if (y < top - 0.5 || y > bottom + 0.5) continue;
      bool clear = true;
      for (double cy : chosen_y)
        if (std::fabs(cy - y) < 30) clear = false;
      if (!clear) continue;
      chosen_y.push_back(y);
      chosen.emplace_back(y, q);
    }
    if (chosen.size() >= 7) break;
  }
  if (speedup && !log_scale) {
    // Linear speedup axis: evenly spaced round steps (×0, ×5, ×10 … or ×1.1, ×1.2 …).
    chosen.clear();
    const double raw = (qhi - qlo) / 6;
    if (raw > 0) {
      const double step = round_step(raw);
      for (double q = std::ceil(qlo / step) * step; q <= qhi + step * 1e-9; q += step) {
        const double qq = std::round(q / step) * step;
        const double y = y_of(qq);
        if (y >= top - 0.5 && y <= bottom + 0.5 && qq >= 0) chosen.emplace_back(y, qq);
      }
    }
  }
  std::sort(chosen.begin(), chosen.end(), [](auto a, auto b) { return a.first > b.first; });
  return chosen;
}

std::vector<std::size_t> evaluation_ticks(std::size_t axis_n) {
  std::size_t step = 1;
  static const std::size_t kSteps[] = {1,     2,     5,      10,     20,     25,     50,      100,    200,
                                       250,   500,   1000,   2000,   2500,   5000,   10000,   20000,  25000,
                                       50000, 100000, 200000, 250000, 500000, 1000000, 2000000, 5000000};
  for (std::size_t st : kSteps) {
    step = st;
    if (axis_n / st <= 10) break;
  }
  std::vector<std::size_t> out;
  for (std::size_t k = 1; k <= axis_n; k += (k == 1 && step > 1 ? step - 1 : step)) out.push_back(k);
  return out;
}

ChartOptions ChartOptions::from_json(const json& j) {
  ChartOptions o;
  if (!j.is_object()) return o;
  if (auto w = num_of(j, "width"); w && std::isfinite(*w)) o.width = std::clamp(*w, 240.0, 4000.0);
  if (auto h = num_of(j, "height"); h && std::isfinite(*h)) o.height = std::clamp(*h, 160.0, 2000.0);
  if (auto b = num_of(j, "budget"); b && *b >= 1 && *b <= 1e9) o.budget = static_cast<long long>(*b);
  return o;
}

namespace {

// The chart is written as text (it is O(points) and sits in every changed /series body), in the
// exact form js_stringify would give the same object: keys in this order, js_number, js_quote_to.
class Text {
 public:
  explicit Text(std::string& out) : out_(out) {}
  Text& raw(std::string_view v) { return out_ += v, *this; }
  // Keys are this file's own ASCII literals: no escaping to do.
  Text& key(std::string_view k) {
    sep();
    out_.push_back('"');
    out_ += k;
    out_ += "\":";
    return *this;
  }
  Text& num(double v) { return out_ += js_number(v), *this; }
  Text& str(std::string_view v) { return js_quote_to(out_, v), *this; }
  Text& boolean(bool v) { return out_ += v ? "true" : "false", *this; }
  Text& null() { return out_ += "null", *this; }
  Text& open(char c) {
    sep();
    out_.push_back(c);
    first_ = true;
    return *this;
  }
  Text& close(char c) {
    out_.push_back(c);
    first_ = false;
    return *this;
  }
  // A value inside an array (objects and arrays open with their own separator).
  Text& item() {
    sep();
    return *this;
  }
  Text& value_done() {
    first_ = false;
    return *this;
  }

 private:
  void sep() {
    if (!first_ && !out_.empty() && out_.back() != '[' && out_.back() != '{' && out_.back() != ':') out_.push_back(',');
    first_ = false;
  }
  std::string& out_;
  bool first_ = true;
};

// Latencies within this fraction of the fastest draw flat (on an axis 20 % of it wide): the frame
// keeps its precision, and differences below 0.1 % are noise on any GPU timer.
constexpr double kFlatSpan = 1e-3;

// A measured point's frame value (`v`): log10(latency) on a log axis, 1/latency on a linear one,
// to 7 significant digits. It depends on the latency and the scale alone, so that the axes can move
// without touching a point. A browser draws the frame in single precision: on the narrowest domain
// (a linear one a thousandth of its top wide, see kFlatSpan) a point is then off by ~0.02 units.
double frame_value(double latency_ms, bool log_scale) {
  const double v = log_scale ? std::log10(latency_ms) : 1.0 / latency_ms;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", v);
  return std::strtod(buf, nullptr);
}

}  // namespace

std::string chart_json_text(const Series& s, const ChartOptions& opt) {
  std::string out;
  write_chart_json(out, s, opt);
  return out;
}

void write_chart_json(std::string& out, const Series& s, const ChartOptions& opt) {
  const RowTable rows(s.iterations);
  RowPhases phases;
  phases.update(rows, s.rounds, opt.budget, opt.fixedBudget, 0);
  ChartWriter w;
  w.write(s, rows, phases, opt);
  w.write_to(out);
}

namespace {
bool same_number(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

TextPiece piece(std::string&& text) { return std::make_shared<const std::string>(std::move(text)); }

// Between the phases and the rounds in force: the same in every chart.
const TextPiece& between_phases_and_rounds() {
  static const TextPiece k = piece("],\"rowRounds\":[");
  return k;
}

// A phase as an item of the `phases` array: its name (phase_name, derived.cpp) quoted.
std::string_view phase_item_text(Phase p) {
  static const std::array<std::string, 3> items = [] {
    std::array<std::string, 3> a;
    for (Phase q : {Phase::Optimization, Phase::OverBudget, Phase::WrapUp})
      a[static_cast<std::size_t>(q)] = std::string("\"") + phase_name(q) + "\"";
    return a;
  }();
  return items[static_cast<std::size_t>(p)];
}

// Cuts `rope` at item `k` and appends again, with `item_at(i)`, the items the cut took before it
// (down to a sealed block's start): the caller goes on appending from min(k, items before).
template <class ItemAt>
void cut_keeping(TextRope& rope, std::size_t k, ItemAt item_at) {
  const std::size_t to = std::min(k, rope.items());
  for (std::size_t i = rope.cut(to); i < to; ++i) rope.append(item_at(i));
}
}  // namespace

bool ChartWriter::Point::operator==(const Point& o) const {
  return same_number(seq, o.seq) && same_number(latency, o.latency) && same_number(speedup, o.speedup) &&
         flags == o.flags && seq_text == o.seq_text && same_number(ci_lo, o.ci_lo) && same_number(ci_hi, o.ci_hi) &&
         vs_best == o.vs_best && vs_ref == o.vs_ref && same_number(best_pct, o.best_pct) && same_number(best_pm, o.best_pm) &&
         same_number(ref_pct, o.ref_pct) && same_number(ref_pm, o.ref_pm) && best_of == o.best_of &&
         same_number(bw, o.bw) && same_number(cf, o.cf);
}

// One write's geometry: the plot box, the scale and the axes, derived from the rows' facts alone
// (stage `frame`); every later stage reads it.
struct ChartWriter::Frame {
  double W = 0, H = 0, left = 0, right = 0, top = 0, bottom = 0, baseline = 0, profile_row = 0, xlabel_row = 0;
  const std::vector<RowFacts>* rs = nullptr;
  std::size_t n = 0;
  bool was_written = false;     // a write came before this one
  std::size_t suffix_from = 0;  // the first suffix minimum written again
  std::optional<double> ref;    // the pooled reference latency
  bool speedup_mode = false, log_scale = false, any_measured = false;
  double lat_min = 0, lat_max = 0;
  double dy = 0, y0 = 0, vlo = 0, vhi = 1;  // the y frame and the value domain (for the ticks)
  double span = 0, pad = 0, dx = 1, x0 = 0;  // the x axis and frame

  // Axis value of a measured point: higher is faster.
  double value_of(double lat) const { return speedup_mode ? *ref / lat : 1.0 / lat; }
  double y_of_latency(double lat) const { return r1(y0 + dy * (log_scale ? std::log10(lat) : 1.0 / lat)); }
  // Where point i sits, in viewBox units (for the markers; the points themselves carry frame values).
  double y_at(std::size_t i) const { return (*rs)[i].measured() ? y_of_latency((*rs)[i].latency) : baseline; }
  double y_of_value(double v) const { return y_of_latency(speedup_mode ? *ref / v : 1.0 / v); }
  double x_of(double i) const { return r1(x0 + dx * i); }
};

// The named stages, in order: frame (the per-row facts taken on, the axes and scale, the head text
// up to the points), points (the points and the line through the ok ones), ticks, markers, profile
// (the profile marks), phases (reference, drift, phases and rounds in force), final (counts and the
// final number).
void ChartWriter::write(SeriesView s, const RowTable& rows, RowPhases& phases, const ChartOptions& opt, std::size_t rows_same_before) {
  // Rows before rows_same_before are as the last write saw them (nothing is vouched for before a first write).
  if (!written_) rows_same_before = 0;
  std::string head;
  const Frame f = frame(rows, opt, rows_same_before, head);
  const PointsWritten pw = points(s, rows, f, rows_same_before);
  // From the end of the line to the profile marks.
  std::string marks = "\"";  // the line's closing quote
  ticks(f, marks);
  markers(s, f, marks);
  const std::size_t first_mark = profile(s, f);
  std::string after_marks;
  const PhasesWritten ph = phases_and_rounds(rows, phases, f, after_marks);
  // The first item that differs from the last write's: a kept point is the same text; phases and
  // rounds in force compare as codes.
  first_change_ = f.was_written && pw.same_scale ? std::min({pw.first_point, ph.first_phase, ph.first_round}) : 0;
  profiled_first_change_ = first_mark;
  head_ = piece(std::move(head));
  before_line_ = piece(std::string(pw.before_line));
  before_profiled_ = piece(std::move(marks));
  before_phases_ = piece(std::move(after_marks));
  tail_ = piece(final_number(s, phases));
}

ChartWriter::Frame ChartWriter::frame(const RowTable& rows, const ChartOptions& opt, std::size_t rows_same_before, std::string& head) {
  Frame f;
  f.W = opt.width, f.H = opt.height;
  f.left = 66, f.right = f.W - 22, f.top = 22, f.bottom = f.H - 56;
  f.baseline = f.bottom + 16, f.profile_row = f.bottom + 32, f.xlabel_row = f.H - 6;
  f.rs = &rows.rows;
  f.was_written = written_;
  const auto& rs = rows.rows;
  const std::size_t n = f.n = rs.size();
  const double left = f.left, right = f.right, top = f.top, bottom = f.bottom;

  head.reserve(512);
  Text t(head);
  t.open('{');
  t.key("width").num(f.W);
  t.key("height").num(f.H);
  t.key("plot").open('{');
  t.key("left").num(left);
  t.key("top").num(top);
  t.key("right").num(right);
  t.key("bottom").num(bottom);
  t.close('}');
  t.key("baselineY").num(f.baseline);
  t.key("profileY").num(f.profile_row);

  refs_.update(rows, rows_same_before);
  // The per-row facts in prefix form, kept for the rows vouched for and taken on from there.
  const std::size_t rows_kept = std::min({rows_same_before, lat_min_before_.empty() ? 0 : lat_min_before_.size() - 1, n});
  reserve_room(lat_min_before_, n + 1);
  reserve_room(lat_max_before_, n + 1);
  lat_min_before_.resize(rows_kept + 1, std::numeric_limits<double>::infinity());
  lat_max_before_.resize(rows_kept + 1, 0);
  for (std::size_t i = rows_kept; i < n; ++i) {
    const RowFacts& r = rs[i];
    lat_min_before_.push_back(r.measured() ? std::min(lat_min_before_.back(), r.latency) : lat_min_before_.back());
    lat_max_before_.push_back(r.measured() ? std::max(lat_max_before_.back(), r.latency) : lat_max_before_.back());
  }
  finalized_.erase(std::lower_bound(finalized_.begin(), finalized_.end(), rows_kept), finalized_.end());
  for (std::size_t i = rows_kept; i < n; ++i)
    if (rs[i].has(RowFacts::kFinalized)) finalized_.push_back(i);
  // Suffix minima of the seqs (the profile marks' places): from the end down to the kept rows, then
  // on down only while they change.
  auto seq_key = [&](std::size_t i) { return std::isnan(rs[i].seq) ? std::numeric_limits<double>::infinity() : rs[i].seq; };
  reserve_room(suffix_min_, n);
  suffix_min_.resize(n);
  std::size_t suffix_from = n;  // the first suffix minimum written again
  for (std::size_t i = n; i-- > 0;) {
    const double v = i + 1 < n ? std::min(seq_key(i), suffix_min_[i + 1]) : seq_key(i);
    if (i < rows_kept && v == suffix_min_[i]) break;
    suffix_min_[i] = v;
    suffix_from = i;
  }
  f.suffix_from = suffix_from;
  const std::optional<double> ref = f.ref = refs_.median();
  const bool speedup_mode = f.speedup_mode = ref.has_value() && *ref > 0;
  const double lat_min = f.lat_min = lat_min_before_[n], lat_max = f.lat_max = lat_max_before_[n];
  const bool any_measured = f.any_measured = lat_max > 0;
  const bool log_scale = f.log_scale = any_measured && lat_max / lat_min > 20;
  t.key("mode").str(speedup_mode ? "speedup" : "latency");
  t.key("scale").str(log_scale ? "log" : "linear");
  t.key("empty").boolean(n == 0);

  // The y domain, padded so no point sits on the frame, and snapped outward to round values so
  // that a new point inside it moves nothing. It is a function of the latencies alone: the pooled
  // reference only relabels (speedup = reference / latency is a shift on a log axis, a scale about
  // zero on a linear one).
  double dlo = 0, dhi = 1;  // log: log10(latency) at the top and bottom; linear: 1/latency at bottom and top
  if (any_measured && log_scale) {
    dlo = std::floor(std::log10(lat_min / 1.18) * 8) / 8;
    dhi = std::ceil(std::log10(lat_max * 1.18) * 8) / 8;
  } else if (any_measured) {
    const double wlo = 1.0 / lat_max, whi = 1.0 / lat_min;
    double span = whi - wlo;
    if (span <= whi * kFlatSpan) span = whi * 0.2;
    const double lo = std::max(0.0, wlo - span * 0.12), hi = whi + span * 0.12;
    const double step = round_step((hi - lo) / 5);
    dlo = std::max(0.0, std::floor(lo / step) * step);
    dhi = std::ceil(hi / step) * step;
    if (!(dhi > dlo)) dhi = dlo + step;
  }
  // The y frame: a measured point sits at y0 + dy × v (its frame value); only these two numbers
  // follow the y domain.
  const double dy = f.dy = (log_scale ? 1 : -1) * (bottom - top) / (dhi - dlo);
  const double y0 = f.y0 = (log_scale ? top : bottom) - dlo * dy;
  // The value domain (for the ticks): slowest at the bottom, fastest at the top.
  if (any_measured) {
    f.vlo = log_scale ? f.value_of(std::pow(10.0, dhi)) : (speedup_mode ? *ref : 1.0) * dlo;
    f.vhi = log_scale ? f.value_of(std::pow(10.0, dlo)) : (speedup_mode ? *ref : 1.0) * dhi;
  }

  // The x axis spans `span` iterations: all of them up to kExactSpan, then a round number at
  // least as large (steps of about a quarter), so that a new point rarely moves the others.
  double span = 0;
  if (n > 1) {
    const double need = static_cast<double>(n - 1);
    span = need;
    if (n > kExactSpan) {
      static const double kRound[] = {1, 1.25, 1.6, 2, 2.5, 3.2, 4, 5, 6.4, 8, 10};
      const double mag = std::pow(10.0, std::floor(std::log10(need)));
      for (double m : kRound)
        if (std::round(m * mag) >= need) {
          span = std::round(m * mag);
          break;
        }
    }
  }
  // The x frame: iteration i sits at x0 + dx × i. One point has no spacing (xStep 0) and sits in
  // the middle; its dx is 1 so that the frame stays an invertible transform for every reader.
  f.span = span;
  const double pad = f.pad = n > 1 ? 14 : 0;
  const double dx = f.dx = n > 1 ? (right - left - 2 * pad) / span : 1;
  const double x0 = f.x0 = n > 1 ? left + pad : (left + right) / 2;
  t.key("xStep").num(n > 1 ? std::round(dx * 1000) / 1000 : 0);
  t.key("frame").open('{');
  t.key("x0").num(x0);
  t.key("dx").num(dx);
  t.key("y0").num(y0);
  t.key("dy").num(dy);
  t.close('}');

  t.key("points").open('[');
  return f;
}

ChartWriter::PointsWritten ChartWriter::points(SeriesView s, const RowTable& rows, const Frame& f, std::size_t rows_same_before) {
  const auto& its = s.iterations;
  const auto& rs = rows.rows;
  const std::size_t n = f.n;
  const bool log_scale = f.log_scale, speedup_mode = f.speedup_mode;
  const std::optional<double>& ref = f.ref;
  // Points and the line through the successful ones, in frame units (index, v): the axes moving
  // changes the frame, not them. A point's item and its piece of the line follow from its inputs
  // and the scale alone, so a write formats only the points whose inputs changed: the lists keep
  // their text up to the first one that did, and later unchanged items are copied.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double reference = speedup_mode ? *ref : 0;
  const bool same_scale = written_ && log_scale_ == log_scale;
  const std::size_t n_old = same_scale ? points_.size() : 0;  // points whose text may be kept
  auto inputs_of = [&](std::size_t i) {
    const RowFacts& r = rs[i];
    const bool measured = r.measured();
    const bool bad = r.has(RowFacts::kBad);
    const bool ok = measured && !bad && r.has(RowFacts::kCorrect);
    Point p;
    const bool seq_number = r.has(RowFacts::kSeqNumber);
    p.seq = seq_number ? r.seq : nan;
    if (!seq_number) p.seq_text = js_stringify(its[i].seq.raw);
    p.latency = measured ? r.latency : nan;
    p.speedup = measured && speedup_mode ? labelled_speedup(r, *ref) : nan;
    p.flags = (measured ? 1u : 0u) | (ok ? 2u : 0u) | (r.pending() ? 4u : 0u) | (bad ? 8u : 0u);
    const Iteration& it = its[i];
    const auto ci = measured ? it.latency_ci() : std::nullopt;
    p.ci_lo = ci ? ci->lo : nan, p.ci_hi = ci ? ci->hi : nan;
    if (const auto c = versus_best(its, i)) p.vs_best = c->verdict, p.best_pct = c->effectPct, p.best_pm = c->pmPct, p.best_of = it.bestBefore;
    if (const auto c = versus_reference(it)) p.vs_ref = c->verdict, p.ref_pct = c->effectPct, p.ref_pm = c->pmPct;
    if (measured) p.bw = it.metric("bandwidth_fraction").value_or(nan), p.cf = it.metric("compute_fraction").value_or(nan);
    return p;
  };
  // Rows the caller vouches for have the same inputs, but for those labelled by the pooled
  // reference when it moved (a row with a speedup of its own keeps its label), and all of them
  // when the chart turns to or from speedup mode.
  const std::size_t vouched = reference == reference_ ? rows_same_before
                              : reference > 0 && reference_ > 0 ? std::min(rows_same_before, first_pooled_)
                                                                : 0;
  const std::size_t start = std::min({vouched, n_old, n});
  std::vector<Point> fresh;
  fresh.reserve(n - start);
  std::vector<char> same(n - start, 0);  // point start + k keeps its text
  std::size_t first_point = std::min(n, n_old);  // the first point whose item changed
  if (first_pooled_ >= start) first_pooled_ = std::numeric_limits<std::size_t>::max();  // kept only when in the vouched rows
  for (std::size_t i = start; i < n; ++i) {
    fresh.push_back(inputs_of(i));
    same[i - start] = i < n_old && fresh.back() == points_[i];
    if (!same[i - start]) first_point = std::min(first_point, i);
    if (speedup_mode && rs[i].measured() && !(rs[i].has(RowFacts::kSpeedup) && rs[i].speedup > 0)) first_pooled_ = std::min(first_pooled_, i);
  }
  auto keeps_text = [&](std::size_t i) { return i < start || same[i - start] != 0; };
  // The ropes cut at the first change, or before it at a sealed block's start: the kept items past
  // that are copied out first and appended again.
  const std::size_t keep_from = std::min(point_text_.kept_by_cut(first_point), n_old);
  std::vector<std::size_t> old_ok_before;  // of the old points from keep_from on
  std::string old_points, old_line;
  std::vector<std::size_t> old_point_ends, old_line_ends;
  if (n_old) {
    old_ok_before.assign(ok_before_.begin() + static_cast<std::ptrdiff_t>(keep_from), ok_before_.end());
    for (std::size_t i = keep_from; i < std::min(n_old, n); ++i) {
      if (!keeps_text(i)) continue;
      old_points += point_text_.item(i);
      old_point_ends.push_back(old_points.size());
      if (old_ok_before[i - keep_from + 1] > old_ok_before[i - keep_from]) old_line += line_text_.item(old_ok_before[i - keep_from]);
      old_line_ends.push_back(old_line.size());
    }
  }
  // The line's rope may give up more than the points' (its blocks seal elsewhere): the items it
  // takes before the kept points are copied out and appended again.
  std::string line_head;
  std::vector<std::size_t> line_head_ends;
  const std::size_t line_keep = n_old ? old_ok_before[0] : 0;
  for (std::size_t j = line_text_.kept_by_cut(line_keep); j < line_keep; ++j) {
    line_head += line_text_.item(j);
    line_head_ends.push_back(line_head.size());
  }
  reserve_room(points_, n);
  reserve_room(ok_before_, n + 1);
  reserve_room(ci_before_, n + 1);
  points_.resize(start);
  points_.insert(points_.end(), std::make_move_iterator(fresh.begin()), std::make_move_iterator(fresh.end()));
  if (n_old == 0) ok_before_.assign(1, 0), ci_before_.assign(1, 0);
  ok_before_.resize(keep_from + 1);
  ci_before_.resize(keep_from + 1);
  point_text_.cut(keep_from);
  line_text_.cut(line_keep);
  for (std::size_t k = 0; k < line_head_ends.size(); ++k) {
    const std::size_t a = k ? line_head_ends[k - 1] : 0;
    line_text_.append(std::string_view(line_head).substr(a, line_head_ends[k] - a));
  }
  std::string item;
  std::size_t kept = 0;  // old texts used
  for (std::size_t i = keep_from; i < n; ++i) {
    const Point& p = points_[i];
    const bool ok = (p.flags & 2u) != 0;
    ok_before_.push_back(ok_before_.back() + (ok ? 1 : 0));
    ci_before_.push_back(ci_before_.back() + (std::isnan(p.ci_lo) ? 0 : 1));
    if (keeps_text(i)) {
      const std::size_t a = kept ? old_point_ends[kept - 1] : 0, la = kept ? old_line_ends[kept - 1] : 0;
      point_text_.append(std::string_view(old_points).substr(a, old_point_ends[kept] - a));
      if (ok) line_text_.append(std::string_view(old_line).substr(la, old_line_ends[kept] - la));
      ++kept;
      continue;
    }
    const RowFacts& r = rs[i];
    const bool measured = (p.flags & 1u) != 0, bad = (p.flags & 8u) != 0;
    item.clear();
    Text pt(item);
    pt.open('{');
    pt.key("index").num(static_cast<double>(i));
    pt.key("seq");
    js_stringify_to(item, its[i].seq.raw);
    pt.value_done();
    // The row's own reported multiple as the record table shows it (the report's too: speedup_label).
    if (its[i].speedup) pt.key("ownSpeedupLabel").str(speedup_label(*its[i].speedup));
    const double v = measured ? frame_value(r.latency, log_scale) : nan;  // a printf: formatted points only
    if (measured) {
      pt.key("v").num(v);
      pt.key("kind").str(ok ? "ok" : "failed");
      pt.key("label").str(format_latency(r.latency));
      if (speedup_mode) pt.key("speedupLabel").str(speedup_label(p.speedup));
      // S: the interval as the whisker's ends, in the same units as v; the labels with their figures
      // (one decimal), worded by the tab from the chart's `versusWords`.
      if (!std::isnan(p.ci_lo)) {
        pt.key("ci").open('[');
        pt.item().num(frame_value(p.ci_lo, log_scale));
        pt.item().num(frame_value(p.ci_hi, log_scale));
        pt.close(']');
        pt.key("ciLabel").str(format_latency(p.ci_lo) + " – " + format_latency(p.ci_hi));
      }
      auto versus = [&](const char* key, Versus v, double pct, double pm) {
        if (v == Versus::none) return;
        pt.key(key).open('{');
        pt.key("v").str(versus_name(v));
        pt.key("pct").num(std::round(std::fabs(pct) * 10.0) / 10.0);
        if (v != Versus::unsure) pt.key("pm").num(std::round(pm * 10.0) / 10.0);
        pt.close('}');
      };
      versus("vsBest", p.vs_best, p.best_pct, p.best_pm);
      if (p.vs_best != Versus::none) pt.key("vsBestOf").num(static_cast<double>(p.best_of));
      versus("vsReference", p.vs_ref, p.ref_pct, p.ref_pm);
      // S-5: the fractions of the machine's limits, as the popover reads them ("62.3%").
      if (std::isfinite(p.bw) && p.bw > 0) pt.key("bandwidthLabel").str(fraction_label(p.bw));
      if (std::isfinite(p.cf) && p.cf > 0) pt.key("computeLabel").str(fraction_label(p.cf));
    } else {
      pt.key("kind").str("unmeasured");
      if (p.flags & 4u) pt.key("pending").boolean(true);
      if (bad) pt.key("failed").boolean(true);
    }
    pt.close('}');
    point_text_.append(item);
    if (ok) {
      item.clear();
      item += js_number(static_cast<double>(i));
      item.push_back(' ');
      item += js_number(v);
      line_text_.append(item);
    }
  }
  written_ = true;
  log_scale_ = log_scale;
  reference_ = reference;
  // The line is "M", " L", spaces and finite numbers only: nothing in it to escape.
  PointsWritten out{first_point, same_scale, line_text_.items() ? "],\"line\":\"M" : "],\"line\":\""};
  return out;

}

void ChartWriter::ticks(const Frame& f, std::string& marks) const {
  Text m(marks);
  m.value_done();  // goes on after the value before
  const std::size_t n = f.n;
  const bool speedup_mode = f.speedup_mode, log_scale = f.log_scale;
  const double vlo = f.vlo, vhi = f.vhi, lat_max = f.lat_max, top = f.top, bottom = f.bottom, span = f.span;
  const bool any_measured = f.any_measured;
  // Y ticks: nice values of the displayed quantity (×speedup or latency), spaced at least 30 units.
  m.key("ticks").open('[');
  if (any_measured) {
    double qlo, qhi;  // range of the displayed quantity
    if (speedup_mode) {
      qlo = vlo;
      qhi = vhi;
    } else {
      qlo = 1.0 / vhi;  // fastest latency
      qhi = vlo > 0 ? 1.0 / vlo : lat_max * 10;
    }
    const auto chosen = quantity_ticks(qlo, qhi, speedup_mode, log_scale, [&](double q) { return f.y_of_value(speedup_mode ? q : 1.0 / q); }, top, bottom);
    for (auto [y, q] : chosen) {
      m.open('{');
      m.key("y").num(y);
      m.key("label").str(speedup_mode ? speedup_label(q) : format_latency(q));
      m.close('}');
    }
  }
  m.close(']');

  // X ticks: evaluation numbers (1-based), at most about ten.
  m.key("xTicks").open('[');
  if (n > 0) {
    // Numbered along the axis's span (beyond the last point when the span is rounded up).
    const std::size_t axis_n = n > 1 ? static_cast<std::size_t>(span) + 1 : 1;
    for (std::size_t k : evaluation_ticks(axis_n)) {
      m.open('{');
      m.key("x").num(f.x_of(static_cast<double>(k - 1)));
      // appended, not `"#" + to_string(k)`: GCC 12 misreports that operator+ as an overlapping memcpy (-Wrestrict)
      std::string label(1, '#');
      label += std::to_string(k);
      m.key("label").str(label);
      m.close('}');
    }
  }
  m.close(']');

}

void ChartWriter::markers(SeriesView s, const Frame& f, std::string& marks) const {
  Text m(marks);
  m.value_done();  // goes on after the value before
  const auto& rs = *f.rs;
  const std::size_t n = f.n;
  const bool speedup_mode = f.speedup_mode;
  // Best line (before the markers, as the object has always listed them).
  const bool best_drawn = s.bestIndex && *s.bestIndex < n && rs[*s.bestIndex].measured();
  m.key("bestLine");
  if (best_drawn) {
    const RowFacts& b = rs[*s.bestIndex];
    std::string label = format_latency(b.latency);
    if (speedup_mode) label = speedup_label(labelled_speedup(b, *f.ref)) + " · " + label;
    m.open('{');
    m.key("y").num(f.y_at(*s.bestIndex));
    m.key("label").str(label);
    m.close('}');
  } else {
    m.null().value_done();
  }
  // S-5: the limit as a line, only when ★ carries its fraction of the probed memory bandwidth: the
  // latency at which its bytes would move at that bandwidth (latency × fraction). Held at the plot's
  // edge (`above` / `below`) when the axes do not reach it: the axes follow the measured latencies.
  if (best_drawn) {
    const RowFacts& b = rs[*s.bestIndex];
    const auto frac = s.iterations[*s.bestIndex].metric("bandwidth_fraction");
    if (frac && std::isfinite(*frac) && *frac > 0) {
      const double lat = b.latency * *frac;
      std::string label = format_latency(lat);
      if (speedup_mode) label = speedup_label(*f.ref / lat) + " · " + label;
      const double y = f.y_of_latency(lat);
      m.key("limitLine").open('{');
      m.key("y").num(std::clamp(y, f.top, f.bottom));
      m.key("latencyMs").num(lat);
      m.key("label").str(label);
      m.key("index").num(static_cast<double>(*s.bestIndex));
      if (y < f.top) m.key("above").boolean(true);
      if (y > f.bottom) m.key("below").boolean(true);
      m.close('}');
    }
  }

  // Markers.
  m.key("markers").open('{');
  m.key("best");
  if (best_drawn) {
    m.open('{');
    m.key("index").num(static_cast<double>(*s.bestIndex));
    m.key("x").num(f.x_of(static_cast<double>(*s.bestIndex)));
    m.key("y").num(f.y_at(*s.bestIndex));
    m.close('}');
  } else {
    m.null().value_done();
  }
  m.key("finalized").open('[');
  for (std::size_t i : finalized_) {
    m.open('{');
    m.key("index").num(static_cast<double>(i));
    m.key("x").num(f.x_of(static_cast<double>(i)));
    m.key("y").num(f.y_at(i));
    m.close('}');
  }
  m.close(']');
  m.key("profiled").open('[');
}

std::size_t ChartWriter::profile(SeriesView s, const Frame& f) {
  const std::size_t n = f.n, suffix_from = f.suffix_from;
  const bool was_written = f.was_written;
  const double left = f.left, right = f.right, pad = f.pad;
  // A profile mark sits after the last iteration whose seq is below its own: with the suffix
  // minima of the seqs (non-decreasing) that iteration is found by binary search. A mark is placed
  // again only when the x axis moved, or when the first row whose suffix minimum is at least its
  // seq (where the search ended) is at or past the first suffix minimum written again; any other
  // mark keeps its text.
  const std::array<double, 6> marks_axis{f.x0, f.dx, left, right, n == 0 ? 1.0 : 0.0, n > 1 ? 1.0 : 0.0};
  const bool axis_kept = was_written && marks_axis == marks_axis_;
  marks_axis_ = marks_axis;
  auto mark = [](std::string_view text, const std::vector<std::size_t>& ends, std::size_t i) {
    const std::size_t from = i ? ends[i - 1] + 1 : 0;  // past the comma
    return text.substr(from, ends[i] - from);
  };
  const std::size_t mark_count = s.profileSeqs.size(), old_marks = was_written ? std::min(profiled_ends_.size(), mark_at_.size()) : 0;
  std::string prof, one;
  std::vector<std::size_t> prof_ends;
  prof_ends.reserve(mark_count);
  std::size_t first_mark = was_written ? std::min(mark_count, profiled_ends_.size()) : 0;  // the first mark that differs
  mark_at_.resize(mark_count);
  mark_seq_.resize(mark_count);
  for (std::size_t i = 0; i < mark_count; ++i) {
    const Seq& ps = s.profileSeqs[i];
    if (i) prof.push_back(',');
    if (axis_kept && i < old_marks && same_number(ps.num, mark_seq_[i]) && mark_at_[i] < suffix_from && mark_at_[i] < n) {
      prof += mark(*profiled_, profiled_ends_, i);
      prof_ends.push_back(prof.size());
      continue;
    }
    // The first index whose suffix minimum is ≥ ps; the one before it is the last seq < ps.
    const std::size_t at = std::isnan(ps.num) ? 0 : static_cast<std::size_t>(std::lower_bound(suffix_min_.begin(), suffix_min_.end(), ps.num) - suffix_min_.begin());
    const long long before = static_cast<long long>(at) - 1;
    double x;
    if (n == 0) {
      x = r1((left + right) / 2);
    } else if (before < 0) {
      x = r1(std::max(left + 2, f.x_of(0) - (n > 1 ? pad * 0.6 : 8)));
    } else if (static_cast<std::size_t>(before) + 1 >= n) {
      x = r1(std::min(right - 2, f.x_of(static_cast<double>(before)) + (n > 1 ? pad * 0.6 : 8)));
    } else {
      x = r1((f.x_of(static_cast<double>(before)) + f.x_of(static_cast<double>(before + 1))) / 2);
    }
    one.clear();
    Text pm(one);
    pm.open('{');
    pm.key("seq");
    js_stringify_to(one, ps.raw);
    pm.value_done();
    pm.key("x").num(x);
    pm.close('}');
    prof += one;
    prof_ends.push_back(prof.size());
    mark_at_[i] = at, mark_seq_[i] = ps.num;
    if (i < first_mark && (i >= profiled_ends_.size() || one != mark(*profiled_, profiled_ends_, i))) first_mark = i;
  }

  profiled_ = piece(std::move(prof));
  profiled_ends_ = std::move(prof_ends);
  return first_mark;
}

ChartWriter::PhasesWritten ChartWriter::phases_and_rounds(const RowTable& rows, RowPhases& phases, const Frame& f, std::string& after_marks) {
  const std::size_t n = f.n;
  const bool was_written = f.was_written, speedup_mode = f.speedup_mode;
  const std::optional<double>& ref = f.ref;
  const double xlabel_row = f.xlabel_row;
  // From the end of the marks to the phases.
  Text a(after_marks);
  a.close(']');
  a.close('}');
  // Denominator note and drift (J-3, J-4).
  a.key("reference");
  if (speedup_mode) {
    a.open('{');
    a.key("latencyMs").num(*ref);
    a.key("label").str(format_latency(*ref));
    a.close('}');
  } else {
    a.null().value_done();
  }
  a.key("drift");
  if (auto d = refs_.drift(rows)) {
    a.open('{');
    a.key("min").num(d->min);
    a.key("max").num(d->max);
    a.key("ratio").num(d->ratio);
    a.key("count").num(static_cast<double>(d->count));
    a.key("minLabel").str(format_latency(d->min));
    a.key("maxLabel").str(format_latency(d->max));
    a.close('}');
  } else {
    a.null().value_done();
  }
  a.key("xLabelY").num(xlabel_row);

  // Phases (M-5), the counts the summary shows and the rounds in force, as `phases` holds them: the
  // ropes are rewritten from the first row whose code changed since the last write.
  const auto& row_phases = phases.phases();
  const auto& row_rounds = phases.row_rounds();
  const RowPhases::Changes changed = phases.take_changes();
  a.key("phases").open('[');
  auto phase_item = [&](std::size_t i) { return phase_item_text(row_phases[i]); };
  const std::size_t first_phase = was_written ? changed.phase : 0;
  cut_keeping(phase_text_, first_phase, phase_item);
  for (std::size_t i = phase_text_.items(); i < n; ++i) phase_text_.append(phase_item(i));
  // The loop message in force for each row (its supervision column), by the same rule as the report.
  auto round_item = [&](std::size_t i) { return row_rounds[i] ? std::to_string(*row_rounds[i]) : std::string("null"); };
  const std::size_t first_round = was_written ? changed.round : 0;
  cut_keeping(round_text_, first_round, round_item);
  for (std::size_t i = round_text_.items(); i < n; ++i) round_text_.append(round_item(i));
  return {first_phase, first_round};

}

std::string ChartWriter::final_number(SeriesView s, const RowPhases& phases) const {
  const long long c_opt = phases.count(Phase::Optimization), c_over = phases.count(Phase::OverBudget), c_wrap = phases.count(Phase::WrapUp);
  // From the end of the rounds in force to the end.
  std::string tail;
  Text z(tail);
  z.close(']');
  z.key("counts").open('{');
  z.key("optimization").num(static_cast<double>(c_opt));
  z.key("overBudget").num(static_cast<double>(c_over));
  z.key("wrapUp").num(static_cast<double>(c_wrap));
  z.close('}');

  // The words the tab and the report read (a verdict, who measured, a verdict's tone), once per chart
  // (kopt/labels.hpp).
  z.key("words").raw(words_json());
  // The reviews the tab's card lists, newest first, at most kReviewsShown (the report lists them all
  // by the same rule, Round::reviewed), each with the word that names its loop message.
  z.key("reviews").open('[');
  std::size_t shown = 0;
  for (std::size_t i = s.rounds.size(); i-- > 0 && shown < kReviewsShown;) {
    const Round& rd = s.rounds[i];
    if (!rd.reviewed()) continue;
    z.open('{');
    z.key("round").num(static_cast<double>(i));
    z.key("key").str(rd.label_key());
    z.key("n").str(rd.round_text());
    z.close('}');
    ++shown;
  }
  z.close(']');
  // S: the comparison words, once per chart, where some point carries an interval (verdict.hpp).
  if (!ci_before_.empty() && ci_before_.back() > 0) {
    z.key("versusWords").open('{');
    for (const bool zh : {true, false}) {
      z.key(zh ? "zh" : "en").open('{');
      for (const auto& w : versus_words()) z.key(w.key).str(zh ? w.zh : w.en);
      z.close('}');
    }
    z.close('}');
  }
  // The Final claim and its number (final_claim, final_number, derived.hpp: spec H-8).
  const auto claim = final_claim(s.iterations, s.finalize);
  if (claim) {
    z.key("finalClaim").open('{');
    z.key("callSeq");
    if (std::isnan(claim->callSeq)) z.null().value_done();
    else z.num(claim->callSeq);
    if (claim->named) z.key("named").num(static_cast<double>(*claim->named));
    if (claim->index) z.key("index").num(static_cast<double>(*claim->index));
    if (claim->refused) {
      z.key("refused").str(*claim->refused);
      const Words w = final_refusal_words(*claim->refused);
      z.key("refusedText").open('{');
      z.key("zh").str(w.zh);
      z.key("en").str(w.en);
      z.close('}');
    }
    z.close('}');
  }
  z.key("final");
  if (const auto f = kopt::final_number(s.iterations, claim)) {
    z.open('{');
    z.key("index").num(static_cast<double>(f->index));
    z.key("latencyMs").num(f->latency);
    z.key("label").str(format_latency(f->latency));
    z.key("remeasured").boolean(f->remeasured);
    if (f->self) {
      const double self = *s.iterations[*f->self].latencyMs;
      z.key("selfReported").open('{');
      z.key("index").num(static_cast<double>(*f->self));
      z.key("latencyMs").num(self);
      z.key("label").str(format_latency(self));
      z.close('}');
      z.key("gapPct").num(f->gapPct);
      z.key("gapFlag").boolean(f->gapFlag);
      if (f->gapVerdict != Versus::none) {
        z.key("gapVerdict").str(versus_name(f->gapVerdict));
        z.key("gapPmPct").num(std::round(f->gapPmPct * 10.0) / 10.0);
      }
    }
    z.close('}');
  } else {
    z.null().value_done();
  }
  z.close('}');

  return tail;
}

void ChartWriter::pieces(std::vector<TextPiece>& out) {
  out.push_back(head_);
  point_text_.pieces(out);
  out.push_back(before_line_);
  line_text_.pieces(out);
  out.push_back(before_profiled_);
  if (!profiled_->empty()) out.push_back(profiled_);
  out.push_back(before_phases_);
  phase_text_.pieces(out);
  out.push_back(between_phases_and_rounds());
  round_text_.pieces(out);
  out.push_back(tail_);
}

void ChartWriter::write_to(std::string& out) const {
  out += *head_;
  point_text_.write_to(out);
  out += *before_line_;
  line_text_.write_to(out);
  out += *before_profiled_;
  out += *profiled_;
  out += *before_phases_;
  phase_text_.write_to(out);
  out += *between_phases_and_rounds();
  round_text_.write_to(out);
  out += *tail_;
}

void ChartWriter::write_append(std::string& out, std::size_t from, std::size_t profiled_from) const {
  // The short parts are copied as they are (the head without its `{`, the marks' part without the
  // quote that closes the line); each list keeps its items from its own start on.
  out += "{\"append\":";
  out += std::to_string(from);
  out += ",\"appendProfiled\":";
  out += std::to_string(profiled_from);
  out.push_back(',');
  out.append(*head_, 1);
  point_text_.write_from(out, from);
  out.push_back(']');
  out.append(*before_profiled_, 1);
  if (profiled_from < profiled_ends_.size()) out.append(*profiled_, profiled_from ? profiled_ends_[profiled_from - 1] + 1 : 0);
  out += *before_phases_;
  phase_text_.write_from(out, from);
  out += *between_phases_and_rounds();
  round_text_.write_from(out, from);
  out += *tail_;
}

std::size_t ChartWriter::approx_bytes() const {
  std::size_t b = sizeof(ChartWriter) + points_.capacity() * sizeof(Point) + ok_before_.capacity() * sizeof(std::size_t) +
                  ci_before_.capacity() * sizeof(std::uint32_t);
  b += (profiled_ends_.capacity() + mark_at_.capacity()) * sizeof(std::size_t) + mark_seq_.capacity() * sizeof(double);
  for (const auto* v : {&lat_min_before_, &lat_max_before_, &suffix_min_}) b += v->capacity() * sizeof(double);
  b += finalized_.capacity() * sizeof(std::size_t);
  for (const TextRope* r : {&point_text_, &line_text_, &phase_text_, &round_text_}) b += r->approx_bytes();
  for (const TextPiece* p : {&head_, &before_line_, &before_profiled_, &profiled_, &before_phases_, &tail_})
    if (*p) b += (*p)->capacity();
  return b;
}

ChartFrame ChartFrame::of(const json& chart) {
  ChartFrame f;
  if (!chart.is_object()) return f;
  if (auto it = chart.find("frame"); it != chart.end() && it->is_object()) {
    f.x0 = num_of(*it, "x0").value_or(0);
    f.dx = num_of(*it, "dx").value_or(0);
    f.y0 = num_of(*it, "y0").value_or(0);
    f.dy = num_of(*it, "dy").value_or(0);
  }
  f.baseline = num_of(chart, "baselineY").value_or(0);
  return f;
}

double ChartFrame::y(const json& point) const {
  const auto v = point.is_object() ? num_of(point, "v") : std::nullopt;
  return v ? y0 + dy * *v : baseline;
}

json chart_json(const Series& s, const ChartOptions& opt) {
  auto j = parse_json(chart_json_text(s, opt), 64);
  return j ? std::move(*j) : json::object();
}

json chart_json_from_wire(const json& series, const ChartOptions& opt) {
  return chart_json(series_from_wire(series), opt);  // the one reader of the wire form (series.cpp)
}

}  // namespace kopt
