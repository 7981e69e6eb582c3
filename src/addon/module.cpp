// Module entry of kopt.node: registers every binding file's exports. The product build exports
// what lib/ uses; the test build (kopt-test.node, KOPT_TEST_EXPORTS) adds the tests' oracles.
#include "init.hpp"

namespace kopt::addon {

Classes& ClassesOf(Napi::Env env) { return *env.GetInstanceData<Classes>(); }

}  // namespace kopt::addon

static Napi::Object Init(Napi::Env env, Napi::Object exports) {
  auto* classes = new kopt::addon::Classes();
  env.SetInstanceData(classes);  // deleted by the environment at its end
  Napi::Function error = kopt::addon::DefineErrorClass(env);
  classes->error = Napi::Persistent(error);
  exports.Set("KoptError", error);
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
