#include "args.hpp"

#include <cstring>
#include <vector>

#include "init.hpp"

namespace kopt::addon {

Napi::Function DefineErrorClass(Napi::Env env) {
  // The class is JavaScript (an Error subclass keeps its stack and `instanceof Error`); the addon
  // compiles it once per environment and builds every instance from C++ (MakeError).
  static const char* const source =
      "(() => { class KoptError extends Error {"
      " constructor(message, code) { super(message); this.code = code } }"
      " Object.defineProperty(KoptError.prototype, 'name', { value: 'KoptError', writable: true, configurable: true });"
      " return KoptError })()";
  napi_value script, result;
  NAPI_THROW_IF_FAILED(env, napi_create_string_utf8(env, source, NAPI_AUTO_LENGTH, &script), Napi::Function());
  NAPI_THROW_IF_FAILED(env, napi_run_script(env, script, &result), Napi::Function());
  return Napi::Function(env, result);
}

Napi::Value MakeError(Napi::Env env, const char* code, const std::string& message) {
  return ClassesOf(env).error.New({Napi::String::New(env, message), Napi::String::New(env, code)});
}

void Throw(Napi::Env env, const char* code, const std::string& message) {
  throw Napi::Error(env, MakeError(env, code, message));
}

bool Absent(const Napi::CallbackInfo& info, std::size_t i) {
  return info.Length() <= i || info[i].IsUndefined() || info[i].IsNull();
}

std::string StringArg(const Napi::CallbackInfo& info, std::size_t i, const char* what) {
  if (info.Length() <= i || !info[i].IsString()) Throw(info.Env(), "KOPT_BAD_ARGUMENT", std::string(what) + " must be a string");
  return info[i].As<Napi::String>().Utf8Value();
}

std::optional<std::string> OptionalStringArg(const Napi::CallbackInfo& info, std::size_t i, const char* what) {
  if (Absent(info, i)) return std::nullopt;
  return StringArg(info, i, what);
}

double NumberArg(const Napi::CallbackInfo& info, std::size_t i, const char* what) {
  if (info.Length() <= i || !info[i].IsNumber()) Throw(info.Env(), "KOPT_BAD_ARGUMENT", std::string(what) + " must be a number");
  return info[i].As<Napi::Number>().DoubleValue();
}

std::uint64_t WholeNumberArg(const Napi::CallbackInfo& info, std::size_t i, const char* what, double max) {
  const double d = NumberArg(info, i, what);
  if (!(d >= 0 && d <= max && d == static_cast<double>(static_cast<std::uint64_t>(d))))
    Throw(info.Env(), "KOPT_BAD_ARGUMENT", std::string(what) + " must be a whole number from 0 to " + js_number(max));
  return static_cast<std::uint64_t>(d);
}

bool BoolArg(const Napi::CallbackInfo& info, std::size_t i, const char* what) {
  if (info.Length() <= i || !info[i].IsBoolean()) Throw(info.Env(), "KOPT_BAD_ARGUMENT", std::string(what) + " must be true or false");
  return info[i].As<Napi::Boolean>().Value();
}

Napi::Array ArrayArg(const Napi::CallbackInfo& info, std::size_t i, const char* what) {
  if (info.Length() <= i || !info[i].IsArray()) Throw(info.Env(), "KOPT_BAD_ARGUMENT", std::string(what) + " must be an array");
  return info[i].As<Napi::Array>();
}

json JsonArg(const Napi::CallbackInfo& info, std::size_t i, const char* what) {
  auto v = parse_json(StringArg(info, i, what));
  if (!v) Throw(info.Env(), "KOPT_BAD_JSON", std::string(what) + " is not valid JSON (or is nested too deep)");
  return std::move(*v);
}

json JsonObjectArg(const Napi::CallbackInfo& info, std::size_t i, const char* what) {
  json v = JsonArg(info, i, what);
  if (!v.is_object()) Throw(info.Env(), "KOPT_BAD_JSON", std::string(what) + " must be a JSON object");
  return v;
}

std::optional<json> OptionalJsonObjectArg(const Napi::CallbackInfo& info, std::size_t i, const char* what) {
  if (Absent(info, i)) return std::nullopt;
  return JsonObjectArg(info, i, what);
}

std::string OneOfArg(const Napi::CallbackInfo& info, std::size_t i, const char* what, const char* const* allowed) {
  std::string v = StringArg(info, i, what);
  std::string names;
  for (const char* const* a = allowed; *a; ++a) {
    if (v == *a) return v;
    names += names.empty() ? *a : std::string(" | ") + *a;
  }
  Throw(info.Env(), "KOPT_BAD_ARGUMENT", std::string(what) + " must be " + names);
}

std::string NonEmptyStringField(Napi::Env env, const Napi::Object& o, const char* key) {
  const Napi::Value v = o.Get(key);
  if (!v.IsString() || v.As<Napi::String>().Utf8Value().empty())
    Throw(env, "KOPT_BAD_ARGUMENT", std::string(key) + " must be a non-empty string");
  return v.As<Napi::String>().Utf8Value();
}

std::optional<double> NumberField(Napi::Env env, const Napi::Object& o, const char* key, double lo, double hi) {
  const Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return std::nullopt;
  if (!v.IsNumber()) Throw(env, "KOPT_BAD_ARGUMENT", std::string(key) + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= lo && d <= hi)) Throw(env, "KOPT_BAD_ARGUMENT", std::string(key) + " out of range");
  return d;
}

