// SlowdownController: how long the planted slowdown (`slowdown_percent`) delays a CUDA step. The
// caller delays the device (a spinning kernel queued first) and the host (a busy-wait) by the same
// amount at the same point of the step: every later host and device event is a sum or a max of
// earlier ones (the host waits for the device, kernels wait for their launch, launches for queue
// room), so both timelines shift by exactly that amount, whichever of them bounds the step and
// wherever the host waits for the device within it. The amount is `fraction` of the step's period
// without the delay: the period between calls less the last delay, the median of the last eight
// (a log point's sync, an evaluation or a save between two calls is one period of eight).
#pragma once

#include <deque>
#include <optional>

namespace dyno {

class SlowdownController {
 public:
  explicit SlowdownController(double fraction) : fraction_(fraction) {}
  // The delay for this step, in seconds: `now_s` is the call's time (before any delay), `step_s` the
  // step's own time, the estimate until a period has been seen.
  double delay_s(double now_s, double step_s);

 private:
  double fraction_;
  std::optional<double> last_call_s_;
  double last_delay_s_ = 0;
  std::deque<double> undelayed_periods_s_;  // the last eight
};

}  // namespace dyno
