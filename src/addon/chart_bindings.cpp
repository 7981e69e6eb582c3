// pageWords() → string: the words the tab shares with the HTML report (kopt/labels.hpp, page_words_json),
// which scripts/build-client.mjs writes into the tab's bundle.
// Test build only (KOPT_TEST_EXPORTS): chartJson(seriesJson, optionsJson?) → string, the curve's
// geometry for a /series body (or any wire-form series), the oracle the session's chart is checked
// against. The product's chart is the Session's (session_bindings.cpp).
#include <string>

#include "init.hpp"
#include "kopt/chart.hpp"
#include "kopt/labels.hpp"

namespace kopt::addon {
namespace {

Napi::Value PageWords(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), page_words_json());
}

#ifdef KOPT_TEST_EXPORTS
Napi::Value ChartJson(const Napi::CallbackInfo& info) {
  const json series = JsonObjectArg(info, 0, "chartJson(seriesJson)");
  const auto options = OptionalJsonObjectArg(info, 1, "chartJson(…, optionsJson)");
  const ChartOptions opt = options ? ChartOptions::from_json(*options) : ChartOptions{};
  return Napi::String::New(info.Env(), js_stringify(chart_json_from_wire(series, opt)));
}
#endif

}  // namespace

void InitChart(Napi::Env env, Napi::Object exports) {
  Export<PageWords>(env, exports, "pageWords");
#ifdef KOPT_TEST_EXPORTS
  Export<ChartJson>(env, exports, "chartJson");
#endif
}

}  // namespace kopt::addon