std::optional<double> WholeNumberField(Napi::Env env, const Napi::Object& o, const char* key, double lo, double hi) {
  const auto d = NumberField(env, o, key, lo, hi);
  if (d && *d != static_cast<double>(static_cast<std::uint64_t>(*d)))
    Throw(env, "KOPT_BAD_ARGUMENT", std::string(key) + " must be a whole number");
  return d;
}

std::optional<std::string> StringField(Napi::Env env, const Napi::Object& o, const std::string& what, const char* key) {
  const Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return std::nullopt;
  if (!v.IsString()) Throw(env, "KOPT_BAD_ARGUMENT", what + ": " + key + " must be a string");
  return v.As<Napi::String>().Utf8Value();
}

std::optional<bool> BoolField(Napi::Env env, const Napi::Object& o, const std::string& what, const char* key) {
  const Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return std::nullopt;
  if (!v.IsBoolean()) Throw(env, "KOPT_BAD_ARGUMENT", what + ": " + key + " must be true or false");
  return v.As<Napi::Boolean>().Value();
}

Napi::Value ToJs(Napi::Env env, const json& v) {
  switch (v.type()) {
    case json::value_t::null: return env.Null();
    case json::value_t::boolean: return Napi::Boolean::New(env, v.get<bool>());
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return Napi::Number::New(env, *as_number(v));
    case json::value_t::string: return Napi::String::New(env, v.get_ref<const std::string&>());
    case json::value_t::array: {
      Napi::Array a = Napi::Array::New(env, v.size());
      uint32_t i = 0;
      for (const auto& e : v) a.Set(i++, ToJs(env, e));
      return a;
    }
    case json::value_t::object: {
      // Defined, not assigned (as JSON.parse does): a key such as "__proto__" is an own property.
      Napi::Object o = Napi::Object::New(env);
      std::vector<Napi::PropertyDescriptor> props;
      props.reserve(v.size());
      for (const auto& [key, e] : v.items())
        props.push_back(Napi::PropertyDescriptor::Value(Napi::String::New(env, key), ToJs(env, e), napi_default_jsproperty));
      o.DefineProperties(props);
      return o;
    }
    default: Throw(env, "KOPT_INTERNAL", "native core: a value JavaScript has no form for");
  }
}

}  // namespace kopt::addon
