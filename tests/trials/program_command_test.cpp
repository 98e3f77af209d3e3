// A program's trial command: placeholders filled from the point, the environment that carries it,
// the launcher in front, and the tuned configuration written back as a command line.
#include "dyno/trials/program_command.h"

#include <gtest/gtest.h>

#include "user_error_matcher.h"

namespace dyno {
namespace {

TEST(ProgramCommand, FillsPlaceholdersFromThePointInTheLauncherAndTheCommand) {
  ProgramCommand c({"/bin/echo", "--batch={batch_size}", "{compile}", "{{literal}}", "seed{seed}"}, {"/usr/bin/env", "N={ddp.world_size}"});
  const auto argv = c.argv_for({{"batch_size", 128}, {"compile", true}, {"ddp.world_size", 2}}, 7);
  EXPECT_EQ(argv, (std::vector<std::string>{"/usr/bin/env", "N=2", "/bin/echo", "--batch=128", "true", "{literal}", "seed7"}));
  EXPECT_EQ(c.command_placeholders(), (std::set<std::string>{"batch_size", "compile", "seed"}));
}

TEST(ProgramCommand, FindsTheProgramOnPathAndRefusesOneThatIsNot) {
  EXPECT_EQ(ProgramCommand({"sh", "-c", "true"}, {}).argv_for({}, 0).front().back(), 'h');
  EXPECT_NE(ProgramCommand({"sh"}, {}).argv_for({}, 0).front().find('/'), std::string::npos);
  EXPECT_EQ(testing::error_of([] { ProgramCommand({"no-such-program-dyno"}, {}); }), "[command] 'no-such-program-dyno' is not an executable file on PATH");
  EXPECT_EQ(testing::error_of([] { ProgramCommand({}, {}); }), "[command] --command needs a program and its arguments");
  EXPECT_EQ(testing::error_of([] { ProgramCommand({"sh", "{oops"}, {}); }), "[command] '{oops': '{' without a closing '}' (write {{ for a literal brace)");
}

TEST(ProgramCommand, APlaceholderMustNameAKnobOfTheSpace) {
  ProgramCommand c({"sh", "{batch}"}, {});
  EXPECT_EQ(testing::error_of([&] { c.check_placeholders({"batch_size", "lr"}); }),
            "[command] placeholder {batch} names no knob of the search space; known: seed, batch_size, lr");
  c.check_placeholders({"batch"});
}

TEST(ProgramCommand, EnvironmentCarriesEachKnobAndTheSeed) {
  EXPECT_EQ(ProgramCommand::environment_for({{"amp", "bf16"}, {"ddp.world_size", 2}, {"lr", 0.5}}, 3),
            (std::vector<std::string>{"DYNO_KNOB_AMP=bf16", "DYNO_KNOB_DDP_WORLD_SIZE=2", "DYNO_KNOB_LR=0.5", "DYNO_SEED=3"}));
  EXPECT_EQ(ProgramCommand::environment_name("café"), "DYNO_KNOB_CAF__");  // byte by byte, as python/dyno_report.py
}

// Two knobs with one DYNO_KNOB_ name could not be told apart by the program: refused, both named.
TEST(ProgramCommand, KnobsWithOneEnvironmentNameAreRefused) {
  EXPECT_EQ(testing::error_of([] { ProgramCommand::check_environment_names({"batch-size", "batch_size", "lr"}); }),
            "[space] knobs 'batch-size' and 'batch_size' are both DYNO_KNOB_BATCH_SIZE in the program's environment, which could not tell them apart; "
            "rename one");
  EXPECT_NE(testing::error_of([] { ProgramCommand::check_environment_names({"LR", "lr"}); }).find("DYNO_KNOB_LR"), std::string::npos);
  ProgramCommand::check_environment_names({"batch_size", "lr", "ddp.world_size"});
  // {seed} is dyno's; a name that cannot be a placeholder or an --axis is refused.
  EXPECT_NE(testing::error_of([] { ProgramCommand::check_environment_names({"seed"}); }).find("knob 'seed': the name is dyno's"), std::string::npos);
  for (const std::string name : {"", "a}b", "a=b"})
    EXPECT_NE(testing::error_of([&] { ProgramCommand::check_environment_names({name}); }).find("a knob's name is not empty and has no"), std::string::npos)
        << name;
}

TEST(ProgramCommand, TheBestConfigIsTheCommandLineAndEnvironmentToRun) {
  ProgramCommand c({"sh", "train.py", "--batch", "{batch_size}"}, {});
  const nlohmann::json point = {{"batch_size", 256}, {"mode", "fast run"}};
  const auto config = c.best_config_json(point, 0);
  EXPECT_EQ(config["argv"], nlohmann::json::parse(R"(["sh", "train.py", "--batch", "256"])"));
  EXPECT_EQ(config["environment"]["DYNO_KNOB_MODE"], "fast run");
  EXPECT_EQ(config["point"], point);
  EXPECT_EQ(c.best_config_shell(point, 0), "DYNO_KNOB_BATCH_SIZE=256 DYNO_KNOB_MODE='fast run' DYNO_SEED=0 sh train.py --batch 256");
  // From the folder the trials ran in: train.py is where it was.
  EXPECT_EQ(c.best_config_shell(point, 0, "/home/me/my project"),
            "cd '/home/me/my project' && DYNO_KNOB_BATCH_SIZE=256 DYNO_KNOB_MODE='fast run' DYNO_SEED=0 sh train.py --batch 256");
}

TEST(ProgramCommand, SplitsALauncherLikeAShellWithoutItsSyntax) {
  EXPECT_EQ(split_command_line("torchrun --nproc-per-node {ddp.world_size}  'a b' \"c \\\"d\\\"\" e\\ f"),
            (std::vector<std::string>{"torchrun", "--nproc-per-node", "{ddp.world_size}", "a b", "c \"d\"", "e f"}));
  EXPECT_TRUE(split_command_line("  ").empty());
  EXPECT_EQ(testing::error_of([] { split_command_line("srun 'x"); }), "[command] 'srun 'x': unclosed ' quote");
}

}  // namespace
}  // namespace dyno
