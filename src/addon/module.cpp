// Module entry of kopt.node: registers every binding file's exports.
#include "init.hpp"

namespace kopt::addon {

Classes& ClassesOf(Napi::Env env) { return *env.GetInstanceData<Classes>(); }

}  // namespace kopt::addon

static Napi::Object Init(Napi::Env env, Napi::Object exports) {
  env.SetInstanceData(new kopt::addon::Classes());  // deleted by the environment at its end
  kopt::addon::InitProjection(env, exports);
  kopt::addon::InitHost(env, exports);
  kopt::addon::InitLoop(env, exports);
  kopt::addon::InitChart(env, exports);
  kopt::addon::InitSession(env, exports);
  kopt::addon::InitCompare(env, exports);
  kopt::addon::InitEvaluate(env, exports);
  return exports;
}

NODE_API_MODULE(kopt, Init)
