// The report protocol as the tuner reads it: events parsed, a torn last line ignored, anything
// else that breaks the protocol an error naming the file and the line.
#include "dyno/trials/program_report.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "dyno/reports/atomic_file.h"
#include "user_error_matcher.h"

namespace dyno {
namespace {

#define EXPECT_ERROR_HAS(f, text)                      \
  do {                                                  \
    const std::string message = testing::error_of(f);   \
    EXPECT_NE(message.find(text), std::string::npos) << message; \
  } while (0)

// One file per test process, removed when it exits.
std::string report_file(const std::string& text) {
  struct RemovedAtExit {
    std::string path = "/tmp/dyno_program_report_" + std::to_string(::getpid()) + ".jsonl";
    ~RemovedAtExit() { std::remove(path.c_str()); }
  };
  static const RemovedAtExit file;
  write_file_atomically(file.path, text);
  return file.path;
}

TEST(ProgramReport, ReadsKnobsWindowsEvaluationsAndDone) {
  const auto r = read_program_report(report_file(
      R"({"event": "knobs", "applied": {"batch_size": 128}})" "\n"
      R"({"event": "window", "items": 1280, "seconds": 0.5, "loss": 2.1})" "\n"
      R"({"event": "window", "items": 640, "seconds": 0.25})" "\n"
      R"({"event": "knobs", "applied": {"compile": true}})" "\n"
      R"({"event": "eval", "metric": "accuracy", "value": 0.81, "elapsed": 3.5})" "\n"
      R"({"event": "done"})" "\n"), 7.0);
  EXPECT_EQ(r.applied, nlohmann::json::parse(R"({"batch_size": 128, "compile": true})"));
  ASSERT_EQ(r.windows.size(), 2u);
  EXPECT_DOUBLE_EQ(r.windows[0].throughput(), 2560);
  EXPECT_DOUBLE_EQ(*r.windows[0].loss, 2.1);
  EXPECT_FALSE(r.windows[1].loss.has_value());
  ASSERT_EQ(r.evaluations.size(), 1u);
  EXPECT_EQ(r.evaluations[0].metric, "accuracy");
  EXPECT_DOUBLE_EQ(r.evaluations[0].value, 0.81);
  EXPECT_DOUBLE_EQ(*r.evaluations[0].elapsed_s, 3.5);
  EXPECT_DOUBLE_EQ(r.evaluations[0].seen_s, 7.0);
  EXPECT_TRUE(r.done);
  EXPECT_EQ(r.lines, 6u);
}

// What the HTML report charts: each window's loss at the items and seconds of the windows up to
// it, each evaluation at the items before it and at its elapsed time, else those windows' seconds.
TEST(ProgramReport, ItsCurvesRunOverTheItemsAndSecondsOfItsWindows) {
  const auto r = parse_program_report(R"({"event": "window", "items": 100, "seconds": 0.5, "loss": 2.5})" "\n"
                                      R"({"event": "window", "items": 100, "seconds": 0.5, "loss": NaN})" "\n"
                                      R"({"event": "eval", "value": 0.7})" "\n"
                                      R"({"event": "window", "items": 50, "seconds": 0.25, "loss": 1.5})" "\n"
                                      R"({"event": "eval", "value": 0.8, "elapsed": 2.5})" "\n",
                                      "report.jsonl", 1.75);
  EXPECT_EQ(program_report_curves(r), nlohmann::json::parse(R"({"kind": "program_report", "curves": {
      "loss": [{"items": 100.0, "time_s": 0.5, "value": 2.5}, {"items": 250.0, "time_s": 1.25, "value": 1.5}],
      "metric": [{"items": 200.0, "time_s": 1.0, "value": 0.7}, {"items": 250.0, "time_s": 2.5, "value": 0.8}]}})"));
}

TEST(ProgramReport, ATornLastLineIsIgnored) {
  const auto r = read_program_report(report_file(R"({"event": "window", "items": 10, "seconds": 1})" "\n" R"({"event": "window", "ite)"));
  EXPECT_EQ(r.windows.size(), 1u);
  EXPECT_EQ(r.lines, 1u);
}

// Once the program has exited on its own, a last line without its newline is the last it wrote,
// when it is whole JSON; a torn one is still left out.
TEST(ProgramReport, AfterTheProgramEndedALastLineWithoutNewlineCounts) {
  const std::string text = R"({"event": "window", "items": 10, "seconds": 1})" "\n" R"({"event": "done"})";
  EXPECT_FALSE(parse_program_report(text, "r.jsonl").done);
  const auto r = parse_program_report(text, "r.jsonl", 0, nullptr, true);
  EXPECT_TRUE(r.done);
  EXPECT_EQ(r.lines, 2u);
  EXPECT_EQ(parse_program_report(R"({"event": "done"})" "\n" R"({"event": "window", "ite)", "r.jsonl", 0, nullptr, true).lines, 1u);
}

TEST(ProgramReport, NonFiniteLossesAsPythonWritesThemAndAsStrings) {
  const auto r = read_program_report(report_file(R"({"event": "window", "items": 10, "seconds": 1, "loss": NaN})" "\n"
                                                 R"({"event": "window", "items": 10, "seconds": 1, "loss": "inf"})" "\n"
                                                 R"({"event": "window", "items": 10, "seconds": 1, "loss": -Infinity, "note": "NaN inside"})" "\n"));
  ASSERT_EQ(r.windows.size(), 3u);
  EXPECT_TRUE(std::isnan(*r.windows[0].loss));
  EXPECT_TRUE(std::isinf(*r.windows[1].loss));
  EXPECT_LT(*r.windows[2].loss, 0);
}

TEST(ProgramReport, AMissingFileIsAnEmptyReport) {
  const auto r = read_program_report("/tmp/dyno_no_such_report.jsonl");
  EXPECT_TRUE(r.empty());
  EXPECT_TRUE(r.applied.is_null());
}

// A read given the last read of the file parses only what was written since (its lines stay as
// they were read), and names lines by their number in the whole file.
TEST(ProgramReport, AReadAfterAnotherParsesOnlyWhatWasWrittenSince) {
  std::string first;
  for (int i = 0; i < 10; ++i) first += R"({"event": "window", "items": 100, "seconds": 0.5})" "\n";
  first += R"({"event": "eval", "value": 0.5})" "\n";
  const std::string path = report_file(first);
  const ProgramReport before = read_program_report(path, 1.0);
  ASSERT_EQ(before.windows.size(), 10u);
  // The parsed part's middle overwritten (its first and last lines kept): not read again.
  const std::string window = R"({"event": "window", "items": 200, "seconds": 0.5})" "\n";
  std::string overwritten = first;
  overwritten.replace(300, 100, std::string(100, 'x'));
  write_file_atomically(path, overwritten + window);
  const ProgramReport after = read_program_report(path, 2.0, &before);
  ASSERT_EQ(after.windows.size(), 11u);
  EXPECT_DOUBLE_EQ(after.windows[10].items, 200);
  EXPECT_DOUBLE_EQ(after.evaluations.at(0).seen_s, 1.0);
  write_file_atomically(path, overwritten + window + "not json\n");
  EXPECT_ERROR_HAS([&] { read_program_report(path, 3.0, &after); }, "line 13: not a JSON object: not json");
  // A file now shorter than what was read is read whole.
  write_file_atomically(path, window);
  EXPECT_EQ(read_program_report(path, 3.0, &after).windows.size(), 1u);
}

TEST(ProgramReport, AReportRewrittenSinceTheLastReadIsReadAgainWhole) {
  const std::string knobs = R"({"event": "knobs", "applied": {"batch_size": 64, "run_name": ")" + std::string(300, 'r') + "\"}}\n";
  const auto window = [](int items) { return R"({"event": "window", "items": )" + std::to_string(items) + R"(, "seconds": 0.5})" "\n"; };
  const std::string eval = R"({"event": "eval", "value": 0.5})" "\n";
  const std::string path = report_file(knobs + window(100) + eval + window(100));
  const ProgramReport before = read_program_report(path, 1.0);
  ASSERT_EQ(before.windows.size(), 2u);
  // The program started again and wrote at least as much: its first line (the first 256 bytes and
  // more) the same, the bytes where the last read stopped not. Its evaluation is a new one.
  write_file_atomically(path, knobs + window(300) + eval + window(300) + window(300));
  const ProgramReport after = read_program_report(path, 2.0, &before);
  ASSERT_EQ(after.windows.size(), 3u);
  for (const auto& w : after.windows) EXPECT_DOUBLE_EQ(w.items, 300);
  EXPECT_DOUBLE_EQ(after.evaluations.at(0).seen_s, 2.0);
  // Its first bytes changed, the ones where the last read stopped not.
  write_file_atomically(path, R"({"event": "knobs", "applied": {"batch_size": 32}})" "\n" + window(300) + eval + window(300) + window(300) + window(400));
  const ProgramReport again = read_program_report(path, 3.0, &after);
  ASSERT_EQ(again.windows.size(), 4u);
  EXPECT_EQ(again.applied["batch_size"], 32);
}

TEST(ProgramReport, AReportThatIsNotAFileIsRefusedWithoutBlocking) {
  const std::string fifo = "/tmp/dyno_program_report_fifo_" + std::to_string(::getpid());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_ERROR_HAS([&] { read_program_report(fifo); }, "is not a file (a FIFO, a device or a folder was put there)");
  std::remove(fifo.c_str());
}

TEST(ProgramReport, ALineThatBreaksTheProtocolNamesTheLine) {
  const std::string ok = R"({"event": "done"})" "\n";
  EXPECT_ERROR_HAS([&] { read_program_report(report_file(ok + "not json\n" + ok)); }, "line 2: not a JSON object: not json");
  const std::string window = R"({"event": "window", "items": 3, "seconds": 1})" "\n";
  EXPECT_ERROR_HAS([&] { read_program_report(report_file(window + R"({"event": "epoch"})" "\n")); }, "line 2: event 'epoch' is not one of knobs, window, eval, done");
  // Nothing after done: a program's last event; and evaluations' elapsed never goes back.
  EXPECT_ERROR_HAS([&] { read_program_report(report_file(window + ok + window)); }, "line 3: a window line after \"done\"");
  EXPECT_ERROR_HAS([&] { read_program_report(report_file(R"({"event": "eval", "value": 0.1, "elapsed": 4})" "\n" R"({"event": "eval", "value": 0.9, "elapsed": 0.5})" "\n")); },
                   "line 2: \"elapsed\" 0.5 is before an earlier evaluation's 4.0; it counts the seconds of the whole run");
  EXPECT_ERROR_HAS([&] { read_program_report(report_file(std::string((1 << 20) + 10, ' ') + "\n")); }, "line 1: longer than 1 MiB");
  EXPECT_ERROR_HAS([&] { read_program_report(report_file(R"({"items": 3})" "\n")); }, "line 1: expected an object with \"event\"");
  EXPECT_ERROR_HAS([&] { read_program_report(report_file(R"({"event": "window", "items": 3})" "\n")); }, "line 1: a window line needs \"seconds\"");
  EXPECT_ERROR_HAS([&] { read_program_report(report_file(R"({"event": "window", "items": 0, "seconds": 1})" "\n")); }, "needs items > 0 and seconds > 0");
  EXPECT_ERROR_HAS([&] { read_program_report(report_file(R"({"event": "eval", "value": "high"})" "\n")); }, "line 1: \"value\" is \"high\", not a number");
  EXPECT_ERROR_HAS([&] { read_program_report(report_file(R"({"event": "knobs", "applied": [1]})" "\n")); }, "line 1: a knobs line needs \"applied\"");
  EXPECT_ERROR_HAS([&] { read_program_report(report_file(R"({"event": "eval", "value": 0.9, "elapsed": -1})" "\n")); },
                   "line 1: \"elapsed\" is -1; it is the seconds since the program started, 0 or more");
  // A rate that is not finite, and a line nested deeper than the parser's stack allows.
  EXPECT_ERROR_HAS([&] { read_program_report(report_file(R"({"event": "window", "items": 1e300, "seconds": 1e-300})" "\n")); },
                   "line 1: a window needs items > 0 and seconds > 0 whose ratio is a finite rate");
  const std::string deep = R"({"event": "knobs", "applied": {"x": )" + std::string(200000, '[') + std::string(200000, ']') + "}}\n";
  EXPECT_ERROR_HAS([&] { read_program_report(report_file(deep)); }, "line 1: nested more than 64 levels deep");
  // Brackets inside a string are text.
  EXPECT_NO_THROW(read_program_report(report_file(R"({"event": "knobs", "applied": {"name": ")" + std::string(100, '[') + R"("}})" "\n")));
}

}  // namespace
}  // namespace dyno
