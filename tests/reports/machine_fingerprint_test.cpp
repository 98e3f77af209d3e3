#include "dyno/reports/machine_fingerprint.h"

#include <gtest/gtest.h>

namespace dyno {
namespace {

const nlohmann::json kEnvironment = {{"cpu_model", "AMD EPYC"}, {"cores", 2}, {"memory_bytes", 8.3e9}, {"device", "cpu"},
                                     {"device_name", "AMD EPYC"}, {"libtorch_version", "2.11.0"}, {"cuda_version", "13.0"},
                                     {"threads", 1}, {"host", "runner-17"}, {"dyno_revision", "abc"}};

TEST(MachineFingerprint, TakesWhatAFigureDependsOnAndNotTheHostOrRevision) {
  const auto f = MachineFingerprint::of(kEnvironment);
  EXPECT_EQ(f.fields()["memory_gib"], 8);  // 8.3e9 bytes = 7.73 GiB, rounded
  EXPECT_FALSE(f.fields().contains("host"));
  EXPECT_FALSE(f.fields().contains("dyno_revision"));
  auto other_runner = kEnvironment;
  other_runner["host"] = "runner-4";
  other_runner["dyno_revision"] = "def";
  other_runner["memory_bytes"] = 8.1e9;  // the same 8 GiB machine after another boot
  EXPECT_TRUE(f.differences(MachineFingerprint::of(other_runner)).empty());
  EXPECT_EQ(f.id(), MachineFingerprint::of(other_runner).id());
}

TEST(MachineFingerprint, NamesEachDifferingField) {
  auto other = kEnvironment;
  other["cpu_model"] = "Intel Xeon";
  other["cores"] = 4;
  const auto differences = MachineFingerprint::of(kEnvironment).differences(MachineFingerprint::of(other));
  ASSERT_EQ(differences.size(), 2u);
  EXPECT_EQ(differences[0], "cpu_model: \"AMD EPYC\" recorded, \"Intel Xeon\" here");
  EXPECT_EQ(differences[1], "cores: 2 recorded, 4 here");
  EXPECT_NE(MachineFingerprint::of(kEnvironment).id(), MachineFingerprint::of(other).id());
}

TEST(MachineFingerprint, AFieldTheRecordLacksIsNotCompared) {
  nlohmann::json older = kEnvironment;
  older.erase("memory_bytes");  // recorded before dyno stored memory
  EXPECT_TRUE(MachineFingerprint::of(older).differences(MachineFingerprint::of(kEnvironment)).empty());
}

// A record without the CPU model or the device name could be any machine's: each is a difference.
TEST(MachineFingerprint, ARecordThatDoesNotNameItsMachineDiffers) {
  nlohmann::json unnamed = kEnvironment;
  unnamed.erase("cpu_model");
  unnamed.erase("device_name");
  const auto differences = MachineFingerprint::of(unnamed).differences(MachineFingerprint::of(kEnvironment));
  ASSERT_EQ(differences.size(), 2u);
  EXPECT_EQ(differences[0], "cpu_model: not recorded, \"AMD EPYC\" here");
  EXPECT_EQ(differences[1], "device_name: not recorded, \"AMD EPYC\" here");
  EXPECT_TRUE(MachineFingerprint::of(unnamed).fields_not_compared(MachineFingerprint::of(kEnvironment)).empty());
}

}  // namespace
}  // namespace dyno
