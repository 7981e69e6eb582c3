// Work off the JS thread that answers with a promise: the one shape of every such binding
// (loadSession, runReplay). Run() on a worker thread records a failure with Fail(code, message) or
// leaves its result in the subclass; Result() on the JS thread makes the value to resolve with. A
// failure, or an exception from either, rejects with a KoptError (args.hpp).
#pragma once
#include <napi.h>

#include <exception>
#include <new>
#include <string>

#include "args.hpp"

namespace kopt::addon {

class PromiseWorker : public Napi::AsyncWorker {
 public:
  PromiseWorker(Napi::Env env, const char* name) : Napi::AsyncWorker(env, name), deferred_(Napi::Promise::Deferred::New(env)) {}
  // The promise; queues the work.
  Napi::Promise Start() {
    Napi::Promise p = deferred_.Promise();
    Queue();
    return p;
  }

 protected:
  virtual void Run() = 0;                          // worker thread
  virtual Napi::Value Result(Napi::Env env) = 0;  // JS thread, when Run() did not Fail
  void Fail(const char* code, std::string message) {
    code_ = code;
    message_ = std::move(message);
  }

 private:
  void Execute() final {
    try {
      Run();
    } catch (const std::bad_alloc&) {
      Fail("KOPT_NO_MEMORY", "out of memory in the native core");
    } catch (const std::exception& e) {
      Fail("KOPT_INTERNAL", std::string("native core: ") + e.what());
    }
  }
  void OnOK() final {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    if (code_ != nullptr) {
      deferred_.Reject(MakeError(env, code_, message_));
      return;
    }
    try {
      deferred_.Resolve(Guarded(env, [&] { return Result(env); }));
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
    }
  }
  void OnError(const Napi::Error& e) final { deferred_.Reject(e.Value()); }

  Napi::Promise::Deferred deferred_;
  const char* code_ = nullptr;
  std::string message_;
};

}  // namespace kopt::addon
