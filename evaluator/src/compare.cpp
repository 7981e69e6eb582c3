#include "compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace kopt::bench {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The smallest normal value of a floating dtype (0: not floating, the magnitude rule does not apply).
double min_normal(at::ScalarType t) {
  switch (t) {
    case at::kDouble: return std::numeric_limits<double>::min();
    case at::kFloat:
    case at::kBFloat16: return std::numeric_limits<float>::min();  // bfloat16 has float's exponent
    case at::kHalf: return 6.103515625e-05;
    default: return 0;
  }
}

// Always a copy: the rules below write into it (masking equal non-finite positions).
at::Tensor as_double(const at::Tensor& t) {
  return t.detach().to(at::kCPU).to(at::kDouble, /*non_blocking=*/false, /*copy=*/true);
}

std::string kind_of(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "+inf" : "-inf";
  return "a number";
}

std::string dtype_name(at::ScalarType t) { return c10::toString(t); }

int64_t first_index(const at::Tensor& mask) { return mask.reshape(-1).nonzero().select(1, 0)[0].item<int64_t>(); }

// The common case in one pass (issue 49: the tensor-op path below costs ~0.85 ms per call on a 16k-
// element output, most of a fast op's timing stage, where every timed call is checked): a CPU float
// output whose values are all finite on both sides and that passes every rule with no oracle. The
// same arithmetic as the rules below, in double; anything else, or a result near a bound, is left
// to them (nullopt), so a verdict never depends on which path took it.
struct FastPass {
  double max_abs, max_ref, sum_abs, rel_l2;  // rel_l2 < 0: the reference's norm is 0
};
template <class T>
std::optional<FastPass> fast_pass_typed(const T* c, const T* r, int64_t n, const Tolerance& tol, double tiny) {
  double max_abs = 0, max_ref = 0, sum_abs = 0, sq_diff = 0, sq_ref = 0;
  int64_t suspect = 0, outside = 0;
  // No branch per value (so that it vectorizes): a NaN or an infinity on either side makes a sum of
  // squares non-finite, which is checked once at the end.
  for (int64_t k = 0; k < n; ++k) {
    const double cv = static_cast<double>(c[k]), rv = static_cast<double>(r[k]);
    const double d = std::abs(cv - rv), ra = std::abs(rv), ca = std::abs(cv);
    max_abs = d > max_abs ? d : max_abs;
    max_ref = ra > max_ref ? ra : max_ref;
    sum_abs += d;
    sq_diff += d * d;
    sq_ref += rv * rv;
    outside += !(d <= ra * tol.rtol + tol.atol);
    suspect += (ra >= tiny) & (((cv > 0) != (rv > 0)) | ((cv < 0) != (rv < 0)) | (ca * 8 < ra) | (ca > ra * 8));
  }
  if (!std::isfinite(sq_diff) || !std::isfinite(sq_ref) || !std::isfinite(sum_abs)) return std::nullopt;
  const bool within = outside == 0;
  if (tiny <= 0) suspect = 0;
  if (!within || max_ref < 10 * tol.atol || suspect > n / 1024) return std::nullopt;
  // Squares that could overflow or lose their digits to underflow: left to the rules.
  if (max_ref > 1e100 || max_abs > 1e100 || (max_ref > 0 && max_ref < 1e-100)) return std::nullopt;
  FastPass f{max_abs, max_ref, sum_abs, -1};
  if (sq_ref > 0) {
    f.rel_l2 = std::sqrt(sq_diff) / std::sqrt(sq_ref);
    // A sum in another order than ATen's norm differs in the last bits: near the floor, its rules decide.
    if (!std::isfinite(f.rel_l2) || f.rel_l2 > tol.l2_floor * (1 - 1e-9)) return std::nullopt;
  }
  return f;
}
std::optional<FastPass> fast_pass(const at::Tensor& cand, const at::Tensor& ref, const Tolerance& tol, double tiny) {
  if (!cand.device().is_cpu() || !ref.device().is_cpu() || cand.is_neg() || ref.is_neg() || cand.is_conj() || ref.is_conj())
    return std::nullopt;
  const at::Tensor c = cand.detach().contiguous(), r = ref.detach().contiguous();
  const int64_t n = c.numel();
  switch (r.scalar_type()) {
    case at::kFloat: return fast_pass_typed(c.data_ptr<float>(), r.data_ptr<float>(), n, tol, tiny);
    case at::kDouble: return fast_pass_typed(c.data_ptr<double>(), r.data_ptr<double>(), n, tol, tiny);
    case at::kHalf: return fast_pass_typed(c.data_ptr<at::Half>(), r.data_ptr<at::Half>(), n, tol, tiny);
    case at::kBFloat16: return fast_pass_typed(c.data_ptr<at::BFloat16>(), r.data_ptr<at::BFloat16>(), n, tol, tiny);
    default: return std::nullopt;
  }
}

}  // namespace

