#include "dyno/tuner/journal.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "dyno/reports/atomic_file.h"
#include "user_error_matcher.h"

namespace dyno {
namespace {

using testing::error_of;

std::string trial_line(int id) {
  Trial t;
  t.id = id;
  t.point = {{"batch_size", 32 * id}};
  t.key = trial_key(t.point, 1);
  t.samples_per_second = 1000;
  return nlohmann::json{{"kind", "trial"}, {"trial", to_json(t)}}.dump();
}

const std::string kHeader = R"({"kind": "header", "strategy": "grid"})";

TEST(Journal, ReadsTheHeaderAndEveryFinishedTrial) {
  const Journal j = parse_journal(kHeader + "\n" + trial_line(1) + "\n" + trial_line(2) + "\n", "journal.jsonl");
  EXPECT_EQ(j.header["strategy"], "grid");
  ASSERT_EQ(j.trials.size(), 2u);
  EXPECT_EQ(j.trials[1].point["batch_size"], 64);
}

// Before report schema 1.3 a higher budget level pooled its lower level's windows (pooled_with):
// read back, every trial holds its own process's windows, as a trial does now.
TEST(Journal, APooledTrialOfAnEarlierJournalKeepsItsOwnProcesssWindows) {
  auto line = [](int id, int level, int pooled_with, std::vector<double> windows) {
    Trial t;
    t.id = id;
    t.key = trial_key(t.point, level);
    t.budget_level = level;
    t.windows = std::move(windows);
    set_throughput_from_windows(t);
    nlohmann::json j = to_json(t);
    j["pooled_with"] = pooled_with;
    return nlohmann::json{{"kind", "trial"}, {"trial", j}}.dump() + "\n";
  };
  const Journal j = parse_journal(kHeader + "\n" + line(1, 1, 0, {1, 1}) + line(2, 2, 1, {1, 1, 2, 2}) + line(3, 4, 2, {1, 1, 2, 2, 3, 3, 3, 3}),
                                  "journal.jsonl");
  ASSERT_EQ(j.trials.size(), 3u);
  EXPECT_EQ(j.trials[1].windows, (std::vector<double>{2, 2}));
  EXPECT_EQ(j.trials[1].samples_per_second, 2);
  EXPECT_EQ(j.trials[2].windows, (std::vector<double>{3, 3, 3, 3}));
  EXPECT_EQ(j.trials[2].objective, 3);
}

TEST(Journal, ATornLastLineWasNotAFinishedTrial) {
  const std::string line = trial_line(2);
  const Journal j = parse_journal(kHeader + "\n" + trial_line(1) + "\n" + line.substr(0, line.size() / 2), "journal.jsonl");
  EXPECT_EQ(j.trials.size(), 1u);
}

TEST(Journal, ADamagedLineElsewhereIsAnErrorNamingFileAndLine) {
  EXPECT_EQ(error_of([] { parse_journal(kHeader + "\n{\"kind\": \"tri\n" + trial_line(2) + "\n", "j.jsonl"); }),
            "[journal] j.jsonl line 2 is not JSON; the journal is damaged");
  EXPECT_EQ(error_of([] { parse_journal(kHeader + "\n[1, 2]\n", "j.jsonl"); }),
            "[journal] j.jsonl line 2: expected an object with \"kind\": \"header\" or \"trial\"; got [1, 2]");
  EXPECT_EQ(error_of([] { parse_journal(kHeader + "\n" + R"({"kind": "trial", "trial": {"id": "one", "key": "k", "point": {}, "outcome": "ok"}})" + "\n", "j.jsonl"); }),
            "[journal] j.jsonl line 2: field 'id' is \"one\"; expected an integer");
  EXPECT_EQ(error_of([] { parse_journal(kHeader + "\n" + kHeader + "\n", "j.jsonl"); }),
            "[journal] j.jsonl line 2: a header line after the first line; the journal is damaged");
}

TEST(Journal, AMissingFileIsAnEmptyJournalAndAPathThatIsNotAFileIsAnError) {
  const auto dir = std::filesystem::temp_directory_path() / ("dyno-journal-read-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "journal.jsonl");
  const Journal missing = read_journal((dir / "absent.jsonl").string());
  EXPECT_TRUE(missing.header.is_null());
  EXPECT_TRUE(missing.trials.empty());
  const std::string path = (dir / "journal.jsonl").string();
  EXPECT_EQ(error_of([&] { read_journal(path); }), "[journal] '" + path + "' is not a file; a journal is DIR/journal.jsonl");
  std::filesystem::remove_all(dir);
}

TEST(Journal, OpeningStartsANewJournalWithItsHeaderAndOnlyResumeContinuesOne) {
  const std::string dir = (std::filesystem::temp_directory_path() / ("dyno-journal-open-" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(dir);
  const nlohmann::json header = {{"kind", "header"}, {"strategy", "staged"}, {"objective", "throughput"}, {"seed", 0},
                                 {"space", {{"axes", {{"threads", {1, 2}}}}}}, {"base_config", {{"workload", "fashion-mlp"}}}};
  open_journal(dir, header, false);
  EXPECT_EQ(read_journal(dir + "/journal.jsonl").header, header);
  EXPECT_NE(error_of([&] { open_journal(dir, header, false); }).find("--resume"), std::string::npos);
  open_journal(dir, header, true);  // the same run: continues
  nlohmann::json other = header;
  other["seed"] = 7;
  const std::string mismatch = error_of([&] { open_journal(dir, other, true); });
  EXPECT_NE(mismatch.find("was made with seed 0, not 7;"), std::string::npos) << mismatch;
  // A journal killed before its header's newline (empty, or a torn line) holds nothing: it is started anew, resumed or not.
  for (const std::string torn : {"", R"({"kind": "header", "stra)"}) {
    for (const bool resume : {false, true}) {
      write_file_atomically(dir + "/journal.jsonl", torn);
      open_journal(dir, header, resume);
      EXPECT_EQ(read_journal(dir + "/journal.jsonl").header, header) << torn << resume;
    }
  }
  std::filesystem::remove_all(dir);
}

// A journal's header may record how its trials measured ({option: value}); a resume that would
// measure otherwise is refused, naming the option and both values. An option the journal does not
// record (a journal written before it was recorded) is not checked.
TEST(Journal, ResumeRefusesAnotherMeasurementTheJournalRecords) {
  const std::string dir = (std::filesystem::temp_directory_path() / ("dyno-journal-measure-" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(dir);
  nlohmann::json header = {{"kind", "header"}, {"strategy", "staged"}, {"objective", "throughput"}, {"seed", 0},
                           {"space", {{"axes", {{"threads", {1, 2}}}}}}, {"base_config", {{"workload", "fashion-mlp"}}},
                           {"measurement", {{"--measure-steps", 150}}}};
  open_journal(dir, header, false);
  nlohmann::json longer = header;
  longer["measurement"]["--measure-steps"] = 300;
  EXPECT_EQ(error_of([&] { open_journal(dir, longer, true); }),
            "[tune] --resume: the journal in '" + dir + "' was made with --measure-steps 150, not 300; give the same options as the first run, or choose another --out");
  // What the run was comes before how it measured: a changed base (which also changes the axis
  // order a workload's space is searched in) is the difference named.
  nlohmann::json rebased = longer;
  rebased["base_config"]["amp"] = "bf16";
  EXPECT_EQ(error_of([&] { open_journal(dir, rebased, true); }),
            "[tune] --resume: the journal in '" + dir + "' was made with base_config/amp (none), not \"bf16\"; give the same options as the first run, or choose another --out");
  nlohmann::json more = header;
  more["measurement"]["--trial-cap"] = 60.0;
  open_journal(dir, more, true);  // not recorded in this journal: not checked
  // A header whose record of it is not an object (hand-edited) is the journal's damage, not a run to continue.
  for (const nlohmann::json damaged : {nlohmann::json(5), nlohmann::json(nullptr)}) {
    nlohmann::json edited = header;
    edited["measurement"] = damaged;
    write_file_atomically(dir + "/journal.jsonl", edited.dump() + "\n");
    EXPECT_EQ(error_of([&] { open_journal(dir, header, true); }),
              "[journal] " + dir + "/journal.jsonl: its header's \"measurement\" is " + damaged.dump() + ", not an object; the journal is damaged");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dyno
