// chartJson(seriesJson, optionsJson?) → string: the curve's geometry for a /series body (or any
// wire-form series). Strings in and out; the core does the work.
#include <string>

#include "init.hpp"
#include "kopt/chart.hpp"

namespace kopt::addon {
namespace {

Napi::Value ChartJson(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) ThrowCoded(env, "KOPT_BAD_ARGUMENT", "chartJson(seriesJson: string, optionsJson?: string)");
  const std::string text = info[0].As<Napi::String>().Utf8Value();
  auto series = kopt::parse_json(text);
  if (!series || !series->is_object()) ThrowCoded(env, "KOPT_BAD_JSON", "chartJson: the series is not a JSON object");
  kopt::ChartOptions opt;
  if (info.Length() >= 2 && info[1].IsString()) {
    auto o = kopt::parse_json(info[1].As<Napi::String>().Utf8Value());
    if (!o) ThrowCoded(env, "KOPT_BAD_JSON", "chartJson: options are not JSON");
    opt = kopt::ChartOptions::from_json(*o);
  }
  try {
    return Napi::String::New(env, kopt::js_stringify(kopt::chart_json_from_wire(*series, opt)));
  } catch (const Napi::Error&) {
    throw;
  } catch (const std::exception& e) {
    ThrowCoded(env, "KOPT_INTERNAL", std::string("chartJson: ") + e.what());
  }
}

}  // namespace

void InitChart(Napi::Env env, Napi::Object exports) {
  exports.Set("chartJson", Napi::Function::New(env, ChartJson, "chartJson"));
}

}  // namespace kopt::addon
