// The gate's history: entries from check results append and read back; a bad line is named.
#include "dyno/reports/perf_history.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "dyno/reports/atomic_file.h"
#include "user_error_matcher.h"

namespace dyno {
namespace {

TEST(PerfHistory, AppendsCheckResultsAndReadsThemBack) {
  const std::string path = "/tmp/dyno_history_" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  const nlohmann::json check = {{"kind", "check"}, {"runs", {100.0, 110.0, 90.0, 105.0, 95.0, 100.0}}, {"verdict", "PASS"},
                                {"regression", 0.01}, {"regression_low", -0.02}, {"regression_high", 0.03}, {"fingerprint_id", "abc"}};
  append_history(path, history_entry_from_check(check, "r1", "2026-11-23T00:00:00Z"));
  append_history(path, history_entry_from_check(check, "r2", "2026-11-23T01:00:00Z"));
  const auto entries = read_history(path);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].revision, "r2");
  EXPECT_EQ(entries[0].fingerprint_id, "abc");
  EXPECT_DOUBLE_EQ(entries[0].value, 100);
  EXPECT_LE(entries[0].low, 100);
  EXPECT_GE(entries[0].high, 100);
  EXPECT_DOUBLE_EQ(entries[0].regression["estimate"].get<double>(), 0.01);
  EXPECT_NE(history_html(entries).find("No change point."), std::string::npos);
  std::remove(path.c_str());
}

// A gate of two baselines appends two entries per revision: each subject is its own series.
TEST(PerfHistory, ChecksOfDifferentConfigsAreDifferentSeries) {
  std::vector<HistoryEntry> entries;
  for (const int batch : {64, 4, 64}) {
    const nlohmann::json check = {{"kind", "check"}, {"runs", {100.0, 101.0, 99.0}}, {"verdict", "PASS"}, {"fingerprint_id", "abc"},
                                  {"config", {{"workload", "fashion-mlp"}, {"batch_size", batch}}}};
    entries.push_back(history_entry_from_check(check, "r", ""));
  }
  EXPECT_EQ(entries[0].subject, entries[2].subject);
  EXPECT_NE(entries[0].subject, entries[1].subject);
  EXPECT_EQ(entries[0].subject.rfind("fashion-mlp config ", 0), 0u) << entries[0].subject;
  const auto series = history_series(entries);
  ASSERT_EQ(series.size(), 2u);
  for (const auto& [name, points] : series) EXPECT_EQ(points.size(), name.find(entries[0].subject) != std::string::npos ? 2u : 1u) << name;
  // Read back from a history's line.
  const auto read = parse_history(to_json(entries[1]).dump() + "\n", "h");
  EXPECT_EQ(read.at(0).subject, entries[1].subject);
}

TEST(PerfHistory, TheHtmlMarksAPlantedStep) {
  std::vector<HistoryEntry> entries;
  for (int i = 0; i < 16; ++i) {
    HistoryEntry e;
    e.revision = "rev" + std::to_string(i);
    e.metric = "samples_per_second";
    e.value = (i < 8 ? 1000 : 900) + (i % 3);
    e.low = e.value - 5;
    e.high = e.value + 5;
    entries.push_back(e);
  }
  const std::string html = history_html(entries);
  EXPECT_NE(html.find("<td>rev8</td>"), std::string::npos);
  EXPECT_NE(html.find("stroke='#d62728' stroke-dasharray"), std::string::npos);
}

TEST(PerfHistory, ABadLineIsNamedAndATornLastLineIgnored) {
  const std::string path = "/tmp/dyno_history_bad_" + std::to_string(::getpid()) + ".jsonl";
  write_file_atomically(path, R"({"revision": "a", "metric": "m", "value": 1, "low": 1, "high": 1})" "\n" R"({"revision": "b")");
  EXPECT_EQ(read_history(path).size(), 1u);
  // A whole record without its newline (a hand-written file) is read, as the appender reads it.
  write_file_atomically(path, R"({"revision": "a", "metric": "m", "value": 1, "low": 1, "high": 1})");
  EXPECT_EQ(read_history(path).size(), 1u);
  write_file_atomically(path, R"({"revision": "a", "metric": "m", "value": "fast", "low": 1, "high": 1})" "\n");
  EXPECT_EQ(testing::error_of([&] { read_history(path); }), "[history] " + path + " line 1: field 'value' is \"fast\"; expected a number");
  EXPECT_EQ(testing::error_of([] { history_entry_from_check({{"kind", "baseline"}}, "r", ""); }),
            "[history] expected the result of `dyno check --out FILE` (kind check, with runs); got kind 'baseline'");
  // A regression without its interval is not stored as [0, 0].
  EXPECT_NE(testing::error_of([] { history_entry_from_check({{"kind", "check"}, {"runs", {1.0, 2.0}}, {"regression", 0.1}}, "r", ""); })
                .find("regression_low"),
            std::string::npos);
  // Figures that are no throughput, an interval that leaves its value out, a verdict check never gives.
  const auto check_error = [](const nlohmann::json& changes) {
    nlohmann::json check = {{"kind", "check"}, {"runs", {1.0, 2.0, 3.0}}, {"verdict", "PASS"}};
    check.update(changes);
    return testing::error_of([&] { history_entry_from_check(check, "r", ""); });
  };
  EXPECT_NE(check_error({{"runs", {-1.0, -2.0}}}).find("expected an array of 1 or more throughputs, each a finite number above 0"), std::string::npos);
  EXPECT_NE(check_error({{"runs", nlohmann::json::array()}}).find("field 'runs' is []; expected an array of 1 or more throughputs"), std::string::npos);
  EXPECT_NE(check_error({{"verdict", "BOGUS"}}).find("expected PASS, FAIL or INCONCLUSIVE"), std::string::npos);
  EXPECT_NE(check_error({{"regression", "x"}}).find("field 'regression' is \"x\"; expected a number or null"), std::string::npos);
  write_file_atomically(path, R"({"revision": "a", "metric": "m", "value": 5, "low": 6, "high": 7})" "\n");
  EXPECT_NE(testing::error_of([&] { read_history(path); }).find("line 1: field 'low' is 6"), std::string::npos);
  // A revision is a name or a build's number; a metric is a name.
  write_file_atomically(path, R"({"revision": 1234, "metric": "m", "value": 1, "low": 1, "high": 1})" "\n");
  EXPECT_EQ(read_history(path).front().revision, "1234");
  write_file_atomically(path, R"({"revision": ["x"], "metric": "m", "value": 1, "low": 1, "high": 1})" "\n");
  EXPECT_NE(testing::error_of([&] { read_history(path); }).find("line 1: field 'revision' is [\"x\"]; expected a string"), std::string::npos);
  write_file_atomically(path, R"({"revision": "a", "metric": {"a": 1}, "value": 1, "low": 1, "high": 1})" "\n");
  EXPECT_NE(testing::error_of([&] { read_history(path); }).find("line 1: field 'metric' is {\"a\":1}; expected a string"), std::string::npos);
  write_file_atomically(path, R"({"revision": "a", "metric": "m", "value": 1e400, "low": 6, "high": 7})" "\n");
  EXPECT_NE(testing::error_of([&] { read_history(path); }).find("line 1: not valid JSON"), std::string::npos);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace dyno
