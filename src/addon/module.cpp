// Module entry of kopt.node: registers every binding file's exports.
#include "init.hpp"

namespace kopt::addon {

void ThrowCoded(Napi::Env env, const char* code, const std::string& message) {
  Napi::Error err = Napi::Error::New(env, message);
  err.Set("code", Napi::String::New(env, code));
  throw err;
}

}  // namespace kopt::addon

static Napi::Object Init(Napi::Env env, Napi::Object exports) {
  kopt::addon::InitProjection(env, exports);
  kopt::addon::InitHost(env, exports);
  kopt::addon::InitLoop(env, exports);
  kopt::addon::InitChart(env, exports);
  kopt::addon::InitSession(env, exports);
  return exports;
}

NODE_API_MODULE(kopt, Init)
