// `dyno launch --nproc N -- PROGRAM ARGS...`: starts N local ranks of a data-parallel job with
// the standard environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT; by default 127.0.0.1 and a free port of it, held until the job ends), forwards SIGINT/SIGTERM to them, and when any
// rank fails stops the others and returns that rank's status (no orphaned process).
#pragma once

namespace CLI {
class App;
}

namespace dyno {

void add_launch_command(CLI::App& app);

}  // namespace dyno
