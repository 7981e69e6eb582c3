// kopt-bench-runner as a binary of its own: the runner when the judge's zygote is not there.
#include "runner.hpp"

int main(int argc, char** argv) { return kopt::bench::runner_main(argc, argv); }
