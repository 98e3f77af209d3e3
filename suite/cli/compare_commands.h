// `dyno compare A.json B.json` and `dyno check --baseline FILE`: regression verdicts from
// per-repetition figures (see reports/comparison.h). Exit status: 0 pass, 1 regression,
// 2 inconclusive (after check's automatic re-run; --strict turns it into 1), 2 also for bad input.
#pragma once

namespace CLI {
class App;
}

namespace dyno {

void add_compare_commands(CLI::App& app);

}  // namespace dyno
