// Test build only (KOPT_TEST_EXPORTS): chartJson(seriesJson, optionsJson?) → string, the curve's
// geometry for a /series body (or any wire-form series), the oracle the session's chart is checked
// against. The product's chart is the Session's (session_bindings.cpp).
#include <string>

#include "init.hpp"
#include "kopt/chart.hpp"

namespace kopt::addon {
namespace {

#ifdef KOPT_TEST_EXPORTS
Napi::Value ChartJson(const Napi::CallbackInfo& info) {
  const json series = JsonObjectArg(info, 0, "chartJson(seriesJson)");
  const auto options = OptionalJsonObjectArg(info, 1, "chartJson(…, optionsJson)");
  const ChartOptions opt = options ? ChartOptions::from_json(*options) : ChartOptions{};
  return Napi::String::New(info.Env(), js_stringify(chart_json_from_wire(series, opt)));
}
#endif

}  // namespace

void InitChart([[maybe_unused]] Napi::Env env, [[maybe_unused]] Napi::Object exports) {
#ifdef KOPT_TEST_EXPORTS
  Export<ChartJson>(env, exports, "chartJson");
#endif
}

}  // namespace kopt::addon
