// The runner's main: the same code whether it is exec'd (kopt-bench-runner) or forked from the
// judge's zygote. See runner_main.cpp.
#pragma once

namespace kopt::bench {
int runner_main(int argc, char** argv);
}