std::vector<bool> nonfinite_outputs(const Outputs& out) {
  std::vector<bool> nf;
  for (const auto& t : out)
    nf.push_back(t.defined() && t.is_floating_point() && t.numel() > 0 && !at::isfinite(t).all().item<bool>());
  return nf;
}

Verdict judge(const Outputs& cand, const Outputs& ref, LazyOracle& lazy, const Tolerance& tol,
              const std::vector<c10::DeviceType>& cand_devices, bool one_pass) {
  Verdict v;
  v.rule = "fixed";
  auto fatal = [&](const char* rule, const std::string& msg) {
    v.ok = false;
    v.fatal = true;
    v.failed_rule = rule;
    v.message = msg;
    return v;
  };
  auto fail = [&](const char* rule, const std::string& msg) {
    v.ok = false;
    if (v.failed_rule.empty()) {  // the first failure decides, as its message does
      v.failed_rule = rule;
      v.message = msg;
    }
  };
  if (cand.size() != ref.size())
    return fatal("count", "candidate returned " + std::to_string(cand.size()) + " outputs, the reference returns " +
                              std::to_string(ref.size()));
  double sum_abs = 0;
  double count = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const std::string out_i = "output " + std::to_string(i);
    // ---- the contract: defined, shape, dtype, device (strides and memory format are free) ----
    if (!cand[i].defined()) return fatal("undefined", out_i + " is an undefined tensor");
    if (cand[i].sizes() != ref[i].sizes()) {
      std::ostringstream m;
      m << out_i << " has shape " << cand[i].sizes() << ", the reference's is " << ref[i].sizes();
      return fatal("shape", m.str());
    }
    if (cand[i].scalar_type() != ref[i].scalar_type())
      return fatal("dtype", out_i + " has dtype " + dtype_name(cand[i].scalar_type()) + ", the reference's is " +
                                dtype_name(ref[i].scalar_type()));
    const c10::DeviceType cdev = i < cand_devices.size() ? cand_devices[i] : cand[i].device().type();
    if (cdev != ref[i].device().type())
      return fatal("device", out_i + " is on " + c10::DeviceTypeName(cdev, true) + ", the reference's is on " +
                                 c10::DeviceTypeName(ref[i].device().type(), true));

    if (cand[i].numel() == 0) continue;
    // ---- integers, booleans, indices: exact ----
    // atol + rtol*|ref| and a relative L2 floor are float rounding allowances: on integers they let
    // an int64 product computed in float32 and rounded be wrong by units to tens. Compared in their
    // own dtype (an int64 past 2^53 has no exact double).
    const at::ScalarType st = ref[i].scalar_type();
    if (tol.integer_exact && !c10::isFloatingType(st) && !c10::isComplexType(st)) {
      at::Tensor ci = cand[i].detach().to(at::kCPU), ri = ref[i].detach().to(at::kCPU);
      at::Tensor neq = at::ne(ci, ri);
      const int64_t n_bad = neq.sum().item<int64_t>();
      at::Tensor diff = (ci.to(at::kDouble) - ri.to(at::kDouble)).abs();
      const double max_abs = diff.max().item<double>();
      const double max_ref = ri.to(at::kDouble).abs().max().item<double>();
      sum_abs += diff.sum().item<double>();
      count += double(diff.numel());
      v.max_abs = std::max(v.max_abs, max_abs);
      v.max_rel = std::max(v.max_rel, max_ref > 0 ? max_abs / max_ref : (max_abs > 0 ? kInf : 0));
      if (n_bad > 0) {
        const int64_t k = first_index(neq);
        std::ostringstream m;
        m << out_i << " has " << n_bad << " of " << ci.numel() << " values that differ from the reference's (a "
          << dtype_name(st) << " output is compared exactly; at flat index " << k << ": "
          << ci.reshape(-1)[k].to(at::kLong).item<int64_t>() << " where the reference has "
          << ri.reshape(-1)[k].to(at::kLong).item<int64_t>() << ")";
        fail("exact", m.str());
      }
      continue;
    }
    if (one_pass) {
      if (auto f = fast_pass(cand[i], ref[i], tol, 16 * min_normal(st))) {
        sum_abs += f->sum_abs;
        count += double(cand[i].numel());
        v.max_abs = std::max(v.max_abs, f->max_abs);
        v.max_rel = std::max(v.max_rel, f->max_ref > 0 ? f->max_abs / f->max_ref : (f->max_abs > 0 ? kInf : 0));
        if (f->rel_l2 >= 0) v.rel_l2 = std::max(v.rel_l2, f->rel_l2);
        continue;
      }
    }
    at::Tensor c = as_double(cand[i]);
    at::Tensor r = as_double(ref[i]);
    // ---- non-finite values: both NaN, or both the same infinity, are equal ----
    at::Tensor c_nf = at::logical_not(at::isfinite(c)), r_nf = at::logical_not(at::isfinite(r));
    at::Tensor same = at::logical_or(at::logical_and(at::isnan(c), at::isnan(r)),
                                     at::logical_and(at::logical_and(c_nf, r_nf), at::eq(c, r)));
    at::Tensor mismatch = at::logical_and(at::logical_or(c_nf, r_nf), at::logical_not(same));
    const int64_t n_mismatch = mismatch.sum().item<int64_t>();
    std::string nf_message;
    if (n_mismatch > 0) {
      int64_t k = first_index(mismatch);
      double cv = c.reshape(-1)[k].item<double>(), rv = r.reshape(-1)[k].item<double>();
      std::ostringstream m;
      m << out_i << " has " << kind_of(cv) << " where the reference has " << kind_of(rv) << " (" << n_mismatch
        << " position" << (n_mismatch > 1 ? "s" : "") << ", the first at flat index " << k << ")";
      nf_message = m.str();
    }
    // Every later rule sees equal non-finite positions as zeros on both sides.
    c.masked_fill_(same, 0.0);
    r.masked_fill_(same, 0.0);
    // The oracle's output i, masked alike (computed on first use, then kept); none when it is
    // missing or not finite where the reference is.
    std::optional<std::optional<at::Tensor>> oracle_cache;
    auto oracle_i = [&]() -> std::optional<at::Tensor> {
      if (!oracle_cache) {
        oracle_cache.emplace();
        const auto& o = lazy.get();
        if (o && i < o->size() && (*o)[i].defined() && (*o)[i].sizes() == ref[i].sizes()) {
          at::Tensor t = as_double((*o)[i]).masked_fill_(same, 0.0);
          if (at::isfinite(t).all().item<bool>()) *oracle_cache = t;
        }
      }
      return *oracle_cache;
    };
    // The reference on perturbed inputs (LazyOracle::perturbed), its output i of each run masked alike.
    auto perturbed_i = [&]() -> std::optional<std::vector<at::Tensor>> {
      const auto& p = lazy.perturbed();
      if (!p || p->empty()) return std::nullopt;
      std::vector<at::Tensor> ts;
      for (const auto& run : *p) {
        if (i >= run.size() || !run[i].defined() || run[i].sizes() != ref[i].sizes()) return std::nullopt;
        ts.push_back(as_double(run[i]).masked_fill_(same, 0.0));
      }
      return ts;
    };

    at::Tensor diff = (c - r).abs().nan_to_num(kInf, kInf, kInf);
    double max_abs = diff.max().item<double>();
    double max_ref = r.abs().nan_to_num(0.0, 0.0, 0.0).max().item<double>();
    sum_abs += diff.sum().item<double>();
    count += double(diff.numel());
    v.max_abs = std::max(v.max_abs, max_abs);
    double rel = max_ref > 0 ? max_abs / max_ref : (max_abs > 0 ? kInf : 0);
    v.max_rel = std::max(v.max_rel, rel);
    if (n_mismatch > 0) {
      fail("non-finite", nf_message);
      continue;
    }

    // ---- element-wise ----
    bool ok_i;
    bool low = max_ref < 10 * tol.atol;
    if (low) {
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
      if (!ok_i && tol.auto_mode) {
        if (auto o = oracle_i()) {
          double e_cand = (c - *o).abs().nan_to_num(kInf, kInf, kInf).max().item<double>();
          double e_ref = (r - *o).abs().max().item<double>();
          if (e_cand <= tol.oracle_factor * e_ref && std::isfinite(e_cand)) {
            ok_i = true;
            v.rule = "oracle";
          }
        }
      }
    }
    if (!ok_i) {
      std::ostringstream m;
      m << out_i << " differs from the reference (max_abs=" << max_abs << ")";
      fail(low ? "low-signal relative" : "element-wise", m.str());
      continue;
    }

    // ---- magnitude: values hidden under atol ----
    // Where the reference holds a normal, non-zero value that it computes reliably, a candidate
    // value that is zero, of the other sign, or more than 8x off is wrong, whatever atol says. Not
    // flagged: values below 16x the dtype's smallest normal (honest underflow, flushed denormals)
    // and positions where the reference itself is unreliable (a cancellation residue: more than
    // 1/16 off the fp64 oracle). Allowed: a sliver of 1/1024 of the positions.
    const double tiny = 16 * min_normal(ref[i].scalar_type());
    if (tiny > 0) {
      at::Tensor ra = r.abs();
      at::Tensor suspect = at::logical_and(
          at::ge(ra, tiny),
          at::logical_or(at::ne(at::sign(c), at::sign(r)),
                         at::logical_or(at::lt(c.abs().mul(8), ra), at::gt(c.abs(), ra.mul(8)))));
      const int64_t sliver = c.numel() / 1024;
      int64_t n_bad = suspect.sum().item<int64_t>();
      bool by_oracle = false, by_perturbation = false;
      if (n_bad > sliver) {
        // Reliable: within 1/16 of the fp64 oracle. Without one (a float32-only reference): moved by
        // less than 1/16 of itself in each of three runs of the reference on inputs perturbed by 2^-16 — a
        // property of each value, not of its size against the output's largest, so rows scaled far
        // below the others (a gated softmax) are judged like any other. Only where neither exists:
        // within 64x of the output's largest value.
        at::Tensor reliable;
        if (auto o = oracle_i()) {
          reliable = at::le((r - *o).abs(), o->abs().div(16));
          by_oracle = true;
        } else if (auto ps = perturbed_i()) {
          reliable = at::ones_like(ra, at::kBool);
          for (const auto& p : *ps) reliable = at::logical_and(reliable, at::le((r - p).abs(), ra.div(16)));
          by_perturbation = true;
        } else {
          reliable = at::ge(ra, max_ref / 64);
        }
        suspect = at::logical_and(suspect, reliable);
        n_bad = suspect.sum().item<int64_t>();
      }
      if (n_bad > sliver) {
        int64_t k = first_index(suspect);
        std::ostringstream m;
        m << out_i << " has " << n_bad << " of " << c.numel()
          << " values that are zero, of the other sign or more than 8x off where the reference has a normal value "
             "it computes reliably (at flat index "
          << k << ": " << c.reshape(-1)[k].item<double>() << " where the reference has " << r.reshape(-1)[k].item<double>()
          << "; at most " << sliver << " allowed, "
          << (by_oracle         ? "reliable = within 1/16 of the fp64 oracle"
              : by_perturbation ? "reliable = moved by under 1/16 when three runs of the float32 reference on inputs perturbed by 2^-16"
                                : "reliable = within 64x of the largest value")
          << "), although every element is within atol/rtol";
        fail("magnitude", m.str());
        continue;
      }
    }

    // ---- relative L2 ----
    // Many small contributions dropped under atol add up here. Within l2_floor of the reference:
    // accepted. Beyond it, against the fp64 oracle (bound: a small factor of the reference's own
    // error), else against rtol.
    double rn = r.norm().item<double>();
    if (rn > 0 && std::isfinite(rn)) {
      double e_c = (c - r).norm().item<double>() / rn;
      double bound = std::max(tol.l2_floor, tol.rtol);
      const char* against = "reference";
      if (e_c > tol.l2_floor && tol.auto_mode) {
        if (auto o = oracle_i()) {
          double on = o->norm().item<double>();
          if (on > 0 && std::isfinite(on)) {
            e_c = (c - *o).norm().item<double>() / on;
            bound = std::max(tol.oracle_factor * ((r - *o).norm().item<double>() / on), tol.l2_floor);
            against = "fp64 oracle";
          }
        }
      }
      v.rel_l2 = std::max(v.rel_l2, e_c);
      if (e_c > tol.l2_floor && !(e_c <= bound)) {
        std::ostringstream m;
        m << out_i << " has relative L2 error " << e_c << " against the " << against << " (bound " << bound
          << "), although every element is within atol/rtol";
        fail("relative L2", m.str());
      }
    }
  }
  v.avg_abs = count > 0 ? sum_abs / count : 0;
  return v;
}

uint64_t bytes_moved(const std::vector<at::Tensor>& inputs, const Outputs& outputs) {
  uint64_t n = 0;
  for (const auto& t : inputs) n += t.defined() ? uint64_t(t.nbytes()) : 0;
  for (const auto& t : outputs) n += t.defined() ? uint64_t(t.nbytes()) : 0;
  return n;
}

}  // namespace kopt::bench
