// Each binding file adds its functions to the module's exports; module.cpp calls them all.
#pragma once
#include <napi.h>

#include "args.hpp"

#include "kopt/projector.hpp"
#include "kopt/session.hpp"

namespace kopt::addon {

void InitProjection(Napi::Env env, Napi::Object exports);  // projection_bindings.cpp
void InitHost(Napi::Env env, Napi::Object exports);        // host_bindings.cpp: preset sync, replay
void InitLoop(Napi::Env env, Napi::Object exports);        // loop_bindings.cpp: the loop's free helpers
void InitChart(Napi::Env env, Napi::Object exports);       // chart_bindings.cpp: the chart oracle (test build)
void InitSession(Napi::Env env, Napi::Object exports);     // session_bindings.cpp: the /series route's session
void InitCompare(Napi::Env env, Napi::Object exports);     // compare_bindings.cpp: comparing sessions
void InitEvaluate(Napi::Env env, Napi::Object exports);    // evaluate_bindings.cpp: kernel_evaluate's checks and result

// The core Projector inside a JS Projector object (other bindings read the series through it);
// throws a coded TypeError when the value is not one.
kopt::Projector& UnwrapProjector(Napi::Env env, Napi::Value value);
// A new JS Projector (config: a routing JSON string, or undefined for the defaults).
Napi::Object NewProjector(Napi::Env env, Napi::Value config);
// A JS Projector taking over a finished core Projector (one read off the main thread).
Napi::Object NewProjectorFrom(Napi::Env env, kopt::Projector&& core);

// What feed() answers, for the Projector and the Session alike: {events, skipped, unreadable}.
Napi::Object FeedResult(Napi::Env env, const FeedStats& stats, std::size_t unreadable);

// The core Session inside a JS Session object, or nullptr when the value is not one.
kopt::Session* SessionOf(Napi::Env env, Napi::Value value);

// A projection config from a routing JSON string (undefined/null: the defaults); coded errors.
kopt::ProjectionConfig ConfigFrom(Napi::Env env, const Napi::Value& v);

// The classes one environment (the main thread or a worker thread that loads the addon) made,
// kept as that environment's instance data and released with it: never a process-wide static.
struct Classes {
  Napi::FunctionReference projector, session, error;
};
// The KoptError class (args.cpp), compiled once per environment.
Napi::Function DefineErrorClass(Napi::Env env);
Classes& ClassesOf(Napi::Env env);

}  // namespace kopt::addon
