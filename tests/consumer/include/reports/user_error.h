// A user's own header at a path dyno's folders also have (see ../workloads/workload.h).
#pragma once
#error "a user's own reports/user_error.h was included in place of dyno's"
