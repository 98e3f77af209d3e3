// TableExecutor: throughput read from a table (intervals +-1%), or {low, median, high} read per
// point and budget level (a trial with a wide interval, a slow spell on one point): shapes the
// synthetic objective cannot. It records what it measured, in order.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "dyno/tuner/trial_executor.h"

namespace dyno::testing {

class TableExecutor : public TrialExecutor {
 public:
  using Interval = std::array<double, 3>;
  explicit TableExecutor(std::function<double(const nlohmann::json&)> value)
      : interval_([value](const nlohmann::json& p, int64_t) {
          const double v = value(p);
          return Interval{v * 0.99, v, v * 1.01};
        }) {}
  explicit TableExecutor(std::function<Interval(const nlohmann::json&, int64_t)> interval) : interval_(std::move(interval)) {}
  Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string&) override {
    Trial t;
    t.point = point;
    t.budget_level = request.budget_level;
    t.wall_time_s = 1.0;
    t.peak_memory_bytes = (point.contains("batch_size") && point["batch_size"].is_number_integer() ? point["batch_size"].get<int64_t>() : 64) * 1000;
    const Interval i = interval_(point, request.budget_level);
    t.ci_low = i[0];
    t.samples_per_second = i[1];
    t.ci_high = i[2];
    measured.push_back(point);
    levels.push_back(request.budget_level);
    return t;
  }
  std::vector<nlohmann::json> measured;
  std::vector<int64_t> levels;

 private:
  std::function<Interval(const nlohmann::json&, int64_t)> interval_;
};

}  // namespace dyno::testing
