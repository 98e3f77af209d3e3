#include "dyno/reports/run_report.h"

#include <cmath>
#include <filesystem>

#include <gtest/gtest.h>

#include "user_error_matcher.h"

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

RunReport sample() {
  RunReport r;
  r.config = {{"workload", "fashion-mlp"}, {"batch_size", 64}};
  r.environment.libtorch_version = "2.11.0";
  r.summary.samples_per_second = 1234.5;
  r.summary.time_to_target_s = 12.5;
  r.summary.metric_name = "accuracy";
  r.summary.final_metric = 0.89;
  r.throughput_windows = {1200, 1234.5, 1250};
  r.loss_curve = {{10, 0.1, 1.0, 2.3}, {20, 0.2, 2.0, 1.1}};
  r.phases["forward"] = {1.0, 0.5, 0.25};
  return r;
}

TEST(RunReport, RoundTripsThroughJson) {
  nlohmann::json j = to_json(sample());
  RunReport back = report_from_json(j);
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(j["schema_version"], "1.6");
  EXPECT_DOUBLE_EQ(*back.summary.time_to_target_s, 12.5);
  // A report of dyno before 1.1 has neither verdict nor profile; they are null when absent.
  EXPECT_TRUE(j["verdict"].is_null());
  EXPECT_TRUE(j["profile"].is_null());
  EXPECT_FALSE(back.verdict || back.profile);
}

TEST(RunReport, TimeToTargetIsNullWhenNotReached) {
  RunReport r = sample();
  r.summary.time_to_target_s.reset();
  nlohmann::json j = to_json(r);
  EXPECT_TRUE(j["summary"]["time_to_target_s"].is_null());
  EXPECT_FALSE(report_from_json(j).summary.time_to_target_s.has_value());
}

TEST(RunReport, ReadsOlderMinorAndRejectsUnknownMajor) {
  nlohmann::json j = to_json(sample());
  j["schema_version"] = "1.7";
  EXPECT_NO_THROW(report_from_json(j));
  j["schema_version"] = "2.0";
  try {
    report_from_json(j);
    FAIL() << "major 2 accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("schema_version '2.0' has major version 2; this dyno reads major version 1"), std::string::npos);
  }
  for (const char* version : {"1.5.7junk", "1", ".5"}) {
    j["schema_version"] = version;
    const std::string message = testing::error_of([&] { report_from_json(j); });
    EXPECT_NE(message.find("schema_version '" + std::string(version) + "' is not MAJOR.MINOR"), std::string::npos) << message;
  }
  j["schema_version"] = 1;
  EXPECT_NE(testing::error_of([&] { report_from_json(j); }).find("schema_version is 1, not a \"MAJOR.MINOR\" string"), std::string::npos);
  j.erase("schema_version");
  EXPECT_THROW(report_from_json(j), UserError);
}

TEST(RunReport, ReadRejectsMalformedFiles) {
  auto dir = std::filesystem::temp_directory_path() / "dyno_run_report_test";
  std::filesystem::create_directories(dir);
  write_file_atomically((dir / "bad.json").string(), "{not json");
  EXPECT_THROW(read_report((dir / "bad.json").string()), UserError);
  write_report((dir / "good.json").string(), sample());
  EXPECT_DOUBLE_EQ(read_report((dir / "good.json").string()).summary.samples_per_second, 1234.5);
  std::filesystem::remove_all(dir);
}

// A figure may be null (not finite when written: read as NaN); text where a number belongs is a
// hand edit, refused naming the field and where it is, not read as NaN.
TEST(RunReport, AFigureOfAnotherTypeIsRefusedNamingIt) {
  nlohmann::json j = to_json(sample());
  j["summary"]["samples_per_second"] = nullptr;
  EXPECT_TRUE(std::isnan(report_from_json(j, "'run.json'").summary.samples_per_second));
  j["summary"]["samples_per_second"] = "1234";
  try {
    report_from_json(j, "'run.json'");
    ADD_FAILURE() << "a string figure was read";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'run.json'.summary: field 'samples_per_second' is \"1234\"; expected a number"), std::string::npos) << e.what();
  }
  j = to_json(sample());
  j["curves"]["loss"] = nlohmann::json::array({{{"step", 1}, {"epoch", 0.1}, {"time_s", "soon"}, {"value", 2.0}}});
  try {
    report_from_json(j, "'run.json'");
    ADD_FAILURE() << "a string time was read";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'run.json'.curves.loss[0]: field 'time_s' is \"soon\""), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dyno
