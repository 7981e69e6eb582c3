#include "compare.hpp"

#include <cmath>
#include <limits>
#include <sstream>

namespace kopt::bench {

Verdict judge(const Outputs& cand, const Outputs& ref, LazyOracle& lazy, const Tolerance& tol) {
  Verdict v;
  v.rule = "fixed";
  if (cand.size() != ref.size()) {
    v.ok = false;
    v.fatal = true;
    v.message = "candidate returned " + std::to_string(cand.size()) + " outputs, the reference returns " +
                std::to_string(ref.size());
    return v;
  }
  double sum_abs = 0;
  double count = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!cand[i].defined()) {
      v.ok = false;
      v.fatal = true;
      v.message = "output " + std::to_string(i) + " is an undefined tensor";
      return v;
    }
    if (cand[i].sizes() != ref[i].sizes()) {
      std::ostringstream m;
      m << "output " << i << " has shape " << cand[i].sizes() << ", the reference's is " << ref[i].sizes();
      v.ok = false;
      v.fatal = true;
      v.message = m.str();
      return v;
    }
    at::Tensor c = cand[i].detach().to(at::kCPU).to(at::kDouble);
    at::Tensor r = ref[i].detach().to(at::kCPU).to(at::kDouble);
    if (c.numel() == 0) continue;
    at::Tensor both_nan = at::logical_and(at::isnan(c), at::isnan(r));
    at::Tensor diff = (c - r).abs().masked_fill(both_nan, 0.0);
    bool nan_mismatch = at::isnan(diff).any().item<bool>();
    diff = diff.nan_to_num(std::numeric_limits<double>::infinity());
    double max_abs = diff.max().item<double>();
    double max_ref = r.abs().nan_to_num(0.0, 0.0, 0.0).max().item<double>();
    sum_abs += diff.sum().item<double>();
    count += double(diff.numel());
    v.max_abs = std::max(v.max_abs, max_abs);
    double rel = max_ref > 0 ? max_abs / max_ref : (max_abs > 0 ? INFINITY : 0);
    v.max_rel = std::max(v.max_rel, rel);
    if (nan_mismatch) {
      v.ok = false;
      v.message = "output " + std::to_string(i) + " has NaN where the reference has a number";
      continue;
    }
    bool ok_i;
    if (max_ref < 10 * tol.atol) {
      // Low signal: the fixed tolerance would accept anything near zero (e.g. an all-zero output).
      v.low_signal = true;
      if (max_ref == 0) {
        ok_i = max_abs <= 1e-12;
        if (v.rule == "fixed") v.rule = "exact-zero";
      } else {
        ok_i = rel <= 4 * tol.rtol;
        v.rule = "relative";
      }
    } else {
      at::Tensor bound = r.abs().mul(tol.rtol).add(tol.atol);
      ok_i = at::le(diff, bound).all().item<bool>();
      if (!ok_i && tol.auto_mode && lazy.get() && i < lazy.get()->size()) {
        const auto& oracle = lazy.get();
        at::Tensor o = (*oracle)[i].detach().to(at::kCPU).to(at::kDouble);
        double e_cand = (c - o).abs().nan_to_num(INFINITY).max().item<double>();
        double e_ref = (r - o).abs().nan_to_num(INFINITY).max().item<double>();
        if (e_cand <= tol.oracle_factor * e_ref && std::isfinite(e_cand)) {
          ok_i = true;
          v.rule = "oracle";
        }
      }
    }
    if (!ok_i) {
      v.ok = false;
      std::ostringstream m;
      m << "output " << i << " differs from the reference (max_abs=" << max_abs << ")";
      v.message = m.str();
      continue;
    }
    // Relative L2 error beside the element-wise rule: many small contributions dropped under atol
    // add up here. Within l2_floor of the reference: accepted. Beyond it, against the fp64 oracle
    // (bound: a small factor of the reference's own error), else against rtol.
    double rn = r.norm().item<double>();
    if (rn > 0 && std::isfinite(rn)) {
      double e_c = (c - r).norm().item<double>() / rn;
      double bound = std::max(tol.l2_floor, tol.rtol);
      const char* against = "reference";
      if (e_c > tol.l2_floor && tol.auto_mode && lazy.get() && i < lazy.get()->size()) {
        at::Tensor o = (*lazy.get())[i].detach().to(at::kCPU).to(at::kDouble);
        double on = o.norm().item<double>();
        if (on > 0 && std::isfinite(on)) {
          e_c = (c - o).norm().item<double>() / on;
          bound = std::max(tol.oracle_factor * ((r - o).norm().item<double>() / on), tol.l2_floor);
          against = "fp64 oracle";
        }
      }
      v.rel_l2 = std::max(v.rel_l2, e_c);
      if (e_c > tol.l2_floor && !(e_c <= bound)) {
        v.ok = false;
        std::ostringstream m;
        m << "output " << i << " has relative L2 error " << e_c << " against the " << against << " (bound " << bound
          << "), although every element is within atol/rtol";
        v.message = m.str();
      }
    }
  }
  v.avg_abs = count > 0 ? sum_abs / count : 0;
  return v;
}

}  // namespace kopt::bench
