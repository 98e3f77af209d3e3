// `dyno report techniques RESULT.json` (claimed vs measured speed-up per technique) and
// `dyno report DIR --html` (one self-contained HTML file for a tuning run).
#pragma once

namespace CLI {
class App;
}

namespace dyno {

void add_report_command(CLI::App& app);

}  // namespace dyno
