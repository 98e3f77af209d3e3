// PhaseClock: accumulates time per named phase of a training step (data_wait, h2d, forward,
// backward, optimizer). The host clock (CPU) charges the wall time between marks; the CUDA clock
// (suite/cuda/) records a timing event on the stream at each mark and charges the stream's time
// between events, read when collect() is called after a synchronisation, so that marking never
// waits for the device.
#pragma once

#include <chrono>
#include <map>
#include <string>

namespace dyno {

class PhaseClock {
 public:
  virtual ~PhaseClock() = default;
  // Starts a step: the next mark's phase begins now.
  virtual void start() = 0;
  // Charges the time since the previous mark (or start) to `phase`, when recording.
  virtual void mark(const std::string& phase) = 0;
  // Folds the marks taken so far into totals_s(); the device must be idle (CUDA).
  virtual void collect() {}
  void set_recording(bool recording) { recording_ = recording; }
  const std::map<std::string, double>& totals_s() const { return totals_s_; }

 protected:
  bool recording_ = false;
  std::map<std::string, double> totals_s_;
};

class HostPhaseClock : public PhaseClock {
 public:
  using Clock = std::chrono::steady_clock;
  void start() override { last_ = Clock::now(); }
  void mark(const std::string& phase) override {
    auto now = Clock::now();
    if (recording_) totals_s_[phase] += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  Clock::time_point last_ = Clock::now();
};

}  // namespace dyno
