// Placeholder until the loop bindings land; keeps the module linkable.
#include "init.hpp"

namespace kopt::addon {
void InitLoop(Napi::Env, Napi::Object) {}
}  // namespace kopt::addon
