#include "callable.hpp"

#include <dlfcn.h>

#include <stdexcept>

#include "channel.hpp"
#include "inputs.hpp"
#include "python_op.hpp"

namespace kopt::bench {

Callable Callable::script(const std::string& path, at::Device dev, bool train, const std::string& precision) {
  Callable c;
  c.module = torch::jit::load(path, dev);
  c.module->train(train);
  if (precision != "float32") c.module->to(scalar_type_of(precision));
  return c;
}

Callable Callable::library(const std::string& so, const std::string& ns) {
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw std::runtime_error(std::string("cannot load the library: ") + dlerror());
  Callable c;
  c.op = c10::Dispatcher::singleton().findSchema({ns + "::forward", ""});
  if (!c.op)
    throw std::runtime_error("no op '" + ns +
                             "::forward' is registered — define it with KOPT_LIBRARY(m) { m.def(\"forward(...) -> Tensor\"); }");
  return c;
}

Callable Callable::python(const std::string& path, const std::string& launch, at::Device dev) {
  Callable c;
  c.py = PythonOp::load(path, launch, dev);
  return c;
}

std::vector<at::Tensor> Callable::call(std::vector<c10::IValue> stack, const char* who) {
  if (py) return py->call(stack, who);
  if (module) return to_outputs({module->forward(stack)}, who);
  op->callBoxed(&stack);
  return to_outputs(stack, who);
}

}  // namespace kopt::bench
