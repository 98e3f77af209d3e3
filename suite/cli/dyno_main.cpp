// The `dyno` executable: the command line over dyno's own workloads (workloads/builtin_workloads.cpp).
#include "dyno/dyno.h"

DYNO_MAIN();
