// PhaseClock: accumulates wall time per named phase of a training step (data_wait, h2d, forward,
// backward, optimizer, eval). The engine synchronises the device before each mark on the steps
// it times, so a phase's time is the work of that phase, not of what was queued before it.
#pragma once

#include <chrono>
#include <map>
#include <string>

namespace dyno {

class PhaseClock {
 public:
  using Clock = std::chrono::steady_clock;

  void start() { last_ = Clock::now(); }
  // Charges the time since the previous mark (or start) to `phase`.
  void mark(const std::string& phase) {
    auto now = Clock::now();
    if (recording_) totals_s_[phase] += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }
  void set_recording(bool recording) { recording_ = recording; }
  const std::map<std::string, double>& totals_s() const { return totals_s_; }

 private:
  Clock::time_point last_ = Clock::now();
  bool recording_ = false;
  std::map<std::string, double> totals_s_;
};

}  // namespace dyno
