// A user's own header at a path dyno's folders also have: dyno's headers must never include it
// (they include "dyno/workloads/workload.h"), so it stops any build that does.
#pragma once
#error "a user's own workloads/workload.h was included in place of dyno's"
