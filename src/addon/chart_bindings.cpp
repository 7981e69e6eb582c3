// chartJson(seriesJson, optionsJson?) → string: the curve's geometry for a /series body (or any
// wire-form series). Strings in and out; the core does the work.
#include <string>

#include "init.hpp"
#include "kopt/chart.hpp"

namespace kopt::addon {
namespace {

Napi::Value ChartJson(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const json series = JsonArg(info, 0, "chartJson(seriesJson)");
  if (!series.is_object()) ThrowCoded(env, "KOPT_BAD_JSON", "chartJson: the series is not a JSON object");
  kopt::ChartOptions opt;
  if (auto o = OptionalStringArg(info, 1, "chartJson(…, optionsJson)")) {
    auto j = kopt::parse_json(*o);
    if (!j) ThrowCoded(env, "KOPT_BAD_JSON", "chartJson: options are not JSON");
    opt = kopt::ChartOptions::from_json(*j);
  }
  return Napi::String::New(env, kopt::js_stringify(kopt::chart_json_from_wire(series, opt)));
}

}  // namespace

void InitChart(Napi::Env env, Napi::Object exports) {
  exports.Set("chartJson", Napi::Function::New(env, ChartJson, "chartJson"));
}

}  // namespace kopt::addon
