#include "dyno/reports/outcome.h"

#include <gtest/gtest.h>

#include "dyno/reports/run_report.h"
#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

TEST(Outcome, EveryOutcomeIsWrittenAndReadByItsName) {
  for (Outcome o : {Outcome::Ok, Outcome::Diverged, Outcome::Oom, Outcome::Crashed, Outcome::Aborted, Outcome::Timeout,
                    Outcome::InvalidConfig, Outcome::Rejected, Outcome::InvalidReport, Outcome::Interrupted}) {
    EXPECT_EQ(outcome_from_string(to_string(o)), o) << o;
    EXPECT_EQ(nlohmann::json(o), to_string(o));
  }
  EXPECT_EQ(std::string(to_string(Outcome::InvalidConfig)), "invalid_config");
}

TEST(Outcome, AnUnknownNameInAReportIsAnErrorListingTheValidOnes) {
  EXPECT_EQ(outcome_from_string("exploded"), std::nullopt);
  nlohmann::json j = to_json(RunReport{});
  j["outcome"] = "exploded";
  try {
    report_from_json(j, "'r.json'");
    FAIL() << "accepted an unknown outcome";
  } catch (const UserError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'outcome'"), std::string::npos) << message;
    EXPECT_NE(message.find("exploded"), std::string::npos) << message;
    EXPECT_NE(message.find("ok, diverged, oom"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace dyno
