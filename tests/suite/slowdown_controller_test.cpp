// The planted slowdown on CUDA: delaying the host and the device by the controller's amount at one
// point of the step makes every step's period (1 + fraction) times what it was, whichever of the
// two bounds the step, whether the host waits for the device within the step (a pageable copy) or
// not, and however deep the launch queue. Checked on a simulated step: the host builds a batch,
// optionally waits for the device and copies, then launches kernels into a queue of bounded depth.
#include "dyno/suite/slowdown_controller.h"

#include <algorithm>
#include <deque>

#include <gtest/gtest.h>

namespace dyno {
namespace {

struct SimulatedStep {
  double build = 0;        // host: the batch, before the copy
  bool waits = false;      // the host waits for the device before its copy (pageable memory)
  double copy = 0;         // host, after the wait
  int kernels = 0;         // launched per step
  double launch = 0;       // host time per launch
  double kernel = 0;       // device time per kernel
  size_t queue_depth = 0;  // launches the device may be behind by
};

// Seconds per step in the steady state (steps 200 to 400), with the slowdown's `fraction` (0: none).
double period_s(const SimulatedStep& s, double fraction) {
  SlowdownController controller(fraction);
  double host = 0, device_free = 0;
  std::deque<double> queued_ends;  // end times of the launched work the device has not finished
  auto enqueue = [&](double device_time) {
    while (!queued_ends.empty() && queued_ends.front() <= host) queued_ends.pop_front();
    if (queued_ends.size() >= s.queue_depth) {  // the host blocks until a slot frees
      host = std::max(host, queued_ends[queued_ends.size() - s.queue_depth]);
      while (!queued_ends.empty() && queued_ends.front() <= host) queued_ends.pop_front();
    }
    device_free = std::max(device_free, host) + device_time;
    queued_ends.push_back(device_free);
  };
  double at_200 = 0;
  for (int step = 0; step < 400; ++step) {
    if (step == 200) at_200 = device_free;
    const double start = host;
    host += s.build;
    if (s.waits) host = std::max(host, device_free);
    host += s.copy;
    for (int k = 0; k < s.kernels; ++k) {
      host += s.launch;
      enqueue(s.kernel);
    }
    if (fraction > 0) {
      const double delay = controller.delay_s(host, host - start);
      enqueue(delay);  // the spin, queued first
      host += delay;   // then the busy-wait
    }
  }
  return (device_free - at_200) / 200;
}

// (The steps below: build, waits, copy, kernels, launch, kernel, queue_depth; 50 kernels of 5 us
// against 1 ms of host work is host-bound, of 60 us device-bound.)
void expect_slowed_by(const SimulatedStep& s) {
  for (double fraction : {0.05, 0.2, 0.5}) {
    const double ratio = period_s(s, fraction) / period_s(s, 0);
    EXPECT_NEAR(ratio, 1 + fraction, 0.01 * (1 + fraction)) << "fraction " << fraction;
  }
}

TEST(SlowdownController, AHostBoundStepThatWaitsForTheDeviceSlowsByTheFraction) {
  expect_slowed_by({1e-3, true, 1e-4, 50, 2e-5, 5e-6, 1024});
}

TEST(SlowdownController, ADeviceBoundStepThatWaitsForTheDeviceSlowsByTheFraction) {
  expect_slowed_by({1e-4, true, 1e-4, 50, 2e-5, 6e-5, 1024});
}

TEST(SlowdownController, AHostBoundStepWithPinnedCopiesSlowsByTheFraction) {
  expect_slowed_by({1e-3, false, 1e-5, 50, 2e-5, 5e-6, 1024});
}

TEST(SlowdownController, ADeviceBoundStepWithPinnedCopiesSlowsByTheFractionAtAnyQueueDepth) {
  for (size_t depth : {4u, 64u, 1024u}) {
    SCOPED_TRACE(depth);
    expect_slowed_by({1e-4, false, 1e-5, 50, 2e-5, 6e-5, depth});
  }
}

TEST(SlowdownController, APauseBetweenTwoStepsIsNotTakenForTheStepsPeriod) {
  SlowdownController controller(0.2);
  double now = 0, delay = 0;
  for (int step = 0; step < 20; ++step) {
    now += 0.01 + delay + (step == 10 ? 1.0 : 0);  // an evaluation before step 10
    delay = controller.delay_s(now, 0.01);
    EXPECT_NEAR(delay, 0.002, 1e-9) << "step " << step;
  }
}

}  // namespace
}  // namespace dyno
