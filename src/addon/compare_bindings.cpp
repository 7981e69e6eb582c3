// Comparing sessions (include/kopt/compare.hpp):
//   compare(entries) -> Buffer: the comparison's JSON (compare_json). Each entry is a Session (its
//     row from the projection it holds: nothing is projected again), or {id, error} for a session
//     that cannot be read (the row keeps the reason: a non-empty string), or {id, loading: true} for
//     one still being read; any other entry throws KOPT_BAD_ARGUMENT.
//     Fewer than compareMin or more than compareMax entries throw KOPT_BAD_ARGUMENT.
//   compareMin, compareMax: the bounds (numbers).
#include <string>
#include <vector>

#include "init.hpp"
#include "kopt/compare.hpp"
#include "kopt/utf16.hpp"

namespace kopt::addon {
namespace {

Napi::Value Compare(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array entries = ArrayArg(info, 0, "compare(entries)");
  const std::uint32_t n = entries.Length();
  if (n < kCompareMin || n > kCompareMax)
    Throw(env, "KOPT_BAD_ARGUMENT", "compare(entries): a comparison holds " + std::to_string(kCompareMin) + " to " +
                                             std::to_string(kCompareMax) + " sessions, not " + std::to_string(n));
  // Sessions' rows by address (each keeps its points' text from answer to answer); the others here.
  std::vector<RunSummary> others;
  others.reserve(n);
  std::vector<const RunSummary*> runs;
  for (std::uint32_t i = 0; i < n; ++i) {
    Napi::Value e = entries.Get(i);
    if (Session* s = SessionOf(env, e)) {
      runs.push_back(&s->summary());
      continue;
    }
    const std::string what = "compare(entries): entry " + std::to_string(i);
    if (!e.IsObject()) Throw(env, "KOPT_BAD_ARGUMENT", what + " is neither a Session nor {id, error} or {id, loading: true}");
    Napi::Object o = e.As<Napi::Object>();
    RunSummary& r = others.emplace_back();
    const auto id = StringField(env, o, what, "id");
    if (!id) Throw(env, "KOPT_BAD_ARGUMENT", what + " has no string id");
    r.id = *id;
    // Exactly one of the two: a session still being read, or one that cannot be read and why.
    r.loading = BoolField(env, o, what, "loading").value_or(false);
    const auto error = StringField(env, o, what, "error");
    if (r.loading == error.has_value() || (error && error->empty()))
      Throw(env, "KOPT_BAD_ARGUMENT", what + " needs either loading: true or a non-empty error, not both");
    if (error) r.error = utf16_cap(*error, 500);
    runs.push_back(&r);
  }
  const std::string text = compare_text(runs);
  return Napi::Buffer<char>::Copy(env, text.data(), text.size());
}

}  // namespace

void InitCompare(Napi::Env env, Napi::Object exports) {
  Export<Compare>(env, exports, "compare");
  exports.Set("compareMin", Napi::Number::New(env, static_cast<double>(kCompareMin)));
  exports.Set("compareMax", Napi::Number::New(env, static_cast<double>(kCompareMax)));
}

}  // namespace kopt::addon
