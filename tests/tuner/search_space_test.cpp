#include "dyno/tuner/search_space.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "dyno/reports/user_error.h"
#include "user_error_matcher.h"

namespace dyno {
namespace {

using testing::error_of;

TEST(SearchSpace, ParsesListsAndRanges) {
  auto s = SearchSpace::from_json(nlohmann::json::parse(
      R"({"axes": {"batch_size": {"min": 32, "max": 256, "factor": 2}, "threads": {"min": 1, "max": 3, "step": 1}, "amp": ["off", "bf16"]}})"));
  EXPECT_EQ(s.find("batch_size")->values, (std::vector<nlohmann::json>{32, 64, 128, 256}));
  EXPECT_EQ(s.find("threads")->values, (std::vector<nlohmann::json>{1, 2, 3}));
  EXPECT_EQ(s.grid_size(), 4 * 3 * 2);
  EXPECT_EQ(s.grid().size(), 24u);
  EXPECT_EQ(SearchSpace::from_json(s.to_json()).to_json(), s.to_json());
  // A range ending at or below 0 keeps its max.
  s = SearchSpace::from_json(nlohmann::json::parse(R"({"axes": {"shift": {"min": -3, "max": -1, "step": 1}, "offset": {"min": -0.3, "max": 0, "step": 0.1}},
                                                       "knobs": {"shift": {"type": "integer"}, "offset": {"type": "real"}}})"));
  EXPECT_EQ(s.find("shift")->values, (std::vector<nlohmann::json>{-3, -2, -1}));
  EXPECT_EQ(s.find("offset")->values.size(), 4u);
  s.override_axis("shift=-5:-1:+2");
  EXPECT_EQ(s.find("shift")->values, (std::vector<nlohmann::json>{-5, -3, -1}));
  // A number is kept as its knob's type: 64.0 for an integer knob is 64, 0 for a real one 0.0 (one point, one key).
  s = SearchSpace::from_json(nlohmann::json::parse(R"({"axes": {"batch_size": [32.0, 64.0], "clip_grad_norm": [0, 1]}})"));
  EXPECT_EQ(nlohmann::json(s.find("batch_size")->values).dump(), "[32,64]");
  EXPECT_EQ(nlohmann::json(s.find("clip_grad_norm")->values).dump(), "[0.0,1.0]");
}

TEST(SearchSpace, CommandLineOverrides) {
  SearchSpace s = SearchSpace::default_for("cpu", true, 2);
  s.override_axis("batch_size=16:128:x2");
  EXPECT_EQ(s.find("batch_size")->values, (std::vector<nlohmann::json>{16, 32, 64, 128}));
  s.override_axis("amp=off,bf16");
  EXPECT_EQ(s.find("amp")->values, (std::vector<nlohmann::json>{"off", "bf16"}));
  s.override_axis("threads=1:2:+1");
  EXPECT_EQ(s.find("threads")->values, (std::vector<nlohmann::json>{1, 2}));
  // A value twice counts once: a list's repeat, or an integer range's rounding (1, 1.5, 2.25, 3.4, 5.1, 7.6).
  s.override_axis("threads=1:8:x1.5");
  EXPECT_EQ(s.find("threads")->values, (std::vector<nlohmann::json>{1, 2, 3, 5, 8}));
  s.override_axis("batch_size=64,128,64");
  EXPECT_EQ(s.find("batch_size")->values, (std::vector<nlohmann::json>{64, 128}));
}

TEST(SearchSpace, ErrorsNameTheAxisAndTheValue) {
  EXPECT_EQ(error_of([] { SearchSpace::from_json(nlohmann::json::parse(R"({"axes": {"batch_size": [64, 0]}})")); }),
            "[space] axis batch_size: value 0 is not an integer in [1, 1048576]");
  EXPECT_EQ(error_of([] { SearchSpace::from_json(nlohmann::json::parse(R"({"axes": {"amp": ["off", "fp8"]}})")); }),
            "[space] axis amp: value \"fp8\" is not one of off, fp16, bf16");
  // A C string ends at a NUL: a program's argument would lose what follows it.
  EXPECT_EQ(error_of([] { SearchSpace::from_json(nlohmann::json::parse(R"({"knobs": {"mode": {"type": "text"}}, "axes": {"mode": ["a\u0000b"]}})")); }),
            "[space] axis mode: value \"a\\u0000b\" is not any text without a NUL byte");
  // A whole number past 64 bits would wrap when read as one.
  EXPECT_NE(error_of([] { SearchSpace::from_json(nlohmann::json::parse(R"({"knobs": {"n": {"type": "integer", "max": 1e300}}, "axes": {"n": [1e20]}})")); })
                .find("[space] axis n: value 1e+20 is not an integer"),
            std::string::npos);
  EXPECT_EQ(error_of([] { SearchSpace::from_json(nlohmann::json::parse(R"({"axes": {"batch_size": []}})")); }),
            "[space] axis batch_size: has no values");
  EXPECT_NE(error_of([] { SearchSpace::from_json(nlohmann::json::parse(R"({"axes": {"warp_speed": [1]}})")); })
                .find("[space] axis 'warp_speed' is not a knob; tunable knobs:"),
            std::string::npos);
  EXPECT_NE(error_of([] { SearchSpace::from_json(nlohmann::json::parse(R"({"axes": {"warp_speed": [1, 2]}})")); })
                .find("(a program's own knob is declared in the space: \"knobs\": {\"warp_speed\": {\"type\": \"integer\"}}"),
            std::string::npos);
  EXPECT_NE(error_of([] { SearchSpace::from_json(nlohmann::json::parse(R"({"axes": {"seed": [1, 2]}})")); })
                .find("[space] axis 'seed' is a knob the tuner does not search"),
            std::string::npos);
  // (--set is dyno's workloads'; a program's own knob of a run setting's name is declared.)
  EXPECT_NE(error_of([] { SearchSpace::from_json(nlohmann::json::parse(R"({"axes": {"size": [1, 2]}})")); })
                .find("a program's own knob of that name is declared in the space: \"knobs\": {\"size\": {\"type\": \"integer\"}}"),
            std::string::npos);
  EXPECT_EQ(error_of([] { SearchSpace::from_json(nlohmann::json::parse(R"({"axes": {"threads": {"min": 4, "max": 1}}})")); }),
            "[space] axis threads: range min 4.000000 is above max 1.000000");
  EXPECT_EQ(error_of([] { SearchSpace::from_json(nlohmann::json::parse(R"({"batch_size": [1]})")); }),
            "[space] expected {\"axes\": {knob: [values] | {\"min\", \"max\", \"step\" | \"factor\"}}}");
  SearchSpace s;
  EXPECT_EQ(error_of([&] { s.override_axis("batch_size=64,huge"); }), "[space] axis batch_size: value 'huge' is not an integer in [1, 1048576]");
  EXPECT_EQ(error_of([&] { s.override_axis("batch_size=1:8:*2"); }), "[space] axis batch_size: range '1:8:*2' is not lo:hi:xFACTOR or lo:hi:+STEP");
}

TEST(SearchSpace, ARangeFieldOfTheWrongTypeNamesTheAxisAndTheValue) {
  EXPECT_EQ(error_of([] { SearchSpace::from_json(nlohmann::json::parse(R"({"axes": {"threads": {"min": 1, "max": 2, "step": "x"}}})")); }),
            "[space] axis threads: field 'step' is \"x\"; expected a number");
  EXPECT_EQ(error_of([] { SearchSpace::from_json(nlohmann::json::parse(R"({"axes": {"lr": {"min": 0.1, "max": 1, "factor": [2]}}})")); }),
            "[space] axis lr: field 'factor' is [2]; expected a number");
  EXPECT_EQ(error_of([] { SearchSpace::from_json(nlohmann::json::parse(R"({"axes": {"threads": {"min": 1, "max": 2, "stride": 1}}})")); }),
            "[space] axis threads: unknown field 'stride' (valid: min, max, step, factor)");
}

TEST(SearchSpace, CommandLineTextMustBeUtf8AndFinite) {
  SearchSpace s = SearchSpace::default_for("cpu", true, 2);
  EXPECT_EQ(error_of([&] { s.override_axis("amp=off,b\xff"); }), "[space] axis amp: value 'b\xff' is not one of off, fp16, bf16");
  EXPECT_EQ(error_of([&] { s.override_axis("lr=0.1,nan"); }), "[space] axis lr: value 'nan' is not a number in [0, 100]");
  EXPECT_EQ(error_of([&] { s.override_axis("batch_size=1:8:x1e999"); }), "[space] axis batch_size: range needs finite numbers for its bounds and factor, got 1, 8, inf");
  EXPECT_EQ(error_of([&] { s.override_axis("batch_size=inf:inf:+1"); }), "[space] axis batch_size: range needs finite numbers for its bounds and step, got inf, inf, 1");
}

// A program's own knob takes the role its declaration names, as dyno's knobs take the knob table's:
// the staged search's stage, or time to target's convergence phase.
TEST(SearchSpace, AProgramKnobHasTheRoleItsDeclarationNames) {
  SearchSpace s = SearchSpace::from_json(nlohmann::json::parse(R"({
      "axes": {"batched_fetch": [false, true], "warmup": [0, 1], "compile": [false, true], "batch_size": [64, 128], "lr": [0.1, 0.2]},
      "knobs": {"batched_fetch": {"type": "bool", "role": "pipeline"}, "warmup": {"type": "integer", "convergence": true},
                "compile": {"type": "bool"}, "lr": {"type": "real", "role": "convergence"}}})"));
  EXPECT_EQ(s.knob("batched_fetch").role, KnobRole::Pipeline);
  EXPECT_EQ(s.knob("compile").role, KnobRole::Other);  // undeclared role
  EXPECT_EQ(s.knob("batch_size").role, KnobRole::Batch);  // dyno's, from the knob table
  const SearchSpace convergence = s.take_convergence_axes();
  std::set<std::string> moved;
  for (const auto& axis : convergence.axes()) moved.insert(axis.knob);
  EXPECT_EQ(moved, (std::set<std::string>{"lr", "warmup"}));
  EXPECT_EQ(s.axes().size(), 3u);
}

TEST(SearchSpace, AKnobWithAWarmupCostIsTakenWithTheConvergenceAxes) {
  SearchSpace s = SearchSpace::from_json(nlohmann::json::parse(R"({
      "axes": {"compile": [false, true], "fused": [false, true], "lr": [0.1, 0.2]},
      "knobs": {"compile": {"type": "bool", "warmup_cost": true}, "fused": {"type": "bool", "warmup_cost": false},
                "lr": {"type": "real", "role": "convergence"}}})"));
  EXPECT_TRUE(s.knob("compile").warmup_cost);
  EXPECT_EQ(s.knob("compile").role, KnobRole::Other);
  const SearchSpace to_target = s.take_convergence_axes();
  std::set<std::string> moved;
  for (const auto& axis : to_target.axes()) moved.insert(axis.knob);
  EXPECT_EQ(moved, (std::set<std::string>{"compile", "lr"}));
  ASSERT_EQ(s.axes().size(), 1u);
  EXPECT_EQ(s.axes()[0].knob, "fused");
  EXPECT_EQ(error_of([] {
              SearchSpace::from_json(nlohmann::json::parse(R"({"axes": {"c": [false, true]}, "knobs": {"c": {"type": "bool", "warmup_cost": 1}}})"));
            }),
            "[space] knob c: \"warmup_cost\" is 1, not true or false");
}

TEST(SearchSpace, TakingTheThroughputBlindAxesKeepsTheOthersAndAPinnedValueInOrder) {
  SearchSpace s = SearchSpace::from_json(nlohmann::json::parse(R"({
      "axes": {"batch_size": [64, 128], "compile": [false, true], "lr": [0.1, 0.2], "fused": [false, true], "lr_scaling": ["sqrt"]},
      "knobs": {"compile": {"type": "bool", "warmup_cost": true}, "fused": {"type": "bool"}, "lr": {"type": "real", "role": "convergence"}}})"));
  EXPECT_TRUE(s.throughput_blind("compile"));
  EXPECT_TRUE(s.throughput_blind("lr"));
  EXPECT_TRUE(s.throughput_blind("lr_scaling"));  // dyno's knob table: role convergence
  EXPECT_FALSE(s.throughput_blind("fused"));
  EXPECT_FALSE(s.throughput_blind("batch_size"));
  const auto removed = s.take_convergence_axes().axes();
  ASSERT_EQ(removed.size(), 2u);
  EXPECT_EQ(removed[0].knob, "compile");
  EXPECT_EQ(removed[1].knob, "lr");
  ASSERT_EQ(s.axes().size(), 3u);  // lr_scaling has one value: a setting, not a search
  EXPECT_EQ(s.axes()[0].knob, "batch_size");
  EXPECT_EQ(s.axes()[1].knob, "fused");
  EXPECT_EQ(s.axes()[2].knob, "lr_scaling");
}

TEST(SearchSpace, ARoleThatIsNoneOrDisagreesIsRefusedByName) {
  auto space = [](const std::string& spec) {
    return [spec] { SearchSpace::from_json(nlohmann::json::parse(R"({"axes": {"fetch": [false, true]}, "knobs": {"fetch": )" + spec + "}}")); };
  };
  EXPECT_EQ(error_of(space(R"({"type": "bool", "role": "loader"})")),
            "[space] knob fetch: \"role\" is \"loader\", not one of process, pipeline, numerics, convergence, other");
  EXPECT_EQ(error_of(space(R"({"type": "bool", "role": "batch"})")),
            "[space] knob fetch: \"role\" is \"batch\", not one of process, pipeline, numerics, convergence, other");
  EXPECT_EQ(error_of(space(R"({"type": "bool", "role": "pipeline", "convergence": true})")),
            "[space] knob fetch: \"convergence\": true and \"role\": \"pipeline\" disagree; give one");
}

TEST(SearchSpace, AGridTooLargeToCountSaturates) {
  nlohmann::json axes = nlohmann::json::object(), knobs = nlohmann::json::object();
  for (int i = 0; i < 70; ++i) {
    axes["k" + std::to_string(i)] = {false, true};
    knobs["k" + std::to_string(i)] = {{"type", "bool"}};
  }
  EXPECT_EQ(SearchSpace::from_json({{"axes", axes}, {"knobs", knobs}}).grid_size(), INT64_MAX);
}

TEST(SearchSpace, DefaultSpacesPerDevice) {
  auto cpu = SearchSpace::default_for("cpu", true, 2);
  EXPECT_EQ(cpu.find("amp")->values, (std::vector<nlohmann::json>{"off", "bf16"}));
  EXPECT_EQ(cpu.find("pin_memory"), nullptr);
  EXPECT_NE(cpu.find("channels_last"), nullptr);
  EXPECT_NE(cpu.find("checkpointing"), nullptr);
  auto cuda = SearchSpace::default_for("cuda", true, 8);
  EXPECT_NE(cuda.find("pin_memory"), nullptr);
  EXPECT_NE(cuda.find("cudnn_benchmark"), nullptr);
  EXPECT_NE(cuda.find("tf32"), nullptr);
  EXPECT_EQ(cuda.find("amp")->values.size(), 3u);
  EXPECT_EQ(SearchSpace::default_for("cpu", false, 2).find("channels_last"), nullptr);
  EXPECT_EQ(cpu.find("ddp.world_size"), nullptr);  // one rank unless more are allowed
  auto ranks = SearchSpace::default_for("cpu", true, 2, 2);
  ASSERT_NE(ranks.find("ddp.world_size"), nullptr);
  EXPECT_EQ(ranks.find("ddp.world_size")->values, (std::vector<nlohmann::json>{1, 2}));
  EXPECT_NE(ranks.find("ddp.comm_hook"), nullptr);
  EXPECT_NE(SearchSpace::default_for("cuda", true, 8, 4).find("ddp.bucket_cap_mb"), nullptr);
}

}  // namespace
}  // namespace dyno
