// PhaseTime: the time a run spent in one phase of its training steps (data_wait, h2d, forward,
// backward, all_reduce, optimizer; eval apart), over the measured steps.
#pragma once

namespace dyno {

struct PhaseTime {
  double total_s = 0;        // over measured (post-warm-up) steps
  double per_step_ms = 0;
  double fraction = 0;       // of the summed phase time
};

}  // namespace dyno
