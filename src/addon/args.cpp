#include "args.hpp"

namespace kopt::addon {

void ThrowCoded(Napi::Env env, const char* code, const std::string& message) {
  Napi::Error err = Napi::Error::New(env, message);
  err.Set("code", Napi::String::New(env, code));
  throw err;
}

std::string StringArg(const Napi::CallbackInfo& info, std::size_t i, const char* what) {
  if (info.Length() <= i || !info[i].IsString()) ThrowCoded(info.Env(), "KOPT_BAD_ARGUMENT", std::string(what) + " must be a string");
  return info[i].As<Napi::String>().Utf8Value();
}

std::optional<std::string> OptionalStringArg(const Napi::CallbackInfo& info, std::size_t i, const char* what) {
  if (info.Length() <= i || info[i].IsUndefined() || info[i].IsNull()) return std::nullopt;
  return StringArg(info, i, what);
}

double NumberArg(const Napi::CallbackInfo& info, std::size_t i, const char* what) {
  if (info.Length() <= i || !info[i].IsNumber()) ThrowCoded(info.Env(), "KOPT_BAD_ARGUMENT", std::string(what) + " must be a number");
  return info[i].As<Napi::Number>().DoubleValue();
}

json JsonArg(const Napi::CallbackInfo& info, std::size_t i, const char* what) {
  auto v = parse_json(StringArg(info, i, what));
  if (!v) ThrowCoded(info.Env(), "KOPT_BAD_JSON", std::string(what) + " is not valid JSON (or is nested too deep)");
  return std::move(*v);
}

}  // namespace kopt::addon
