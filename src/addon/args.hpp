// The boundary's two policies, one home (as better-sqlite3's one error class and argument macros):
//
// Errors. Every failure a binding reports is a KoptError (exported as kopt.KoptError, a subclass of
// Error made once per environment), with a stable `code` and a message, thrown through Throw().
// A binding body runs inside Guarded(): an exception from the core reaches JS as a KoptError too
// (KOPT_NO_MEMORY, KOPT_INTERNAL), never as a plain Error without a code. Codes:
//   KOPT_BAD_ARGUMENT  an argument of the wrong type or out of range (its name says which)
//   KOPT_BAD_JSON      a string argument that must hold JSON (of a given shape) and does not
//   KOPT_BAD_EVENTS    feed(): text that is neither JSON events nor JSONL of events
//   KOPT_BAD_CONFIG    a routing config the projector refuses
//   KOPT_BAD_LOG       loadSession(): a log file that cannot be read
//   KOPT_PRESET_SYNC   syncPreset(): the sync itself failed
//   KOPT_NO_MEMORY, KOPT_INTERNAL   the core failed (out of memory; a broken invariant)
//
// Arguments. One line per argument, through the readers below: an absent optional argument is
// undefined or null and gives nullopt; anything else of the wrong type throws KOPT_BAD_ARGUMENT.
// No reader falls back to a default on a wrong value, and none rounds, truncates or drops one.
//
// Results (docs/development.md, the boundary): what goes to the wire as it is (a /series answer, a
// comparison, the CSV, the control's text) crosses as a Buffer or a string and JS never parses it;
// everything JS reads crosses as one JS value built here from the core's value (ToJs), never as JSON
// text for JS to parse.
#pragma once
#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <string>

#include "kopt/json.hpp"

namespace kopt::addon {

// Throws a KoptError with `code` and `message` (a C++ exception that node-addon-api turns into
// the JS exception at the binding's edge).
[[noreturn]] void Throw(Napi::Env env, const char* code, const std::string& message);
// A KoptError value, for a promise to reject with.
Napi::Value MakeError(Napi::Env env, const char* code, const std::string& message);

// Runs a binding's body; a core exception leaves it as a KoptError.
template <class Body>
auto Guarded(Napi::Env env, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const Napi::Error&) {
    throw;  // already a JS exception (a KoptError from Throw, or one JS threw into us)
  } catch (const std::bad_alloc&) {
    Throw(env, "KOPT_NO_MEMORY", "out of memory in the native core");
  } catch (const std::exception& e) {
    Throw(env, "KOPT_INTERNAL", std::string("native core: ") + e.what());
  }
}

// Each class that wraps a core object declares its methods through this member template, so every
// method and accessor runs Guarded: InstanceMethod<&Self::Method<&Self::Feed>>("feed").
#define KOPT_GUARDED_METHODS(Self)                                                        \
  template <Napi::Value (Self::*M)(const Napi::CallbackInfo&)>                            \
  Napi::Value Method(const Napi::CallbackInfo& info) {                                    \
    return ::kopt::addon::Guarded(info.Env(), [&] { return (this->*M)(info); });          \
  }

// A free function as a guarded JS function.
template <Napi::Value (*F)(const Napi::CallbackInfo&)>
Napi::Value Function(const Napi::CallbackInfo& info) {
  return Guarded(info.Env(), [&] { return F(info); });
}
template <Napi::Value (*F)(const Napi::CallbackInfo&)>
void Export(Napi::Env env, Napi::Object exports, const char* name) {
  exports.Set(name, Napi::Function::New(env, Function<F>, name));
}

// Whether argument i is absent (missing, undefined or null).
bool Absent(const Napi::CallbackInfo& info, std::size_t i);

std::string StringArg(const Napi::CallbackInfo& info, std::size_t i, const char* what);
std::optional<std::string> OptionalStringArg(const Napi::CallbackInfo& info, std::size_t i, const char* what);
double NumberArg(const Napi::CallbackInfo& info, std::size_t i, const char* what);
// A whole number in 0…max (max at most 2^53, where doubles stop being whole-exact).
std::uint64_t WholeNumberArg(const Napi::CallbackInfo& info, std::size_t i, const char* what, double max = 9007199254740991.0);
bool BoolArg(const Napi::CallbackInfo& info, std::size_t i, const char* what);
Napi::Array ArrayArg(const Napi::CallbackInfo& info, std::size_t i, const char* what);
// A string holding JSON (the core's bounded parser); KOPT_BAD_JSON when it does not parse.
json JsonArg(const Napi::CallbackInfo& info, std::size_t i, const char* what);
// The same, and it must be a JSON object.
json JsonObjectArg(const Napi::CallbackInfo& info, std::size_t i, const char* what);
std::optional<json> OptionalJsonObjectArg(const Napi::CallbackInfo& info, std::size_t i, const char* what);
// A string that is one of `allowed` (a null-terminated list).
std::string OneOfArg(const Napi::CallbackInfo& info, std::size_t i, const char* what, const char* const* allowed);

// Fields of an options object (`what` names the object in the message): a non-empty string; a
// number in [lo, hi]; a whole number in [lo, hi]; a string; true or false (nullopt when absent).
std::string NonEmptyStringField(Napi::Env env, const Napi::Object& o, const char* key);
std::optional<double> NumberField(Napi::Env env, const Napi::Object& o, const char* key, double lo, double hi);
std::optional<double> WholeNumberField(Napi::Env env, const Napi::Object& o, const char* key, double lo, double hi);
std::optional<std::string> StringField(Napi::Env env, const Napi::Object& o, const std::string& what, const char* key);
std::optional<bool> BoolField(Napi::Env env, const Napi::Object& o, const std::string& what, const char* key);

// A JS value built from the core's JSON value in one walk (objects keep their key order): how a
// result that JS reads crosses the boundary.
Napi::Value ToJs(Napi::Env env, const json& v);

}  // namespace kopt::addon
