// Argument checks, one policy for every binding: an argument of the wrong type throws an Error
// with code KOPT_BAD_ARGUMENT naming it; a string that must hold JSON and does not, KOPT_BAD_JSON.
// Other failures inside the core reach JS as Errors too (NODE_ADDON_API_CPP_EXCEPTIONS_ALL): no
// binding guards its own calls.
#pragma once
#include <napi.h>

#include <cstddef>
#include <optional>
#include <string>

#include "kopt/json.hpp"

namespace kopt::addon {

// Throws a JS Error with a stable `code` property.
[[noreturn]] void ThrowCoded(Napi::Env env, const char* code, const std::string& message);

// Argument i as a string.
std::string StringArg(const Napi::CallbackInfo& info, std::size_t i, const char* what);
// The same, or nullopt when it is absent, undefined or null.
std::optional<std::string> OptionalStringArg(const Napi::CallbackInfo& info, std::size_t i, const char* what);
// Argument i as a number.
double NumberArg(const Napi::CallbackInfo& info, std::size_t i, const char* what);
// Argument i as a string holding JSON (parsed with the core's bounded parser).
json JsonArg(const Napi::CallbackInfo& info, std::size_t i, const char* what);

}  // namespace kopt::addon
