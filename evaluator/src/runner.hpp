// The runner's main: the same code whether it is exec'd (kopt-bench-runner) or forked from the
// judge's zygote. See runner_main.cpp.
#pragma once

namespace kopt::bench {
int runner_main(int argc, char** argv);
// kopt-bench-runner pybuild ...: a Python solution's build stage, confined (python_build_child.cpp).
int pybuild_main(int argc, char** argv);
}
