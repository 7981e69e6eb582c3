// Module entry of kopt.node: registers every binding file's exports. The product build exports
// what lib/ uses; the test build (kopt-test.node, KOPT_TEST_EXPORTS) adds the tests' oracles.
#include "init.hpp"

#ifdef KOPT_TEST_EXPORTS
#include <malloc.h>
#endif

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
#if defined(KOPT_TEST_EXPORTS) && defined(__GLIBC__)
  // Test build only: glibc's malloc figures (mallinfo2, bytes), for the memory measurements of
  // docs/performance.md: arena (sbrk'd), mmapped (hblkhd), inUse (uordblks + hblkhd), free (fordblks).
  exports.Set("mallocStats", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    const struct mallinfo2 m = mallinfo2();
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("arena", static_cast<double>(m.arena));
    o.Set("mmapped", static_cast<double>(m.hblkhd));
    o.Set("inUse", static_cast<double>(m.uordblks + m.hblkhd));
    o.Set("free", static_cast<double>(m.fordblks));
    return o;
  }));
  exports.Set("mallocTrim", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Napi::Boolean::New(info.Env(), malloc_trim(0) != 0);
  }));
#endif
  return exports;
}

NODE_API_MODULE(kopt, Init)
