// Placeholder until the host bindings land; keeps the module linkable.
#include "init.hpp"

namespace kopt::addon {
void InitHost(Napi::Env, Napi::Object) {}
}  // namespace kopt::addon
