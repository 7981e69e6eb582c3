#include "kopt/chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <vector>

#include "kopt/derived.hpp"

namespace kopt {
namespace {

// Number#toPrecision(p) for finite v > 0 or any finite v: fixed notation unless the exponent is
// below -6 or at least p, as JavaScript does.
std::string to_precision(double v, int p) {
  if (!std::isfinite(v)) return "NaN";
  if (v == 0) {
    std::string s = "0";
    if (p > 1) {
      s += '.';
      s.append(static_cast<std::size_t>(p - 1), '0');
    }
    return s;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", p - 1, v);
  std::string s(buf);
  const auto epos = s.find('e');
  const int e = std::stoi(s.substr(epos + 1));
  std::string mant = s.substr(0, epos);
  const bool neg = mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  std::string out;
  // Built by appending: GCC 12 misreports `"lit" + std::string&&` as an overlapping memcpy (-Wrestrict).
  if (neg) out += '-';
  if (e < -6 || e >= p) {
    out += digits.substr(0, 1);
    if (p > 1) out.append(".").append(digits, 1, std::string::npos);
    out += e >= 0 ? "e+" : "e-";
    out += std::to_string(e >= 0 ? e : -e);
  } else if (e >= 0) {
    out += digits.substr(0, static_cast<std::size_t>(e) + 1);
    if (static_cast<int>(digits.size()) > e + 1) out.append(".").append(digits, static_cast<std::size_t>(e) + 1, std::string::npos);
  } else {
    out += "0.";
    out.append(static_cast<std::size_t>(-e - 1), '0');
    out += digits;
  }
  return out;
}

// toPrecision(3) without trailing zeros: 2.50 → 2.5, 3.00 → 3.
std::string short_number(double v) {
  std::string s = to_precision(v, 3);
  if (s.find('e') != std::string::npos || s.find('.') == std::string::npos) return s;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

double r1(double v) { return std::round(v * 10) / 10; }

// The smallest step of 1, 2, 2.5 or 5 × 10^k that is at least `raw` (> 0).
double round_step(double raw) {
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (m * mag >= raw) return m * mag;
  return mag * 10;
}

Seq seq_of(const json& raw) {
  Seq s;
  s.raw = raw;
  s.num = as_number(raw).value_or(std::numeric_limits<double>::quiet_NaN());
  return s;
}

std::optional<std::string> str_of(const json& o, const char* k) {
  auto it = o.find(k);
  if (it != o.end() && it->is_string()) return it->get<std::string>();
  return std::nullopt;
}
std::optional<bool> bool_of(const json& o, const char* k) {
  auto it = o.find(k);
  if (it != o.end() && it->is_boolean()) return it->get<bool>();
  return std::nullopt;
}
std::optional<double> num_of(const json& o, const char* k) {
  auto it = o.find(k);
  if (it == o.end()) return std::nullopt;
  return as_number(*it);
}

}  // namespace

ChartOptions ChartOptions::from_json(const json& j) {
  ChartOptions o;
  if (!j.is_object()) return o;
  if (auto w = num_of(j, "width"); w && std::isfinite(*w)) o.width = std::clamp(*w, 240.0, 4000.0);
  if (auto h = num_of(j, "height"); h && std::isfinite(*h)) o.height = std::clamp(*h, 160.0, 2000.0);
  if (auto b = num_of(j, "budget"); b && *b >= 1 && *b <= 1e9) o.budget = static_cast<long long>(*b);
  return o;
}

std::string format_latency(double ms) {
  if (ms < 1) return to_precision(ms * 1000, 3) + "µs";
  if (ms < 1000) return to_precision(ms, 4) + "ms";
  return to_precision(ms / 1000, 3) + "s";
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
  ChartLayout layout;
  write_chart_json(out, s, opt, layout);
}

void write_chart_json(std::string& out, const Series& s, const ChartOptions& opt, ChartLayout& layout) {
  ChartMemo memo;
  write_chart_json(out, s, RowTable(s.iterations), opt, layout, memo, {}, ChartLayout{});
}

namespace {
bool same_number(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }
}  // namespace

bool ChartMemo::Point::operator==(const Point& o) const {
  return same_number(seq, o.seq) && same_number(latency, o.latency) && same_number(speedup, o.speedup) &&
         flags == o.flags && seq_text == o.seq_text;
}

void write_chart_json(std::string& out, const Series& s, const RowTable& rows, const ChartOptions& opt, ChartLayout& layout,
                      ChartMemo& memo, std::string_view prev_text, const ChartLayout& prev_layout) {
  const std::size_t base = out.size();
  layout = ChartLayout{};
  auto at = [&] { return out.size() - base; };
  const double W = opt.width, H = opt.height;
  const double left = 66, right = W - 22, top = 22, bottom = H - 56;
  const double baseline = bottom + 16, profile_row = bottom + 32, xlabel_row = H - 6;
  // Decisions read the packed row facts; only a point formatted anew reads its Iteration.
  const auto& its = s.iterations;
  const auto& rs = rows.rows;
  const std::size_t n = rs.size();

  out.reserve(out.size() + 256 + n * 96);
  Text t(out);
  t.open('{');
  t.key("width").num(W);
  t.key("height").num(H);
  t.key("plot").open('{');
  t.key("left").num(left);
  t.key("top").num(top);
  t.key("right").num(right);
  t.key("bottom").num(bottom);
  t.close('}');
  t.key("baselineY").num(baseline);
  t.key("profileY").num(profile_row);

  const std::optional<double> ref = reference_latency(rows);
  const bool speedup_mode = ref.has_value() && *ref > 0;

  // Axis value of a measured point: higher is faster.
  auto value_of = [&](double lat) { return speedup_mode ? *ref / lat : 1.0 / lat; };
  // A measured point's speedup label in speedup mode: its own reported speedup, else the pooled one.
  auto labelled_speedup = [&](const RowFacts& r) { return r.has(RowFacts::kSpeedup) && r.speedup > 0 ? r.speedup : value_of(r.latency); };

  double lat_min = std::numeric_limits<double>::infinity(), lat_max = 0;
  for (const auto& r : rs) {
    if (r.measured()) {
      lat_min = std::min(lat_min, r.latency);
      lat_max = std::max(lat_max, r.latency);
    }
  }
  const bool any_measured = lat_max > 0;
  const bool log_scale = any_measured && lat_max / lat_min > 20;
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
  const double dy = (log_scale ? 1 : -1) * (bottom - top) / (dhi - dlo);
  const double y0 = (log_scale ? top : bottom) - dlo * dy;
  auto y_of_latency = [&](double lat) { return r1(y0 + dy * (log_scale ? std::log10(lat) : 1.0 / lat)); };
  // Where point i sits, in viewBox units (for the markers; the points themselves carry frame values).
  auto y_at = [&](std::size_t i) { return rs[i].measured() ? y_of_latency(rs[i].latency) : baseline; };
  auto latency_of_value = [&](double v) { return speedup_mode ? *ref / v : 1.0 / v; };
  auto y_of_value = [&](double v) { return y_of_latency(latency_of_value(v)); };
  // The value domain (for the ticks): slowest at the bottom, fastest at the top.
  double vlo = 0, vhi = 1;
  if (any_measured) {
    vlo = log_scale ? value_of(std::pow(10.0, dhi)) : (speedup_mode ? *ref : 1.0) * dlo;
    vhi = log_scale ? value_of(std::pow(10.0, dlo)) : (speedup_mode ? *ref : 1.0) * dhi;
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
  const double pad = n > 1 ? 14 : 0;
  const double dx = n > 1 ? (right - left - 2 * pad) / span : 1;
  const double x0 = n > 1 ? left + pad : (left + right) / 2;
  t.key("xStep").num(n > 1 ? std::round(dx * 1000) / 1000 : 0);
  auto x_of = [&](double i) { return r1(x0 + dx * i); };
  t.key("frame").open('{');
  t.key("x0").num(x0);
  t.key("dx").num(dx);
  t.key("y0").num(y0);
  t.key("dy").num(dy);
  t.close('}');

  // Points and the line through the successful ones, in frame units (index, v): the axes moving
  // changes the frame, not them. A point whose inputs and scale are those of the previous chart
  // keeps its text (and its piece of the line): only changed and new points are formatted.
  const bool reuse = memo.valid && memo.log_scale == log_scale && prev_layout.points.ends.size() == memo.points.size() &&
                     memo.line_at.size() == memo.points.size() + 1 && prev_layout.line_end > prev_layout.line_begin;
  const std::string_view prev_line =
      reuse ? prev_text.substr(prev_layout.line_begin + 9, prev_layout.line_end - prev_layout.line_begin - 10) : std::string_view();
  std::vector<ChartMemo::Point> sig(n);
  std::vector<std::size_t> line_at(n + 1, 0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::string line;
  line.reserve(n * 14);
  t.key("points").open('[');
  layout.points.open = at();
  layout.points.ends.reserve(n);
  // Reused points come in runs (usually all but the last few): a run's text, and its piece of the
  // line, is one copy from the previous chart.
  std::size_t run = 0, run_end = 0;  // the pending run [run, run_end)
  std::size_t first_formatted = reuse ? std::min(n, memo.points.size()) : 0;
  auto flush_run = [&] {
    if (run == run_end) return;
    const std::size_t from = prev_layout.points.start(run), to = prev_layout.points.ends[run_end - 1];
    t.item().raw(prev_text.substr(from, to - from)).value_done();
    const std::size_t end = at();
    for (std::size_t i = run; i < run_end; ++i) layout.points.ends.push_back(end - (to - prev_layout.points.ends[i]));
    // The run's pieces of the line: "M x y" or " L x y" each; the first one's lead follows this line.
    const std::size_t la = memo.line_at[run], lb = memo.line_at[run_end];
    const std::size_t begin = line.size();
    if (lb > la) {
      std::string_view pieces = prev_line.substr(la, lb - la);
      const std::size_t old_lead = pieces.front() == 'M' ? 1 : 2;
      line += line.empty() ? "M" : " L";
      const std::size_t shift = line.size() - begin;
      line.append(pieces.substr(old_lead));
      for (std::size_t i = run; i < run_end; ++i)
        line_at[i] = memo.line_at[i] == la ? begin : begin + shift - old_lead + (memo.line_at[i] - la);
    } else {
      for (std::size_t i = run; i < run_end; ++i) line_at[i] = begin;
    }
    run = run_end;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const RowFacts& r = rs[i];
    const bool measured = r.measured();
    const bool bad = r.has(RowFacts::kBad);
    const bool ok = measured && !bad && r.has(RowFacts::kCorrect);
    const double speedup = measured && speedup_mode ? labelled_speedup(r) : nan;
    ChartMemo::Point& p = sig[i];
    const bool seq_number = r.has(RowFacts::kSeqNumber);
    p.seq = seq_number ? r.seq : nan;
    if (!seq_number) p.seq_text = js_stringify(its[i].seq.raw);
    p.latency = measured ? r.latency : nan;
    p.speedup = speedup;
    p.flags = (measured ? 1u : 0u) | (ok ? 2u : 0u) | (r.pending() ? 4u : 0u) | (bad ? 8u : 0u);
    if (reuse && i < memo.points.size() && memo.points[i] == p) {
      if (run_end != i) run = i;  // a new run (the previous one was flushed)
      run_end = i + 1;
      continue;
    }
    flush_run();
    first_formatted = std::min(first_formatted, i);
    const Iteration& it = its[i];
    const double v = measured ? frame_value(r.latency, log_scale) : nan;  // formatted points only: it is a printf
    line_at[i] = line.size();
    t.open('{');
    t.key("index").num(static_cast<double>(i));
    t.key("seq");
    js_stringify_to(out, it.seq.raw);
    t.value_done();
    if (measured) t.key("v").num(v);
    if (measured) {
      t.key("kind").str(ok ? "ok" : "failed");
      t.key("label").str(format_latency(r.latency));
      if (speedup_mode) t.key("speedupLabel").str("×" + short_number(speedup));
      if (ok) {
        line += line.empty() ? "M" : " L";
        line += js_number(static_cast<double>(i));
        line.push_back(' ');
        line += js_number(v);
      }
    } else {
      t.key("kind").str("unmeasured");
      if (r.pending()) t.key("pending").boolean(true);
      if (bad) t.key("failed").boolean(true);
    }
    t.close('}');
    layout.points.ends.push_back(at());
  }
  flush_run();
  line_at[n] = line.size();
  memo.points = std::move(sig);
  memo.line_at = std::move(line_at);
  memo.log_scale = log_scale;
  memo.valid = true;
  layout.points.close = at();
  t.close(']');
  layout.line_begin = at();
  // The line is "M", " L", spaces and finite numbers only: nothing in it to escape (a quoting pass over
  // its ~0.7 MB at 50k points cost about 0.4 ms per chart).
  t.key("line").raw("\"").raw(line).raw("\"").value_done();
  layout.line_end = at();

  // Y ticks: nice values of the displayed quantity (×speedup or latency), spaced at least 30 units.
  t.key("ticks").open('[');
  if (any_measured) {
    double qlo, qhi;  // range of the displayed quantity
    if (speedup_mode) {
      qlo = vlo;
      qhi = vhi;
    } else {
      qlo = 1.0 / vhi;  // fastest latency
      qhi = vlo > 0 ? 1.0 / vlo : lat_max * 10;
    }
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
        const double v = speedup_mode ? q : 1.0 / q;
        const double y = y_of_value(v);
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
    if (speedup_mode && !log_scale) {
      // Linear speedup axis: evenly spaced round steps (×0, ×5, ×10 … or ×1.1, ×1.2 …).
      chosen.clear();
      const double raw = (qhi - qlo) / 6;
      if (raw > 0) {
        const double step = round_step(raw);
        for (double q = std::ceil(qlo / step) * step; q <= qhi + step * 1e-9; q += step) {
          const double qq = std::round(q / step) * step;
          const double y = y_of_value(qq);
          if (y >= top - 0.5 && y <= bottom + 0.5 && qq >= 0) chosen.emplace_back(y, qq);
        }
      }
    }
    std::sort(chosen.begin(), chosen.end(), [](auto a, auto b) { return a.first > b.first; });
    for (auto [y, q] : chosen) {
      t.open('{');
      t.key("y").num(y);
      t.key("label").str(speedup_mode ? "×" + short_number(q) : format_latency(q));
      t.close('}');
    }
  }
  t.close(']');

  // X ticks: evaluation numbers (1-based), at most about ten.
  t.key("xTicks").open('[');
  if (n > 0) {
    // Numbered along the axis's span (beyond the last point when the span is rounded up).
    const std::size_t axis_n = n > 1 ? static_cast<std::size_t>(span) + 1 : 1;
    std::size_t step = 1;
    static const std::size_t kSteps[] = {1,     2,     5,      10,     20,     25,     50,      100,    200,
                                         250,   500,   1000,   2000,   2500,   5000,   10000,   20000,  25000,
                                         50000, 100000, 200000, 250000, 500000, 1000000, 2000000, 5000000};
    for (std::size_t st : kSteps) {
      step = st;
      if (axis_n / st <= 10) break;
    }
    for (std::size_t k = 1; k <= axis_n; k += (k == 1 && step > 1 ? step - 1 : step)) {
      t.open('{');
      t.key("x").num(x_of(static_cast<double>(k - 1)));
      // appended, not `"#" + to_string(k)`: GCC 12 misreports that operator+ as an overlapping memcpy (-Wrestrict)
      std::string label(1, '#');
      label += std::to_string(k);
      t.key("label").str(label);
      t.close('}');
    }
  }
  t.close(']');

  // Best line (before the markers, as the object has always listed them).
  const bool best_drawn = s.bestIndex && *s.bestIndex < n && rs[*s.bestIndex].measured();
  t.key("bestLine");
  if (best_drawn) {
    const RowFacts& b = rs[*s.bestIndex];
    std::string label = format_latency(b.latency);
    if (speedup_mode) label = "×" + short_number(labelled_speedup(b)) + " · " + label;
    t.open('{');
    t.key("y").num(y_at(*s.bestIndex));
    t.key("label").str(label);
    t.close('}');
  } else {
    t.null().value_done();
  }

  // Markers.
  t.key("markers").open('{');
  t.key("best");
  if (best_drawn) {
    t.open('{');
    t.key("index").num(static_cast<double>(*s.bestIndex));
    t.key("x").num(x_of(static_cast<double>(*s.bestIndex)));
    t.key("y").num(y_at(*s.bestIndex));
    t.close('}');
  } else {
    t.null().value_done();
  }
  t.key("finalized").open('[');
  for (std::size_t i = 0; i < n; ++i) {
    if (!rs[i].has(RowFacts::kFinalized)) continue;
    t.open('{');
    t.key("index").num(static_cast<double>(i));
    t.key("x").num(x_of(static_cast<double>(i)));
    t.key("y").num(y_at(i));
    t.close('}');
  }
  t.close(']');
  // A profile mark sits after the last iteration whose seq is below its own: with the suffix
  // minima of the seqs (non-decreasing) that iteration is found by binary search.
  std::vector<double> suffix_min(n);
  for (std::size_t i = n; i-- > 0;) {
    const double v = std::isnan(rs[i].seq) ? std::numeric_limits<double>::infinity() : rs[i].seq;
    suffix_min[i] = i + 1 < n ? std::min(v, suffix_min[i + 1]) : v;
  }
  t.key("profiled").open('[');
  layout.profiled.open = at();
  layout.profiled.ends.reserve(s.profileSeqs.size());
  for (const auto& ps : s.profileSeqs) {
    long long before = -1;
    if (!std::isnan(ps.num)) {
      // The first index whose suffix minimum is ≥ ps; the one before it is the last seq < ps.
      auto it = std::lower_bound(suffix_min.begin(), suffix_min.end(), ps.num);
      before = static_cast<long long>(it - suffix_min.begin()) - 1;
    }
    double x;
    if (n == 0) {
      x = r1((left + right) / 2);
    } else if (before < 0) {
      x = r1(std::max(left + 2, x_of(0) - (n > 1 ? pad * 0.6 : 8)));
    } else if (static_cast<std::size_t>(before) + 1 >= n) {
      x = r1(std::min(right - 2, x_of(static_cast<double>(before)) + (n > 1 ? pad * 0.6 : 8)));
    } else {
      x = r1((x_of(static_cast<double>(before)) + x_of(static_cast<double>(before + 1))) / 2);
    }
    t.open('{');
    t.key("seq");
    js_stringify_to(out, ps.raw);
    t.value_done();
    t.key("x").num(x);
    t.close('}');
    layout.profiled.ends.push_back(at());
  }
  layout.profiled.close = at();
  t.close(']');
  t.close('}');

  // Denominator note and drift (J-3, J-4).
  t.key("reference");
  if (speedup_mode) {
    t.open('{');
    t.key("latencyMs").num(*ref);
    t.key("label").str(format_latency(*ref));
    t.close('}');
  } else {
    t.null().value_done();
  }
  t.key("drift");
  if (auto d = reference_drift(rows)) {
    t.open('{');
    t.key("min").num(d->min);
    t.key("max").num(d->max);
    t.key("ratio").num(d->ratio);
    t.key("count").num(static_cast<double>(d->count));
    t.key("minLabel").str(format_latency(d->min));
    t.key("maxLabel").str(format_latency(d->max));
    t.close('}');
  } else {
    t.null().value_done();
  }
  t.key("xLabelY").num(xlabel_row);

  // Phases (M-5) and the counts the summary shows.
  auto phases = opt.fixedBudget ? evaluation_phase_codes_fixed(rows, s.rounds, opt.budget) : evaluation_phase_codes(rows, s.rounds, opt.budget);
  long long c_opt = 0, c_over = 0, c_wrap = 0;
  t.key("phases").open('[');
  layout.phases.open = at();
  layout.phases.ends.reserve(phases.size());
  for (std::size_t i = 0; i < phases.size(); ++i) {
    t.item().raw("\"").raw(phase_name(phases[i])).raw("\"").value_done();
    layout.phases.ends.push_back(at());
    if (i >= n || rs[i].pending()) continue;
    if (phases[i] == Phase::WrapUp) ++c_wrap;
    else if (phases[i] == Phase::OverBudget) ++c_over;
    else ++c_opt;
  }
  layout.phases.close = at();
  t.close(']');
  // The loop message in force for each row (its supervision column), by the same rule as the report.
  std::vector<long long> row_rounds;  // -1: none
  row_rounds.reserve(n);
  t.key("rowRounds").open('[');
  layout.rowRounds.open = at();
  layout.rowRounds.ends.reserve(n);
  for (const auto& r : rounds_in_force(rows, s.rounds)) {
    t.item();
    if (r) t.raw(std::to_string(*r));
    else t.null();
    t.value_done();
    layout.rowRounds.ends.push_back(at());
    row_rounds.push_back(r ? static_cast<long long>(*r) : -1);
  }
  layout.rowRounds.close = at();
  t.close(']');
  // The first item that differs from the previous chart's, from what both were made of: a copied
  // point is the same text; phases and rounds in force compare as codes.
  if (reuse) {
    auto first_diff = [](const auto& a, const auto& b) {
      const std::size_t m = std::min(a.size(), b.size());
      return static_cast<std::size_t>(std::mismatch(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(m), b.begin()).first - a.begin());
    };
    memo.first_change = std::min({first_formatted, first_diff(memo.phases, phases), first_diff(memo.row_rounds, row_rounds)});
  } else {
    memo.first_change = ChartMemo::kUnknown;
  }
  memo.phases = std::move(phases);
  memo.row_rounds = std::move(row_rounds);
  t.key("counts").open('{');
  t.key("optimization").num(static_cast<double>(c_opt));
  t.key("overBudget").num(static_cast<double>(c_over));
  t.key("wrapUp").num(static_cast<double>(c_wrap));
  t.close('}');

  // The final number: the plugin's replay of the finalized command when there is one.
  std::optional<std::size_t> fin_replay, fin_other;
  for (std::size_t i = 0; i < n; ++i) {
    if (!rs[i].has(RowFacts::kFinalized) || !rs[i].has(RowFacts::kLatency)) continue;
    if (rs[i].replay()) fin_replay = i;
    else fin_other = i;
  }
  t.key("final");
  if (auto f = fin_replay ? fin_replay : fin_other) {
    t.open('{');
    t.key("index").num(static_cast<double>(*f));
    t.key("latencyMs").num(rs[*f].latency);
    t.key("label").str(format_latency(rs[*f].latency));
    t.key("remeasured").boolean(fin_replay.has_value());
    if (fin_replay && fin_other && rs[*fin_other].latency > 0) {
      // The gap between the agent's own figure and the plugin's re-measurement of the same command.
      // Flagged beyond a fixed 10 % (docs/protocol.md): one replay carries no noise estimate of its own.
      const double self = rs[*fin_other].latency, re = rs[*fin_replay].latency;
      const double gap = (re / self - 1.0) * 100.0;
      t.key("selfReported").open('{');
      t.key("index").num(static_cast<double>(*fin_other));
      t.key("latencyMs").num(self);
      t.key("label").str(format_latency(self));
      t.close('}');
      t.key("gapPct").num(std::round(gap * 10.0) / 10.0);
      t.key("gapFlag").boolean(std::fabs(gap) > kFinalGapFlagPct);
    }
    t.close('}');
  } else {
    t.null().value_done();
  }
  t.close('}');
}

std::size_t ChartLayout::Items::start(std::size_t i) const { return i == 0 ? open : ends[i - 1] + 1; }  // past the comma

std::string_view ChartLayout::Items::item(std::string_view text, std::size_t i) const {
  return text.substr(start(i), ends[i] - start(i));
}

namespace {
// The first item of list `ib` (in text b) that differs from list `ia` (in text a), looking no
// further than `limit`; the shorter length when one list is a prefix of the other.
std::size_t items_first_change(std::string_view a, const ChartLayout::Items& ia, std::string_view b,
                               const ChartLayout::Items& ib, std::size_t limit) {
  const std::size_t common = std::min(ia.ends.size(), ib.ends.size());
  std::size_t i = 0;
  while (i < common && i < limit && ia.item(a, i) == ib.item(b, i)) ++i;
  return i;
}
}  // namespace

std::size_t chart_first_change(std::string_view a, const ChartLayout& la, std::string_view b, const ChartLayout& lb) {
  std::size_t first = std::numeric_limits<std::size_t>::max();
  for (auto member : {&ChartLayout::points, &ChartLayout::phases, &ChartLayout::rowRounds})
    first = std::min(first, items_first_change(a, la.*member, b, lb.*member, first));
  return first;
}

std::size_t profiled_first_change(std::string_view a, const ChartLayout& la, std::string_view b, const ChartLayout& lb) {
  return items_first_change(a, la.profiled, b, lb.profiled, std::numeric_limits<std::size_t>::max());
}

void write_chart_append(std::string& out, std::string_view b, const ChartLayout& lb, std::size_t from,
                        std::size_t profiled_from) {
  // The text between the arrays is copied as it is; each array keeps its items from its own start
  // on. The arrays come in this order in the chart's text.
  out += "{\"append\":";
  out += std::to_string(from);
  out += ",\"appendProfiled\":";
  out += std::to_string(profiled_from);
  out.push_back(',');
  std::size_t pos = 1;  // past the chart's own `{`
  auto items_from = [&](const ChartLayout::Items& it, std::size_t k) {
    out.append(b.substr(pos, it.open - pos));
    if (k < it.ends.size()) out.append(b.substr(it.start(k), it.close - it.start(k)));
    pos = it.close;
  };
  items_from(lb.points, from);
  out.append(b.substr(pos, lb.line_begin - pos));
  pos = lb.line_end;
  items_from(lb.profiled, profiled_from);
  items_from(lb.phases, from);
  items_from(lb.rowRounds, from);
  out.append(b.substr(pos));
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
  Series s;
  ChartOptions o = opt;
  if (series.is_object()) {
    if (auto it = series.find("iterations"); it != series.end() && it->is_array()) {
      for (const auto& w : *it) {
        if (!w.is_object()) continue;
        Iteration p;
        p.seq = seq_of(w.contains("seq") ? w["seq"] : json());
        p.tool = str_of(w, "tool").value_or("");
        p.channel = str_of(w, "channel");
        p.compiled = bool_of(w, "compiled");
        p.correct = bool_of(w, "correct");
        p.latencyMs = num_of(w, "latencyMs");
        p.speedup = num_of(w, "speedup");
        p.error = str_of(w, "error");
        p.rewardHack = bool_of(w, "rewardHack").value_or(false);
        p.pending = bool_of(w, "pending").value_or(false);
        p.finalized = bool_of(w, "finalized").value_or(false);
        p.evaluatorFailed = bool_of(w, "evaluatorFailed").value_or(false);
        s.iterations.push_back(std::move(p));
      }
    }
    if (auto it = series.find("profileSeqs"); it != series.end() && it->is_array())
      for (const auto& v : *it) s.profileSeqs.push_back(seq_of(v));
    if (auto it = series.find("rounds"); it != series.end() && it->is_array()) {
      for (const auto& w : *it) {
        if (!w.is_object()) continue;
        Round r;
        r.seq = seq_of(w.contains("seq") ? w["seq"] : json());
        if (auto v = num_of(w, "round")) r.round = static_cast<long long>(*v);
        r.wrapUp = bool_of(w, "wrapUp").value_or(false);
        r.audit = bool_of(w, "audit").value_or(false);
        if (auto v = num_of(w, "budget"); v && *v >= 1 && *v <= 1e9) r.budget = static_cast<long long>(*v);
        s.rounds.push_back(std::move(r));
      }
    }
    if (auto b = num_of(series, "bestIndex"); b && *b >= 0 && *b < static_cast<double>(s.iterations.size()))
      s.bestIndex = static_cast<std::size_t>(*b);
  }
  return chart_json(s, o);
}

}  // namespace kopt
