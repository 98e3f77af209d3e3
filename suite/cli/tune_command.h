// `dyno tune`: searches a workload's knobs with a strategy, each trial a `dyno train` child
// process, journals every trial to DIR/journal.jsonl (resumable with --resume), verifies the
// winner against the default configuration by training both to the target, and writes
// DIR/report.json, DIR/best-config.json and DIR/best-config.py.
#pragma once

namespace CLI {
class App;
}

namespace dyno {

void add_tune_command(CLI::App& app);

}  // namespace dyno
