// Placeholder until the chart bindings land; keeps the module linkable.
#include "init.hpp"

namespace kopt::addon {
void InitChart(Napi::Env, Napi::Object) {}
}  // namespace kopt::addon
