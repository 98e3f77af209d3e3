#include "dyno/reports/run_config.h"

#include <gtest/gtest.h>

#include "dyno/reports/knob.h"
#include "dyno/reports/user_error.h"
#include "user_error_matcher.h"

namespace dyno {
namespace {

using testing::error_of;

TEST(RunConfig, RoundTripsThroughJson) {
  RunConfig c;
  c.workload = "fashion-cnn";
  c.batch_size = 256;
  c.amp = "bf16";
  c.lr = 0.02;
  c.checkpointing = true;
  c.ddp.bucket_cap_mb = 4;
  c.ddp.comm_hook = "bf16";
  nlohmann::json j = to_json(c);
  RunConfig back = config_from_json(j);
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.batch_size, 256);
  EXPECT_EQ(back.ddp.comm_hook, "bf16");
  // Every knob appears in the JSON, so a saved config is complete.
  EXPECT_EQ(j.size(), all_knobs().size());
}

TEST(RunConfig, AcceptsNestedDdpObject) {
  RunConfig c = config_from_json(nlohmann::json::parse(R"({"ddp": {"world_size": 2, "backend": "gloo"}})"));
  EXPECT_EQ(c.ddp.world_size, 2);
}

TEST(RunConfig, SetParsesEachType) {
  RunConfig c;
  apply_setting(c, "batch_size=128");
  apply_setting(c, "set_to_none=false");
  apply_setting(c, "clip_grad_norm=1.5");
  apply_setting(c, "label_smoothing=0.1");
  apply_setting(c, "amp=bf16");
  apply_setting(c, "ddp.gradient_as_bucket_view=true");
  EXPECT_EQ(c.batch_size, 128);
  EXPECT_FALSE(c.set_to_none);
  EXPECT_DOUBLE_EQ(c.clip_grad_norm, 1.5);
  EXPECT_DOUBLE_EQ(c.label_smoothing, 0.1);
  EXPECT_EQ(c.amp, "bf16");
  EXPECT_TRUE(c.ddp.gradient_as_bucket_view);
  apply_setting(c, "lr=1e-320");  // below the smallest normal double: a number near 0, in range
  EXPECT_GT(c.lr, 0.0);
  EXPECT_LT(c.lr, 1e-300);
}

TEST(RunConfig, ErrorsNameFieldValueAndValidValues) {
  RunConfig c;
  EXPECT_EQ(error_of([&] { apply_setting(c, "amp=fp8"); }), "[config] amp: 'fp8' is not one of off, fp16, bf16");
  EXPECT_EQ(error_of([&] { apply_setting(c, "batch_size=0"); }), "[config] batch_size: 0 is not an integer in [1, 1048576]");
  EXPECT_EQ(error_of([&] { apply_setting(c, "batch_size=12x"); }), "[config] batch_size: '12x' is not an integer in [1, 1048576]");
  EXPECT_EQ(error_of([&] { apply_setting(c, "pin_memory=maybe"); }), "[config] pin_memory: 'maybe' is not true or false (also True/False, 1/0, yes/no, on/off)");
  apply_setting(c, "pin_memory=True");  // as Python writes it
  EXPECT_TRUE(c.pin_memory);
  EXPECT_EQ(error_of([&] { apply_setting(c, "num_workers=-1"); }), "[config] num_workers: -1 is not an integer in [0, 64]");
  EXPECT_NE(error_of([&] { apply_setting(c, "bogus=1"); }).find("[config] unknown knob 'bogus'; known knobs: workload,"), std::string::npos);
  EXPECT_EQ(error_of([&] { apply_setting(c, "noequals"); }), "[config] --set expects key=value, got 'noequals'");
  EXPECT_EQ(error_of([&] { config_from_json(nlohmann::json::parse(R"({"batch_size": "big"})")); }),
            "[config] batch_size: \"big\" is not an integer in [1, 1048576]");
  EXPECT_EQ(error_of([&] { config_from_json(nlohmann::json::parse(R"({"batch_size": 1.5})")); }),
            "[config] batch_size: 1.5 is not an integer in [1, 1048576]");
  EXPECT_EQ(error_of([&] { config_from_json(nlohmann::json::parse(R"({"ddp": 5})")); }), "[config] ddp: 5 is not an object of ddp knobs, as {\"world_size\": 2}");
  EXPECT_EQ(error_of([&] { config_from_json(nlohmann::json::parse(R"({"ddp": {"world_size": 1}, "ddp.world_size": 2})")); }),
            "[config] ddp.world_size is given twice (as \"ddp.world_size\" and in \"ddp\"); give it once");
  EXPECT_EQ(error_of([&] { config_from_json(nlohmann::json::parse(R"({"save_state": "st\u0000.bin"})")); }),
            "[config] save_state: \"st\\u0000.bin\" holds a NUL byte (\\u0000)");
}

TEST(RunConfig, RejectsInvalidCombinations) {
  RunConfig c;
  c.amp = "fp16";
  EXPECT_EQ(error_of([&] { validate_combination(c); }), "[config] amp: 'fp16' needs device=cuda (device is 'cpu')");
  c = RunConfig{};
  c.pin_memory = true;
  EXPECT_EQ(error_of([&] { validate_combination(c); }), "[config] pin_memory: true needs device=cuda (device is 'cpu')");
  c = RunConfig{};
  c.device = "cuda";
  c.deterministic = true;
  c.cudnn_benchmark = true;
  EXPECT_EQ(error_of([&] { validate_combination(c); }),
            "[config] cudnn_benchmark: true conflicts with deterministic: true; set one of them to false");
  c = RunConfig{};
  c.ddp.backend = "shm";
  c.ddp.comm_hook = "fp16";
  EXPECT_EQ(error_of([&] { validate_combination(c); }),
            "[config] ddp.comm_hook: 'fp16' compresses what gloo or nccl sends; ddp.backend=shm sends nothing: set ddp.comm_hook=none or ddp.backend=gloo");
  c.ddp.comm_hook = "none";
  EXPECT_NO_THROW(validate_combination(c));
  // A hook compresses the buckets of the overlapping all-reduce; without it there are none.
  RunConfig one_all_reduce;
  one_all_reduce.ddp.world_size = 2;
  one_all_reduce.ddp.overlap = false;
  one_all_reduce.ddp.comm_hook = "bf16";
  EXPECT_EQ(error_of([&] { validate_combination(one_all_reduce); }),
            "[config] ddp.comm_hook: 'bf16' compresses the buckets sent during backward; with ddp.overlap=false the gradients go in one "
            "uncompressed all-reduce after it: set ddp.comm_hook=none or ddp.overlap=true");
  one_all_reduce.ddp.world_size = 1;  // nothing is sent
  EXPECT_NO_THROW(validate_combination(one_all_reduce));
  c.device = "cuda";
  EXPECT_NE(error_of([&] { validate_combination(c); }).find("ddp.backend: 'shm'"), std::string::npos);
  c = RunConfig{};
  EXPECT_NO_THROW(validate_combination(c));
}

TEST(RunConfig, EffectiveBatchMultipliesAccumulationAndRanks) {
  RunConfig c;
  c.batch_size = 32;
  c.grad_accum_steps = 4;
  c.ddp.world_size = 2;
  EXPECT_EQ(effective_batch_size(c), 256);
}

TEST(Knob, EveryKnobHasDescriptionAndValidDefault) {
  for (const auto& knob : all_knobs()) {
    EXPECT_FALSE(knob.description.empty()) << knob.name;
    EXPECT_NO_THROW(knob.validate(knob.default_value())) << knob.name;
  }
}

}  // namespace
}  // namespace dyno
