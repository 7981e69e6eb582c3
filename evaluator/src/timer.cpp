#include "timer.hpp"

#include <chrono>

namespace kopt::bench {
namespace {
class HostTimer : public Timer {
 public:
  std::string name() const override { return "host"; }
  void start() override { t0_ = std::chrono::steady_clock::now(); }
  double stop_ms() override {
    last_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
    return last_;
  }
  double last_wall_ms() const override { return last_; }

 private:
  std::chrono::steady_clock::time_point t0_;
  double last_ = 0;
};
}  // namespace

std::unique_ptr<Timer> make_host_timer() { return std::make_unique<HostTimer>(); }

}  // namespace kopt::bench
